MODEL (
  name mart.logs,
  kind VIEW,
  depends_on (mart.customers, mart.events)
);

-- the tables the other models' statements wrote, read when the view is read
SELECT 'batch' AS source, stage, first_day AS day, rows_after AS n FROM ops.batches
UNION ALL
SELECT 'promotion', stage, NULL, rows_seen FROM ops.promotions
