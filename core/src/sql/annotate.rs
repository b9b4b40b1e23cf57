//! The column types SQLMesh infers for a query, for the cast SQLMesh puts around it.
//!
//! SQLMesh types every model's output with sqlglot's type annotator and, when it knows every
//! column's type, creates the model's table as `SELECT CAST(col AS type) AS col, ... FROM
//! (query)`. So a SQLMesh table's types are sqlglot's, not the engine's: `SUM` of integers is
//! `BIGINT` where DuckDB says `HUGEINT`, a literal `1.5` is `DOUBLE` where DuckDB says
//! `DECIMAL(2,1)`. efmesh reproduces the annotator for the expressions whose sqlglot types were
//! checked against sqlglot 30.8 (the one SQLMesh 0.236.4 ships with) and says "unknown" for the
//! rest; one unknown column means no cast, which is what SQLMesh does when sqlglot does not
//! know a type either. A type efmesh knows where sqlglot would not is the one mistake this
//! can make, so the rules are kept to what was checked.

use super::references::object_name;
use sqlparser::ast::{
    BinaryOperator, CastKind, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Query, Select,
    SelectItem, SetExpr, TableFactor, UnaryOperator, Value,
};

/// A column type as sqlglot's annotator has it.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    /// `TINYINT`.
    TinyInt,
    /// `SMALLINT`.
    SmallInt,
    /// `INT`.
    Int,
    /// `BIGINT`.
    BigInt,
    /// `HUGEINT` (sqlglot's `INT128`).
    HugeInt,
    /// `REAL` (DuckDB's `FLOAT`).
    Float,
    /// `DOUBLE`.
    Double,
    /// `DECIMAL(precision, scale)`.
    Decimal(u8, u8),
    /// `TEXT` (and `VARCHAR`, which sqlglot prints as `TEXT`).
    Text,
    /// `BOOLEAN`.
    Boolean,
    /// `DATE`.
    Date,
    /// `TIMESTAMP`.
    Timestamp,
    /// `TIMESTAMPTZ`.
    TimestampTz,
    /// A type read from a declaration that no rule here computes with (`INT[]`, `UUID`): a
    /// column of it keeps it, any expression over it is unknown.
    Other(String),
    /// The NULL literal, which takes the type of what it is coerced with.
    Null,
    /// Not known.
    Unknown,
}

impl Ty {
    /// A type name as written in a declaration or a CAST.
    pub fn parse(name: &str) -> Ty {
        let upper = name.trim().to_ascii_uppercase();
        let compact: String = upper.split_whitespace().collect::<Vec<_>>().join(" ");
        let base = compact.split('(').next().unwrap_or_default().trim();
        match base {
            "INT" | "INTEGER" | "INT4" | "SIGNED" => Ty::Int,
            "BIGINT" | "INT8" | "LONG" => Ty::BigInt,
            "SMALLINT" | "INT2" | "SHORT" => Ty::SmallInt,
            "TINYINT" | "INT1" => Ty::TinyInt,
            "HUGEINT" | "INT128" => Ty::HugeInt,
            "DOUBLE" | "FLOAT8" | "DOUBLE PRECISION" => Ty::Double,
            "FLOAT" | "REAL" | "FLOAT4" => Ty::Float,
            "DECIMAL" | "NUMERIC" => {
                let args: Vec<u8> = compact
                    .split_once('(')
                    .map(|(_, rest)| {
                        rest.trim_end_matches(')')
                            .split(',')
                            .filter_map(|p| p.trim().parse().ok())
                            .collect()
                    })
                    .unwrap_or_default();
                match args.as_slice() {
                    [] => Ty::Decimal(18, 3),
                    [p] => Ty::Decimal(*p, 0),
                    [p, s] => Ty::Decimal(*p, *s),
                    _ => Ty::Other(name.trim().to_string()),
                }
            }
            "VARCHAR" | "TEXT" | "STRING" | "CHAR" | "BPCHAR" => Ty::Text,
            "BOOLEAN" | "BOOL" => Ty::Boolean,
            "DATE" => Ty::Date,
            "TIMESTAMP" | "DATETIME" if !compact.contains("TIME ZONE") => Ty::Timestamp,
            "TIMESTAMPTZ" | "TIMESTAMP WITH TIME ZONE" => Ty::TimestampTz,
            _ if compact.starts_with("TIMESTAMP WITH TIME ZONE") => Ty::TimestampTz,
            _ => Ty::Other(name.trim().to_string()),
        }
    }

