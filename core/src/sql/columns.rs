//! Column resolution: checks every column a query reads against what its sources provide, and
//! derives the query's output column names statically.
//!
//! The resolver is deliberately conservative. It reports a column only when every source in
//! scope has known columns and none of them (nor an outer scope, a select alias or a lambda
//! parameter) provides it, so valid SQL is never refused for what efmesh cannot see.

use super::references::object_name;
use crate::location::Location;
use sqlparser::ast::{
    Expr, GroupByExpr, Ident, JoinConstraint, JoinOperator, NamedWindowExpr, OrderByKind, Query,
    Select, SelectItem, SelectItemQualifiedWildcardKind, SetExpr, SetQuantifier, TableFactor,
    Visit, Visitor, WildcardAdditionalOptions,
};
use std::ops::ControlFlow;

/// A column read that no source provides.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnIssue {
    /// The column the query reads.
    pub column: String,
    /// `model `src.events``, `CTE `a``, or a list when several sources were in scope.
    pub source_desc: String,
    /// The columns the sources in scope do provide, for the help line and suggestions.
    pub available: Vec<String>,
    /// Where the column is read.
    pub location: Location,
}

/// The result of analyzing one query.
#[derive(Debug, Clone)]
pub struct ColumnAnalysis {
    /// Output column names (lower-cased), or why they cannot be derived.
    pub outputs: Result<Vec<String>, String>,
    /// Every column read that no source provides.
    pub issues: Vec<ColumnIssue>,
}

/// Analyze `query`, looking up the columns of referenced models through `catalog`, which
/// returns `None` for relations whose columns are unknown.
pub fn analyze(
    query: &Query,
    file: &str,
    catalog: &dyn Fn(&str) -> Option<Vec<String>>,
) -> ColumnAnalysis {
    let mut ctx = Ctx {
        file,
        catalog,
        issues: vec![],
    };
    let outputs = query_outputs(query, &Vec::new(), None, &mut ctx);
    ColumnAnalysis {
        outputs,
        issues: ctx.issues,
    }
}

struct Ctx<'a> {
    file: &'a str,
    catalog: &'a dyn Fn(&str) -> Option<Vec<String>>,
    issues: Vec<ColumnIssue>,
}

type Env = Vec<(String, Option<Vec<String>>)>;

#[derive(Debug, Clone)]
struct Source {
    /// The name that qualifies its columns: the alias, or the table's last name part.
    alias: String,
    /// The full dotted name, when unaliased (`schema.table.col` references).
    qualified: Option<String>,
    columns: Option<Vec<String>>,
    desc: String,
    /// Columns `*` does not repeat (the right side of USING / NATURAL joins).
    hidden: Vec<String>,
}

struct Scope<'p> {
    sources: Vec<Source>,
    aliases: Vec<String>,
    parent: Option<&'p Scope<'p>>,
}

fn lower(i: &Ident) -> String {
    i.value.to_ascii_lowercase()
}

fn query_outputs(
    q: &Query,
    env: &Env,
    outer: Option<&Scope>,
    ctx: &mut Ctx,
) -> Result<Vec<String>, String> {
    let mut env = env.clone();
    if let Some(with) = &q.with {
        for cte in &with.cte_tables {
            let name = lower(&cte.alias.name);
            if with.recursive {
                env.push((name.clone(), None));
            }
            let mut cols = query_outputs(&cte.query, &env, outer, ctx);
            if !cte.alias.columns.is_empty() {
                cols = Ok(cte.alias.columns.iter().map(|c| lower(&c.name)).collect());
            }
            env.push((name, cols.ok()));
        }
    }
    let order_by: Vec<&Expr> = match q.order_by.as_ref().map(|o| &o.kind) {
        Some(OrderByKind::Expressions(v)) => v.iter().map(|o| &o.expr).collect(),
        _ => vec![],
    };
    set_outputs(&q.body, &env, outer, ctx, &order_by)
}

