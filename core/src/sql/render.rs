//! Rendering: the SQL that actually runs, with references rewritten and macros bound.
//!
//! References are rewritten on the AST, so CTEs that shadow a model name are left alone and a
//! qualified column (`events.id`) keeps working when `src.events` becomes a physical name:
//! the replacement carries the original table name as its alias.

use super::canonical::tokens_to_sql;
use super::references::object_name;
use super::{Dialect, ModelQuery, QueryForm};
use sqlparser::ast::{
    Expr, Ident, ObjectName, Query, SetExpr, Statement, TableAlias, TableFactor, Value, VisitMut,
    VisitorMut,
};
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, TokenWithSpan};
use std::ops::ControlFlow;

/// What a referenced model becomes in rendered SQL.
#[derive(Debug, Clone, PartialEq)]
pub enum Relation {
    /// A (possibly quoted) dotted relation name: a view or physical table.
    Name(String),
    /// A table expression: `read_parquet([...])`, or a parenthesized subquery for EMBEDDED.
    Expr(String),
}

/// Why a query could not be rendered. Only malformed replacement SQL produces this; it is a bug
/// in the caller rather than a user error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("cannot render: {0}")]
pub struct RenderError(pub String);

/// Render `query`: each model reference through `resolve` (`None` leaves it as written) and
/// each time macro through `bind` (macro name without `@` → SQL literal). `pretty` lays the
/// SQL out over indented lines for people; engines get the compact form.
pub fn render(
    query: &ModelQuery,
    dialect: Dialect,
    resolve: &dyn Fn(&str) -> Option<Relation>,
    bind: &dyn Fn(&str) -> Option<String>,
    pretty: bool,
) -> Result<String, RenderError> {
    match &query.form {
        QueryForm::Parsed(q) => {
            let mut q = q.as_ref().clone();
            // relations that will be replaced: `schema.table.col` must become `table.col`
            let replaced = super::references::table_refs(&q, "")
                .into_iter()
                .map(|r| r.name)
                .filter(|n| resolve(n).is_some())
                .collect();
            let mut r = Rewriter {
                dialect,
                resolve,
                bind,
                ctes: vec![],
                replaced,
                error: None,
            };
            let _ = q.visit(&mut r);
            match r.error {
                Some(e) => Err(e),
                None if pretty => Ok(format!("{q:#}")),
                None => Ok(q.to_string()),
            }
        }
        QueryForm::Fallback { tokens, .. } => render_tokens(tokens, resolve, bind),
    }
}

fn render_tokens(
    tokens: &[TokenWithSpan],
    resolve: &dyn Fn(&str) -> Option<Relation>,
    bind: &dyn Fn(&str) -> Option<String>,
) -> Result<String, RenderError> {
    let mut out: Vec<TokenWithSpan> = Vec::with_capacity(tokens.len());
    let mut i = 0;
    let raw = |s: String, t: &TokenWithSpan| TokenWithSpan::new(Token::make_word(&s, None), t.span);
    while i < tokens.len() {
        let t = &tokens[i];
        match &t.token {
            Token::Placeholder(p) => {
                let v = bind(p.trim_start_matches('@'))
                    .ok_or_else(|| RenderError(format!("no value for {p}")))?;
                out.push(raw(v, t));
            }
            Token::Word(_) => {
                let mut j = i;
                let mut parts = vec![];
                while let Some(Token::Word(w)) = tokens.get(j).map(|t| &t.token) {
                    parts.push(w.value.to_ascii_lowercase());
                    if matches!(tokens.get(j + 1).map(|t| &t.token), Some(Token::Period))
                        && matches!(tokens.get(j + 2).map(|t| &t.token), Some(Token::Word(_)))
                    {
                        j += 2;
                    } else {
                        break;
                    }
                }
                let name = parts.join(".");
                // `@this_model` (folded into one quoted word) names the relation being written
                let this_model = parts.len() == 1 && name == "@this_model";
                match (parts.len() > 1 || this_model)
                    .then(|| resolve(&name))
                    .flatten()
                {
                    Some(Relation::Name(n)) | Some(Relation::Expr(n)) => {
                        out.push(raw(n, t));
                        i = j + 1;
                        continue;
                    }
                    None => out.push(t.clone()),
                }
            }
            _ => out.push(t.clone()),
        }
        i += 1;
    }
    Ok(tokens_to_sql(&out))
}

