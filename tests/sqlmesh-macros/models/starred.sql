MODEL (name mart.starred, kind FULL);

SELECT @STAR(raw.sales, s, exclude := [amount], prefix := 'sale_'), s.amount * 2 AS doubled
FROM raw.sales AS s
