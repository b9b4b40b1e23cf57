MODEL (kind FULL);
SELECT COUNT(*) AS days, SUM(amount) AS amount FROM mart.by_day
