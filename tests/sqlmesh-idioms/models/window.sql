-- the interval a YAML test renders: a date-only `end` is its whole day, as in SQLMesh
MODEL (name mart.win, kind INCREMENTAL_BY_TIME_RANGE (time_column d));
SELECT @start_ds AS s, @end_ds AS e, CAST(@start_ds AS DATE) AS d
