-- and casts an SCD table to the types it infers
MODEL (name mart.scd, kind SCD_TYPE_2_BY_COLUMN (unique_key id, columns [total]));
SELECT 1 AS id, SUM(2) OVER () AS total
