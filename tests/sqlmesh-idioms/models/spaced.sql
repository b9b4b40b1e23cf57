-- a header with spaces after its commas: SQLMesh names the columns without them, and keeps the
-- values' spaces
MODEL (
  name raw.spaced,
  kind SEED (path '../seeds/spaced.csv'),
  columns (id INT, name TEXT, score REAL)
);
