//! SQLMesh's built-in macros that write whole projections, queries or formulas: `@STAR` and
//! `@UNION` (from their tables' columns), `@PIVOT`, `@DEDUPLICATE`, `@DATE_SPINE` and
//! `@HAVERSINE_DISTANCE`. Each writes the DuckDB SQL SQLMesh 0.236 writes for the same call
//! (recorded in the tests), so a model's rows are the same under both tools.

use super::args::Arg;
use super::{Expander, Value};
use crate::diagnostic::Diagnostic;
use sqlparser::tokenizer::{Token, TokenWithSpan};

/// The macros of this module, for "did you mean".
pub(super) const NAMES: &[&str] = &[
    "star",
    "pivot",
    "deduplicate",
    "date_spine",
    "haversine_distance",
    "union",
];

/// Call `lname` when it is one of this module's macros.
pub(super) fn call(
    x: &mut Expander<'_>,
    name: &str,
    lname: &str,
    call: &[TokenWithSpan],
    list: &[Arg],
) -> Option<Result<Value, Diagnostic>> {
    let r = match lname {
        "star" => star(x, name, call, list),
        "pivot" => pivot(x, name, call, list),
        "deduplicate" => deduplicate(x, name, call, list),
        "date_spine" => date_spine(x, name, call, list),
        "haversine_distance" => haversine(x, name, call, list),
        "union" => union(x, name, call, list),
        _ => return None,
    };
    Some(r)
}

/// Arguments bound to a macro's parameters, positionally or by `name := value`.
struct Bound<'a> {
    args: Vec<Option<&'a Arg>>,
}

impl<'a> Bound<'a> {
    fn get(&self, k: usize) -> Option<&'a Arg> {
        self.args[k]
    }
}

/// Bind `list` to `params`, the first `required` of which must be given.
fn bind<'a>(
    x: &Expander<'_>,
    name: &str,
    call: &[TokenWithSpan],
    list: &'a [Arg],
    params: &[&str],
    required: usize,
) -> Result<Bound<'a>, Diagnostic> {
    super::args::bind(x, name, call, list, params, required).map(|args| Bound { args })
}

/// A value as SQL text.
fn text(v: &Value) -> String {
    let mut t = vec![];
    super::render_into(v, &mut t);
    t.iter().map(Token::to_string).collect()
}

/// A value's name, as SQLMesh's `expression.name`: a literal's contents, an identifier's text.
fn name_of(v: &Value) -> String {
    match v {
        Value::Str(s) | Value::Num(s) => s.clone(),
        other => super::ident_text(other),
    }
}

/// The value of an optional argument, or `default`.
fn value_or(x: &mut Expander<'_>, arg: Option<&Arg>, default: Value) -> Result<Value, Diagnostic> {
    match arg {
        Some(a) => x.value_of(&a.tokens),
        None => Ok(default),
    }
}

/// A boolean argument.
fn flag(
    x: &mut Expander<'_>,
    name: &str,
    arg: Option<&Arg>,
    default: bool,
) -> Result<bool, Diagnostic> {
    match arg {
        None => Ok(default),
        Some(a) => match x.value_of(&a.tokens)? {
            Value::Bool(b) => Ok(b),
            _ => Err(x.error(
                name,
                &a.tokens,
                "expects TRUE or FALSE".into(),
                "write the argument as TRUE or FALSE".into(),
            )),
        },
    }
}

/// A list argument's items (a single value is a list of one).
fn items(x: &mut Expander<'_>, a: &Arg) -> Result<Vec<Value>, Diagnostic> {
    Ok(match x.value_of(&a.tokens)? {
        Value::List(l) => l,
        other => vec![other],
    })
}

/// Tokens of generated SQL, at the call's place.
fn tokens(
    x: &Expander<'_>,
    name: &str,
    call: &[TokenWithSpan],
    sql: &str,
) -> Result<Value, Diagnostic> {
    let t = crate::sql::tokenize(x.file, sql, crate::sql::Dialect::DuckDb).map_err(|_| {
        x.error(
            name,
            call,
            format!("writes SQL that does not tokenize: {sql}"),
            "check the macro's arguments".into(),
        )
    })?;
    Ok(Value::Sql(t.into_iter().map(|t| t.token).collect()))
}

