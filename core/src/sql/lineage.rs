//! Column-level lineage of one query: for every output column, the columns of the relations it
//! reads that its value is computed from, traced through CTEs, aliases, `*` expansion and
//! subqueries on the canonical AST; and, apart from them, the columns that decide which rows
//! exist (filters) and how rows of different relations meet (joins).
//!
//! The project-level walk from a model down to its EXTERNAL and SEED origins is
//! [`crate::lineage`]; this module only knows one query and a catalog of its sources' columns.

use super::columns::{
    join_constraint, lambda_params, table_function_columns, wildcard_selection, FREE_IDENTIFIERS,
};
use super::references::object_name;
use serde::Serialize;
use sqlparser::ast::{
    Expr, Ident, JoinConstraint, Query, Select, SelectItem, SelectItemQualifiedWildcardKind,
    SetExpr, SetQuantifier, TableFactor, TableWithJoins, Visit, Visitor, WildcardAdditionalOptions,
};
use std::collections::BTreeSet;
use std::ops::ControlFlow;

/// One column of one relation: the unit lineage is made of.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ColumnRef {
    /// The relation as the query names it (`mart.stays`), lower-cased: a model's name, or the
    /// name of a relation efmesh does not manage.
    pub model: String,
    /// The column, lower-cased.
    pub column: String,
}

/// The columns a value, a filter or a join reads, ordered so output is deterministic.
pub type Deps = BTreeSet<ColumnRef>;

/// What one query's columns are made of.
#[derive(Debug, Clone, Default)]
pub struct QueryLineage {
    /// Each output column (lower-cased, in order) and the source columns its value comes from.
    pub columns: Vec<(String, Deps)>,
    /// Columns read by WHERE, HAVING and QUALIFY anywhere in the query (CTEs and subqueries
    /// included): they decide which rows exist, not what a row holds.
    pub filters: Deps,
    /// Columns read by join conditions (ON, USING, NATURAL, ASOF) anywhere in the query.
    pub joins: Deps,
    /// What could not be traced and why (a `*` over a relation of unknown columns, a column
    /// that several sources of unknown columns might hold), so a gap is shown, never hidden.
    pub gaps: Vec<String>,
}

impl QueryLineage {
    /// The sources of one output column, if the query has it.
    pub fn column(&self, name: &str) -> Option<&Deps> {
        self.columns.iter().find(|(c, _)| c == name).map(|(_, d)| d)
    }
}

/// Trace `query`. `catalog` returns the columns of a referenced relation (by its lower-cased
/// dotted name) or `None` when they are unknown.
pub fn query_lineage(query: &Query, catalog: &dyn Fn(&str) -> Option<Vec<String>>) -> QueryLineage {
    let mut ctx = Ctx {
        catalog,
        out: QueryLineage::default(),
    };
    let columns = query_cols(query, &Vec::new(), None, &mut ctx);
    let mut out = ctx.out;
    match columns {
        Some(c) => out.columns = c,
        None => out
            .gaps
            .push("the query's output columns could not be derived".into()),
    }
    out
}

struct Ctx<'a> {
    catalog: &'a dyn Fn(&str) -> Option<Vec<String>>,
    out: QueryLineage,
}

impl Ctx<'_> {
    fn gap(&mut self, why: String) {
        if !self.out.gaps.contains(&why) {
            self.out.gaps.push(why);
        }
    }
}

type Cols = Vec<(String, Deps)>;
type Env = Vec<(String, Option<Cols>)>;

/// A relation in a FROM clause, with what each of its columns is made of.
#[derive(Debug, Clone)]
struct Rel {
    /// The name that qualifies its columns: the alias, or the table's last name part.
    alias: String,
    /// The full dotted name, when unaliased (`schema.table.col` references).
    qualified: Option<String>,
    columns: Option<Cols>,
    /// The relation's name when it is a base relation, so a column of unknown columns can
    /// still be attributed to it.
    base: Option<String>,
    /// Columns `*` does not repeat (the right side of USING / NATURAL joins).
    hidden: Vec<String>,
    desc: String,
}

struct Scope<'p> {
    rels: Vec<Rel>,
    aliases: Vec<(String, Deps)>,
    parent: Option<&'p Scope<'p>>,
}

fn lower(i: &Ident) -> String {
    i.value.to_ascii_lowercase()
}

