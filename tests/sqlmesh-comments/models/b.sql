/* The b model, described by a leading comment */
MODEL (name mart.b, kind VIEW);
SELECT
  id, -- the id again
  total
FROM mart.a
