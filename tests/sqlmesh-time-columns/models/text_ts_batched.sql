-- one batch per day: with the default format '%Y-%m-%d' each batch compares the text column
-- with BETWEEN 'day' AND 'day', so only a value that is exactly a day is kept
MODEL (
  name m.text_ts_batched,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ts_text, batch_size 1),
  cron '@daily',
  end '2020-01-05',
);
SELECT id, ts_text FROM raw.events
UNION ALL SELECT 6, '2020-01-03'