/// Rename `cols` positionally to an alias's column list (`t(a, b)`), keeping their sources.
fn rename(cols: Option<Cols>, names: &[String]) -> Option<Cols> {
    if names.is_empty() {
        return cols;
    }
    let cols = cols?;
    Some(
        cols.into_iter()
            .enumerate()
            .map(|(i, (c, d))| (names.get(i).cloned().unwrap_or(c), d))
            .collect(),
    )
}

fn query_cols(q: &Query, env: &Env, outer: Option<&Scope>, ctx: &mut Ctx) -> Option<Cols> {
    let mut env = env.clone();
    if let Some(with) = &q.with {
        for cte in &with.cte_tables {
            let name = lower(&cte.alias.name);
            if with.recursive {
                env.push((name.clone(), None));
            }
            let names: Vec<String> = cte.alias.columns.iter().map(|c| lower(&c.name)).collect();
            let cols = rename(query_cols(&cte.query, &env, outer, ctx), &names);
            env.push((name, cols));
        }
    }
    set_cols(&q.body, &env, outer, ctx)
}

fn set_cols(body: &SetExpr, env: &Env, outer: Option<&Scope>, ctx: &mut Ctx) -> Option<Cols> {
    match body {
        SetExpr::Select(s) => select_cols(s, env, outer, ctx),
        SetExpr::Query(q) => query_cols(q, env, outer, ctx),
        SetExpr::SetOperation {
            left,
            right,
            set_quantifier,
            ..
        } => {
            let l = set_cols(left, env, outer, ctx);
            let r = set_cols(right, env, outer, ctx);
            let (mut l, r) = (l?, r?);
            let by_name = matches!(
                set_quantifier,
                SetQuantifier::ByName | SetQuantifier::AllByName | SetQuantifier::DistinctByName
            );
            for (i, (name, deps)) in r.into_iter().enumerate() {
                let slot = if by_name {
                    l.iter().position(|(c, _)| *c == name)
                } else {
                    (i < l.len()).then_some(i)
                };
                match slot {
                    Some(k) => l[k].1.extend(deps),
                    None if by_name => l.push((name, deps)),
                    None => {}
                }
            }
            Some(l)
        }
        SetExpr::Values(v) => {
            let width = v.rows.first().map_or(0, |r| r.len());
            Some(
                (1..=width)
                    .map(|i| (format!("col{i}"), Deps::new()))
                    .collect(),
            )
        }
        other => {
            ctx.gap(format!("`{}` is not traced", truncate(&other.to_string())));
            None
        }
    }
}

fn truncate(s: &str) -> String {
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s.to_string()
    }
}

/// Add one FROM item and its joins to `rels`, recording what the joins read.
fn add_joined(
    twj: &TableWithJoins,
    env: &Env,
    outer: Option<&Scope>,
    ctx: &mut Ctx,
    rels: &mut Vec<Rel>,
    join_exprs: &mut Vec<Expr>,
) {
    add_factor(&twj.relation, env, outer, ctx, rels, join_exprs);
    for j in &twj.joins {
        let first_new = rels.len();
        add_factor(&j.relation, env, outer, ctx, rels, join_exprs);
        let (constraint, extra) = join_constraint(&j.join_operator);
        if let Some(e) = extra {
            join_exprs.push(e.clone());
        }
        let shared: Vec<String> = match constraint {
            Some(JoinConstraint::On(e)) => {
                join_exprs.push(e.clone());
                vec![]
            }
            Some(JoinConstraint::Using(cols)) | Some(JoinConstraint::UsingAlias(cols, _)) => {
                cols.iter().map(object_name).collect()
            }
            Some(JoinConstraint::Natural) => {
                let left: Vec<String> = rels[..first_new]
                    .iter()
                    .flat_map(|r| r.columns.iter().flatten().map(|(c, _)| c.clone()))
                    .collect();
                rels[first_new..]
                    .iter()
                    .flat_map(|r| r.columns.iter().flatten().map(|(c, _)| c.clone()))
                    .filter(|c| left.contains(c))
                    .collect()
            }
            _ => vec![],
        };
        for name in &shared {
            for (k, rel) in rels.iter_mut().enumerate() {
                if let Some(d) = column_of(rel, name) {
                    ctx.out.joins.extend(d);
                }
                if k >= first_new {
                    rel.hidden.push(name.clone());
                }
            }
        }
    }
}

