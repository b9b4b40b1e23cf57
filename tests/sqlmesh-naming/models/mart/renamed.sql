MODEL (name mart.explicit_name, kind FULL);
SELECT id FROM raw.events WHERE id > 2
