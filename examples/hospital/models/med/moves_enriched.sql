MODEL (
  name med.moves_enriched,
  kind VIEW,
  columns (
    move_id BIGINT,
    patient_id BIGINT,
    age_band VARCHAR,
    dept_code VARCHAR,
    dept_name VARCHAR,
    is_critical_care BOOLEAN,
    moved_at TIMESTAMP
  ),
  description 'Movements with department and patient attributes.'
);

SELECT
  mv.move_id,
  mv.patient_id,
  pa.age_band,
  mv.dept_code,
  d.dept_name,
  d.is_critical_care,
  mv.moved_at
FROM med.moves AS mv
JOIN ref.departments AS d
  ON d.dept_code = mv.dept_code
LEFT JOIN med.patient_age AS pa
  ON pa.patient_id = mv.patient_id
