MODEL (
  name med.patient_age,
  kind EMBEDDED,
  description 'Helper inlined into its consumers: age and age band per patient.'
);

SELECT
  p.patient_id,
  2026 - p.birth_year AS age_years,
  CASE
    WHEN 2026 - p.birth_year < 18 THEN 'child'
    WHEN 2026 - p.birth_year < 65 THEN 'adult'
    ELSE 'senior'
  END AS age_band
FROM raw.patients AS p
