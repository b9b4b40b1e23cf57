MODEL (name m.date_col, kind INCREMENTAL_BY_TIME_RANGE (time_column d), cron '@daily');
SELECT id, CAST(ds AS DATE) AS d FROM raw.events
