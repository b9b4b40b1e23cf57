MODEL (
  name mart.department_load,
  kind FULL,
  columns (
    dept_code VARCHAR,
    dept_name VARCHAR,
    bed_capacity INTEGER,
    stay_count BIGINT,
    patient_count BIGINT,
    current_patients BIGINT,
    avg_stay_hours DOUBLE,
    occupancy_ratio DOUBLE
  ),
  grain dept_code,
  tags (mart),
  description 'Load per department: stays, distinct patients, current occupancy against bed capacity.'
);

SELECT
  d.dept_code,
  d.dept_name,
  d.bed_capacity,
  COUNT(s.stay_id) AS stay_count,
  COUNT(DISTINCT s.patient_id) AS patient_count,
  COUNT(s.stay_id) FILTER (WHERE s.is_current) AS current_patients,
  AVG(s.stay_hours) AS avg_stay_hours,
  CAST(COUNT(s.stay_id) FILTER (WHERE s.is_current) AS DOUBLE) / d.bed_capacity AS occupancy_ratio
FROM ref.departments AS d
LEFT JOIN mart.stays AS s
  ON s.dept_code = d.dept_code
GROUP BY d.dept_code, d.dept_name, d.bed_capacity
