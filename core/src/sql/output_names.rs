//! SQLMesh's names for unaliased select items.
//!
//! SQLMesh runs every model query through sqlglot's optimizer, which gives each unaliased
//! projection of every SELECT (CTEs, subqueries and set-operation branches included) an alias:
//! the item's sqlglot *output name* when it has one (`ds::DATE` is `ds`, `'a'` is `a`, `1` is
//! `1`), else `_col_<position>`. The tables SQLMesh builds carry those names, and its users'
//! downstream models read them (`SELECT ds FROM parent` over a parent that selects `ds::DATE`).
//! DuckDB left alone names the same column `CAST(ds AS DATE)`, so a SQLMesh project is given
//! the aliases SQLMesh would give it, before its query is fingerprinted or analyzed.
//!
//! Items whose sqlglot name depends on a rewrite efmesh does not perform (a subscript `x[1]`,
//! which sqlglot renumbers from zero, or a JSON arrow) are left unaliased: their column names
//! stay DuckDB's, and the column analysis reports them as not inferable.

use sqlparser::ast::{
    BinaryOperator, CastKind, Expr, Ident, Query, SelectItem, SetExpr, Value, ValueWithSpan,
    VisitMut, VisitorMut,
};
use std::ops::ControlFlow;

/// Alias every unaliased projection of every SELECT in `query` as SQLMesh does.
pub fn name_outputs(query: &mut Query) {
    let _ = query.visit(&mut Namer);
}

struct Namer;

impl VisitorMut for Namer {
    type Break = ();

    fn post_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        name_set_expr(&mut q.body);
        ControlFlow::Continue(())
    }
}

/// The SELECTs directly in this query's body; nested queries are visited on their own.
fn name_set_expr(body: &mut SetExpr) {
    match body {
        SetExpr::Select(s) => {
            for (i, item) in s.projection.iter_mut().enumerate() {
                if let SelectItem::UnnamedExpr(e) = item {
                    if let Some(alias) = alias_for(e, i) {
                        let expr = std::mem::replace(e, Expr::value(Value::Null));
                        *item = SelectItem::ExprWithAlias { expr, alias };
                    }
                }
            }
        }
        SetExpr::SetOperation { left, right, .. } => {
            name_set_expr(left);
            name_set_expr(right);
        }
        _ => {}
    }
}

/// The alias sqlglot gives an unaliased item at `position`; `None` when it needs none (a column
/// reference is already named) or when efmesh does not reproduce sqlglot's name for it.
fn alias_for(e: &Expr, position: usize) -> Option<Ident> {
    match e {
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => None,
        // sqlglot names these after a rewrite (zero-based subscripts, JSON paths)
        // (sqlparser reads DuckDB's `j -> '$.a'` as a lambda)
        Expr::CompoundFieldAccess { .. } | Expr::JsonAccess { .. } | Expr::Lambda(_) => None,
        Expr::BinaryOp {
            op: BinaryOperator::Arrow | BinaryOperator::LongArrow,
            ..
        } => None,
        Expr::Nested(inner) => match inner.as_ref() {
            Expr::Identifier(i) => Some(i.clone()),
            Expr::CompoundIdentifier(parts) => parts.last().cloned(),
            _ => Some(positional(position)),
        },
        Expr::Cast {
            kind: CastKind::Cast | CastKind::DoubleColon | CastKind::TryCast | CastKind::SafeCast,
            expr,
            ..
        } => Some(name_of(expr).unwrap_or_else(|| positional(position))),
        Expr::Value(v) => Some(literal_name(v).unwrap_or_else(|| positional(position))),
        Expr::TypedString(t) => {
            Some(literal_name(&t.value).unwrap_or_else(|| positional(position)))
        }
        _ => Some(positional(position)),
    }
}

