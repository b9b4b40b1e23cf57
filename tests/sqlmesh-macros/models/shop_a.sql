MODEL (name raw.shop_a, kind FULL, columns (id INT, region TEXT, amount DOUBLE));
SELECT id, region, amount FROM (VALUES (1, 'us', 2.5), (2, 'eu', 4.0)) AS t(id, region, amount)