fn set_outputs(
    body: &SetExpr,
    env: &Env,
    outer: Option<&Scope>,
    ctx: &mut Ctx,
    order_by: &[&Expr],
) -> Result<Vec<String>, String> {
    match body {
        SetExpr::Select(s) => select_outputs(s, env, outer, ctx, order_by),
        SetExpr::Query(q) => query_outputs(q, env, outer, ctx),
        SetExpr::SetOperation {
            left,
            right,
            set_quantifier,
            ..
        } => {
            let l = set_outputs(left, env, outer, ctx, &[]);
            let r = set_outputs(right, env, outer, ctx, &[]);
            let by_name = matches!(
                set_quantifier,
                SetQuantifier::ByName | SetQuantifier::AllByName | SetQuantifier::DistinctByName
            );
            if by_name {
                let (mut l, r) = (l?, r?);
                for c in r {
                    if !l.contains(&c) {
                        l.push(c);
                    }
                }
                Ok(l)
            } else {
                l
            }
        }
        SetExpr::Values(_) => Err("a VALUES list has no column names".into()),
        other => Err(format!(
            "`{}` is not analyzed",
            truncate(&other.to_string())
        )),
    }
}

fn truncate(s: &str) -> String {
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s.to_string()
    }
}

pub(crate) fn join_constraint(op: &JoinOperator) -> (Option<&JoinConstraint>, Option<&Expr>) {
    use JoinOperator as J;
    match op {
        J::Join(c)
        | J::Inner(c)
        | J::Left(c)
        | J::LeftOuter(c)
        | J::Right(c)
        | J::RightOuter(c)
        | J::FullOuter(c)
        | J::CrossJoin(c)
        | J::Semi(c)
        | J::LeftSemi(c)
        | J::RightSemi(c)
        | J::Anti(c)
        | J::LeftAnti(c)
        | J::RightAnti(c)
        | J::StraightJoin(c) => (Some(c), None),
        J::AsOf {
            match_condition,
            constraint,
        } => (Some(constraint), Some(match_condition)),
        _ => (None, None),
    }
}

fn select_outputs(
    s: &Select,
    env: &Env,
    outer: Option<&Scope>,
    ctx: &mut Ctx,
    order_by: &[&Expr],
) -> Result<Vec<String>, String> {
    let mut sources: Vec<Source> = vec![];
    let mut join_exprs: Vec<&Expr> = vec![];
    for twj in &s.from {
        add_factor(&twj.relation, env, outer, ctx, &mut sources);
        for j in &twj.joins {
            let first_new = sources.len();
            add_factor(&j.relation, env, outer, ctx, &mut sources);
            let (constraint, extra) = join_constraint(&j.join_operator);
            if let Some(e) = extra {
                join_exprs.push(e);
            }
            match constraint {
                Some(JoinConstraint::On(e)) => join_exprs.push(e),
                Some(JoinConstraint::Using(cols)) | Some(JoinConstraint::UsingAlias(cols, _)) => {
                    let names: Vec<String> = cols.iter().map(object_name).collect();
                    for src in &mut sources[first_new..] {
                        src.hidden.extend(names.iter().cloned());
                    }
                }
                Some(JoinConstraint::Natural) => {
                    let left: Vec<String> = sources[..first_new]
                        .iter()
                        .flat_map(|s| s.columns.clone().unwrap_or_default())
                        .collect();
                    for src in &mut sources[first_new..] {
                        let common: Vec<String> = src
                            .columns
                            .iter()
                            .flatten()
                            .filter(|c| left.contains(c))
                            .cloned()
                            .collect();
                        src.hidden.extend(common);
                    }
                }
                _ => {}
            }
        }
    }
    let aliases: Vec<String> = s
        .projection
        .iter()
        .filter_map(|i| match i {
            SelectItem::ExprWithAlias { alias, .. } => Some(lower(alias)),
            _ => None,
        })
        .collect();
    let scope = Scope {
        sources,
        aliases,
        parent: outer,
    };

    let mut exprs: Vec<&Expr> = vec![];
    for item in &s.projection {
        match item {
            SelectItem::UnnamedExpr(e)
            | SelectItem::ExprWithAlias { expr: e, .. }
            | SelectItem::ExprWithAliases { expr: e, .. } => exprs.push(e),
            _ => {}
        }
    }
    exprs.extend(s.selection.iter());
    if let GroupByExpr::Expressions(v, _) = &s.group_by {
        exprs.extend(v.iter());
    }
    exprs.extend(s.having.iter());
    exprs.extend(s.qualify.iter());
    exprs.extend(join_exprs);
    exprs.extend(order_by.iter().copied());
    let mut window_exprs: Vec<&Expr> = vec![];
    for w in &s.named_window {
        if let NamedWindowExpr::WindowSpec(spec) = &w.1 {
            window_exprs.extend(spec.partition_by.iter());
            window_exprs.extend(spec.order_by.iter().map(|o| &o.expr));
        }
    }
    exprs.extend(window_exprs);
    for e in exprs {
        let mut c = Checker {
            ctx,
            scope: &scope,
            env,
            depth: 0,
            lambdas: vec![],
        };
        let _ = e.visit(&mut c);
    }

    let mut out = vec![];
    let mut unknown: Option<String> = None;
    for item in &s.projection {
        match item {
            SelectItem::UnnamedExpr(Expr::Identifier(i)) => out.push(lower(i)),
            SelectItem::UnnamedExpr(Expr::CompoundIdentifier(parts)) => {
                out.push(parts.last().map(lower).unwrap_or_default())
            }
            SelectItem::UnnamedExpr(e) => {
                unknown
                    .get_or_insert_with(|| format!("`{}` has no alias", truncate(&e.to_string())));
            }
            SelectItem::ExprWithAlias { alias, .. } => out.push(lower(alias)),
            SelectItem::ExprWithAliases { .. } => {
                unknown.get_or_insert_with(|| "a multi-alias select item is not analyzed".into());
            }
            SelectItem::Wildcard(opts) => {
                let mut cols = vec![];
                for src in &scope.sources {
                    match &src.columns {
                        Some(c) => {
                            cols.extend(c.iter().filter(|c| !src.hidden.contains(c)).cloned())
                        }
                        None => {
                            unknown.get_or_insert_with(|| {
                                format!("`*` reads {}, whose columns are unknown", src.desc)
                            });
                        }
                    }
                }
                out.extend(apply_wildcard_options(cols, opts));
            }
            SelectItem::QualifiedWildcard(kind, opts) => {
                let target = match kind {
                    SelectItemQualifiedWildcardKind::ObjectName(n) => object_name(n),
                    SelectItemQualifiedWildcardKind::Expr(e) => e.to_string().to_ascii_lowercase(),
                };
                let src = scope
                    .sources
                    .iter()
                    .find(|s| s.alias == target || s.qualified.as_deref() == Some(target.as_str()));
                match src.and_then(|s| s.columns.clone()) {
                    Some(c) => out.extend(apply_wildcard_options(c, opts)),
                    None => {
                        unknown.get_or_insert_with(|| {
                            format!("the columns of `{target}.*` are unknown")
                        });
                    }
                }
            }
        }
    }
    match unknown {
        Some(r) => Err(r),
        None => Ok(out),
    }
}

