-- a model named like a reserved word, reading another by its one-part name; the CTE named like
-- a model is the CTE
MODEL (name "order", kind FULL);
WITH numbers AS (SELECT 10 AS n)
SELECT d, (SELECT max(n) FROM numbers) AS m FROM doubled
