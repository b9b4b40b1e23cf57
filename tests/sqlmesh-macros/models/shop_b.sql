MODEL (name raw.shop_b, kind FULL, columns (region TEXT, id BIGINT, amount DOUBLE, extra INT));
SELECT region, id, amount, extra FROM (VALUES ('eu', 7, 4.0, 1), ('jp', 8, 9.5, 2)) AS t(region, id, amount, extra)
