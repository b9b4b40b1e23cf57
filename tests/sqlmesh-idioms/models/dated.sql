-- $root, and dates written month first, as pandas reads them
MODEL (name raw.dated, kind SEED (path '$root/seeds/dated.csv'), columns (id INT, day DATE, at TIMESTAMP, label TEXT));
