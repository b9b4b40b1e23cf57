-- unaliased casts and literals: SQLMesh names them ds, user_id, amount, web and _col_4
MODEL (
  name stg.events,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ds)
);
SELECT ds::DATE, user_id::INT, CAST(amount AS DOUBLE), 'web', 1 + 1
FROM raw.events
WHERE ds::DATE BETWEEN @start_ds AND @end_ds