/// The sources of `rel.column`, when the relation has (or may have) it.
fn column_of(rel: &Rel, column: &str) -> Option<Deps> {
    match (&rel.columns, &rel.base) {
        (Some(cols), _) => cols
            .iter()
            .find(|(c, _)| c == column)
            .map(|(_, d)| d.clone()),
        (None, Some(base)) => Some(Deps::from([ColumnRef {
            model: base.clone(),
            column: column.to_string(),
        }])),
        (None, None) => None,
    }
}

fn add_factor(
    tf: &TableFactor,
    env: &Env,
    outer: Option<&Scope>,
    ctx: &mut Ctx,
    rels: &mut Vec<Rel>,
    join_exprs: &mut Vec<Expr>,
) {
    let alias_columns = |alias: &Option<sqlparser::ast::TableAlias>| -> Vec<String> {
        alias
            .as_ref()
            .map(|a| a.columns.iter().map(|c| lower(&c.name)).collect())
            .unwrap_or_default()
    };
    let alias_name =
        |alias: &Option<sqlparser::ast::TableAlias>| alias.as_ref().map(|a| lower(&a.name));
    match tf {
        TableFactor::Table {
            name, alias, args, ..
        } => {
            let n = object_name(name);
            let last = n.rsplit('.').next().unwrap_or_default().to_string();
            let renamed = alias_columns(alias);
            let (columns, base, desc) = if args.is_some() {
                // a table function's values are computed, not read: no source columns
                let named = if renamed.is_empty() {
                    table_function_columns(&last).unwrap_or_default()
                } else {
                    renamed.clone()
                };
                let cols = named.into_iter().map(|c| (c, Deps::new())).collect();
                (Some(cols), None, format!("table function `{last}`"))
            } else if let Some((_, c)) = env
                .iter()
                .rev()
                .find(|(cte, _)| name.0.len() == 1 && *cte == n)
            {
                (rename(c.clone(), &renamed), None, format!("CTE `{n}`"))
            } else {
                let cols = (ctx.catalog)(&n).map(|cs| {
                    cs.into_iter()
                        .map(|c| {
                            let d = Deps::from([ColumnRef {
                                model: n.clone(),
                                column: c.clone(),
                            }]);
                            (c, d)
                        })
                        .collect()
                });
                (rename(cols, &renamed), Some(n.clone()), format!("`{n}`"))
            };
            rels.push(Rel {
                alias: alias_name(alias).unwrap_or(last),
                qualified: alias.is_none().then_some(n),
                columns,
                base,
                hidden: vec![],
                desc,
            });
        }
        TableFactor::Derived {
            subquery, alias, ..
        } => {
            let cols = query_cols(subquery, env, outer, ctx);
            let a = alias_name(alias).unwrap_or_default();
            rels.push(Rel {
                desc: format!("subquery `{a}`"),
                alias: a,
                qualified: None,
                columns: rename(cols, &alias_columns(alias)),
                base: None,
                hidden: vec![],
            });
        }
        TableFactor::NestedJoin {
            table_with_joins,
            alias,
        } => {
            let mut inner = vec![];
            add_joined(table_with_joins, env, outer, ctx, &mut inner, join_exprs);
            match alias {
                Some(a) => {
                    let cols: Option<Cols> = inner
                        .iter()
                        .map(|r| r.columns.clone())
                        .collect::<Option<Vec<Cols>>>()
                        .map(|v| v.into_iter().flatten().collect());
                    rels.push(Rel {
                        alias: lower(&a.name),
                        qualified: None,
                        columns: rename(cols, &alias_columns(alias)),
                        base: None,
                        hidden: vec![],
                        desc: format!("join `{}`", lower(&a.name)),
                    })
                }
                None => rels.extend(inner),
            }
        }
        other => {
            let alias = match other {
                TableFactor::TableFunction { alias, .. }
                | TableFactor::Function { alias, .. }
                | TableFactor::UNNEST { alias, .. }
                | TableFactor::Pivot { alias, .. }
                | TableFactor::Unpivot { alias, .. } => alias.clone(),
                _ => None,
            };
            // UNNEST's values come from its array arguments
            let mut deps = Deps::new();
            if let TableFactor::UNNEST { array_exprs, .. } = other {
                let scope = Scope {
                    rels: rels.clone(),
                    aliases: vec![],
                    parent: outer,
                };
                for e in array_exprs {
                    deps.extend(expr_deps(e, &scope, env, ctx));
                }
            }
            let names = alias_columns(&alias);
            let columns =
                (!names.is_empty()).then(|| names.into_iter().map(|c| (c, deps.clone())).collect());
            rels.push(Rel {
                alias: alias_name(&alias).unwrap_or_default(),
                qualified: None,
                columns,
                base: None,
                hidden: vec![],
                desc: "a table expression".into(),
            });
        }
    }
}

