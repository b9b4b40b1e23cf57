{% macro double(col) %}{{ col }} * 2{% endmacro %}
