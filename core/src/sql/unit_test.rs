//! What a unit test runs besides a model's rendered query: each of the query's CTEs as a query
//! of its own (SQLMesh's `outputs: ctes`), and the query with the clock frozen at the test's
//! `execution_time`, so `CURRENT_DATE` and `now()` answer as they would have then.
//!
//! Both work on the rendered SQL (references already point at the fixtures), so a CTE is
//! tested on exactly the relations the whole query reads.

use super::Dialect;
use chrono::NaiveDateTime;
use sqlparser::ast::{Expr, Query, SetExpr, Statement, VisitMut, VisitorMut};
use sqlparser::parser::Parser;
use std::ops::ControlFlow;

/// A rendered model query prepared for a unit test.
#[derive(Debug, Clone, PartialEq)]
pub struct TestQueries {
    /// The whole query, clock frozen when asked.
    pub query: String,
    /// Each CTE of the query's top-level `WITH`, as (lower-cased name, a query returning its
    /// rows with every CTE in scope), in the order written.
    pub ctes: Vec<(String, String)>,
    /// Whether the query orders its rows itself (then rows are compared in order).
    pub ordered: bool,
}

/// Parse one rendered query and prepare it for a test: `clock` replaces the engine's clock
/// functions with that instant (UTC), as SQLMesh does when a test sets `execution_time`.
pub fn test_queries(
    sql: &str,
    dialect: Dialect,
    clock: Option<NaiveDateTime>,
) -> Result<TestQueries, String> {
    let d = dialect.parser();
    let mut stmts = Parser::parse_sql(d.as_ref(), sql).map_err(|e| e.to_string())?;
    let mut q = match (stmts.pop(), stmts.is_empty()) {
        (Some(Statement::Query(q)), true) => q,
        _ => return Err("the rendered model is not one query".into()),
    };
    if let Some(at) = clock {
        let _ = q.visit(&mut FrozenClock::new(dialect, at)?);
    }
    let mut ctes = vec![];
    if let Some(with) = &q.with {
        for cte in &with.cte_tables {
            let name = cte.alias.name.value.clone();
            // the alias as written, quotes included, names the same relation
            let select = format!("SELECT * FROM {}", cte.alias.name);
            let mut stmt = Parser::parse_sql(d.as_ref(), &select).map_err(|e| e.to_string())?;
            let Some(Statement::Query(mut cq)) = stmt.pop() else {
                return Err(format!("cannot select from CTE `{name}`"));
            };
            cq.with = Some(with.clone());
            ctes.push((name.to_ascii_lowercase(), cq.to_string()));
        }
    }
    Ok(TestQueries {
        ordered: orders(&q),
        query: q.to_string(),
        ctes,
    })
}

/// Whether a query's rows come out in an order it sets.
fn orders(q: &Query) -> bool {
    q.order_by.is_some() || matches!(q.body.as_ref(), SetExpr::Query(inner) if orders(inner))
}

/// Replaces clock functions with literals of one instant.
struct FrozenClock {
    date: Expr,
    timestamp: Expr,
    time: Expr,
}

impl FrozenClock {
    fn new(dialect: Dialect, at: NaiveDateTime) -> Result<FrozenClock, String> {
        let d = dialect.parser();
        let expr = |ty: &str| {
            let text = at.format("%Y-%m-%d %H:%M:%S%.f").to_string();
            Parser::new(d.as_ref())
                .try_with_sql(&format!("CAST({} AS {ty})", crate::quote::literal(&text)))
                .and_then(|mut p| p.parse_expr())
                .map_err(|e| e.to_string())
        };
        Ok(FrozenClock {
            date: expr("DATE")?,
            timestamp: expr("TIMESTAMP")?,
            time: expr("TIME")?,
        })
    }
}

impl VisitorMut for FrozenClock {
    type Break = ();

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        let Expr::Function(f) = e else {
            return ControlFlow::Continue(());
        };
        if f.name.0.len() != 1 {
            return ControlFlow::Continue(());
        }
        let name = f.name.to_string().to_ascii_lowercase();
        let frozen = match name.as_str() {
            "current_date" | "today" => &self.date,
            "current_timestamp"
            | "now"
            | "get_current_timestamp"
            | "transaction_timestamp"
            | "localtimestamp"
            | "current_localtimestamp" => &self.timestamp,
            "current_time" | "localtime" | "get_current_time" => &self.time,
            _ => return ControlFlow::Continue(()),
        };
        *e = frozen.clone();
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").unwrap()
    }

    #[test]
    fn each_cte_becomes_a_query_with_every_cte_in_scope() {
        let sql =
            "WITH a AS (SELECT 1 AS x), \"B\" AS (SELECT x + 1 AS y FROM a) SELECT * FROM \"B\"";
        let t = test_queries(sql, Dialect::DuckDb, None).unwrap();
        let names: Vec<&str> = t.ctes.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(
            t.ctes[1].1,
            "WITH a AS (SELECT 1 AS x), \"B\" AS (SELECT x + 1 AS y FROM a) SELECT * FROM \"B\""
        );
        assert!(t.ctes[0].1.ends_with("SELECT * FROM a"), "{}", t.ctes[0].1);
        assert!(!t.ordered);
        let t = test_queries("SELECT 1 AS x ORDER BY x", Dialect::DuckDb, None).unwrap();
        assert!(t.ctes.is_empty() && t.ordered);
    }

    #[test]
    fn clock_functions_read_the_frozen_instant() {
        let sql = "SELECT CURRENT_DATE AS d, now() AS n, current_timestamp AS t, \
                   CURRENT_TIME AS h, today() - 1 AS y, my_now() AS keep";
        let t = test_queries(sql, Dialect::DuckDb, Some(at("2024-03-01 10:30:00"))).unwrap();
        assert_eq!(
            t.query,
            "SELECT CAST('2024-03-01 10:30:00' AS DATE) AS d, \
             CAST('2024-03-01 10:30:00' AS TIMESTAMP) AS n, \
             CAST('2024-03-01 10:30:00' AS TIMESTAMP) AS t, \
             CAST('2024-03-01 10:30:00' AS TIME) AS h, \
             CAST('2024-03-01 10:30:00' AS DATE) - 1 AS y, my_now() AS keep"
        );
        // without a clock nothing changes
        let t = test_queries("SELECT now() AS n", Dialect::DuckDb, None).unwrap();
        assert_eq!(t.query, "SELECT now() AS n");
        assert!(test_queries("SELECT 1; SELECT 2", Dialect::DuckDb, None).is_err());
    }
}
