MODEL (name m.jinja_full, kind FULL, audits (jinja_at_most(column := doubled)));
JINJA_QUERY_BEGIN;
SELECT
  id,
  {{ double('amount') }} AS doubled,
  '{{ var('region') }}' AS region,
  '{{ var('shop')['name'] }}' AS shop_name,
  {{ var('tiers')['a'] | length }} AS tiers
  {% for c in ['a', 'b'] %}, '{{ c }}' AS col_{{ c }}{% endfor %}
FROM raw.events {# a Jinja comment #}
WHERE amount > {{ var('threshold', 0) }}
JINJA_END;
