MODEL (name mart.counted, kind FULL);
SELECT COUNT(*) AS n FROM warehouse.mart.from_side