    /// The type as DuckDB is asked to cast to it; `None` when it is not known.
    pub fn sql(&self) -> Option<String> {
        Some(match self {
            Ty::TinyInt => "TINYINT".into(),
            Ty::SmallInt => "SMALLINT".into(),
            Ty::Int => "INT".into(),
            Ty::BigInt => "BIGINT".into(),
            Ty::HugeInt => "HUGEINT".into(),
            Ty::Float => "REAL".into(),
            Ty::Double => "DOUBLE".into(),
            Ty::Decimal(p, s) => format!("DECIMAL({p}, {s})"),
            Ty::Text => "TEXT".into(),
            Ty::Boolean => "BOOLEAN".into(),
            Ty::Date => "DATE".into(),
            Ty::Timestamp => "TIMESTAMP".into(),
            Ty::TimestampTz => "TIMESTAMPTZ".into(),
            Ty::Other(s) => s.clone(),
            Ty::Null | Ty::Unknown => return None,
        })
    }

    fn int_rank(&self) -> Option<u8> {
        match self {
            Ty::TinyInt => Some(1),
            Ty::SmallInt => Some(2),
            Ty::Int => Some(3),
            Ty::BigInt => Some(4),
            _ => None,
        }
    }

    fn integer(&self) -> bool {
        self.int_rank().is_some()
    }
}

/// What two types combine to in arithmetic, a CASE or a COALESCE (sqlglot's coercion, for the
/// pairs that were checked).
fn coerce(a: &Ty, b: &Ty) -> Ty {
    use Ty::*;
    match (a, b) {
        (Null, t) | (t, Null) => t.clone(),
        (Unknown, _) | (_, Unknown) => Unknown,
        (x, y) if x == y && !matches!(x, Other(_)) => x.clone(),
        (x, y) if x.integer() && y.integer() => {
            if x.int_rank() >= y.int_rank() {
                x.clone()
            } else {
                y.clone()
            }
        }
        (Double, y) | (y, Double) if y.integer() || *y == Float => Double,
        (Float, y) | (y, Float) if y.integer() => Float,
        (Decimal(p, s), y) | (y, Decimal(p, s)) if y.integer() || *y == Double => Decimal(*p, *s),
        (Text, y) | (y, Text) if y.integer() || matches!(y, Double | Float | Decimal(..)) => Text,
        _ => Unknown,
    }
}

/// What `l / r` is to sqlglot: DOUBLE for integers and doubles, REAL for a REAL over integers,
/// and a bare `DECIMAL` (DuckDB's `DECIMAL(18,3)`) for a DECIMAL over integers or decimals.
fn divide(l: &Ty, r: &Ty) -> Ty {
    use Ty::*;
    let numeric = |t: &Ty| t.integer() || matches!(t, Double | Float | Decimal(..));
    if !(numeric(l) && numeric(r)) {
        return Unknown;
    }
    match (l, r) {
        (Double, Float) | (Float, Double) => Double,
        (Double, Decimal(..)) | (Decimal(..), Double) => Double,
        (Double, _) | (_, Double) => Double,
        (Float, Decimal(..)) | (Decimal(..), Float) => Unknown,
        (Float, _) | (_, Float) => Float,
        (Decimal(..), _) | (_, Decimal(..)) => Decimal(18, 3),
        _ => Double,
    }
}

/// The relations in scope of a SELECT: each with its name (alias) and typed columns, or
/// `None` when its columns are not known.
type Sources = Vec<(String, Option<Vec<(String, Ty)>>)>;

/// How the types of the project's relations are looked up: a model's (or declared external
/// table's) columns with their types, `None` when they are not known.
pub type Catalog<'a> = dyn Fn(&str) -> Option<Vec<(String, Ty)>> + 'a;

/// The output columns of `query` with the types sqlglot gives them; `None` when the columns
/// themselves are not known (a `*` over an unknown relation, a construct not analysed).
pub fn output_types(query: &Query, catalog: &Catalog) -> Option<Vec<(String, Ty)>> {
    query_types(query, &[], catalog).filter(|cols| cols.iter().all(|(n, _)| !n.is_empty()))
}

