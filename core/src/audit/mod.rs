//! Audits: built-in checks and named `AUDIT (...)` files in SQLMesh's syntax.
//!
//! An audit is a query for violating rows. This module parses named audits, validates the
//! audit calls on models (known name, arguments, scope), and turns a call into the SQL that
//! finds its violations ([`query`]); running that SQL is the engine's job.

pub mod builtin;
pub mod query;

use crate::diagnostic::{Diagnostic, Problem};
use crate::location::Location;
use crate::model::block::{self, Item};
use crate::model::values::{key_value, span_of, Value};
use crate::model::AuditCall;
use crate::sql::{self, Dialect, ModelQuery};
use sqlparser::tokenizer::{Token, TokenWithSpan};

/// Built-in audits and the arguments each requires.
pub const BUILTIN_AUDITS: &[(&str, &[&str])] = &[
    ("not_null", &["columns"]),
    ("unique_values", &["columns"]),
    ("unique_combination_of_columns", &["columns"]),
    ("accepted_values", &["column", "is_in"]),
    ("number_of_rows", &["threshold"]),
    ("forall", &["criteria"]),
    ("assert_contiguous", &["column"]),
    ("assert_no_gaps", &["column", "unit"]),
    ("accepted_range", &["column"]),
    ("not_accepted_values", &["column", "is_in"]),
    ("at_least_one", &["column"]),
    ("not_constant", &["column"]),
    ("not_empty_string", &["column"]),
];

/// The built-in audit `name` calls, and whether it is its non-blocking copy: SQLMesh defines
/// `<builtin>_non_blocking` for every built-in (`number_of_rows_non_blocking`), the same check
/// as a warning.
pub fn builtin_of(name: &str) -> Option<(&'static str, bool)> {
    let find = |n: &str| BUILTIN_AUDITS.iter().map(|(b, _)| *b).find(|b| *b == n);
    match find(name) {
        Some(b) => Some((b, false)),
        None => find(name.strip_suffix("_non_blocking")?).map(|b| (b, true)),
    }
}

/// Arguments a built-in audit may be given besides its required ones. Every built-in takes
/// SQLMesh's `condition`, a filter on the rows audited.
pub const BUILTIN_OPTIONAL: &[(&str, &[&str])] =
    &[("accepted_range", &["min_v", "max_v", "inclusive"])];

/// A named audit defined in an AUDIT file.
#[derive(Debug, Clone)]
pub struct AuditDef {
    /// The name models use to call it in `audits (...)`, lower-cased.
    pub name: String,
    /// The project-relative path of the AUDIT file that defines it.
    pub file: String,
    /// Where its `name` is written, for duplicate-audit diagnostics.
    pub location: Location,
    /// The query for violating rows, with `@this_model` standing for the audited relation.
    pub query: ModelQuery,
    /// Default argument values from `defaults (...)`.
    pub defaults: Vec<(String, String)>,
    /// Whether a failure stops the run; `None` when the block leaves it to the default.
    pub blocking: Option<bool>,
    /// The argument macros its query uses (`@threshold`), lower-cased: each call must pass
    /// them unless `defaults` has them.
    pub params: Vec<String>,
}

/// Arguments every audit call may pass, whatever the audit: how a failure is treated and
/// where the audit runs.
pub const CALL_OPTIONS: &[&str] = &["blocking", "scope"];

/// The argument macros an audit query uses, in first-use order.
fn macro_params(tokens: &[sqlparser::tokenizer::TokenWithSpan]) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    for w in tokens.windows(2) {
        if let (Token::AtSign, Token::Word(word)) = (&w[0].token, &w[1].token) {
            let name = word.value.to_ascii_lowercase();
            let adjacent = w[1].span.start.line == w[0].span.start.line
                && w[1].span.start.column == w[0].span.end.column;
            if adjacent
                && word.quote_style.is_none()
                && name != sql::macros::THIS_MODEL
                && !crate::time::TIME_MACROS.contains(&name.as_str())
                && !out.contains(&name)
            {
                out.push(name);
            }
        }
    }
    out
}

