MODEL (
  name mart.a,
  kind FULL,
  description 'Orders, one row per order',
  column_descriptions (id = 'The order id', total = 'What was paid'),
);
SELECT
  1 AS id,
  2.5 AS total,
  'x' AS note, -- a note written inline
