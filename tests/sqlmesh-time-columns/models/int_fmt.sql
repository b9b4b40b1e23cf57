MODEL (name m.int_fmt, kind INCREMENTAL_BY_TIME_RANGE (time_column (di, '%Y%m%d')), cron '@daily');
SELECT id, di FROM raw.events
