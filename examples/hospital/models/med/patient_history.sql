MODEL (
  name med.patient_history,
  kind SCD_TYPE_2_BY_COLUMN (
    unique_key patient_id,
    columns [age_band],
    invalidate_hard_deletes true
  ),
  cron '@daily',
  description 'Each patient''s age band over time: efmesh maintains valid_from / valid_to.'
);

SELECT
  a.patient_id,
  a.age_years,
  a.age_band
FROM med.patient_age AS a
