//! SQLMesh's built-in macro functions, with the SQL each one writes. The ones efmesh does not
//! expand yet are refused by name at `check`, never passed through.

use super::args::Arg;
use super::{condition, Expander, Value};
use crate::diagnostic::Diagnostic;
use sqlparser::tokenizer::{Token, TokenWithSpan, Whitespace};

/// SQLMesh's macros that efmesh does not expand yet, with what to write instead.
const NOT_YET: &[(&str, &str)] = &[
    ("resolve_template", "name the table directly"),
    (
        "blueprint_var",
        "use `@VAR` with `variables` (blueprints are not supported)",
    ),
];

/// The keyword a clause macro writes when its condition holds (`@WHERE(cond) x > 1`).
pub(super) fn clause_keyword(lname: &str) -> Option<&'static str> {
    Some(match lname {
        "with" => "WITH",
        "join" => "JOIN",
        "where" => "WHERE",
        "group_by" => "GROUP BY",
        "having" => "HAVING",
        "order_by" => "ORDER BY",
        "limit" => "LIMIT",
        _ => return None,
    })
}

/// Every built-in efmesh expands, for "did you mean".
const BUILTINS: &[&str] = &[
    "each",
    "if",
    "reduce",
    "filter",
    "sql",
    "var",
    "eval",
    "and",
    "or",
    "safe_add",
    "safe_sub",
    "safe_div",
    "generate_surrogate_key",
    "def",
    "with",
    "join",
    "where",
    "group_by",
    "having",
    "order_by",
    "limit",
];

