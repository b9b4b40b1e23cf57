MODEL (name warehouse.mart.from_side, kind FULL);
SELECT id, name FROM side.main.src
