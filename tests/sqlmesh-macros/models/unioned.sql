-- @UNION: the columns of the same name and type (region, amount), deduplicated
MODEL (name mart.unioned, kind FULL, depends_on (raw.shop_a, raw.shop_b));
@UNION('distinct', raw.shop_a, raw.shop_b)
