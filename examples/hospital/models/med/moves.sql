MODEL (
  name med.moves,
  target parquet,
  kind INCREMENTAL_BY_TIME_RANGE (
    time_column moved_at,
    batch_size 7,
    lookback 1
  ),
  cron '@daily',
  interval_unit day,
  columns (
    move_id BIGINT,
    patient_id BIGINT,
    dept_code VARCHAR,
    moved_at TIMESTAMP,
    moved_on DATE
  ),
  grain move_id,
  audits (
    -- every batch, and the whole table before promotion
    not_null(columns := (move_id, patient_id, dept_code, moved_at)),
    -- a move id is unique across history, not only within one batch
    unique_values(columns := (move_id), scope := 'whole'),
    -- each batch must hold only its own week's moves
    forall(criteria := (moved_on = CAST(moved_at AS DATE)), scope := 'per_interval'),
    -- the feed has at least one movement every day: a missing day is a broken extract
    assert_no_gaps(column := moved_at, unit := 'day', scope := 'whole')
  )
);

SELECT
  m.move_id,
  m.patient_id,
  m.dept_code,
  m.moved_at,
  CAST(m.moved_at AS DATE) AS moved_on
FROM raw.movements AS m
WHERE m.moved_at >= @start
  AND m.moved_at < @end
