MODEL (
  name shop.orders,
  kind SEED (path '../seeds/orders.csv'),
  columns (order_id INT, customer_id INT, amount DECIMAL(10, 2), ordered_at TIMESTAMP)
);