/// The audits a model file defines after its query (`AUDIT (name x); SELECT ...`), which
/// SQLMesh allows; callable like those of `audits/*.sql`.
pub fn inline_audits(file: &str, text: &str, dialect: Dialect) -> (Vec<AuditDef>, Vec<Diagnostic>) {
    let Ok(tokens) = sql::tokenize(file, text, dialect) else {
        // the model's own parse reports it
        return (vec![], vec![]);
    };
    match crate::model::split_inline_audits(&tokens) {
        (_, Some(at)) => parse_audit_tokens(file, &tokens[at..], dialect),
        _ => (vec![], vec![]),
    }
}

/// Parse an audit file, which may hold several `AUDIT (...); SELECT ...;` pairs.
pub fn parse_audit_file(
    file: &str,
    text: &str,
    dialect: Dialect,
) -> (Vec<AuditDef>, Vec<Diagnostic>) {
    parse_audit_file_in(file, text, dialect, None)
}

/// [`parse_audit_file`] in a SQLMesh project, whose audits may be Jinja queries
/// (`JINJA_QUERY_BEGIN; ... JINJA_END;`): rendered first, each argument as its macro
/// ([`sql::jinja::render_audit_blocks`]).
pub fn parse_audit_file_in(
    file: &str,
    text: &str,
    dialect: Dialect,
    jinja: Option<&sql::jinja::JinjaEnv>,
) -> (Vec<AuditDef>, Vec<Diagnostic>) {
    let rendered = match jinja.and_then(|env| sql::jinja::render_audit_blocks(file, text, env)) {
        Some(Ok(r)) => Some(r),
        Some(Err(d)) => return (vec![], vec![d]),
        None => None,
    };
    let text = rendered.as_deref().unwrap_or(text);
    match sql::tokenize(file, text, dialect) {
        Ok(tokens) => parse_audit_tokens(file, &tokens, dialect),
        Err(d) => (vec![], vec![d]),
    }
}

/// The `AUDIT (...); SELECT ...;` pairs of `tokens`: an audit file's, or those that follow the
/// query in a model file (SQLMesh lets a model file define its audits).
pub fn parse_audit_tokens(
    file: &str,
    tokens: &[TokenWithSpan],
    dialect: Dialect,
) -> (Vec<AuditDef>, Vec<Diagnostic>) {
    if let Some(d) = sql::jinja::refuse(file, tokens) {
        return (vec![], vec![d]);
    }
    let mut diags = vec![];
    let mut out = vec![];
    let mut pos = 0;
    loop {
        // an empty statement between two audits (`...;;`) is nothing, as in SQLMesh
        while tokens
            .get(pos)
            .is_some_and(|t| matches!(t.token, Token::Whitespace(_) | Token::SemiColon))
        {
            pos += 1;
        }
        if !sql::has_content(&tokens[pos..]) {
            break;
        }
        let blk = match block::parse_block("AUDIT", "AUDIT", &tokens[pos..], file) {
            Ok(Some(b)) => b,
            Ok(None) => {
                let t = tokens[pos..]
                    .iter()
                    .find(|t| !matches!(t.token, Token::Whitespace(_) | Token::SemiColon));
                let loc = t
                    .map(|t| Location::from_span(file, t.span))
                    .unwrap_or_else(|| Location::file_only(file));
                diags.push(Diagnostic::at(Problem::MissingAuditBlock, loc));
                break;
            }
            Err(e) => {
                diags.push(e);
                break;
            }
        };
        let q_start = pos + blk.rest;
        // the query runs to the next top-level semicolon
        let mut depth = 0i32;
        let mut q_end = tokens.len();
        for (i, t) in tokens.iter().enumerate().skip(q_start) {
            match t.token {
                Token::LParen => depth += 1,
                Token::RParen => depth -= 1,
                Token::SemiColon if depth == 0 => {
                    q_end = i;
                    break;
                }
                _ => {}
            }
        }
        let header = interpret(file, &blk.items, blk.span, &mut diags);
        if !sql::has_content(&tokens[q_start..q_end]) {
            diags.push(Diagnostic::at(
                Problem::MissingQuery {
                    kind: "AUDIT".into(),
                },
                Location::from_span(file, blk.span),
            ));
        } else if let Some((name, loc, defaults, blocking)) = header {
            match sql::prepare_query(&tokens[q_start..q_end], file, dialect, true) {
                Ok((query, warnings)) => {
                    diags.extend(warnings);
                    out.push(AuditDef {
                        name,
                        file: file.into(),
                        location: loc,
                        query,
                        defaults,
                        blocking,
                        params: macro_params(&tokens[q_start..q_end]),
                    });
                }
                Err(e) => diags.extend(e),
            }
        }
        pos = (q_end + 1).min(tokens.len());
    }
    (out, diags)
}

