MODEL (name numbers, kind FULL);
SELECT 1 AS n UNION ALL SELECT 2 AS n
