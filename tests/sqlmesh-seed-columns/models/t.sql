MODEL (name raw.t, kind SEED (path '../seeds/s.csv'), columns (name TEXT, id INT));
