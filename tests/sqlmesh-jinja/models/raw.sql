MODEL (name raw.events, kind FULL);
SELECT id, CAST(ds AS DATE) AS ds, amount FROM (VALUES
  (1, '2019-12-31', 10),
  (2, '2020-01-01', 20),
  (3, '2020-01-03', 30),
  (4, '2099-01-01', 40)
) AS t(id, ds, amount)
