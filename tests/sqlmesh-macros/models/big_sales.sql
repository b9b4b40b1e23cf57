MODEL (name mart.big_sales, audits (at_least(column := amount, floor := 0)));
SELECT region, amount FROM raw.sales WHERE amount > @VAR('min_amount') AND region IN @regions;

AUDIT (name at_least);
SELECT * FROM @this_model WHERE @column < @floor
