MODEL (name mart.daily, kind FULL);
WITH per_day AS (SELECT ds, amount::DECIMAL(10, 2) FROM stg.events)
SELECT ds, SUM(amount) AS total, (SELECT MAX(web) FROM stg.events) AS channel, (SELECT MAX(_col_4) FROM stg.events) AS two
FROM per_day
GROUP BY ds
