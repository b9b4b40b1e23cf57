MODEL (name m.text_ts_default, kind INCREMENTAL_BY_TIME_RANGE (time_column ts_text), cron '@daily');
SELECT id, ts_text FROM raw.events
