MODEL (name mart.looked_up, kind FULL);
SELECT k, v FROM ops.lookup
