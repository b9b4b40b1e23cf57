MODEL (
  name mart.stays,
  kind FULL,
  columns (
    stay_id VARCHAR,
    patient_id BIGINT,
    stay_seq BIGINT,
    dept_code VARCHAR,
    dept_name VARCHAR,
    age_band VARCHAR,
    entered_at TIMESTAMP,
    left_at TIMESTAMP,
    stay_hours DOUBLE,
    is_current BOOLEAN
  ),
  grain stay_id,
  owner 'clinical-analytics',
  tags (mart, clinical),
  description 'One row per department stay: a stay runs from a movement to the next movement of the same patient.',
  answerable sampled,
  caveats (
    'the last stay of each patient is open-ended: left_at is NULL and stay_hours counts up to the end of the feed',
    'stay_hours is wall-clock time between movements, not billed time'
  ),
  audits (
    not_null(columns := (stay_id, patient_id, entered_at)),
    unique_values(columns := (stay_id)),
    assert_stay_non_negative
  )
);

WITH ordered AS (
  SELECT
    e.patient_id,
    e.dept_code,
    e.dept_name,
    e.age_band,
    e.moved_at AS entered_at,
    LEAD(e.moved_at) OVER (PARTITION BY e.patient_id ORDER BY e.moved_at) AS left_at,
    ROW_NUMBER() OVER (PARTITION BY e.patient_id ORDER BY e.moved_at) AS stay_seq,
    MAX(e.moved_at) OVER () AS feed_end
  FROM med.moves_enriched AS e
)
SELECT
  CAST(o.patient_id AS VARCHAR) || '-' || CAST(o.stay_seq AS VARCHAR) AS stay_id,
  o.patient_id,
  o.stay_seq,
  o.dept_code,
  o.dept_name,
  o.age_band,
  o.entered_at,
  o.left_at,
  date_diff('minute', o.entered_at, COALESCE(o.left_at, o.feed_end)) / 60.0 AS stay_hours,
  o.left_at IS NULL AS is_current
FROM ordered AS o
