-- whole numbers in a TIMESTAMP or DATE seed column: pandas reads them as nanoseconds since the
-- epoch, and so SQLMesh stores them (a public sushi project's seed holds epoch seconds)
MODEL (
  name raw.epochs,
  kind SEED (path '../seeds/epochs.csv'),
  columns (id INT, at TIMESTAMP, day DATE)
);