/// The columns `*` (or `rel.*`) produces from `rels`, with its EXCLUDE / RENAME / REPLACE.
fn expand_wildcard(
    rels: &[&Rel],
    opts: &WildcardAdditionalOptions,
    scope: &Scope,
    env: &Env,
    ctx: &mut Ctx,
) -> Option<Cols> {
    let mut visible: Cols = vec![];
    let mut known = true;
    for rel in rels {
        match &rel.columns {
            Some(c) => visible.extend(c.iter().filter(|(n, _)| !rel.hidden.contains(n)).cloned()),
            None => {
                ctx.gap(format!("`*` reads {}, whose columns are unknown", rel.desc));
                known = false;
            }
        }
    }
    if !known {
        return None;
    }
    let names: Vec<String> = visible.iter().map(|(n, _)| n.clone()).collect();
    let mut out: Cols = wildcard_selection(&names, opts)
        .into_iter()
        .map(|(i, name)| (name, visible[i].1.clone()))
        .collect();
    if let Some(replace) = &opts.opt_replace {
        for item in &replace.items {
            let col = lower(&item.column_name);
            let deps = expr_deps(&item.expr, scope, env, ctx);
            if let Some(slot) = out.iter_mut().find(|(c, _)| *c == col) {
                slot.1 = deps;
            }
        }
    }
    Some(out)
}

fn select_cols(s: &Select, env: &Env, outer: Option<&Scope>, ctx: &mut Ctx) -> Option<Cols> {
    let mut rels: Vec<Rel> = vec![];
    let mut join_exprs: Vec<Expr> = vec![];
    for twj in &s.from {
        add_joined(twj, env, outer, ctx, &mut rels, &mut join_exprs);
    }
    let mut scope = Scope {
        rels,
        aliases: vec![],
        parent: outer,
    };

    let mut out: Cols = vec![];
    let mut known = true;
    for item in &s.projection {
        match item {
            SelectItem::UnnamedExpr(e) => {
                let name = match e {
                    Expr::Identifier(i) => lower(i),
                    Expr::CompoundIdentifier(parts) => parts.last().map(lower).unwrap_or_default(),
                    other => other.to_string().to_ascii_lowercase(),
                };
                let deps = expr_deps(e, &scope, env, ctx);
                out.push((name, deps));
            }
            SelectItem::ExprWithAlias { expr, alias } => {
                let deps = expr_deps(expr, &scope, env, ctx);
                out.push((lower(alias), deps));
            }
            SelectItem::ExprWithAliases { expr, aliases } => {
                let deps = expr_deps(expr, &scope, env, ctx);
                out.extend(aliases.iter().map(|a| (lower(a), deps.clone())));
            }
            SelectItem::Wildcard(opts) => {
                let all: Vec<&Rel> = scope.rels.iter().collect();
                match expand_wildcard(&all, opts, &scope, env, ctx) {
                    Some(c) => out.extend(c),
                    None => known = false,
                }
            }
            SelectItem::QualifiedWildcard(kind, opts) => {
                let target = match kind {
                    SelectItemQualifiedWildcardKind::ObjectName(n) => object_name(n),
                    SelectItemQualifiedWildcardKind::Expr(e) => e.to_string().to_ascii_lowercase(),
                };
                let rel = scope
                    .rels
                    .iter()
                    .find(|r| r.alias == target || r.qualified.as_deref() == Some(target.as_str()));
                match rel {
                    Some(r) => match expand_wildcard(&[r], opts, &scope, env, ctx) {
                        Some(c) => out.extend(c),
                        None => known = false,
                    },
                    None => {
                        ctx.gap(format!("`{target}.*` names no relation in scope"));
                        known = false;
                    }
                }
            }
        }
    }

    // filters and GROUP BY / HAVING may name select aliases (DuckDB)
    scope.aliases = out.clone();
    for e in &join_exprs {
        let d = expr_deps(e, &scope, env, ctx);
        ctx.out.joins.extend(d);
    }
    for e in s.selection.iter().chain(&s.having).chain(&s.qualify) {
        let d = expr_deps(e, &scope, env, ctx);
        ctx.out.filters.extend(d);
    }
    known.then_some(out)
}

