MODEL (
  name raw.events,
  kind EXTERNAL (
    path 'landing/**/*.parquet',
    format parquet,
    hive_partitioning true,
    union_by_name true
  ),
  columns (
    event_id VARCHAR,
    event_type VARCHAR,
    user_id BIGINT,
    event_time TIMESTAMP,
    received_at TIMESTAMP,
    app_version VARCHAR,
    day DATE
  ),
  description 'The archive as delivered, at least once: an event can occur several times, in its own arrival day''s partition or a later one. `day` is the arrival day (the hive directory); generation-2 files add `app_version`.',
  -- `efmesh compact`: merge each settled day into one file, one row per event_id (the first
  -- arrival), once the day is over and its newest file has rested 10 minutes
  maintenance (
    partition_key day,
    unique_key (event_id),
    order received_at,
    grace 10
  )
);