fn query_types(
    q: &Query,
    ctes: &[(String, Option<Vec<(String, Ty)>>)],
    catalog: &Catalog,
) -> Option<Vec<(String, Ty)>> {
    let mut scope = ctes.to_vec();
    if let Some(with) = &q.with {
        if with.recursive {
            return None;
        }
        for cte in &with.cte_tables {
            let mut cols = query_types(&cte.query, &scope, catalog);
            if !cte.alias.columns.is_empty() {
                cols = cols.and_then(|c| {
                    (c.len() == cte.alias.columns.len()).then(|| {
                        cte.alias
                            .columns
                            .iter()
                            .zip(c)
                            .map(|(a, (_, t))| (a.name.value.to_ascii_lowercase(), t))
                            .collect()
                    })
                });
            }
            scope.push((cte.alias.name.value.to_ascii_lowercase(), cols));
        }
    }
    set_types(&q.body, &scope, catalog)
}

fn set_types(
    body: &SetExpr,
    ctes: &[(String, Option<Vec<(String, Ty)>>)],
    catalog: &Catalog,
) -> Option<Vec<(String, Ty)>> {
    match body {
        SetExpr::Select(s) => select_types(s, ctes, catalog),
        SetExpr::Query(q) => query_types(q, ctes, catalog),
        // sqlglot types a UNION by its first branch
        SetExpr::SetOperation {
            left,
            set_quantifier,
            ..
        } if matches!(
            set_quantifier,
            sqlparser::ast::SetQuantifier::All
                | sqlparser::ast::SetQuantifier::Distinct
                | sqlparser::ast::SetQuantifier::None
        ) =>
        {
            set_types(left, ctes, catalog)
        }
        _ => None,
    }
}

fn lookup(
    name: &str,
    ctes: &[(String, Option<Vec<(String, Ty)>>)],
    catalog: &Catalog,
) -> Option<Vec<(String, Ty)>> {
    if !name.contains('.') {
        if let Some((_, cols)) = ctes.iter().rev().find(|(n, _)| n == name) {
            return cols.clone();
        }
    }
    catalog(name)
}

fn factor_source(
    tf: &TableFactor,
    ctes: &[(String, Option<Vec<(String, Ty)>>)],
    catalog: &Catalog,
    out: &mut Sources,
) -> Option<()> {
    match tf {
        TableFactor::Table {
            name, alias, args, ..
        } => {
            if let Some(args) = args {
                return unnest_source(&object_name(name), args, alias.as_ref(), out);
            }
            let n = object_name(name);
            let cols = lookup(&n, ctes, catalog);
            let label = match alias {
                Some(a) => a.name.value.to_ascii_lowercase(),
                None => n.rsplit('.').next().unwrap_or(&n).to_string(),
            };
            let cols = match alias {
                Some(a) if !a.columns.is_empty() => cols.and_then(|c| {
                    (c.len() == a.columns.len()).then(|| {
                        a.columns
                            .iter()
                            .zip(c)
                            .map(|(col, (_, t))| (col.name.value.to_ascii_lowercase(), t))
                            .collect()
                    })
                }),
                _ => cols,
            };
            out.push((label, cols));
            Some(())
        }
        TableFactor::Derived {
            subquery, alias, ..
        } => {
            let cols = match subquery.body.as_ref() {
                SetExpr::Values(v) => values_types(v),
                _ => query_types(subquery, ctes, catalog)
                    .map(|c| c.into_iter().map(|(n, t)| (n, t)).collect()),
            };
            let alias = alias.as_ref()?;
            let cols = if alias.columns.is_empty() {
                cols
            } else {
                cols.and_then(|c| {
                    (c.len() == alias.columns.len()).then(|| {
                        alias
                            .columns
                            .iter()
                            .zip(c)
                            .map(|(col, (_, t))| (col.name.value.to_ascii_lowercase(), t))
                            .collect()
                    })
                })
            };
            out.push((alias.name.value.to_ascii_lowercase(), cols));
            Some(())
        }
        TableFactor::NestedJoin {
            table_with_joins, ..
        } => {
            factor_source(&table_with_joins.relation, ctes, catalog, out)?;
            for j in &table_with_joins.joins {
                factor_source(&j.relation, ctes, catalog, out)?;
            }
            Some(())
        }
        _ => None,
    }
}

