MODEL (
  name shop.daily_revenue,
  kind INCREMENTAL_BY_TIME_RANGE (
    time_column order_date
  ),
  start '2026-01-01',
  cron '@daily',
  grain order_date
);

SELECT
  o.order_date AS order_date,
  COUNT(*) AS order_count,
  SUM(o.amount) AS revenue
FROM raw.orders AS o
WHERE o.order_date BETWEEN @start_date AND @end_date
GROUP BY o.order_date