fn apply_wildcard_options(cols: Vec<String>, opts: &WildcardAdditionalOptions) -> Vec<String> {
    wildcard_selection(&cols, opts)
        .into_iter()
        .map(|(_, name)| name)
        .collect()
}

/// Which of a `*`'s columns survive its `EXCLUDE`/`EXCEPT` and under which name after its
/// `RENAME`, as (index into `cols`, output name): shared by column checking, which needs the
/// names, and lineage, which needs to know where each name came from.
pub(crate) fn wildcard_selection(
    cols: &[String],
    opts: &WildcardAdditionalOptions,
) -> Vec<(usize, String)> {
    use sqlparser::ast::{ExcludeSelectItem, RenameSelectItem};
    let mut excluded: Vec<String> = vec![];
    match &opts.opt_exclude {
        Some(ExcludeSelectItem::Single(n)) => excluded.push(object_name(n)),
        Some(ExcludeSelectItem::Multiple(v)) => excluded.extend(v.iter().map(object_name)),
        None => {}
    }
    if let Some(e) = &opts.opt_except {
        excluded.push(lower(&e.first_element));
        excluded.extend(e.additional_elements.iter().map(lower));
    }
    // `EXCLUDE (t.col)` names the column by its last part
    let excluded: Vec<String> = excluded
        .into_iter()
        .map(|e| e.rsplit('.').next().unwrap_or_default().to_string())
        .collect();
    let renames: Vec<(String, String)> = match &opts.opt_rename {
        Some(RenameSelectItem::Single(r)) => vec![(lower(&r.ident), lower(&r.alias))],
        Some(RenameSelectItem::Multiple(v)) => v
            .iter()
            .map(|r| (lower(&r.ident), lower(&r.alias)))
            .collect(),
        None => vec![],
    };
    cols.iter()
        .enumerate()
        .filter(|(_, c)| !excluded.contains(c))
        .map(|(i, c)| {
            let name = renames
                .iter()
                .find(|(from, _)| from == c)
                .map_or_else(|| c.clone(), |(_, to)| to.clone());
            (i, name)
        })
        .collect()
}