/// sqlglot's `name` of a cast's operand: a column's name, a literal's text, or a nested cast's
/// own operand name; anything else (a function call, a parenthesized expression) has none.
fn name_of(e: &Expr) -> Option<Ident> {
    match e {
        Expr::Identifier(i) => Some(i.clone()),
        Expr::CompoundIdentifier(parts) => parts.last().cloned(),
        Expr::Cast { expr, .. } => name_of(expr),
        Expr::Value(v) => literal_name(v)
            .or_else(|| matches!(v.value, Value::Null).then(|| Ident::with_quote('"', "NULL"))),
        Expr::TypedString(t) => literal_name(&t.value),
        _ => None,
    }
}

/// A string literal is named by its text, a number by its digits; other literals have no name.
fn literal_name(v: &ValueWithSpan) -> Option<Ident> {
    match &v.value {
        Value::SingleQuotedString(s) | Value::Number(s, _) => Some(Ident::with_quote('"', s)),
        _ => None,
    }
}

fn positional(position: usize) -> Ident {
    Ident::with_quote('"', format!("_col_{position}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::DuckDbDialect;
    use sqlparser::parser::Parser;

    fn named(sql: &str) -> String {
        let mut q = match Parser::parse_sql(&DuckDbDialect {}, sql).unwrap().remove(0) {
            sqlparser::ast::Statement::Query(q) => q,
            other => panic!("not a query: {other}"),
        };
        name_outputs(&mut q);
        q.to_string()
    }

    /// Each expected alias is the one sqlglot's optimizer (through SQLMesh 0.236.4's renderer)
    /// gives the same item.
    #[test]
    fn unaliased_items_get_sqlglots_names() {
        assert_eq!(
            named("SELECT ds::DATE, t.x::INT, CAST(CAST(y AS INT) AS TEXT), TRY_CAST(z AS INT), a, t.b, c AS d, * FROM t"),
            r#"SELECT ds::DATE AS ds, t.x::INT AS x, CAST(CAST(y AS INT) AS TEXT) AS y, TRY_CAST(z AS INT) AS z, a, t.b, c AS d, * FROM t"#
        );
        assert_eq!(
            named("SELECT 1, 'a b', 1.50, 1 + 1, COUNT(*), TRUE, NULL, CAST(NULL AS INT), (x), CAST(sum(x) AS INT), CAST((x) AS INT), DATE '2020-01-01', CURRENT_DATE FROM t"),
            r#"SELECT 1 AS "1", 'a b' AS "a b", 1.50 AS "1.50", 1 + 1 AS "_col_3", COUNT(*) AS "_col_4", true AS "_col_5", NULL AS "_col_6", CAST(NULL AS INT) AS "NULL", (x) AS x, CAST(sum(x) AS INT) AS "_col_9", CAST((x) AS INT) AS "_col_10", DATE '2020-01-01' AS "2020-01-01", CURRENT_DATE AS "_col_12" FROM t"#
        );
    }

    #[test]
    fn every_select_is_named_ctes_subqueries_and_union_branches() {
        assert_eq!(
            named("WITH c AS (SELECT x::INT, 1 + 1 FROM t) SELECT x, (SELECT max(y)::INT FROM t) FROM c UNION ALL SELECT 1::INT, 2 FROM (SELECT z::TEXT FROM u) AS s WHERE s.z IN (SELECT q::INT FROM v)"),
            r#"WITH c AS (SELECT x::INT AS x, 1 + 1 AS "_col_1" FROM t) SELECT x, (SELECT max(y)::INT AS "_col_0" FROM t) AS "_col_1" FROM c UNION ALL SELECT 1::INT AS "1", 2 AS "2" FROM (SELECT z::TEXT AS z FROM u) AS s WHERE s.z IN (SELECT q::INT AS q FROM v)"#
        );
    }

    #[test]
    fn subscripts_and_json_paths_keep_duckdbs_names() {
        assert_eq!(
            named("SELECT x[1], j -> '$.a' FROM t"),
            "SELECT x[1], j -> '$.a' FROM t"
        );
    }
}