/// `@STAR(relation, alias, exclude, prefix, suffix, quote_identifiers)`: the relation's
/// columns, each cast to its declared type when every type is known (as SQLMesh casts when it
/// knows them all), renamed with the prefix and suffix.
fn star(
    x: &mut Expander<'_>,
    name: &str,
    call: &[TokenWithSpan],
    list: &[Arg],
) -> Result<Value, Diagnostic> {
    const P: &[&str] = &[
        "relation",
        "alias",
        "exclude",
        "prefix",
        "suffix",
        "quote_identifiers",
        "except_",
    ];
    let b = bind(x, name, call, list, P, 1)?;
    let relation = b.get(0).expect("bound");
    let parts = relation_parts(relation);
    let Some(last) = parts.last().cloned() else {
        return Err(x.error(
            name,
            &relation.tokens,
            "the first argument must name a table".into(),
            "write `@STAR(schema.table)`".into(),
        ));
    };
    let table = match b.get(1) {
        Some(a) => name_of(&x.value_of(&a.tokens)?),
        None => last,
    };
    let mut excluded = vec![];
    for a in [b.get(2), b.get(6)].into_iter().flatten() {
        for v in items(x, a)? {
            excluded.push(name_of(&v).to_ascii_lowercase());
        }
    }
    let prefix = name_of(&value_or(x, b.get(3), Value::Str(String::new()))?);
    let suffix = name_of(&value_or(x, b.get(4), Value::Str(String::new()))?);
    let quote = flag(x, name, b.get(5), true)?;
    let q = |s: &str| {
        if quote {
            crate::quote::ident(s)
        } else {
            s.to_string()
        }
    };
    let key = parts.join(".");
    let columns = relation_columns(x, &parts);
    let columns = match columns {
        Some(Some(c)) if !c.is_empty() => c,
        unknown => {
            // the columns are not known (yet): `table.*` reads the same rows
            if unknown.is_some() && !(prefix.is_empty() && suffix.is_empty()) {
                return Err(x.error(
                    name,
                    call,
                    format!("the columns of `{key}` are not known, so they cannot be renamed"),
                    format!(
                        "declare `columns` in `{key}`'s MODEL block (or in external_models.yaml)"
                    ),
                ));
            }
            let mut sql = format!("{}.*", q(&table));
            if !excluded.is_empty() {
                let names: Vec<String> = excluded.iter().map(|e| q(e)).collect();
                sql.push_str(&format!(" EXCLUDE ({})", names.join(", ")));
            }
            return tokens(x, name, call, &sql);
        }
    };
    let kept: Vec<&(String, Option<String>)> = columns
        .iter()
        .filter(|(c, _)| !excluded.contains(&c.to_ascii_lowercase()))
        .collect();
    let typed = kept.iter().all(|(_, t)| t.is_some());
    let items: Vec<String> = kept
        .iter()
        .map(|(c, ty)| {
            let column = format!("{}.{}", q(&table), q(c));
            let alias = q(&format!("{prefix}{c}{suffix}"));
            match ty.as_deref().filter(|_| typed) {
                Some(t) => format!("CAST({column} AS {t}) AS {alias}"),
                None => format!("{column} AS {alias}"),
            }
        })
        .collect();
    tokens(x, name, call, &items.join(", "))
}