/// `unnest(CAST(... AS T[])) AS x(col)`, as `@DATE_SPINE` writes it (DuckDB's parser reads
/// it as a table function): its one column is a T. Any other table function is not typed.
fn unnest_source(
    function: &str,
    args: &sqlparser::ast::TableFunctionArgs,
    alias: Option<&sqlparser::ast::TableAlias>,
    out: &mut Sources,
) -> Option<()> {
    let alias = alias?;
    if function != "unnest" || args.args.len() != 1 || alias.columns.len() != 1 {
        return None;
    }
    let element = match &args.args[0] {
        FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Cast { data_type, .. })) => data_type
            .to_string()
            .strip_suffix("[]")
            .map(Ty::parse)
            .unwrap_or(Ty::Unknown),
        _ => Ty::Unknown,
    };
    out.push((
        alias.name.value.to_ascii_lowercase(),
        Some(vec![(
            alias.columns[0].name.value.to_ascii_lowercase(),
            element,
        )]),
    ));
    Some(())
}

/// A VALUES list's columns (`column1`, ...), typed by its first row as sqlglot types it.
fn values_types(v: &sqlparser::ast::Values) -> Option<Vec<(String, Ty)>> {
    let first = v.rows.first()?;
    let empty: Sources = vec![];
    Some(
        first
            .iter()
            .enumerate()
            .map(|(k, e)| {
                (
                    format!("column{}", k + 1),
                    expr_type(e, &empty, &[], &|_| None),
                )
            })
            .collect(),
    )
}

fn select_types(
    s: &Select,
    ctes: &[(String, Option<Vec<(String, Ty)>>)],
    catalog: &Catalog,
) -> Option<Vec<(String, Ty)>> {
    let mut sources: Sources = vec![];
    for twj in &s.from {
        factor_source(&twj.relation, ctes, catalog, &mut sources)?;
        for j in &twj.joins {
            factor_source(&j.relation, ctes, catalog, &mut sources)?;
        }
    }
    let mut out: Vec<(String, Ty)> = vec![];
    for item in &s.projection {
        match item {
            SelectItem::ExprWithAlias { expr, alias } => out.push((
                alias.value.to_ascii_lowercase(),
                expr_type(expr, &sources, ctes, catalog),
            )),
            SelectItem::UnnamedExpr(e) => {
                // an unnamed expression has no name efmesh can vouch for (a scalar subquery
                // does not need one)
                let name = match e {
                    Expr::Identifier(i) => i.value.to_ascii_lowercase(),
                    Expr::CompoundIdentifier(parts) => parts.last()?.value.to_ascii_lowercase(),
                    _ => String::new(),
                };
                out.push((name, expr_type(e, &sources, ctes, catalog)));
            }
            SelectItem::ExprWithAliases { .. } => return None,
            SelectItem::Wildcard(opts) => {
                if opts.to_string().trim() != "" {
                    return None;
                }
                for (_, cols) in &sources {
                    out.extend(cols.clone()?);
                }
            }
            SelectItem::QualifiedWildcard(kind, opts) => {
                if opts.to_string().trim() != "" {
                    return None;
                }
                let sqlparser::ast::SelectItemQualifiedWildcardKind::ObjectName(n) = kind else {
                    return None;
                };
                let n = object_name(n);
                let last = n.rsplit('.').next().unwrap_or(&n);
                let (_, cols) = sources.iter().find(|(l, _)| l == last)?;
                out.extend(cols.clone()?);
            }
        }
    }
    Some(out)
}

fn column_type(parts: &[String], sources: &Sources) -> Ty {
    match parts {
        [col] => {
            let mut found = sources.iter().filter_map(|(_, cols)| match cols {
                Some(c) => c.iter().find(|(n, _)| n == col).map(|(_, t)| Some(t)),
                None => Some(None),
            });
            match (found.next(), found.next()) {
                (Some(Some(t)), None) => t.clone(),
                _ => Ty::Unknown,
            }
        }
        [.., table, col] => sources
            .iter()
            .find(|(l, _)| l == table)
            .and_then(|(_, cols)| cols.as_ref())
            .and_then(|c| c.iter().find(|(n, _)| n == col))
            .map_or(Ty::Unknown, |(_, t)| t.clone()),
        [] => Ty::Unknown,
    }
}