/// Call built-in `lname`.
pub(super) fn call(
    x: &mut Expander<'_>,
    name: &str,
    lname: &str,
    call: &[TokenWithSpan],
    list: Vec<Arg>,
) -> Result<Value, Diagnostic> {
    let span = super::span_of(call);
    match lname {
        "each" | "reduce" | "filter" => {
            let Some((f, items)) = list.split_last() else {
                return Err(x.error(
                    name,
                    call,
                    "expects items and a lambda".into(),
                    format!("write `@{name}([a, b], x -> ...)`"),
                ));
            };
            let f = match x.value_of(&f.tokens)? {
                Value::Lambda(l) => l,
                _ => {
                    return Err(x.error(
                        name,
                        &f.tokens,
                        "the last argument must be a lambda".into(),
                        format!("write `@{name}([a, b], x -> ...)`"),
                    ))
                }
            };
            let items = items_of(x, items)?;
            match lname {
                "each" => {
                    let mut out = vec![];
                    for item in items {
                        let v = x.apply(&f, &[item], span, call)?;
                        if v != Value::Nothing {
                            out.push(v);
                        }
                    }
                    Ok(Value::List(out))
                }
                "filter" => {
                    let mut out = vec![];
                    for item in items {
                        let v = x.apply(&f, std::slice::from_ref(&item), span, call)?;
                        if x.truth(name, call, &v)? {
                            out.push(item);
                        }
                    }
                    Ok(Value::List(out))
                }
                _ => {
                    let mut it = items.into_iter();
                    let Some(mut acc) = it.next() else {
                        return Err(x.error(
                            name,
                            call,
                            "has no items to reduce".into(),
                            "pass at least one item".into(),
                        ));
                    };
                    for item in it {
                        acc = x.apply(&f, &[acc, item], span, call)?;
                    }
                    Ok(acc)
                }
            }
        }
        "if" => {
            if !(2..=3).contains(&list.len()) {
                return Err(x.error(
                    name,
                    call,
                    format!(
                        "takes a condition, a value and an optional else value, got {} argument(s)",
                        list.len()
                    ),
                    "write `@IF(condition, then[, else])`".into(),
                ));
            }
            if x.condition_arg(name, call, &list)? {
                x.value_of(&list[1].tokens)
            } else {
                match list.get(2) {
                    Some(e) => x.value_of(&e.tokens),
                    None => Ok(Value::Nothing),
                }
            }
        }
        "eval" => {
            let [a] = list.as_slice() else {
                return Err(x.error(
                    name,
                    call,
                    "takes one expression".into(),
                    "write `@EVAL(1 + 1)`".into(),
                ));
            };
            let v = x.value_of(&a.tokens)?;
            let lit = condition::literal(&v).map_err(|m| {
                x.error(
                    name,
                    call,
                    m,
                    "`@EVAL` computes literals, variables and operators while loading".into(),
                )
            })?;
            Ok(match lit {
                condition::Literal::Null => Value::Null,
                condition::Literal::Bool(b) => Value::Bool(b),
                condition::Literal::Str(s) => Value::Str(s),
                condition::Literal::Num(n) => Value::Num(number_text(n)),
            })
        }
        "sql" => {
            let Some(a) = list.first() else {
                return Err(x.error(
                    name,
                    call,
                    "takes a string of SQL".into(),
                    "write `@SQL('a + b')`".into(),
                ));
            };
            let text = match x.value_of(&a.tokens)? {
                Value::Str(s) => s,
                Value::Sql(t) => t.iter().map(|t| t.to_string()).collect(),
                Value::Num(n) => n,
                other => {
                    return Err(x.error(
                        name,
                        call,
                        format!("expects a string, got {other:?}"),
                        "write `@SQL('a + b')`".into(),
                    ))
                }
            };
            let tokens =
                crate::sql::tokenize(x.file, &text, crate::sql::Dialect::DuckDb).map_err(|_| {
                    x.error(
                        name,
                        call,
                        format!("`{text}` is not SQL"),
                        "pass a SQL expression in the string".into(),
                    )
                })?;
            let tokens: Vec<TokenWithSpan> = tokens
                .into_iter()
                .map(|t| TokenWithSpan::new(t.token, span))
                .collect();
            let expanded = x.expand_seq(&tokens)?;
            Ok(super::classify(
                expanded.into_iter().map(|t| t.token).collect(),
            ))
        }
        "var" => {
            let Some(a) = list.first() else {
                return Err(x.error(
                    name,
                    call,
                    "takes a variable name".into(),
                    "write `@VAR('name'[, default])`".into(),
                ));
            };
            let var = match x.value_of(&a.tokens)? {
                Value::Str(s) => s.to_ascii_lowercase(),
                _ => {
                    return Err(x.error(
                        name,
                        &a.tokens,
                        "the variable name must be a string literal".into(),
                        "write `@VAR('name')`".into(),
                    ))
                }
            };
            match x.env.variables.get(&var) {
                Some(v) => Ok(super::tuple_of_list(v.clone())),
                None => match list.get(1) {
                    Some(d) => x.value_of(&d.tokens),
                    // SQLMesh renders an unset variable without a default as NULL
                    None => Ok(Value::Null),
                },
            }
        }
        "and" | "or" => {
            let word = if lname == "and" { "AND" } else { "OR" };
            let mut parts = vec![];
            for a in &list {
                let v = x.value_of(&a.tokens)?;
                if !matches!(v, Value::Null | Value::Nothing) {
                    parts.push(v);
                }
            }
            if parts.is_empty() {
                return Ok(Value::Bool(true));
            }
            let mut out = vec![];
            for (k, p) in parts.iter().enumerate() {
                if k > 0 {
                    out.extend([space(), Token::make_keyword(word), space()]);
                }
                out.extend(parenthesized(p));
            }
            Ok(Value::Sql(out))
        }
        "safe_add" | "safe_sub" => {
            if list.is_empty() {
                return Err(x.error(
                    name,
                    call,
                    "takes at least one field".into(),
                    format!("write `@{name}(a, b)`"),
                ));
            }
            let fields: Vec<Vec<Token>> = list
                .iter()
                .map(|a| x.value_of(&a.tokens).map(|v| parenthesized(&v)))
                .collect::<Result<_, _>>()?;
            let op = if lname == "safe_add" {
                Token::Plus
            } else {
                Token::Minus
            };
            let mut t = sql("CASE WHEN ");
            for (k, f) in fields.iter().enumerate() {
                if k > 0 {
                    t.extend(sql(" AND "));
                }
                t.extend(f.iter().cloned());
                t.extend(sql(" IS NULL"));
            }
            t.extend(sql(" THEN NULL ELSE "));
            for (k, f) in fields.iter().enumerate() {
                if k > 0 {
                    t.extend([space(), op.clone(), space()]);
                }
                t.extend(sql("COALESCE("));
                t.extend(f.iter().cloned());
                t.extend(sql(", 0)"));
            }
            t.extend(sql(" END"));
            Ok(Value::Sql(t))
        }
        "safe_div" => {
            let [n, d] = list.as_slice() else {
                return Err(x.error(
                    name,
                    call,
                    "takes a numerator and a denominator".into(),
                    "write `@SAFE_DIV(a, b)`".into(),
                ));
            };
            let mut t = parenthesized(&x.value_of(&n.tokens)?);
            t.extend(sql(" / NULLIF("));
            t.extend(x.value_of(&d.tokens).map(|v| parenthesized(&v))?);
            t.extend(sql(", 0)"));
            Ok(Value::Sql(t))
        }
        "generate_surrogate_key" => {
            let mut hash = "MD5".to_string();
            let mut fields = vec![];
            for a in &list {
                match a.name.as_deref().map(str::to_ascii_lowercase).as_deref() {
                    Some("hash_function") => {
                        match x.value_of(&a.tokens)? {
                            Value::Str(s) if crate::naming::plain_ident(&s) => {
                                hash = s.to_ascii_uppercase()
                            }
                            _ => return Err(x.error(
                                name,
                                &a.tokens,
                                "`hash_function` must name a function, such as 'MD5' or 'SHA256'"
                                    .into(),
                                "write `hash_function := 'SHA256'`".into(),
                            )),
                        }
                    }
                    Some(other) => {
                        return Err(x.error(
                            name,
                            &a.tokens,
                            format!("has no argument `{other}`"),
                            "its arguments: the fields, and `hash_function := 'MD5'`".into(),
                        ))
                    }
                    None => fields.push(x.value_of(&a.tokens)?),
                }
            }
            if fields.is_empty() {
                return Err(x.error(
                    name,
                    call,
                    "takes at least one field".into(),
                    "write `@GENERATE_SURROGATE_KEY(a, b)`".into(),
                ));
            }
            let mut t = vec![Token::make_word(&hash, None), Token::LParen];
            t.extend(sql("CONCAT("));
            for (k, f) in fields.iter().enumerate() {
                if k > 0 {
                    t.extend(sql(", '|', "));
                }
                t.extend(sql("COALESCE(CAST("));
                t.extend(parenthesized(f));
                t.extend(sql(" AS TEXT), '_sqlmesh_surrogate_key_null_')"));
            }
            t.extend([Token::RParen, Token::RParen]);
            Ok(Value::Sql(t))
        }
        _ => {
            if let Some(v) = super::query_macros::call(x, name, lname, call, &list) {
                return v;
            }
            if let Some((_, instead)) = NOT_YET.iter().find(|(n, _)| *n == lname) {
                return Err(x.error(
                    name,
                    call,
                    "this SQLMesh macro is not supported by efmesh yet".into(),
                    (*instead).to_string(),
                ));
            }
            let mut known: Vec<&str> = BUILTINS.to_vec();
            known.extend(super::query_macros::NAMES);
            known.extend(x.env.macros.keys().map(String::as_str));
            known.extend(
                x.locals
                    .iter()
                    .filter(|(_, v)| matches!(v, Value::Lambda(_)))
                    .map(|(k, _)| k.as_str()),
            );
            let help = match crate::suggest::closest(lname, known) {
                Some(s) => format!("did you mean `@{}`?", s.to_ascii_uppercase()),
                None => "define it with `@DEF(name, (a, b) -> ...)` in the model or in `macros/*.sql`; Python macros are not supported".into(),
            };
            Err(x.error(name, call, "no macro of this name is defined".into(), help))
        }
    }
}