/// Every source column `e` reads, resolved in `scope`; subqueries inside it are traced too.
fn expr_deps(e: &Expr, scope: &Scope, env: &Env, ctx: &mut Ctx) -> Deps {
    let mut c = Collector {
        ctx,
        scope,
        env,
        depth: 0,
        lambdas: vec![],
        deps: Deps::new(),
    };
    let _ = e.visit(&mut c);
    c.deps
}

struct Collector<'a, 's> {
    ctx: &'a mut Ctx<'s>,
    scope: &'a Scope<'a>,
    env: &'a Env,
    depth: usize,
    lambdas: Vec<Vec<String>>,
    deps: Deps,
}

impl Collector<'_, '_> {
    fn unqualified(&mut self, id: &Ident) {
        let name = lower(id);
        if self.lambdas.iter().any(|l| l.contains(&name))
            || FREE_IDENTIFIERS.contains(&name.as_str())
        {
            return;
        }
        let mut level = Some(self.scope);
        while let Some(s) = level {
            if let Some(d) = s
                .rels
                .iter()
                .find_map(|r| r.columns.as_ref()?.iter().find(|(c, _)| *c == name))
            {
                self.deps.extend(d.1.iter().cloned());
                return;
            }
            let unknown: Vec<&Rel> = s.rels.iter().filter(|r| r.columns.is_none()).collect();
            match unknown.as_slice() {
                [] => {}
                [only] if only.base.is_some() => {
                    self.deps.extend(column_of(only, &name).unwrap_or_default());
                    return;
                }
                many => {
                    let descs: Vec<String> = many.iter().map(|r| r.desc.clone()).collect();
                    self.ctx.gap(format!(
                        "`{name}` may come from any of {}, whose columns are unknown",
                        descs.join(", ")
                    ));
                    return;
                }
            }
            if let Some((_, d)) = s.aliases.iter().find(|(a, _)| *a == name) {
                self.deps.extend(d.iter().cloned());
                return;
            }
            level = s.parent;
        }
    }

    fn qualified(&mut self, parts: &[Ident]) {
        let names: Vec<String> = parts.iter().map(lower).collect();
        if names.len() < 2 || self.lambdas.iter().any(|l| l.contains(&names[0])) {
            return;
        }
        let mut level = Some(self.scope);
        while let Some(s) = level {
            // alias.col[.field...]
            if let Some(rel) = s.rels.iter().find(|r| r.alias == names[0]) {
                return self.read_rel(rel, &names[1]);
            }
            // schema.table.col
            if names.len() >= 3 {
                let q = format!("{}.{}", names[0], names[1]);
                if let Some(rel) = s.rels.iter().find(|r| r.qualified.as_deref() == Some(&q)) {
                    return self.read_rel(rel, &names[2]);
                }
            }
            level = s.parent;
        }
        // `col.field`: a struct column's field
        self.unqualified(&parts[0]);
    }

    fn read_rel(&mut self, rel: &Rel, column: &str) {
        match column_of(rel, column) {
            Some(d) => self.deps.extend(d),
            None if rel.columns.is_none() => self.ctx.gap(format!(
                "`{}.{column}` reads {}, whose columns are unknown",
                rel.alias, rel.desc
            )),
            None => {}
        }
    }
}

