MODEL (
  name m.jinja_incr,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ds, batch_size 1),
  cron '@daily',
  end '2020-01-05',
);
JINJA_QUERY_BEGIN;
SELECT id, ds, '{{ start_ds }}' AS batch_start, 'from {{ start_ts }} to {{ end_ts }} ({{ end_epoch }})' AS span
FROM raw.events
WHERE ds BETWEEN '{{ start_ds }}' AND '{{ end_ds }}'
  AND CAST(ds AS TIMESTAMP) < '{{ end_ds }} 23:59:59.999999'
JINJA_END;