type Header = (String, Location, Vec<(String, String)>, Option<bool>);

fn interpret(
    file: &str,
    items: &[Item],
    span: sqlparser::tokenizer::Span,
    diags: &mut Vec<Diagnostic>,
) -> Option<Header> {
    const KNOWN: &[&str] = &["name", "blocking", "defaults", "dialect", "standalone"];
    let mut name = None;
    let mut defaults = vec![];
    let mut blocking = None;
    for item in items {
        let Some((k, rest)) = key_value(item) else {
            diags.push(Diagnostic::at(
                Problem::BlockSyntax {
                    block: "AUDIT",
                    expected: "`property value`".into(),
                    found: format!("`{item}`"),
                },
                Location::from_span(file, item.span),
            ));
            continue;
        };
        let key = k.ident().unwrap_or_default().to_ascii_lowercase();
        let v = Value::new("audit property", rest, span_of(rest, k.span), file);
        let r = match key.as_str() {
            "name" => v.ident().map(|n| name = Some((n, v.location()))),
            "blocking" => v.bool().map(|b| blocking = Some(b)),
            "defaults" => v.items().map(|its| {
                for it in its {
                    if let [k, _op, rest @ ..] = it.terms.as_slice() {
                        let val = Item {
                            terms: rest.to_vec(),
                            span: it.span,
                        };
                        defaults.push((
                            k.ident().unwrap_or_default().to_ascii_lowercase(),
                            val.to_string(),
                        ));
                    }
                }
            }),
            "dialect" | "standalone" => Ok(()),
            _ => Err(Diagnostic::at(
                Problem::UnknownProperty {
                    name: key.clone(),
                    known: KNOWN.to_vec(),
                    suggestion: crate::suggest::closest(&key, KNOWN.iter().copied()),
                },
                Location::from_span(file, k.span),
            )),
        };
        if let Err(d) = r {
            diags.push(d);
        }
    }
    match name {
        Some((n, loc)) => Some((n, loc, defaults, blocking)),
        None => {
            diags.push(Diagnostic::at(
                Problem::MissingName,
                Location::from_span(file, span),
            ));
            None
        }
    }
}