struct Rewriter<'a> {
    dialect: Dialect,
    resolve: &'a dyn Fn(&str) -> Option<Relation>,
    bind: &'a dyn Fn(&str) -> Option<String>,
    ctes: Vec<Vec<String>>,
    replaced: std::collections::HashSet<String>,
    error: Option<RenderError>,
}

impl Rewriter<'_> {
    fn parse_factor(&mut self, sql: &str) -> Option<TableFactor> {
        let d = self.dialect.parser();
        let parsed = Parser::parse_sql(d.as_ref(), &format!("SELECT * FROM {sql}"));
        let factor = parsed.ok().and_then(|mut s| match s.pop() {
            Some(Statement::Query(q)) => match *q.body {
                SetExpr::Select(sel) => sel.from.into_iter().next().map(|t| t.relation),
                _ => None,
            },
            _ => None,
        });
        if factor.is_none() {
            self.error = Some(RenderError(format!(
                "replacement `{sql}` is not a table expression"
            )));
        }
        factor
    }
}

impl VisitorMut for Rewriter<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        let names = q
            .with
            .as_ref()
            .map(|w| {
                w.cte_tables
                    .iter()
                    .map(|c| c.alias.name.value.to_ascii_lowercase())
                    .collect()
            })
            .unwrap_or_default();
        self.ctes.push(names);
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _q: &mut Query) -> ControlFlow<()> {
        self.ctes.pop();
        ControlFlow::Continue(())
    }

    fn post_visit_table_factor(&mut self, tf: &mut TableFactor) -> ControlFlow<()> {
        let TableFactor::Table {
            name,
            alias,
            args: None,
            ..
        } = tf
        else {
            return ControlFlow::Continue(());
        };
        let n = object_name(name);
        if name.0.len() == 1 && self.ctes.iter().any(|s| s.contains(&n)) {
            return ControlFlow::Continue(());
        }
        let Some(rel) = (self.resolve)(&n) else {
            return ControlFlow::Continue(());
        };
        let last = name
            .0
            .last()
            .and_then(|p| p.as_ident())
            .cloned()
            .unwrap_or_else(|| Ident::new(""));
        let keep_alias = alias.clone().unwrap_or(TableAlias {
            explicit: true,
            at: None,
            name: alias_for(&last),
            columns: vec![],
        });
        match rel {
            Relation::Name(new) => {
                let d = self.dialect.parser();
                match Parser::new(d.as_ref())
                    .try_with_sql(&new)
                    .and_then(|mut p| p.parse_object_name(false))
                {
                    Ok(obj) => {
                        let new_last = obj
                            .0
                            .last()
                            .and_then(|p| p.as_ident())
                            .map(|i| i.value.to_ascii_lowercase());
                        let same_last =
                            new_last.as_deref() == Some(last.value.to_ascii_lowercase().as_str());
                        *name = ObjectName(obj.0);
                        if alias.is_none() && !same_last {
                            *alias = Some(keep_alias);
                        }
                    }
                    Err(e) => {
                        self.error =
                            Some(RenderError(format!("`{new}` is not a relation name: {e}")))
                    }
                }
            }
            Relation::Expr(sql) => {
                if let Some(mut factor) = self.parse_factor(&sql) {
                    set_alias(&mut factor, keep_alias);
                    *tf = factor;
                }
            }
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        if let Expr::CompoundIdentifier(parts) = e {
            if parts.len() >= 3 {
                let qualifier = format!(
                    "{}.{}",
                    parts[0].value.to_ascii_lowercase(),
                    parts[1].value.to_ascii_lowercase()
                );
                if self.replaced.contains(&qualifier) {
                    // the replacement is aliased with the original table name
                    parts.remove(0);
                }
            }
        }
        if let Expr::Value(v) = e {
            if let Value::Placeholder(p) = &v.value {
                let Some(sql) = (self.bind)(p.trim_start_matches('@')) else {
                    self.error = Some(RenderError(format!("no value bound for {p}")));
                    return ControlFlow::Continue(());
                };
                let d = self.dialect.parser();
                match Parser::new(d.as_ref())
                    .try_with_sql(&sql)
                    .and_then(|mut p| p.parse_expr())
                {
                    Ok(new) => *e = new,
                    Err(err) => {
                        self.error = Some(RenderError(format!(
                            "bound value `{sql}` is not an expression: {err}"
                        )))
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }
}

/// The alias a replaced table keeps its written name under. A name that is a keyword
/// (`m.full`, `s.order`) is quoted, lower-cased as an unquoted name folds, since `AS full`
/// does not parse.
fn alias_for(last: &Ident) -> Ident {
    let upper = last.value.to_ascii_uppercase();
    if last.quote_style.is_none()
        && sqlparser::keywords::ALL_KEYWORDS
            .binary_search(&upper.as_str())
            .is_ok()
    {
        Ident::with_quote('"', last.value.to_ascii_lowercase())
    } else {
        last.clone()
    }
}

fn set_alias(tf: &mut TableFactor, a: TableAlias) {
    match tf {
        TableFactor::Table { alias, .. }
        | TableFactor::Derived { alias, .. }
        | TableFactor::TableFunction { alias, .. }
        | TableFactor::Function { alias, .. } => *alias = Some(a),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::prepare_query;
    use sqlparser::tokenizer::Tokenizer;

    fn q(sql: &str) -> ModelQuery {
        let toks = Tokenizer::new(&sqlparser::dialect::DuckDbDialect {}, sql)
            .tokenize_with_location()
            .unwrap();
        prepare_query(&toks, "m.sql", Dialect::DuckDb, false)
            .unwrap()
            .0
    }

    fn resolve(n: &str) -> Option<Relation> {
        match n {
            "src.events" => Some(Relation::Name("dev__src.events".into())),
            "raw.files" => Some(Relation::Expr(
                "read_parquet(['a.parquet'], union_by_name = true)".into(),
            )),
            "med.helper" => Some(Relation::Expr("(SELECT 1 AS x)".into())),
            "mart.t" => Some(Relation::Name("_efmesh.mart__t__abcd1234".into())),
            _ => None,
        }
    }

    fn bind(m: &str) -> Option<String> {
        (m == "start_ds").then(|| "'2026-01-01'".to_string())
    }

    #[test]
    fn rewrites_references_and_binds_macros() {
        let out = render(&q("WITH src AS (SELECT 1 AS id) SELECT events.id FROM src.events WHERE d >= @start_ds"), Dialect::DuckDb, &resolve, &bind, false).unwrap();
        assert_eq!(out, "WITH src AS (SELECT 1 AS id) SELECT events.id FROM dev__src.events WHERE d >= '2026-01-01'");
        let out = render(
            &q("SELECT t.a FROM mart.t JOIN raw.files f ON true, med.helper"),
            Dialect::DuckDb,
            &resolve,
            &bind,
            false,
        )
        .unwrap();
        assert_eq!(out, "SELECT t.a FROM _efmesh.mart__t__abcd1234 AS t JOIN read_parquet(['a.parquet'], union_by_name = true) f ON true, (SELECT 1 AS x) AS helper");
    }

    #[test]
    fn schema_qualified_columns_follow_the_rewritten_relation() {
        let out = render(
            &q("SELECT src.events.id, mart.t.a FROM src.events, mart.t"),
            Dialect::DuckDb,
            &resolve,
            &bind,
            false,
        )
        .unwrap();
        assert_eq!(
            out,
            "SELECT events.id, t.a FROM dev__src.events, _efmesh.mart__t__abcd1234 AS t"
        );
    }

    #[test]
    fn cte_shadowing_a_model_is_left_alone() {
        let out = render(
            &q("WITH events AS (SELECT 1 AS id) SELECT id FROM events"),
            Dialect::DuckDb,
            &resolve,
            &bind,
            false,
        )
        .unwrap();
        assert_eq!(out, "WITH events AS (SELECT 1 AS id) SELECT id FROM events");
    }

    #[test]
    fn fallback_queries_render_at_token_level() {
        let out = render(
            &q("PIVOT src.events ON k USING sum(v) -- note\n WHERE d >= @start_ds"),
            Dialect::DuckDb,
            &resolve,
            &bind,
            false,
        )
        .unwrap();
        assert_eq!(
            out,
            "PIVOT dev__src.events ON k USING sum(v) \n\n WHERE d >= '2026-01-01'"
        );
    }
}
