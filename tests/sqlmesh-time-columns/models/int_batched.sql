MODEL (
  name m.int_batched,
  kind INCREMENTAL_BY_TIME_RANGE (time_column (di, '%Y%m%d'), batch_size 1),
  cron '@daily',
  end '2020-01-05',
);
SELECT id, di FROM raw.events
