-- REAL arithmetic as SQLMesh types it; a non-blocking copy of a built-in audit warns (2 rows are
-- not more than 10) and builds
MODEL (
  name mart.priced,
  kind FULL,
  audits (number_of_rows_non_blocking(threshold := 10))
);
SELECT id, name, ROUND(score * 2, 2) AS doubled, 3.99 * score AS priced FROM raw.spaced
