MODEL (
  name shop.customer_totals,
  kind FULL,
  grain customer_id,
  audits (
    assert_positive_total,
    not_null(columns := (customer_id))
  )
);

SELECT
  o.customer_id AS customer_id,
  COUNT(*) AS order_count,
  SUM(o.amount) AS total_amount,
  MIN(o.order_date) AS first_order_date
FROM raw.orders AS o
GROUP BY o.customer_id