fn args_of(f: &sqlparser::ast::Function) -> Option<Vec<&Expr>> {
    match &f.args {
        FunctionArguments::None => Some(vec![]),
        FunctionArguments::List(list) => {
            if !list.clauses.is_empty() {
                return None;
            }
            list.args
                .iter()
                .map(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
                    _ => None,
                })
                .collect()
        }
        FunctionArguments::Subquery(_) => None,
    }
}

fn expr_type(
    e: &Expr,
    sources: &Sources,
    ctes: &[(String, Option<Vec<(String, Ty)>>)],
    catalog: &Catalog,
) -> Ty {
    let ty = |e: &Expr| expr_type(e, sources, ctes, catalog);
    match e {
        Expr::Identifier(i) => column_type(&[i.value.to_ascii_lowercase()], sources),
        Expr::CompoundIdentifier(parts) => column_type(
            &parts
                .iter()
                .map(|p| p.value.to_ascii_lowercase())
                .collect::<Vec<_>>(),
            sources,
        ),
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => {
                if n.contains(['.', 'e', 'E']) {
                    Ty::Double
                } else {
                    Ty::Int
                }
            }
            Value::SingleQuotedString(_) => Ty::Text,
            Value::Boolean(_) => Ty::Boolean,
            Value::Null => Ty::Null,
            // a time macro, typed as the literal SQLMesh renders it to
            Value::Placeholder(p)
                if p.trim_start_matches('@')
                    .starts_with(crate::time::STRING_TEMPLATE) =>
            {
                Ty::Text
            }
            Value::Placeholder(p) => match p.trim_start_matches('@').rsplit_once('_') {
                Some((_, "ds" | "ts" | "tstz")) => Ty::Text,
                Some((_, "date")) => Ty::Date,
                Some((_, "dt")) => Ty::TimestampTz,
                Some((_, "dtntz")) => Ty::Timestamp,
                Some((_, "epoch")) => Ty::Double,
                Some((_, "hour")) => Ty::Int,
                _ => Ty::Unknown,
            },
            _ => Ty::Unknown,
        },
        Expr::Nested(inner) => ty(inner),
        Expr::Cast {
            kind: CastKind::Cast | CastKind::TryCast | CastKind::DoubleColon,
            data_type,
            format: None,
            ..
        } => Ty::parse(&data_type.to_string()),
        Expr::UnaryOp { op, expr } => match op {
            UnaryOperator::Not => Ty::Boolean,
            UnaryOperator::Minus | UnaryOperator::Plus => match ty(expr) {
                t if t.integer() || matches!(t, Ty::Double | Ty::Float | Ty::Decimal(..)) => t,
                _ => Ty::Unknown,
            },
            _ => Ty::Unknown,
        },
        Expr::BinaryOp { left, op, right } => {
            use BinaryOperator as B;
            match op {
                B::Eq | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq | B::And | B::Or => {
                    Ty::Boolean
                }
                B::StringConcat => Ty::Text,
                B::Plus | B::Minus | B::Multiply => {
                    let (l, r) = (ty(left), ty(right));
                    if matches!(l, Ty::Null | Ty::Text) || matches!(r, Ty::Null | Ty::Text) {
                        return Ty::Unknown;
                    }
                    coerce(&l, &r)
                }
                B::Divide => divide(&ty(left), &ty(right)),
                B::Modulo => {
                    let (l, r) = (ty(left), ty(right));
                    if l.integer() && r.integer() {
                        coerce(&l, &r)
                    } else {
                        Ty::Unknown
                    }
                }
                _ => Ty::Unknown,
            }
        }
        Expr::IsNull(_)
        | Expr::IsNotNull(_)
        | Expr::In { .. }
        | Expr::Between { .. }
        | Expr::Like { .. }
        | Expr::ILike { .. } => Ty::Boolean,
        Expr::Extract { .. } => Ty::BigInt,
        // sqlglot types `CEIL` as INT, whatever it rounds
        Expr::Ceil { .. } => Ty::Int,
        Expr::Case {
            conditions,
            else_result,
            ..
        } => {
            let mut t = Ty::Null;
            for c in conditions {
                t = coerce(&t, &ty(&c.result));
            }
            if let Some(e) = else_result {
                t = coerce(&t, &ty(e));
            }
            t
        }
        Expr::Subquery(q) => match query_types(q, ctes, catalog).as_deref() {
            Some([(_, t)]) => t.clone(),
            _ => Ty::Unknown,
        },
        Expr::Function(f) => function_type(f, &ty),
        _ => Ty::Unknown,
    }
}

