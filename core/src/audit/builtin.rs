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

/// The columns a `columns` or `column` argument names, each quoted for SQL: an unquoted name
/// as the engine folds it (lower case, which DuckDB and PostgreSQL both match), a quoted one
/// as written. Anything but a non-empty list of column names is an error saying what was
/// found, so no argument text is ever pasted into SQL as written.
pub fn column_items(text: &str, dialect: Dialect) -> Result<Vec<String>, String> {
    let items =
        list(text, dialect).ok_or_else(|| format!("`{text}` is not a list of column names"))?;
    if items.is_empty() {
        return Err("the list is empty".into());
    }
    let name = |i: &sqlparser::ast::Ident| {
        crate::quote::ident(&match i.quote_style {
            None => i.value.to_lowercase(),
            Some(_) => i.value.clone(),
        })
    };
    items
        .iter()
        .map(|e| match e {
            Expr::Identifier(i) => Ok(name(i)),
            Expr::CompoundIdentifier(parts) => {
                Ok(parts.iter().map(name).collect::<Vec<_>>().join("."))
            }
            other => Err(format!("`{other}` is not a column name")),
        })
        .collect()
}

/// The items of a list argument parsed as SQL expressions and printed back by sqlparser, so
/// only well-formed SQL reaches the query; `None` when the text is not such a list.
fn expression_items(text: &str, dialect: Dialect) -> Option<Vec<String>> {
    Some(list(text, dialect)?.iter().map(|e| e.to_string()).collect())
}

/// `text` parsed whole as one expression and split into its items: `(a, b)` gives `a` and
/// `b`, `(a)` and a bare `a` give `a`; `None` when it is not one expression.
fn list(text: &str, dialect: Dialect) -> Option<Vec<Expr>> {
    let d = dialect.parser();
    let expr = Parser::new(d.as_ref())
        .try_with_sql(text)
        .and_then(|mut p| {
            let e = p.parse_expr()?;
            p.expect_token(&sqlparser::tokenizer::Token::EOF)?;
            Ok(e)
        })
        .ok()?;
    Some(match expr {
        // SQLMesh projects write lists in brackets too: `columns := [a, b]`
        Expr::Tuple(items) | Expr::Array(sqlparser::ast::Array { elem: items, .. }) => items,
        Expr::Nested(e) => vec![*e],
        e => vec![e],
    })
}

