-- float arithmetic on fixture values: SQLMesh's test rows are DOUBLE, never exact DECIMAL
MODEL (name mart.sums, kind FULL);
SELECT user_id, SUM(amount) AS total, ABS(SUM(amount) - 31.0) < 0.01 AS about_31
FROM stg.events
GROUP BY user_id
