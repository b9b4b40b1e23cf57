MODEL (name m.text_iso, kind INCREMENTAL_BY_TIME_RANGE (time_column ds), cron '@daily');
SELECT id, ds FROM raw.events