fn function_type(f: &sqlparser::ast::Function, ty: &dyn Fn(&Expr) -> Ty) -> Ty {
    let name = object_name(&f.name).to_ascii_uppercase();
    // COUNT(*), COUNT(DISTINCT x) and COUNT(*) FILTER (...) before the plain argument list
    if name == "COUNT" {
        return Ty::BigInt;
    }
    if f.filter.is_some() || !f.within_group.is_empty() {
        return Ty::Unknown;
    }
    let Some(args) = args_of(f) else {
        return Ty::Unknown;
    };
    let first = || args.first().map(|a| ty(a)).unwrap_or(Ty::Unknown);
    match (name.as_str(), args.len()) {
        ("SUM", 1) => match first() {
            t if t.integer() || t == Ty::HugeInt => Ty::BigInt,
            Ty::Double => Ty::Double,
            Ty::Float => Ty::Double,
            Ty::Decimal(p, s) => Ty::Decimal(p, s),
            _ => Ty::Unknown,
        },
        ("AVG", 1) => match first() {
            t if t.integer() || matches!(t, Ty::Double | Ty::Float | Ty::Decimal(..)) => Ty::Double,
            _ => Ty::Unknown,
        },
        ("MIN" | "MAX" | "ANY_VALUE" | "FIRST_VALUE", 1) => match first() {
            Ty::Null | Ty::Other(_) => Ty::Unknown,
            t => t,
        },
        ("UPPER" | "LOWER" | "TRIM" | "MD5", 1) => Ty::Text,
        ("CONCAT", n) if n >= 1 => Ty::Text,
        ("SUBSTRING" | "SUBSTR", 2 | 3) => Ty::Text,
        ("STRFTIME", 2) => Ty::Text,
        ("STRING_AGG", 2) => Ty::Text,
        ("LENGTH", 1) => Ty::BigInt,
        ("ROUND", 1 | 2) => match first() {
            Ty::Double | Ty::Float | Ty::Decimal(..) => Ty::Double,
            t if t.integer() => Ty::Double,
            _ => Ty::Unknown,
        },
        ("ABS", 1) => match first() {
            t if t.integer() || matches!(t, Ty::Double | Ty::Float) => t,
            _ => Ty::Unknown,
        },
        ("COALESCE" | "GREATEST" | "LEAST", n) if n >= 1 => {
            args.iter().fold(Ty::Null, |acc, a| coerce(&acc, &ty(a)))
        }
        ("IF" | "IFF", 3) => coerce(&ty(args[1]), &ty(args[2])),
        ("NULLIF", 2) => first(),
        ("CURRENT_DATE" | "TODAY", 0) => Ty::Date,
        ("CURRENT_TIMESTAMP", 0) => Ty::Timestamp,
        (
            "SQRT" | "ASIN" | "ACOS" | "SIN" | "COS" | "RADIANS" | "LN" | "LOG" | "LOG10" | "EXP",
            1,
        ) => Ty::Double,
        ("POWER" | "POW" | "ATAN2", 2) => Ty::Double,
        ("PI", 0) => Ty::Double,
        ("STDDEV" | "VARIANCE", 1) => Ty::Double,
        ("CEIL" | "CEILING" | "SIGN", 1) => Ty::Int,
        ("CONTAINS" | "STARTS_WITH" | "REGEXP_MATCHES", 2) => Ty::Boolean,
        ("BOOL_AND" | "BOOL_OR", 1) => Ty::Boolean,
        ("APPROX_COUNT_DISTINCT", 1) => Ty::BigInt,
        ("CONCAT_WS", n) if n >= 2 => Ty::Text,
        ("IFNULL" | "NVL", 2) => coerce(&ty(args[0]), &ty(args[1])),
        ("MAKE_DATE", 3) => Ty::Date,
        ("STRPTIME", 2) | ("TO_TIMESTAMP" | "EPOCH_MS", 1) => Ty::Timestamp,
        ("EPOCH", 1) => Ty::Double,
        ("DAYOFWEEK", 1) => Ty::BigInt,
        ("YEAR" | "MONTH" | "DAY", 1) => Ty::BigInt,
        ("DATEDIFF" | "DATE_DIFF", 3) => Ty::BigInt,
        _ => Ty::Unknown,
    }
    .pipe_null()
}

