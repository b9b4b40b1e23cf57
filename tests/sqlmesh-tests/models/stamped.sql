MODEL (
  name shop.stamped,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ordered_at)
);

SELECT order_id, ordered_at, @execution_ds AS run_ds, @start_ds AS from_ds, @end_ds AS to_ds
FROM shop.orders
WHERE ordered_at BETWEEN @start_ts AND @end_ts