/// What is wrong with argument `arg` of built-in audit `audit`, if anything: the checks that
/// keep argument text from reaching SQL other than as column names, literals, a row count or
/// well-formed expressions. `check` reports it at the call.
pub fn argument_problem(audit: &str, arg: &str, value: &str, dialect: Dialect) -> Option<String> {
    match arg {
        "columns" => column_items(value, dialect).err(),
        "column" => match column_items(value, dialect) {
            Ok(c) if c.len() == 1 => None,
            Ok(_) => Some("it names more than one column".into()),
            Err(e) => Some(e),
        },
        "threshold" => value
            .trim()
            .parse::<u64>()
            .err()
            .map(|_| format!("`{value}` is not a whole number of rows")),
        "is_in" => match expression_items(value, dialect) {
            Some(items) if !items.is_empty() => None,
            _ => Some(format!("`{value}` is not a list of values")),
        },
        "criteria" if audit == "forall" => match expression_items(value, dialect) {
            Some(items) if !items.is_empty() => None,
            _ => Some(format!("`{value}` is not a list of SQL conditions")),
        },
        "condition" => match expression_items(value, dialect) {
            Some(items) if items.len() == 1 => None,
            _ => Some(format!("`{value}` is not one SQL condition")),
        },
        "min_v" | "max_v" => match expression_items(value, dialect) {
            Some(items) if items.len() == 1 => None,
            _ => Some(format!("`{value}` is not one value")),
        },
        "inclusive" if !matches!(value.trim().to_ascii_lowercase().as_str(), "true" | "false") => {
            Some(format!("`{value}` is not true or false"))
        }
        _ => None,
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
    // SQLMesh's `condition` filters the rows every built-in audits
    let filtered;
    let relation = match arg("condition").and_then(|c| expression_items(&c, dialect)) {
        Some(c) if c.len() == 1 => {
            filtered = format!("(SELECT * FROM {relation} AS unfiltered WHERE {})", c[0]);
            filtered.as_str()
        }
        _ => relation,
    };
    // `check` refuses arguments that are not what they should be (`argument_problem`); one
    // that got past it anyway becomes a quoted name that matches nothing, never SQL
    let names = |k: &str| {
        let text = get(k);
        column_items(&text, dialect).unwrap_or_else(|_| vec![crate::quote::ident(&text)])
    };
    let columns = || names("columns");
    let column = || names("column").join(", ");
    let expressions = |k: &str| {
        let text = get(k);
        expression_items(&text, dialect).unwrap_or_else(|| vec![crate::quote::literal(&text)])
    };
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
                let label = crate::quote::literal(c.trim_matches('"'));
                format!("SELECT {label} AS \"column\", CAST({c} AS VARCHAR) AS \"value\", count(*) AS occurrences FROM {relation} AS audited WHERE {c} IS NOT NULL GROUP BY {c} HAVING count(*) > 1")
            })
            .collect::<Vec<_>>()
            .join(" UNION ALL "),
        "unique_combination_of_columns" => {
            let cols = columns().join(", ");
            format!("SELECT {cols}, count(*) AS occurrences FROM {relation} AS audited GROUP BY {cols} HAVING count(*) > 1")
        }
        "accepted_values" => {
            let c = column();
            let allowed = expressions("is_in").join(", ");
            format!("SELECT * FROM {relation} AS audited WHERE {c} NOT IN ({allowed})")
        }
        "not_accepted_values" => {
            let c = column();
            let refused = expressions("is_in").join(", ");
            format!("SELECT * FROM {relation} AS audited WHERE {c} IN ({refused})")
        }
        "accepted_range" => {
            let c = column();
            let inclusive = !get("inclusive").trim().eq_ignore_ascii_case("false");
            let (below, above) = if inclusive { ("<", ">") } else { ("<=", ">=") };
            let bound = |k: &str| {
                arg(k)
                    .and_then(|v| expression_items(&v, dialect))
                    .and_then(|v| v.into_iter().next())
                    .filter(|v| !v.eq_ignore_ascii_case("NULL"))
            };
            let mut out_of_range = vec![];
            if let Some(min) = bound("min_v") {
                out_of_range.push(format!("{c} {below} {min}"));
            }
            if let Some(max) = bound("max_v") {
                out_of_range.push(format!("{c} {above} {max}"));
            }
            if out_of_range.is_empty() {
                out_of_range.push("FALSE".into());
            }
            format!(
                "SELECT * FROM {relation} AS audited WHERE {}",
                out_of_range.join(" OR ")
            )
        }
        "at_least_one" => format!(
            // grouped, so an empty table has no group and passes, as in SQLMesh
            "SELECT 1 AS audited_rows, count({c}) AS non_null FROM {relation} AS audited GROUP BY 1 HAVING count({c}) = 0",
            c = column()
        ),
        "not_constant" => format!(
            "SELECT count(DISTINCT {c}) AS distinct_values FROM {relation} AS audited HAVING count(DISTINCT {c}) <= 1",
            c = column()
        ),
        "not_empty_string" => format!(
            "SELECT * FROM {relation} AS audited WHERE {c} = ''",
            c = column()
        ),
        "number_of_rows" => {
            let n = get("threshold").trim().parse::<u64>().unwrap_or(0);
            format!("SELECT count(*) AS row_count, {n} AS threshold FROM {relation} AS audited HAVING count(*) < {n}")
        }
        "forall" => {
            let all = expressions("criteria")
                .iter()
                .map(|c| format!("({c})"))
                .collect::<Vec<_>>()
                .join(" AND ");
            format!("SELECT * FROM {relation} AS audited WHERE NOT ({all})")
        }
        "assert_contiguous" => {
            let c = column();
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
            let c = column();
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

    /// The SQLMesh forms: bracketed lists, `condition`, and `accepted_range`'s optional bounds.
    #[test]
    fn sqlmesh_argument_forms_reach_the_sql() {
        let cols = |t: &str| column_items(t, Dialect::DuckDb);
        assert_eq!(cols("[a, B]").unwrap(), vec!["\"a\"", "\"b\""]);
        let args = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let sql = |name: &str, pairs: &'static [(&'static str, &'static str)]| {
            builtin_sql(name, &args(pairs), "t", Dialect::DuckDb)
                .unwrap()
                .0
        };
        assert_eq!(
            sql("not_null", &[("columns", "[a]"), ("condition", "b > 1")]),
            "SELECT * FROM (SELECT * FROM t AS unfiltered WHERE b > 1) AS audited WHERE \"a\" IS NULL"
        );
        assert_eq!(
            sql(
                "accepted_range",
                &[("column", "a"), ("min_v", "0"), ("max_v", "10")]
            ),
            "SELECT * FROM t AS audited WHERE \"a\" < 0 OR \"a\" > 10"
        );
        assert_eq!(
            sql(
                "accepted_range",
                &[("column", "a"), ("max_v", "10"), ("inclusive", "false")]
            ),
            "SELECT * FROM t AS audited WHERE \"a\" >= 10"
        );
        assert!(
            argument_problem("accepted_range", "inclusive", "maybe", Dialect::DuckDb).is_some()
        );
        assert!(
            argument_problem("not_null", "condition", "a; DROP TABLE t", Dialect::DuckDb).is_some()
        );
    }

    #[test]
    fn list_arguments_split_into_items() {
        let cols = |t: &str| column_items(t, Dialect::DuckDb);
        assert_eq!(cols("(a, B)").unwrap(), vec!["\"a\"", "\"b\""]);
        assert_eq!(cols("(a)").unwrap(), vec!["\"a\""]);
        assert_eq!(cols("\"Odd\"\"Name\"").unwrap(), vec!["\"Odd\"\"Name\""]);
        assert_eq!(cols("t.a").unwrap(), vec!["\"t\".\"a\""]);
        assert_eq!(
            expression_items("(x > 0, y IS NOT NULL)", Dialect::DuckDb).unwrap(),
            vec!["x > 0", "y IS NOT NULL"]
        );
    }

    #[test]
    fn argument_text_never_reaches_sql_unless_it_is_what_it_should_be() {
        let problem =
            |audit: &str, arg: &str, v: &str| argument_problem(audit, arg, v, Dialect::DuckDb);
        assert_eq!(
            problem("not_null", "columns", "()").as_deref(),
            Some("`()` is not a list of column names")
        );
        assert!(problem("not_null", "columns", "(a, 1)")
            .unwrap()
            .contains("`1` is not a column name"));
        assert!(problem("not_null", "columns", "(a); DROP TABLE t; --").is_some());
        assert!(problem("not_null", "columns", "(a, b)").is_none());
        assert!(problem("accepted_values", "column", "(a, b)").is_some());
        assert!(problem("number_of_rows", "threshold", "1; DROP TABLE t").is_some());
        assert!(problem("number_of_rows", "threshold", "10").is_none());
        assert!(problem("accepted_values", "is_in", "('a', 'b')").is_none());
        assert!(problem("accepted_values", "is_in", "('a'); DROP TABLE t").is_some());
        assert!(problem("forall", "criteria", "(x > 0) OR 1=1; DROP TABLE t").is_some());
        // an argument that got past check anyway is a quoted name, not SQL
        let arg = |k: &str| (k == "columns").then(|| "a IS NULL; DROP TABLE t; --".to_string());
        let (sql, _) = builtin_sql("not_null", &arg, "t", Dialect::DuckDb).unwrap();
        assert_eq!(
            sql,
            "SELECT * FROM t AS audited WHERE \"a IS NULL; DROP TABLE t; --\" IS NULL"
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
