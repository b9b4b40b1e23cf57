MODEL (name m.text_fmt, kind INCREMENTAL_BY_TIME_RANGE (time_column (dk, '%Y%m%d')), cron '@daily');
SELECT id, dk FROM raw.events
