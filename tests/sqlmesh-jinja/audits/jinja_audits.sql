-- a SQLMesh audit written in Jinja: its arguments are Jinja variables
AUDIT (
  name jinja_at_most,
  defaults (threshold = 1000)
);
JINJA_QUERY_BEGIN;
SELECT *
FROM {{ this_model }}
WHERE {{ column }} > {{ threshold }}
  AND region = '{{ var('region') }}'
JINJA_END;