/// A lambda's parameter names (`x -> x + 1`, `(a, b) -> a + b`): names that, inside its body,
/// are no column of any source.
pub(crate) fn lambda_params(l: &sqlparser::ast::LambdaFunction) -> Vec<String> {
    match &l.params {
        sqlparser::ast::OneOrManyWithParens::One(p) => vec![lower(&p.name)],
        sqlparser::ast::OneOrManyWithParens::Many(ps) => {
            ps.iter().map(|p| lower(&p.name)).collect()
        }
    }
}

/// Table functions whose output column DuckDB names after the function.
pub(crate) fn table_function_columns(name: &str) -> Option<Vec<String>> {
    match name {
        "range" | "generate_series" | "unnest" => Some(vec![name.to_string()]),
        _ => None,
    }
}

fn add_factor(
    tf: &TableFactor,
    env: &Env,
    outer: Option<&Scope>,
    ctx: &mut Ctx,
    sources: &mut Vec<Source>,
) {
    let renamed =
        |alias: &Option<sqlparser::ast::TableAlias>, cols: Option<Vec<String>>| match alias {
            Some(a) if !a.columns.is_empty() => {
                Some(a.columns.iter().map(|c| lower(&c.name)).collect())
            }
            _ => cols,
        };
    let alias_name =
        |alias: &Option<sqlparser::ast::TableAlias>| alias.as_ref().map(|a| lower(&a.name));
    match tf {
        TableFactor::Table {
            name, alias, args, ..
        } => {
            let n = object_name(name);
            let last = n.rsplit('.').next().unwrap_or_default().to_string();
            let (cols, desc) = if args.is_some() {
                (
                    table_function_columns(&last),
                    format!("table function `{last}`"),
                )
            } else if let Some((_, c)) = env
                .iter()
                .rev()
                .find(|(cte, _)| name.0.len() == 1 && *cte == n)
            {
                (c.clone(), format!("CTE `{n}`"))
            } else {
                ((ctx.catalog)(&n), format!("model `{n}`"))
            };
            sources.push(Source {
                alias: alias_name(alias).unwrap_or(last),
                qualified: alias.is_none().then_some(n),
                columns: renamed(alias, cols),
                desc,
                hidden: vec![],
            });
        }
        TableFactor::Derived {
            subquery, alias, ..
        } => {
            let cols = query_outputs(subquery, env, outer, ctx).ok();
            let a = alias_name(alias).unwrap_or_default();
            sources.push(Source {
                desc: if a.is_empty() {
                    "a subquery".into()
                } else {
                    format!("subquery `{a}`")
                },
                alias: a,
                qualified: None,
                columns: renamed(alias, cols),
                hidden: vec![],
            });
        }
        TableFactor::NestedJoin {
            table_with_joins,
            alias,
        } => {
            let mut inner = vec![];
            add_factor(&table_with_joins.relation, env, outer, ctx, &mut inner);
            for j in &table_with_joins.joins {
                add_factor(&j.relation, env, outer, ctx, &mut inner);
            }
            match alias {
                Some(a) => sources.push(Source {
                    alias: lower(&a.name),
                    qualified: None,
                    columns: renamed(alias, None),
                    desc: format!("join `{}`", lower(&a.name)),
                    hidden: vec![],
                }),
                None => sources.extend(inner),
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
            sources.push(Source {
                alias: alias_name(&alias).unwrap_or_default(),
                qualified: None,
                columns: renamed(&alias, None),
                desc: "a table expression".into(),
                hidden: vec![],
            });
        }
    }
}

/// Identifiers that DuckDB and PostgreSQL resolve without a source.
pub(crate) const FREE_IDENTIFIERS: &[&str] = &[
    "current_date",
    "current_time",
    "current_timestamp",
    "localtime",
    "localtimestamp",
    "current_user",
    "session_user",
    "user",
    "current_schema",
    "current_catalog",
    "current_role",
];

struct Checker<'a, 's> {
    ctx: &'a mut Ctx<'s>,
    scope: &'a Scope<'a>,
    env: &'a Env,
    depth: usize,
    lambdas: Vec<Vec<String>>,
}

impl Checker<'_, '_> {
    fn check_unqualified(&mut self, id: &Ident) {
        let name = lower(id);
        if self.lambdas.iter().any(|l| l.contains(&name))
            || FREE_IDENTIFIERS.contains(&name.as_str())
        {
            return;
        }
        let mut level = Some(self.scope);
        let mut any_source = false;
        while let Some(s) = level {
            any_source |= !s.sources.is_empty();
            if s.sources
                .iter()
                .any(|src| src.columns.as_ref().is_some_and(|c| c.contains(&name)))
            {
                return;
            }
            if s.sources.iter().any(|src| src.columns.is_none()) {
                return;
            }
            if s.aliases.contains(&name) || s.sources.iter().any(|src| src.alias == name) {
                return;
            }
            level = s.parent;
        }
        if !any_source || self.scope.sources.is_empty() {
            return;
        }
        let srcs = &self.scope.sources;
        let desc = if srcs.len() == 1 {
            srcs[0].desc.clone()
        } else {
            format!(
                "any of {}",
                srcs.iter()
                    .map(|s| s.desc.clone())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let mut available: Vec<String> = vec![];
        for c in srcs.iter().flat_map(|s| s.columns.iter().flatten()) {
            if !available.contains(c) {
                available.push(c.clone());
            }
        }
        self.ctx.issues.push(ColumnIssue {
            column: name,
            source_desc: desc,
            available,
            location: Location::from_span(self.ctx.file, id.span),
        });
    }

    fn check_qualified(&mut self, parts: &[Ident]) {
        let names: Vec<String> = parts.iter().map(lower).collect();
        if names.len() < 2 || self.lambdas.iter().any(|l| l.contains(&names[0])) {
            return;
        }
        let mut level = Some(self.scope);
        while let Some(s) = level {
            // alias.col[.field...]
            if let Some(src) = s.sources.iter().find(|src| src.alias == names[0]) {
                return self.expect_column(src, &names[1], &parts[1]);
            }
            // schema.table.col
            if names.len() >= 3 {
                let q = format!("{}.{}", names[0], names[1]);
                if let Some(src) = s
                    .sources
                    .iter()
                    .find(|src| src.qualified.as_deref() == Some(q.as_str()))
                {
                    return self.expect_column(src, &names[2], &parts[2]);
                }
            }
            level = s.parent;
        }
        // otherwise `names[0]` is a column and the rest are struct fields; nothing to check
    }

    fn expect_column(&mut self, src: &Source, col: &str, ident: &Ident) {
        if let Some(cols) = &src.columns {
            if !cols.iter().any(|c| c == col) {
                self.ctx.issues.push(ColumnIssue {
                    column: col.to_string(),
                    source_desc: src.desc.clone(),
                    available: cols.clone(),
                    location: Location::from_span(self.ctx.file, ident.span),
                });
            }
        }
    }
}

impl Visitor for Checker<'_, '_> {
    type Break = ();

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
        if self.depth == 0 {
            let _ = query_outputs(q, self.env, Some(self.scope), self.ctx);
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
            Expr::Identifier(id) => self.check_unqualified(id),
            Expr::CompoundIdentifier(parts) => self.check_qualified(parts),
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

/// Whether the query computes a window function anywhere (found on the AST, not by text):
/// over a batch wider than one interval, its result depends on the batch width.
pub fn has_window_function(query: &Query) -> bool {
    struct Finder(bool);
    impl Visitor for Finder {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            if matches!(e, Expr::Function(f) if f.over.is_some()) {
                self.0 = true;
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        }
    }
    let mut f = Finder(false);
    let _ = query.visit(&mut f);
    f.0
}

/// Whether any SELECT in the query projects `*` or `t.*`, whose width follows its sources:
/// such a model's output changes when a parent gains a column.
pub fn has_wildcard(query: &Query) -> bool {
    struct Finder(bool);
    impl Visitor for Finder {
        type Break = ();
        fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
            fn body(s: &SetExpr) -> bool {
                match s {
                    SetExpr::Select(sel) => sel.projection.iter().any(|p| {
                        matches!(
                            p,
                            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..)
                        )
                    }),
                    SetExpr::SetOperation { left, right, .. } => body(left) || body(right),
                    _ => false,
                }
            }
            if body(&q.body) {
                self.0 = true;
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        }
    }
    let mut f = Finder(false);
    let _ = query.visit(&mut f);
    f.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::{prepare_query, Dialect};
    use sqlparser::tokenizer::Tokenizer;

    fn run(sql: &str) -> ColumnAnalysis {
        let toks = Tokenizer::new(&sqlparser::dialect::DuckDbDialect {}, sql)
            .tokenize_with_location()
            .unwrap();
        let (q, _) = prepare_query(&toks, "m.sql", Dialect::DuckDb, false).unwrap();
        let catalog = |n: &str| match n {
            "med.moves" => Some(vec![
                "case_id".to_string(),
                "moved_at".into(),
                "dept".into(),
            ]),
            "ref.depts" => Some(vec!["dept".to_string(), "name".into()]),
            _ => None,
        };
        analyze(q.ast().unwrap(), "m.sql", &catalog)
    }

    fn issues(sql: &str) -> Vec<String> {
        run(sql)
            .issues
            .into_iter()
            .map(|i| format!("{}@{}:{}", i.column, i.location.line, i.location.column))
            .collect()
    }

    #[test]
    fn misspelled_parent_column_is_found_with_position() {
        assert_eq!(
            issues("SELECT case_idd FROM med.moves"),
            vec!["case_idd@1:8"]
        );
        assert_eq!(
            issues("SELECT m.dept, d.nme FROM med.moves m JOIN ref.depts d ON m.dept = d.dept"),
            vec!["nme@1:18"]
        );
        assert_eq!(issues("SELECT moves.dep FROM med.moves"), vec!["dep@1:14"]);
    }

    #[test]
    fn valid_sql_is_not_refused() {
        for sql in [
            "SELECT case_id, count(*) AS n FROM med.moves GROUP BY case_id HAVING n > 1 ORDER BY n",
            "WITH a AS (SELECT case_id AS c FROM med.moves) SELECT c FROM a",
            "SELECT list_transform([1], x -> x + 1) AS l, (SELECT max(d.name) FROM ref.depts d WHERE d.dept = m.dept) AS dn FROM med.moves m",
            "SELECT s.field FROM (SELECT {'field': 1} AS s) t",
            "SELECT range AS i FROM range(3)",
            "SELECT x FROM raw.unknown",
            "SELECT dept, name FROM med.moves JOIN ref.depts USING (dept)",
            "SELECT current_date AS d, moves FROM med.moves",
            "SELECT a FROM (SELECT 1 AS a) QUALIFY row_number() OVER (ORDER BY a) = 1",
        ] {
            let r = run(sql);
            assert!(r.issues.is_empty(), "{sql}: {:?}", r.issues);
        }
    }

    #[test]
    fn window_functions_are_found_structurally() {
        let q = |sql: &str| {
            let toks = Tokenizer::new(&sqlparser::dialect::DuckDbDialect {}, sql)
                .tokenize_with_location()
                .unwrap();
            prepare_query(&toks, "m.sql", Dialect::DuckDb, false)
                .unwrap()
                .0
        };
        assert!(has_window_function(
            q("SELECT row_number() OVER (PARTITION BY a ORDER BY b) AS rn FROM t")
                .ast()
                .unwrap()
        ));
        assert!(has_window_function(
            q("SELECT * FROM (SELECT sum(x) OVER w AS s FROM t WINDOW w AS (ORDER BY y))")
                .ast()
                .unwrap()
        ));
        assert!(
            !has_window_function(
                q("SELECT 'OVER (' AS over_text, sum(x) AS s FROM t GROUP BY 1")
                    .ast()
                    .unwrap()
            ),
            "text is not structure"
        );
    }

    #[test]
    fn outputs_are_derived_through_stars_and_ctes() {
        let out = |sql| run(sql).outputs;
        assert_eq!(
            out("SELECT * EXCLUDE (dept) FROM med.moves").unwrap(),
            vec!["case_id", "moved_at"]
        );
        assert_eq!(
            out("SELECT m.*, d.name FROM med.moves m JOIN ref.depts d ON m.dept = d.dept").unwrap(),
            vec!["case_id", "moved_at", "dept", "name"]
        );
        assert_eq!(
            out("SELECT * FROM med.moves JOIN ref.depts USING (dept)").unwrap(),
            vec!["case_id", "moved_at", "dept", "name"]
        );
        assert_eq!(
            out("WITH a AS (SELECT case_id AS c, dept FROM med.moves) SELECT * FROM a").unwrap(),
            vec!["c", "dept"]
        );
        assert_eq!(
            out("SELECT 1 AS a UNION ALL SELECT 2 AS b").unwrap(),
            vec!["a"]
        );
        assert!(out("SELECT count(*) FROM med.moves").is_err());
        assert!(out("SELECT * FROM raw.unknown").is_err());
    }

    #[test]
    fn subqueries_see_outer_scope_and_ctes() {
        assert_eq!(issues("SELECT case_id FROM med.moves m WHERE EXISTS (SELECT 1 FROM ref.depts d WHERE d.dept = m.dpt)"), vec!["dpt@1:90"]);
        assert_eq!(
            issues("WITH a AS (SELECT dept FROM med.moves) SELECT a.dept, a.case_id FROM a"),
            vec!["case_id@1:57"]
        );
    }
}
