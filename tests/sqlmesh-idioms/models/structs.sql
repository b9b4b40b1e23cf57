-- a struct column declared with angle brackets and built with `STRUCT(x AS name)`, both as
-- sqlglot reads them for SQLMesh
MODEL (
  name mart.structs,
  kind FULL,
  columns (id INT, items STRUCT<product_id VARCHAR, quantity INTEGER>)
);
SELECT 1 AS id, STRUCT('7' AS product_id, 2 AS quantity) AS items
