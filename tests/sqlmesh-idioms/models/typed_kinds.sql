-- a DECIMAL over an integer is sqlglot's bare DECIMAL, DECIMAL(18,3) to DuckDB
MODEL (name mart.ratios, kind FULL);
SELECT CAST(10 AS DECIMAL(10, 2)) / NULLIF(CAST(3 AS BIGINT), 0) AS ratio, SUM(2) OVER () AS total
