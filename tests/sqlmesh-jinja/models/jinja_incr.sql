MODEL (
  name m.jinja_incr,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ds, batch_size 1),
  cron '@daily',
  end '2020-01-05',
);
JINJA_QUERY_BEGIN;
SELECT id, ds, '{{ start_ds }}' AS batch_start FROM raw.events
WHERE ds BETWEEN '{{ start_ds }}' AND '{{ end_ds }}'
JINJA_END;
