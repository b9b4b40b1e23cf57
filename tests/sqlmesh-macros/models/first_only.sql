-- @UNION with a false condition reads the first table only
MODEL (name mart.first_only, kind FULL, depends_on (raw.shop_a, raw.shop_b));
@UNION(FALSE, 'all', raw.shop_a, raw.shop_b)
