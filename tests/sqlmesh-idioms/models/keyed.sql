-- SQLMesh keeps the query's types for a table keyed by its unique key
MODEL (name mart.keyed, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key id));
SELECT 1 AS id, SUM(2) OVER () AS total
