MODEL (name doubled, kind VIEW);
SELECT n * 2 AS d FROM numbers
