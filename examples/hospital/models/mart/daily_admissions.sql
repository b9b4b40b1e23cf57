MODEL (
  name mart.daily_admissions,
  kind FULL,
  target parquet,
  columns (
    admitted_on DATE,
    admissions BIGINT,
    seniors BIGINT,
    via_critical_care BIGINT
  ),
  grain admitted_on
);

WITH first_stays AS (
  SELECT
    s.patient_id,
    s.age_band,
    CAST(s.entered_at AS DATE) AS admitted_on
  FROM mart.stays AS s
  WHERE s.stay_seq = 1
), critical AS (
  SELECT DISTINCT s.patient_id
  FROM mart.stays AS s
  JOIN ref.departments AS d
    ON d.dept_code = s.dept_code
  WHERE d.is_critical_care
)
SELECT
  f.admitted_on,
  COUNT(*) AS admissions,
  COUNT(*) FILTER (WHERE f.age_band = 'senior') AS seniors,
  COUNT(c.patient_id) AS via_critical_care
FROM first_stays AS f
LEFT JOIN critical AS c
  ON c.patient_id = f.patient_id
GROUP BY f.admitted_on
