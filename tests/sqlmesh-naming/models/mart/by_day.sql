MODEL (
  kind INCREMENTAL_BY_TIME_RANGE (time_column dk),
  cron '@daily',
);
SELECT dk, SUM(amount) AS amount FROM raw.events GROUP BY dk