impl Visitor for Collector<'_, '_> {
    type Break = ();

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
        if self.depth == 0 {
            // a scalar, IN or EXISTS subquery: its outputs feed the expression, and its own
            // filters and joins are the query's
            if let Some(cols) = query_cols(q, self.env, Some(self.scope), self.ctx) {
                for (_, d) in cols {
                    self.deps.extend(d);
                }
            }
        }
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _q: &Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if self.depth > 0 {
            return ControlFlow::Continue(());
        }
        match e {
            Expr::Lambda(l) => self.lambdas.push(lambda_params(l)),
            Expr::Identifier(id) => self.unqualified(id),
            Expr::CompoundIdentifier(parts) => self.qualified(parts),
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if self.depth == 0 && matches!(e, Expr::Lambda(_)) {
            self.lambdas.pop();
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::DuckDbDialect;
    use sqlparser::parser::Parser;

    fn trace(sql: &str) -> QueryLineage {
        let stmt = Parser::parse_sql(&DuckDbDialect {}, sql).expect("test SQL parses");
        let sqlparser::ast::Statement::Query(q) = &stmt[0] else {
            panic!("not a query")
        };
        let catalog = |n: &str| match n {
            "src.a" => Some(vec!["id".into(), "x".into(), "y".into()]),
            "src.b" => Some(vec!["id".into(), "z".into()]),
            _ => None,
        };
        query_lineage(q, &catalog)
    }

    fn refs(d: &Deps) -> Vec<String> {
        d.iter()
            .map(|r| format!("{}.{}", r.model, r.column))
            .collect()
    }

    fn col(l: &QueryLineage, c: &str) -> Vec<String> {
        refs(
            l.column(c)
                .unwrap_or_else(|| panic!("no output column {c}")),
        )
    }

    #[test]
    fn traces_renames_through_ctes_and_subqueries() {
        let l = trace(
            "WITH c AS (SELECT a.x AS renamed, a.id FROM src.a AS a)
             SELECT s.renamed AS final, s.id + 1 AS next_id
             FROM (SELECT c.renamed, c.id FROM c) AS s",
        );
        assert_eq!(col(&l, "final"), ["src.a.x"]);
        assert_eq!(col(&l, "next_id"), ["src.a.id"]);
        assert!(l.gaps.is_empty(), "{:?}", l.gaps);
    }

    #[test]
    fn expands_star_with_exclude_and_replace_and_hides_using_columns() {
        let l = trace("SELECT * EXCLUDE (y) FROM src.a JOIN src.b USING (id)");
        let names: Vec<&str> = l.columns.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(names, ["id", "x", "z"]);
        assert_eq!(col(&l, "x"), ["src.a.x"]);
        assert_eq!(refs(&l.joins), ["src.a.id", "src.b.id"]);
        let r = trace("SELECT * REPLACE (b.z * 2 AS x) FROM src.a AS a, src.b AS b");
        assert_eq!(col(&r, "x"), ["src.b.z"]);
    }

    #[test]
    fn filters_and_joins_are_apart_from_values() {
        let l = trace(
            "SELECT a.x, count(*) AS n FROM src.a AS a LEFT JOIN src.b AS b ON b.id = a.id
             WHERE b.z > 0 AND a.id IN (SELECT id FROM src.b WHERE z < 9)
             GROUP BY a.x HAVING n > 1",
        );
        assert_eq!(col(&l, "x"), ["src.a.x"]);
        assert!(col(&l, "n").is_empty());
        assert_eq!(refs(&l.joins), ["src.a.id", "src.b.id"]);
        assert_eq!(refs(&l.filters), ["src.a.id", "src.b.id", "src.b.z"]);
    }

    #[test]
    fn unions_merge_positionally_and_scalar_subqueries_feed_values() {
        let l = trace(
            "SELECT x AS v, (SELECT max(z) FROM src.b) AS top FROM src.a
             UNION ALL SELECT z, id FROM src.b",
        );
        assert_eq!(col(&l, "v"), ["src.a.x", "src.b.z"]);
        assert_eq!(col(&l, "top"), ["src.b.id", "src.b.z"]);
    }

    #[test]
    fn unknown_columns_are_attributed_or_reported_never_invented() {
        let l = trace("SELECT u.k, w FROM raw.unknown AS u");
        assert_eq!(col(&l, "k"), ["raw.unknown.k"]);
        assert_eq!(col(&l, "w"), ["raw.unknown.w"]);
        let star = trace("SELECT * FROM raw.unknown");
        assert!(star.columns.is_empty());
        assert!(
            star.gaps.iter().any(|g| g.contains("`raw.unknown`")),
            "{:?}",
            star.gaps
        );
        let two = trace("SELECT w AS w FROM raw.p, raw.q");
        assert!(col(&two, "w").is_empty());
        assert!(
            two.gaps.iter().any(|g| g.contains("any of")),
            "{:?}",
            two.gaps
        );
    }

    #[test]
    fn table_functions_and_values_are_computed_origins() {
        let l = trace("SELECT r.i * 2 AS d FROM range(10) AS r(i)");
        assert!(col(&l, "d").is_empty());
        assert!(l.gaps.is_empty());
    }
}
