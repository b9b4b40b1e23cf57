MODEL (name mart.c, kind FULL, description 'C', column_descriptions (total = 'declared'));
SELECT
  id, -- not ignored
  total
FROM mart.a
