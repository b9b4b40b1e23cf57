-- reads its own earlier rows, as sushi's customer_revenue_lifetime does: its table is made from
-- its declared columns, then filled a day at a time; its audit names tables with the catalog
MODEL (
  name mart.running,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ds, batch_size 1),
  end '2026-01-03',
  columns (ds DATE, total DOUBLE),
  audits (events_so_far)
);

WITH prev AS (
  SELECT r.total FROM mart.running AS r WHERE r.ds = @start_date - INTERVAL 1 DAY
)
SELECT
  @start_date::DATE AS ds,
  COALESCE((SELECT SUM(e.amount) FROM stg.events AS e WHERE e.ds = @start_date), 0)
    + COALESCE((SELECT MAX(total) FROM prev), 0) AS total;

AUDIT (name events_so_far);
SELECT * FROM "db"."mart"."running" AS r
WHERE r.total > 0 AND NOT EXISTS (SELECT 1 FROM "db"."stg"."events" AS e WHERE e.ds <= r.ds)