trait PipeNull {
    fn pipe_null(self) -> Ty;
}

impl PipeNull for Ty {
    /// A function of NULL alone is not typed.
    fn pipe_null(self) -> Ty {
        match self {
            Ty::Null => Ty::Unknown,
            t => t,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::{prepare_query, tokenize, Dialect};

    fn types(sql: &str) -> Vec<(String, Option<String>)> {
        let toks = tokenize("m.sql", sql, Dialect::DuckDb).unwrap();
        let (q, _) = prepare_query(&toks, "m.sql", Dialect::DuckDb, false).unwrap();
        let t: Vec<(String, Ty)> = [
            ("i", "INT"),
            ("b", "BIGINT"),
            ("d", "DECIMAL(10,2)"),
            ("f", "DOUBLE"),
            ("s", "TEXT"),
            ("dt", "DATE"),
            ("bo", "BOOLEAN"),
            ("h", "HUGEINT"),
            ("fl", "FLOAT"),
            ("ti", "TINYINT"),
        ]
        .iter()
        .map(|(n, t)| (n.to_string(), Ty::parse(t)))
        .collect();
        let u: Vec<(String, Ty)> = vec![("i".into(), Ty::Int), ("x".into(), Ty::Text)];
        let catalog = move |n: &str| match n {
            "m.t" => Some(t.clone()),
            "m.u" => Some(u.clone()),
            _ => None,
        };
        output_types(q.ast().unwrap(), &catalog)
            .unwrap()
            .into_iter()
            .map(|(n, t)| (n, t.sql()))
            .collect()
    }

    fn one(expr: &str) -> Option<String> {
        types(&format!("SELECT {expr} AS c FROM m.t"))[0].1.clone()
    }

    /// Each expectation is what sqlglot 30.8 says (`annotate_types`, dialect duckdb).
    #[test]
    fn expressions_are_typed_as_sqlglot_types_them() {
        for (expr, want) in [
            ("1", Some("INT")),
            ("1.5", Some("DOUBLE")),
            ("'x'", Some("TEXT")),
            ("TRUE", Some("BOOLEAN")),
            ("NULL", None),
            ("SUM(i)", Some("BIGINT")),
            ("SUM(h)", Some("BIGINT")),
            ("SUM(d)", Some("DECIMAL(10, 2)")),
            ("SUM(f)", Some("DOUBLE")),
            ("SUM(fl)", Some("DOUBLE")),
            ("AVG(d)", Some("DOUBLE")),
            ("MIN(d)", Some("DECIMAL(10, 2)")),
            ("COUNT(*)", Some("BIGINT")),
            ("COUNT(DISTINCT i)", Some("BIGINT")),
            ("i + b", Some("BIGINT")),
            ("i * 1.5", Some("DOUBLE")),
            ("d * 2", Some("DECIMAL(10, 2)")),
            ("d + f", Some("DECIMAL(10, 2)")),
            ("i / 2", Some("DOUBLE")),
            ("SUM(i) / COUNT(*)", Some("DOUBLE")),
            ("d / i", Some("DECIMAL(18, 3)")),
            ("d / NULLIF(b, 0)", Some("DECIMAL(18, 3)")),
            ("SUM(d) / SUM(i)", Some("DECIMAL(18, 3)")),
            ("d / 2.0", Some("DOUBLE")),
            ("d / f", Some("DOUBLE")),
            ("fl * i", Some("REAL")),
            ("3.99 * fl", Some("DOUBLE")),
            ("ROUND(fl * i, 2)", Some("DOUBLE")),
            ("fl / 2", Some("REAL")),
            ("AVG(fl)", Some("DOUBLE")),
            ("ABS(fl)", Some("REAL")),
            ("-fl", Some("REAL")),
            ("d * b", Some("DECIMAL(10, 2)")),
            ("ROUND(b, 2)", Some("DOUBLE")),
            ("ti + ti", Some("TINYINT")),
            ("i % b", Some("BIGINT")),
            ("CAST(i AS TEXT)", Some("TEXT")),
            ("i::BIGINT", Some("BIGINT")),
            ("CASE WHEN bo THEN i ELSE b END", Some("BIGINT")),
            ("CASE WHEN bo THEN i ELSE NULL END", Some("INT")),
            ("CASE WHEN bo THEN 'a' ELSE 1 END", Some("TEXT")),
            ("COALESCE(i, f)", Some("DOUBLE")),
            ("i > 1", Some("BOOLEAN")),
            ("s || 'x'", Some("TEXT")),
            ("UPPER(s)", Some("TEXT")),
            ("ROUND(d, 1)", Some("DOUBLE")),
            ("LENGTH(s)", Some("BIGINT")),
            ("SUM(i) OVER ()", Some("BIGINT")),
            ("GREATEST(i, 2)", Some("INT")),
            ("IF(bo, 1, 0)", Some("INT")),
            ("(SELECT count(*) FROM m.u)", Some("BIGINT")),
            // sqlglot does not know these either: no cast
            ("ROW_NUMBER() OVER ()", None),
            ("DATE_TRUNC('day', dt)", None),
            ("REPLACE(s, 'a', 'b')", None),
            ("missing_fn(i)", None),
            ("SQRT(i)", Some("DOUBLE")),
            ("CEIL(f)", Some("INT")),
            ("MAX(i) OVER ()", Some("INT")),
            ("FIRST_VALUE(i) OVER (ORDER BY i)", Some("INT")),
            ("COUNT(*) FILTER (WHERE i > 1)", Some("BIGINT")),
            ("CASE i WHEN 1 THEN 'a' ELSE 'b' END", Some("TEXT")),
            ("EXTRACT(year FROM dt)", Some("BIGINT")),
            ("STRPTIME(s, '%Y')", Some("TIMESTAMP")),
            ("CONTAINS(s, 'a')", Some("BOOLEAN")),
            ("LAG(i) OVER (ORDER BY i)", None),
            ("DATE_PART('year', dt)", None),
            ("@execution_ds", Some("TEXT")),
            ("@start_date", Some("DATE")),
        ] {
            assert_eq!(one(expr).as_deref(), want, "{expr}");
        }
    }

    #[test]
    fn sources_stars_ctes_and_values_carry_their_types() {
        assert_eq!(
            types("SELECT * FROM (VALUES (1, 'a', 1.5), (2, 'b', 2.0)) AS x(a, b, c)"),
            [
                ("a".to_string(), Some("INT".to_string())),
                ("b".into(), Some("TEXT".into())),
                ("c".into(), Some("DOUBLE".into()))
            ]
        );
        assert_eq!(
            types("WITH c AS (SELECT i, s FROM m.t) SELECT c.i, s, *, 1 AS one FROM c"),
            [
                ("i".to_string(), Some("INT".to_string())),
                ("s".into(), Some("TEXT".into())),
                ("i".into(), Some("INT".into())),
                ("s".into(), Some("TEXT".into())),
                ("one".into(), Some("INT".into()))
            ]
        );
        assert_eq!(
            types("SELECT x, t.i FROM m.t JOIN m.u ON t.i = u.i")[0]
                .1
                .as_deref(),
            Some("TEXT")
        );
        // `i` is in both: ambiguous, not guessed
        assert_eq!(types("SELECT i FROM m.t JOIN m.u ON t.i = u.i")[0].1, None);
        assert_eq!(types("SELECT a FROM ext.raw")[0].1, None);
        // sqlglot 30.8: DATE
        assert_eq!(
            types("SELECT d FROM unnest(CAST(generate_series(CAST('2026-01-01' AS DATE), CAST('2026-01-03' AS DATE), INTERVAL '1' DAY) AS DATE[])) AS x (d)")[0].1.as_deref(),
            Some("DATE")
        );
        assert_eq!(
            types("SELECT i FROM m.t UNION ALL SELECT f FROM m.t")[0]
                .1
                .as_deref(),
            Some("INT")
        );
    }
}
