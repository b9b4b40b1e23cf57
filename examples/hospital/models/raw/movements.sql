MODEL (
  name raw.movements,
  kind FULL,
  columns (
    move_id BIGINT,
    patient_id BIGINT,
    dept_code VARCHAR,
    moved_at TIMESTAMP
  ),
  grain move_id,
  description 'Synthetic movement feed: every patient enters through ER, then moves 1-3 times, 2 to 58 hours apart.'
);

WITH slots AS (
  SELECT
    r.i AS i,
    r.i % 50 AS p,
    CAST(floor(r.i / 50) AS INTEGER) AS seq
  FROM range(200) AS r(i)
)
SELECT
  s.i + 1 AS move_id,
  s.p + 1 AS patient_id,
  CASE
    WHEN s.seq = 0 THEN 'ER'
    WHEN (s.i * 7 + CAST(floor(s.i / 7) AS INTEGER)) % 6 = 0 THEN 'ICU'
    WHEN (s.i * 7 + CAST(floor(s.i / 7) AS INTEGER)) % 6 = 1 THEN 'CARD'
    WHEN (s.i * 7 + CAST(floor(s.i / 7) AS INTEGER)) % 6 = 2 THEN 'SURG'
    WHEN (s.i * 7 + CAST(floor(s.i / 7) AS INTEGER)) % 6 = 3 THEN 'PED'
    WHEN (s.i * 7 + CAST(floor(s.i / 7) AS INTEGER)) % 6 = 4 THEN 'ONC'
    ELSE 'WARD'
  END AS dept_code,
  make_timestamp(2026, 1, CAST(1 + (s.p * 11) % 28 AS BIGINT), CAST((s.p * 5) % 24 AS BIGINT), CAST((s.p * 13) % 60 AS BIGINT), 0.0)
    + to_hours(CAST(s.seq * 30 + (s.i * 17) % 29 AS BIGINT)) AS moved_at
FROM slots AS s
WHERE s.seq < 2 + s.p % 3
