-- a grain that is no column: SQLMesh never checks grains
MODEL (name raw.events, kind FULL, grain "ds as day");
SELECT * FROM (VALUES ('2026-01-01', '1', '10.5'), ('2026-01-02', '2', '20'), ('2026-01-02', '2', '1.5')) AS t(ds, user_id, amount)
