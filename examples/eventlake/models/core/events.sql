MODEL (
  name core.events,
  kind INCREMENTAL_BY_TIME_RANGE (
    time_column received_at,
    -- one arrival day per batch: the horizon below is measured from each day
    batch_size 1
  ),
  start '2026-03-01',
  cron '@daily',
  interval_unit day,
  columns (
    event_id VARCHAR,
    event_type VARCHAR,
    user_id BIGINT,
    event_time TIMESTAMP,
    received_at TIMESTAMP,
    app_version VARCHAR
  ),
  grain event_id,
  description 'Canonical events: each event at its first arrival. A redelivery is dropped when an earlier copy arrived on its arrival day or on one of the 2 days before; one arriving later than that is kept, and counted by residual_duplicates.',
  audits (
    not_null(columns := (event_id, received_at)),
    -- warn-level: the duplicates the horizon cannot see, with their arrival gap
    residual_duplicates(scope := 'whole', blocking := false)
  )
);

-- the horizon: this day's arrivals plus the 2 days of arrivals before it
WITH horizon AS (
  SELECT
    e.event_id,
    e.event_type,
    e.user_id,
    e.event_time,
    e.received_at,
    e.app_version
  FROM raw.events AS e
  WHERE e.day >= CAST(@start AS DATE) - 2
    AND e.day < CAST(@end AS DATE)
    AND e.received_at >= @start - INTERVAL '2 days'
    AND e.received_at < @end
),
-- first arrival wins
ranked AS (
  SELECT
    h.*,
    row_number() OVER (PARTITION BY h.event_id ORDER BY h.received_at) AS arrival
  FROM horizon AS h
)
SELECT
  r.event_id,
  r.event_type,
  r.user_id,
  r.event_time,
  r.received_at,
  r.app_version
FROM ranked AS r
WHERE r.arrival = 1
  AND r.received_at >= @start
  AND r.received_at < @end