/// The lower-cased name parts of a relation argument (`schema.table`).
fn relation_parts(a: &Arg) -> Vec<String> {
    a.tokens
        .iter()
        .filter_map(|t| match &t.token {
            Token::Word(w) => Some(w.value.to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

/// The known columns of a relation (`None` while the project's columns are not known yet).
fn relation_columns<'e>(
    x: &'e Expander<'_>,
    parts: &[String],
) -> Option<Option<&'e super::RelationColumns>> {
    x.env.relations.as_ref().map(|known| {
        known
            .get(&parts.join("."))
            .or_else(|| known.get(&parts[parts.len().saturating_sub(2)..].join(".")))
    })
}

/// `@UNION([condition,] ['all' | 'distinct',] table, ...)`: the tables' common columns (same
/// name and type, in the first table's order), cast to their type, stacked with `UNION ALL` or
/// `UNION`; with a false condition, the first table alone. Where a type is not known efmesh
/// compares names only and casts nothing, which reads the same values.
fn union(
    x: &mut Expander<'_>,
    name: &str,
    call: &[TokenWithSpan],
    list: &[Arg],
) -> Result<Value, Diagnostic> {
    if let Some(a) = list.iter().find(|a| a.name.is_some()) {
        return Err(x.error(
            name,
            &a.tokens,
            "takes its arguments by position".into(),
            "write `@UNION('all', schema.a, schema.b)`".into(),
        ));
    }
    let mut rest = list;
    let mut condition = true;
    if let Some(first) = rest.first() {
        if let Value::Bool(b) = x.value_of(&first.tokens)? {
            condition = b;
            rest = &rest[1..];
        }
    }
    let mut distinct = false;
    if let Some(first) = rest.first() {
        if let Value::Str(s) = x.value_of(&first.tokens)? {
            distinct = match s.to_ascii_uppercase().as_str() {
                "ALL" => false,
                "DISTINCT" => true,
                _ => {
                    return Err(x.error(
                        name,
                        &first.tokens,
                        format!("invalid type '{s}'"),
                        "write 'all' or 'distinct'".into(),
                    ))
                }
            };
            rest = &rest[1..];
        }
    }
    if rest.is_empty() {
        return Err(x.error(
            name,
            call,
            "needs at least one table".into(),
            "write `@UNION('all', schema.a, schema.b)`".into(),
        ));
    }
    let tables: Vec<Vec<String>> = rest.iter().map(relation_parts).collect();
    if let Some(k) = tables.iter().position(|t| t.is_empty()) {
        return Err(x.error(
            name,
            &rest[k].tokens,
            "expects a table name".into(),
            "write `@UNION('all', schema.a, schema.b)`".into(),
        ));
    }
    let set_op = if distinct { "UNION" } else { "UNION ALL" };
    let used = if condition { &tables[..] } else { &tables[..1] };
    // the common columns are those of every table, even when the condition leaves one
    let mut known = vec![];
    for (t, arg) in tables.iter().zip(rest) {
        match relation_columns(x, t) {
            // the columns are not known yet: every column reads the same tables
            None => {
                let sql: Vec<String> = used
                    .iter()
                    .map(|t| format!("SELECT * FROM {}", t.join(".")))
                    .collect();
                return tokens(x, name, call, &sql.join(&format!(" {set_op} ")));
            }
            Some(Some(c)) if !c.is_empty() => known.push(c.clone()),
            Some(_) => {
                return Err(x.error(
                    name,
                    &arg.tokens,
                    format!("the columns of `{}` are not known", t.join(".")),
                    format!(
                        "declare `columns` in `{}`'s MODEL block (or in external_models.yaml)",
                        t.join(".")
                    ),
                ))
            }
        }
    }
    let typed = known.iter().flatten().all(|(_, t)| t.is_some());
    let same = |a: &(String, Option<String>), b: &(String, Option<String>)| {
        a.0.eq_ignore_ascii_case(&b.0)
            && (!typed
                || a.1.as_deref().map(str::to_ascii_uppercase)
                    == b.1.as_deref().map(str::to_ascii_uppercase))
    };
    let common: Vec<&(String, Option<String>)> = known[0]
        .iter()
        .filter(|c| {
            known[1..]
                .iter()
                .all(|other| other.iter().any(|o| same(c, o)))
        })
        .collect();
    if common.is_empty() {
        return Err(x.error(
            name,
            call,
            "the tables have no column in common".into(),
            "union tables that share columns of the same name and type".into(),
        ));
    }
    let projection: Vec<String> = common
        .iter()
        .map(|(c, ty)| {
            let q = crate::quote::ident(c);
            match ty.as_deref().filter(|_| typed) {
                Some(t) => format!("CAST({q} AS {t}) AS {q}"),
                None => q,
            }
        })
        .collect();
    let selects: Vec<String> = used
        .iter()
        .map(|t| format!("SELECT {} FROM {}", projection.join(", "), t.join(".")))
        .collect();
    tokens(x, name, call, &selects.join(&format!(" {set_op} ")))
}

/// `@PIVOT(column, values, alias, agg, cmp, prefix, suffix, then_value, else_value, quote,
/// distinct)`: one aggregate of a `CASE WHEN` per value.
fn pivot(
    x: &mut Expander<'_>,
    name: &str,
    call: &[TokenWithSpan],
    list: &[Arg],
) -> Result<Value, Diagnostic> {
    const P: &[&str] = &[
        "column",
        "values",
        "alias",
        "agg",
        "cmp",
        "prefix",
        "suffix",
        "then_value",
        "else_value",
        "quote",
        "distinct",
    ];
    let b = bind(x, name, call, list, P, 2)?;
    let column = text(&x.value_of(&b.get(0).expect("bound").tokens)?);
    let values = items(x, b.get(1).expect("bound"))?;
    let alias = flag(x, name, b.get(2), true)?;
    let agg = name_of(&value_or(x, b.get(3), Value::Str("SUM".into()))?);
    let cmp = name_of(&value_or(x, b.get(4), Value::Str("=".into()))?);
    let prefix = name_of(&value_or(x, b.get(5), Value::Str(String::new()))?);
    let suffix = name_of(&value_or(x, b.get(6), Value::Str(String::new()))?);
    let then_value = text(&value_or(x, b.get(7), Value::Num("1".into()))?);
    let else_value = text(&value_or(x, b.get(8), Value::Num("0".into()))?);
    let quote = flag(x, name, b.get(9), true)?;
    let distinct = flag(x, name, b.get(10), false)?;
    if !crate::naming::plain_ident(&agg) {
        return Err(x.error(
            name,
            call,
            format!("`agg` must name an aggregate function, not `{agg}`"),
            "write `agg := 'SUM'`".into(),
        ));
    }
    let mut parts = vec![];
    for v in &values {
        let mut p = format!(
            "{agg}({}CASE WHEN {column} {cmp} {} THEN {then_value} ELSE {else_value} END)",
            if distinct { "DISTINCT " } else { "" },
            text(v)
        );
        if alias {
            let a = format!("{prefix}{}{suffix}", name_of(v));
            p.push_str(" AS ");
            p.push_str(&if quote { crate::quote::ident(&a) } else { a });
        }
        parts.push(p);
    }
    tokens(x, name, call, &parts.join(", "))
}

/// `@DEDUPLICATE(relation, partition_by, order_by)`: the relation's first row per partition.
fn deduplicate(
    x: &mut Expander<'_>,
    name: &str,
    call: &[TokenWithSpan],
    list: &[Arg],
) -> Result<Value, Diagnostic> {
    let b = bind(
        x,
        name,
        call,
        list,
        &["relation", "partition_by", "order_by"],
        3,
    )?;
    let relation = text(&x.value_of(&b.get(0).expect("bound").tokens)?);
    let partition: Vec<String> = items(x, b.get(1).expect("bound"))?
        .iter()
        .map(text)
        .collect();
    let mut order = vec![];
    for v in items(x, b.get(2).expect("bound"))? {
        match v {
            Value::Str(s) => order.push(s),
            _ => {
                return Err(x.error(
                    name,
                    call,
                    "order_by must be a list of strings".into(),
                    "write `['<column> <asc|desc> nulls <first|last>']`".into(),
                ))
            }
        }
    }
    if partition.is_empty() || order.is_empty() {
        return Err(x.error(
            name,
            call,
            "needs at least one partition column and one order".into(),
            "write `@DEDUPLICATE(table, [id], ['updated_at DESC'])`".into(),
        ));
    }
    tokens(
        x,
        name,
        call,
        &format!(
            "SELECT * FROM {relation} QUALIFY ROW_NUMBER() OVER (PARTITION BY {} ORDER BY {}) = 1",
            partition.join(", "),
            order.join(", ")
        ),
    )
}

/// `@DATE_SPINE(datepart, start_date, end_date)`: one row per date part, both ends included.
fn date_spine(
    x: &mut Expander<'_>,
    name: &str,
    call: &[TokenWithSpan],
    list: &[Arg],
) -> Result<Value, Diagnostic> {
    let b = bind(
        x,
        name,
        call,
        list,
        &["datepart", "start_date", "end_date"],
        3,
    )?;
    let part = name_of(&x.value_of(&b.get(0).expect("bound").tokens)?).to_ascii_lowercase();
    if !["day", "week", "month", "quarter", "year"].contains(&part.as_str()) {
        return Err(x.error(
            name,
            call,
            format!("invalid datepart '{part}'"),
            "write 'day', 'week', 'month', 'quarter' or 'year'".into(),
        ));
    }
    let start = x.value_of(&b.get(1).expect("bound").tokens)?;
    let end = x.value_of(&b.get(2).expect("bound").tokens)?;
    let (start, end) = match (&start, &end) {
        (Value::Str(s), Value::Str(e)) => {
            let parse = |d: &str| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d");
            match (parse(s), parse(e)) {
                (Ok(a), Ok(z)) if a <= z => (
                    format!("CAST({} AS DATE)", crate::quote::literal(s)),
                    format!("CAST({} AS DATE)", crate::quote::literal(e)),
                ),
                (Ok(_), Ok(_)) => {
                    return Err(x.error(
                        name,
                        call,
                        format!("start_date '{s}' is after end_date '{e}'"),
                        "swap the dates".into(),
                    ))
                }
                _ => {
                    return Err(x.error(
                        name,
                        call,
                        "start_date and end_date must be dates written YYYY-MM-DD".into(),
                        "write `@DATE_SPINE('day', '2024-01-01', '2024-01-31')`".into(),
                    ))
                }
            }
        }
        _ => (text(&start), text(&end)),
    };
    let unit = part.to_ascii_uppercase();
    tokens(
        x,
        name,
        call,
        &format!(
            "SELECT date_{part} FROM UNNEST(CAST(GENERATE_SERIES({start}, {end}, INTERVAL '1' {unit}) AS DATE[])) AS _exploded(date_{part})"
        ),
    )
}

/// `@HAVERSINE_DISTANCE(lat1, lon1, lat2, lon2, unit)`: the great-circle distance in miles
/// (`'mi'`) or kilometres (`'km'`), on SQLMesh's earth radius.
fn haversine(
    x: &mut Expander<'_>,
    name: &str,
    call: &[TokenWithSpan],
    list: &[Arg],
) -> Result<Value, Diagnostic> {
    let b = bind(
        x,
        name,
        call,
        list,
        &["lat1", "lon1", "lat2", "lon2", "unit"],
        4,
    )?;
    let mut p = vec![];
    for k in 0..4 {
        let v = x.value_of(&b.get(k).expect("bound").tokens)?;
        p.push(text(&v));
    }
    let rate = match name_of(&value_or(x, b.get(4), Value::Str("mi".into()))?).as_str() {
        "mi" => "1.0",
        "km" => "1.60934",
        other => {
            return Err(x.error(
                name,
                call,
                format!("invalid unit '{other}'"),
                "write 'mi' or 'km'".into(),
            ))
        }
    };
    let [lat1, lon1, lat2, lon2] = [&p[0], &p[1], &p[2], &p[3]];
    tokens(
        x,
        name,
        call,
        &format!(
            "7922 * ASIN(SQRT((POWER(SIN(RADIANS(({lat2} - {lat1}) / 2)), 2)) + (COS(RADIANS({lat1})) * COS(RADIANS({lat2})) * POWER(SIN(RADIANS(({lon2} - {lon1}) / 2)), 2)))) * {rate}"
        ),
    )
}
