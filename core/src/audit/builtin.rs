//! The built-in audits as SQL: each is a query for the rows (or values, or gaps) that violate it.
//!
//! Names and arguments follow SQLMesh, so a project moves over unchanged; `assert_contiguous`
//! and `assert_no_gaps` are efmesh's continuity gates. Each query is written so that its rows
//! are what a person needs to see to fix the data: the duplicated value with its count rather
//! than every duplicate row, the boundaries of a hole rather than the rows around it.

use crate::sql::Dialect;
use sqlparser::ast::Expr;
use sqlparser::parser::Parser;

/// How the rows of an audit query read: as violations, or as holes in coverage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Each row is one violation.
    Violations,
    /// Each row is a hole: `(covered_through, resumes_at)`, in order.
    Gaps,
}

/// The bucket width an `assert_no_gaps` unit names, as a DuckDB/PostgreSQL interval, with the
/// format its boundaries print in; `None` for a unit efmesh does not know.
pub fn gap_unit(value: &str) -> Option<(&'static str, &'static str, &'static str)> {
    let v = value.trim().trim_matches('\'').to_ascii_lowercase();
    Some(match v.as_str() {
        "minute" => ("minute", "INTERVAL '1 minute'", "%Y-%m-%d %H:%M"),
        "hour" => ("hour", "INTERVAL '1 hour'", "%Y-%m-%d %H:00"),
        "day" => ("day", "INTERVAL '1 day'", "%Y-%m-%d"),
        "week" => ("week", "INTERVAL '7 days'", "%Y-%m-%d"),
        "month" => ("month", "INTERVAL '1 month'", "%Y-%m"),
        _ => return None,
    })
}

/// The items of a list argument: `(a, b)` gives `a` and `b`, a bare `a` gives `a`.
pub fn list_items(text: &str, dialect: Dialect) -> Vec<String> {
    let d = dialect.parser();
    match Parser::new(d.as_ref())
        .try_with_sql(text)
        .and_then(|mut p| p.parse_expr())
    {
        Ok(Expr::Tuple(items)) => items.iter().map(|e| e.to_string()).collect(),
        Ok(Expr::Nested(e)) => vec![e.to_string()],
        Ok(e) => vec![e.to_string()],
        Err(_) => vec![text.to_string()],
    }
}

/// The query for a built-in audit's violations over `relation` (a table name or a
/// parenthesized subquery), or `None` when `name` is not a built-in. `arg` looks up the call's
/// arguments as SQL text; `check_call` has made sure the required ones exist.
pub fn builtin_sql(
    name: &str,
    arg: &dyn Fn(&str) -> Option<String>,
    relation: &str,
    dialect: Dialect,
) -> Option<(String, Shape)> {
    let get = |k: &str| arg(k).unwrap_or_default();
    let columns = || list_items(&get("columns"), dialect);
    let sql = match name {
        "not_null" => {
            let cond = columns()
                .iter()
                .map(|c| format!("{c} IS NULL"))
                .collect::<Vec<_>>()
                .join(" OR ");
            format!("SELECT * FROM {relation} AS audited WHERE {cond}")
        }
        "unique_values" => columns()
            .iter()
            .map(|c| {
                let label = c.replace('\'', "''");
                format!("SELECT '{label}' AS \"column\", CAST({c} AS VARCHAR) AS \"value\", count(*) AS occurrences FROM {relation} AS audited WHERE {c} IS NOT NULL GROUP BY {c} HAVING count(*) > 1")
            })
            .collect::<Vec<_>>()
            .join(" UNION ALL "),
        "unique_combination_of_columns" => {
            let cols = columns().join(", ");
            format!("SELECT {cols}, count(*) AS occurrences FROM {relation} AS audited GROUP BY {cols} HAVING count(*) > 1")
        }
        "accepted_values" => {
            let c = get("column");
            let allowed = list_items(&get("is_in"), dialect).join(", ");
            format!("SELECT * FROM {relation} AS audited WHERE {c} NOT IN ({allowed})")
        }
        "number_of_rows" => {
            let n = get("threshold");
            format!("SELECT count(*) AS row_count, {n} AS threshold FROM {relation} AS audited HAVING count(*) < {n}")
        }
        "forall" => {
            let all = list_items(&get("criteria"), dialect)
                .iter()
                .map(|c| format!("({c})"))
                .collect::<Vec<_>>()
                .join(" AND ");
            format!("SELECT * FROM {relation} AS audited WHERE NOT ({all})")
        }
        "assert_contiguous" => {
            let c = get("column");
            return Some((
                gaps_sql(
                    &format!("SELECT DISTINCT {c} AS v FROM {relation} AS audited WHERE {c} IS NOT NULL"),
                    "1",
                    "CAST(g.lo AS VARCHAR)",
                    "CAST(g.hi AS VARCHAR)",
                ),
                Shape::Gaps,
            ));
        }
        "assert_no_gaps" => {
            let c = get("column");
            let (unit, step, fmt) = gap_unit(&get("unit")).unwrap_or(gap_unit("day")?);
            return Some((
                gaps_sql(
                    &format!("SELECT DISTINCT date_trunc('{unit}', CAST({c} AS TIMESTAMP)) AS v FROM {relation} AS audited WHERE {c} IS NOT NULL"),
                    step,
                    &format_instant("g.lo", fmt, dialect),
                    &format_instant("g.hi", fmt, dialect),
                ),
                Shape::Gaps,
            ));
        }
        _ => return None,
    };
    Some((sql, Shape::Violations))
}

