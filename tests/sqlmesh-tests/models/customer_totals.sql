MODEL (
  name shop.customer_totals,
  kind FULL,
  grain customer_id
);

WITH recent AS (
  SELECT customer_id, amount
  FROM shop.orders
  WHERE ordered_at >= CURRENT_DATE - INTERVAL 30 DAY
), totals AS (
  SELECT customer_id, SUM(amount) AS total, COUNT(*) AS n
  FROM recent
  GROUP BY customer_id
)
SELECT
  customer_id,
  total,
  n,
  total >= @min_total AS big,
  @execution_ds AS as_of
FROM totals
