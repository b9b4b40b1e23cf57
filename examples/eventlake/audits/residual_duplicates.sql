AUDIT (
  name residual_duplicates
);

-- events that occur more than once: redeliveries that arrived beyond the horizon of the model
-- that should have dropped them, with how far apart the copies arrived
SELECT
  event_id,
  count(*) AS copies,
  min(received_at) AS first_arrival,
  max(received_at) AS last_arrival
FROM @this_model
GROUP BY event_id
HAVING count(*) > 1
