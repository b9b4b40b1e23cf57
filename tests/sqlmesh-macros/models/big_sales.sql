MODEL (name mart.big_sales);
SELECT region, amount FROM raw.sales WHERE amount > @VAR('min_amount') AND region IN @regions
