AUDIT (
  name assert_positive_total
);

SELECT *
FROM @this_model
WHERE total_amount <= 0
