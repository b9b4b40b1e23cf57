MODEL (name m.text_ts, kind INCREMENTAL_BY_TIME_RANGE (time_column (ts_text, '%Y-%m-%d %H:%M:%S')), cron '@daily');
SELECT id, ts_text FROM raw.events