/// Check one model's audit call against the built-ins and the named audits: the audit exists,
/// every argument it needs is given, no argument is unknown, and `blocking`, `scope` and
/// `unit` have values efmesh understands. Reports the first problem.
pub fn check_call<'a>(
    call: &AuditCall,
    named: &dyn Fn(&str) -> Option<&'a AuditDef>,
    named_names: &[&str],
    dialect: crate::sql::Dialect,
) -> Option<Diagnostic> {
    let at = |p: Problem| Some(Diagnostic::at(p, call.location.clone()));
    for (k, v) in &call.args {
        let expected = match k.as_str() {
            "blocking" if !matches!(v.to_ascii_lowercase().as_str(), "true" | "false") => {
                "true or false"
            }
            "scope" if query::Scope::parse(v).is_none() => "'per_interval' or 'whole'",
            "unit"
                if builtin_of(&call.name).map(|(b, _)| b) == Some("assert_no_gaps")
                    && builtin::gap_unit(v).is_none() =>
            {
                "'minute', 'hour', 'day', 'week' or 'month'"
            }
            _ => continue,
        };
        return at(Problem::InvalidAuditArgument {
            audit: call.name.clone(),
            arg: k.clone(),
            value: v.clone(),
            expected,
        });
    }
    let base = builtin_of(&call.name).map(|(b, _)| b);
    if let Some((base, required)) = BUILTIN_AUDITS.iter().find(|(n, _)| Some(*n) == base) {
        for (k, v) in &call.args {
            if let Some(reason) = builtin::argument_problem(base, k, v, dialect) {
                return at(Problem::BadAuditArgument {
                    audit: call.name.clone(),
                    arg: k.clone(),
                    value: v.clone(),
                    reason,
                });
            }
        }
        let optional = BUILTIN_OPTIONAL
            .iter()
            .filter(|(n, _)| n == base)
            .flat_map(|(_, o)| o.iter());
        let known: Vec<&str> = required
            .iter()
            .chain(optional)
            .chain(&["condition"])
            .chain(CALL_OPTIONS)
            .copied()
            .collect();
        for (k, _) in &call.args {
            if !known.contains(&k.as_str()) {
                return at(Problem::UnknownAuditArgument {
                    audit: call.name.clone(),
                    arg: k.clone(),
                    suggestion: crate::suggest::closest(k, known.iter().copied()),
                    known: known.iter().map(|s| s.to_string()).collect(),
                });
            }
        }
        for arg in *required {
            if !call.args.iter().any(|(k, _)| k == arg) {
                return at(Problem::MissingAuditArgument {
                    audit: call.name.clone(),
                    arg: arg.to_string(),
                });
            }
        }
        return None;
    }
    if let Some(def) = named(&call.name) {
        for p in &def.params {
            let given =
                call.args.iter().any(|(k, _)| k == p) || def.defaults.iter().any(|(k, _)| k == p);
            if !given {
                return at(Problem::MissingAuditArgument {
                    audit: call.name.clone(),
                    arg: p.clone(),
                });
            }
        }
        return None;
    }
    let candidates = BUILTIN_AUDITS
        .iter()
        .map(|(n, _)| *n)
        .chain(named_names.iter().copied());
    at(Problem::UnknownAudit {
        name: call.name.clone(),
        suggestion: crate::suggest::closest(&call.name, candidates),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_has_its_non_blocking_copy_as_in_sqlmesh() {
        assert_eq!(builtin_of("not_null"), Some(("not_null", false)));
        assert_eq!(
            builtin_of("number_of_rows_non_blocking"),
            Some(("number_of_rows", true))
        );
        assert_eq!(builtin_of("mine_non_blocking"), None);
        let call = AuditCall {
            name: "number_of_rows_non_blocking".into(),
            args: vec![("threshold".into(), "0".into())],
            location: Location::file_only("m.sql"),
        };
        assert!(check_call(&call, &|_| None, &[], Dialect::DuckDb).is_none());
        let q = query::resolve(&call, &|_| None).unwrap();
        assert!(!q.blocking);
        let (sql, _) = q.sql("t", Dialect::DuckDb, &|_| None, &|_| None).unwrap();
        assert!(sql.to_ascii_lowercase().contains("count"), "{sql}");
    }

    #[test]
    fn parses_several_audits_in_one_file() {
        let (defs, diags) = parse_audit_file(
            "audits/a.sql",
            "AUDIT (name assert_positive, defaults (threshold := 0),);\nSELECT * FROM @this_model WHERE amount < @threshold AND day >= @start_ds AND x > @other;\n",
            Dialect::DuckDb,
        );
        assert!(diags.is_empty(), "{diags:?}");
        // argument macros are collected for the call check; time macros are not arguments
        assert_eq!(defs[0].params, vec!["threshold", "other"]);
        let (defs, diags) = parse_audit_file(
            "audits/a.sql",
            "AUDIT (name a1); SELECT * FROM @this_model WHERE x < 0;\nAUDIT (name a2, blocking false); SELECT * FROM @THIS_MODEL WHERE (y IS NULL);",
            Dialect::DuckDb,
        );
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(
            defs.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(),
            vec!["a1", "a2"]
        );
        assert_eq!(defs[1].blocking, Some(false));
        // `;;` between two audits, as SQLMesh projects write
        let (defs, diags) = parse_audit_file(
            "audits/a.sql",
            "AUDIT (name a1);\nSELECT * FROM @this_model WHERE x < 0;;\n\nAUDIT (name a2);\nSELECT 1;\n;",
            Dialect::DuckDb,
        );
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(defs.len(), 2);
    }

    /// The unknown-audit help (in `diagnostic`, which may not import this module) names every
    /// built-in.
    #[test]
    fn the_unknown_audit_help_lists_every_builtin() {
        let help = Problem::UnknownAudit {
            name: "x".into(),
            suggestion: None,
        }
        .help()
        .unwrap();
        let listed = help.rsplit(": ").next().unwrap();
        let names: Vec<&str> = BUILTIN_AUDITS.iter().map(|(n, _)| *n).collect();
        assert_eq!(listed, names.join(", "));
    }
}
