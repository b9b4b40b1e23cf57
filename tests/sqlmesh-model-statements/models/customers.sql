MODEL (
  name mart.customers,
  kind FULL
);

-- what SQLMesh's own sushi example does: a helper view the query reads, made before it runs
CREATE SCHEMA IF NOT EXISTS raw;
DROP VIEW IF EXISTS raw.demographics;
CREATE VIEW raw.demographics AS (
  SELECT 1 AS customer_id, @zip_default AS zip
);
CREATE SCHEMA IF NOT EXISTS ops;
CREATE TABLE IF NOT EXISTS ops.promotions (stage TEXT, rows_seen BIGINT);

SELECT
  c.customer_id,
  d.zip
FROM (VALUES (1), (2)) AS c(customer_id)
LEFT JOIN raw.demographics AS d
  ON c.customer_id = d.customer_id;

-- only when the table exists already (not at its first build, where SQLMesh's stage is `creating`)
@IF(@runtime_stage = 'evaluating', UPDATE @this_model SET zip = 'refreshed');

ON_VIRTUAL_UPDATE_BEGIN;
INSERT INTO ops.promotions SELECT @runtime_stage, count(*) FROM @this_model;
ON_VIRTUAL_UPDATE_END;
