MODEL (name raw.s, kind SEED (path '../seeds/s.csv'), columns (id INT, name TEXT));
