MODEL (name m.map_var, kind FULL);
SELECT @VAR('shop') AS shop, @VAR('shop')['name'] AS shop_name, @VAR('tiers') AS tiers
