MODEL (name mart.shaped, kind FULL);

WITH latest AS (
  @DEDUPLICATE(raw.sales, [region], ['amount DESC'])
), days AS (
  @DATE_SPINE('day', '2026-01-01', '2026-01-03')
)
SELECT
  (SELECT count(*) FROM days) AS n_days,
  (SELECT max(date_day) FROM days) AS last_day,
  @PIVOT(region, ['eu', 'us', 'jp'], prefix := 'n_'),
  @PIVOT(region, ['eu'], agg := 'MAX', then_value := amount, else_value := NULL, suffix := '_max'),
  round(@HAVERSINE_DISTANCE(52.52, 13.405, 48.8566, 2.3522, 'km'), 3) AS berlin_paris_km
FROM latest