/// The items `@EACH` and its siblings iterate: one array (or list-valued argument), or the
/// arguments themselves.
fn items_of(x: &mut Expander<'_>, items: &[Arg]) -> Result<Vec<Value>, Diagnostic> {
    let mut values = vec![];
    for a in items {
        values.push(x.value_of(&a.tokens)?);
    }
    Ok(match values.as_slice() {
        [Value::List(l)] => l.clone(),
        [Value::Sql(t)] if t.first() == Some(&Token::LParen) => {
            // a tuple variable, `(a, b)`: its items
            let with: Vec<TokenWithSpan> = t.iter().cloned().map(TokenWithSpan::wrap).collect();
            match super::args::array_items(&with) {
                Some(parts) => {
                    let mut out = vec![];
                    for p in parts {
                        out.push(x.value_of(p)?);
                    }
                    out
                }
                None => values,
            }
        }
        _ => values,
    })
}

/// A value as tokens, in parentheses when it is more than one token (so an operator around it
/// cannot change what it means).
fn parenthesized(v: &Value) -> Vec<Token> {
    let mut t = vec![];
    super::render_into(v, &mut t);
    if t.iter().filter(|t| super::args::significant(t)).count() > 1 && !is_wrapped(&t) {
        let mut w = vec![Token::LParen];
        w.extend(t);
        w.push(Token::RParen);
        w
    } else {
        t
    }
}

/// Whether `t` is already one parenthesized group or one function call.
fn is_wrapped(t: &[Token]) -> bool {
    let with: Vec<TokenWithSpan> = t.iter().cloned().map(TokenWithSpan::wrap).collect();
    let open = match t.first() {
        Some(Token::LParen) => 0,
        Some(Token::Word(_)) if t.get(1) == Some(&Token::LParen) => 1,
        _ => return false,
    };
    super::args::matching(&with, open) == Some(t.len() - 1)
}

fn space() -> Token {
    Token::Whitespace(Whitespace::Space)
}

/// Tokens of a fixed SQL fragment.
fn sql(text: &str) -> Vec<Token> {
    crate::sql::tokenize("<macro>", text, crate::sql::Dialect::DuckDb)
        .map(|t| t.into_iter().map(|t| t.token).collect())
        .unwrap_or_default()
}

/// A computed number as SQLMesh writes it: integral values without a fraction.
fn number_text(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}
