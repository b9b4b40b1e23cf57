MODEL (
  name mart.latest_department,
  kind INCREMENTAL_BY_UNIQUE_KEY (
    unique_key patient_id
  ),
  cron '@daily',
  columns (
    patient_id BIGINT,
    dept_code VARCHAR,
    moved_at TIMESTAMP
  ),
  description 'Where each patient is now: one row per patient, upserted as moves arrive.'
);

SELECT
  m.patient_id,
  m.dept_code,
  m.moved_at
FROM med.moves AS m
QUALIFY row_number() OVER (PARTITION BY m.patient_id ORDER BY m.moved_at DESC, m.move_id DESC) = 1
