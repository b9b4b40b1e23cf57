MODEL (
  name mart.events,
  kind INCREMENTAL_BY_TIME_RANGE (
    time_column day,
    batch_size 1
  ),
  end '2026-12-02'
);

@DEF(tag, 'batch');

CREATE SCHEMA IF NOT EXISTS ops;
CREATE TABLE IF NOT EXISTS ops.batches (stage TEXT, tag TEXT, first_day TEXT, last_day TEXT, rows_after BIGINT);

SELECT
  @start_date AS day,
  1 AS n;

INSERT INTO ops.batches
SELECT @runtime_stage, @tag, @start_ds, @end_ds, count(*) FROM @this_model;

JINJA_STATEMENT_BEGIN;
INSERT INTO ops.batches
SELECT 'jinja {{ var("zip_default") }}', (SELECT count(*) FROM {{ this_model }})::TEXT, '{{ start_ds }}', '{{ end_ds }}', {% for i in range(3) %}{{ i }} + {% endfor %}0;
JINJA_END;
