AUDIT (
  name assert_stay_non_negative
);

SELECT *
FROM @this_model
WHERE stay_hours < 0
   OR left_at < entered_at