/// `expr` (a timestamp) as text in `fmt` (strftime's letters), in the engine's spelling.
fn format_instant(expr: &str, fmt: &str, dialect: Dialect) -> String {
    match dialect {
        Dialect::DuckDb => format!("strftime({expr}, '{fmt}')"),
        Dialect::Postgres => {
            let pg = fmt
                .replace("%Y", "YYYY")
                .replace("%m", "MM")
                .replace("%d", "DD")
                .replace("%H", "HH24")
                .replace("%M", "MI");
            format!("to_char({expr}, '{pg}')")
        }
    }
}

/// Holes between consecutive distinct values: only inside the observed range, so a late
/// start or a missing tail is never a gap.
fn gaps_sql(values: &str, step: &str, through: &str, resumes: &str) -> String {
    format!(
        "SELECT {through} AS covered_through, {resumes} AS resumes_at FROM (SELECT v AS lo, lead(v) OVER (ORDER BY v) AS hi FROM ({values}) AS b) AS g WHERE g.hi > g.lo + {step} ORDER BY g.lo"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_arguments_split_into_items() {
        assert_eq!(list_items("(a, b)", Dialect::DuckDb), vec!["a", "b"]);
        assert_eq!(list_items("(a)", Dialect::DuckDb), vec!["a"]);
        assert_eq!(list_items("a", Dialect::DuckDb), vec!["a"]);
        assert_eq!(
            list_items("(x > 0, y IS NOT NULL)", Dialect::DuckDb),
            vec!["x > 0", "y IS NOT NULL"]
        );
    }

    #[test]
    fn every_builtin_has_sql_and_units_are_checked() {
        for (name, _) in super::super::BUILTIN_AUDITS {
            let arg = |k: &str| {
                Some(match k {
                    "unit" => "'day'".to_string(),
                    "threshold" => "1".into(),
                    "is_in" => "('a')".into(),
                    "criteria" => "(x > 0)".into(),
                    _ => "x".into(),
                })
            };
            assert!(
                builtin_sql(name, &arg, "t", Dialect::DuckDb).is_some(),
                "{name}"
            );
        }
        assert!(builtin_sql("mine", &|_| None, "t", Dialect::DuckDb).is_none());
        assert!(gap_unit("'hour'").is_some());
        assert!(gap_unit("'fortnight'").is_none());
    }
}
