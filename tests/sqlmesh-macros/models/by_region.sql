MODEL (name mart.by_region, kind FULL);
@DEF(threshold, @VAR('min_amount'));
@DEF(cents, x -> CAST(x * 100 AS BIGINT));
SELECT
  @EACH(@regions, r -> SUM(CASE WHEN region = r THEN @cents(amount) END) AS cents_@{r}),
  @GENERATE_SURROGATE_KEY('x', 1) AS k,
  @SAFE_ADD(1, NULL) AS s,
  @REDUCE([1, 2, 3], (a, b) -> a * b) AS r
FROM raw.sales
WHERE amount >= @threshold AND @AND(TRUE, NULL)
