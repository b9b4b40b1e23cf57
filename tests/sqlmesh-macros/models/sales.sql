MODEL (name raw.sales, kind FULL);
SELECT * FROM (VALUES ('us', 12.5), ('eu', 30.0), ('eu', 5.0), ('jp', 99.0)) AS t(region, amount)
