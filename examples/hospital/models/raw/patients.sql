MODEL (
  name raw.patients,
  kind FULL,
  columns (
    patient_id BIGINT,
    birth_year INTEGER,
    sex VARCHAR
  ),
  grain patient_id,
  description 'Synthetic patient registry: 50 patients generated deterministically in DuckDB.'
);

SELECT
  r.i + 1 AS patient_id,
  CAST(1940 + (r.i * 37) % 80 AS INTEGER) AS birth_year,
  CASE WHEN r.i % 2 = 0 THEN 'F' ELSE 'M' END AS sex
FROM range(50) AS r(i)
