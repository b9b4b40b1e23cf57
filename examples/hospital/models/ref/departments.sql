MODEL (
  name ref.departments,
  kind SEED (
    path '../../seeds/departments.csv'
  ),
  target parquet,
  columns (
    dept_code VARCHAR,
    dept_name VARCHAR,
    floor INTEGER,
    bed_capacity INTEGER,
    is_critical_care BOOLEAN
  ),
  grain dept_code,
  description 'Hospital departments with their bed capacity.',
  audits (
    not_null(columns := (dept_code, bed_capacity)),
    unique_values(columns := (dept_code))
  )
);
