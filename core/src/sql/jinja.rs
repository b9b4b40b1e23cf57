//! Jinja in SQLMesh files.
//!
//! SQLMesh models may wrap their query in `JINJA_QUERY_BEGIN; ... JINJA_END;`, and their pre-
//! and post-statements in `JINJA_STATEMENT_BEGIN; ... JINJA_END;`, and projects keep
//! `{% macro %}` files next to their `@DEF` ones. [`render_query_block`] renders these blocks
//! with minijinja before the file is parsed: `var()`, `gateway()`, the `{% macro %}`s of
//! `macros/`, and SQLMesh's time variables (`start_ds`, `end_ts`, ...) and `this_model`, which
//! become efmesh's own macros (`'{{ start_ds }}'` is `@start_ds`), so each batch still renders
//! its own range and the fingerprint is the rendered text. The rendered text takes the
//! template's place line for line where it can, so `check` points near the source.
//!
//! Jinja anywhere else (a bare `{{ }}` in a query, an audit, an efmesh project) is read as SQL
//! by SQLMesh too, or not at all: read as SQL, a template either fails to parse or, worse,
//! parses as something else, so its first marker is reported at its line instead.

use crate::diagnostic::{Diagnostic, Problem};
use crate::location::Location;
use sqlparser::tokenizer::{Span, Token, TokenWithSpan};

/// Where a marker ends: after it and the `;` that follows it (with whitespace between), if
/// one does.
fn after_semicolon(text: &str, from: usize) -> Option<usize> {
    let rest = &text[from..];
    let trimmed = rest.trim_start();
    trimmed
        .starts_with(';')
        .then(|| from + (rest.len() - trimmed.len()) + 1)
}

/// The byte offset of `word` in `text` at or after `from`, as a whole word, case-insensitively.
fn find_word(text: &str, word: &str, from: usize) -> Option<usize> {
    let upper = text.to_ascii_uppercase();
    let mut at = from;
    while let Some(k) = upper[at..].find(word) {
        let start = at + k;
        let end = start + word.len();
        let before = text[..start].chars().next_back();
        let after = text[end..].chars().next();
        let boundary = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        if boundary(before) && boundary(after) {
            return Some(start);
        }
        at = end;
    }
    None
}

/// SQLMesh's Jinja variables that efmesh renders per batch: the time variables and
/// `this_model`.
fn jinja_names() -> impl Iterator<Item = &'static &'static str> {
    crate::time::TIME_MACROS
        .iter()
        .chain(&[crate::sql::macros::THIS_MODEL])
}

/// The text SQLMesh's time variables and `this_model` render to inside a template, turned into
/// efmesh's macros afterwards.
fn sentinel(name: &str) -> String {
    format!("{}{name}__", crate::time::JINJA_MARK)
}

/// What a Jinja query is rendered with.
pub struct JinjaEnv<'a> {
    /// The project's variables, for `var('name'[, default])`.
    pub variables: &'a std::collections::BTreeMap<String, serde_json::Value>,
    /// The `{% macro %}` files of `macros/`, concatenated.
    pub macros: &'a str,
    /// The SQLMesh gateway, for `gateway()`.
    pub gateway: Option<&'a str>,
}

/// `text` (model file `file`) with its `JINJA_QUERY_BEGIN; ... JINJA_END;` block and its
/// `JINJA_STATEMENT_BEGIN; ... JINJA_END;` blocks (pre- and post-statements) rendered in
/// place, or `None` when it has none. Each rendered block keeps its template's lines (padded
/// with empty lines when it is shorter), and the markers become spaces, so the MODEL block and
/// the first lines of each block keep their positions.
pub fn render_query_block(
    file: &str,
    text: &str,
    env: &JinjaEnv,
) -> Option<Result<String, Diagnostic>> {
    render_blocks(file, text, env, false)
}

/// An AUDIT file's text (or a model file's inline audits) with each audit's
/// `JINJA_QUERY_BEGIN; ... JINJA_END;` query rendered in place, or `None` when it has none.
/// SQLMesh renders an audit per call, with the call's arguments (and the audit's `defaults`)
/// as Jinja variables; efmesh renders it once, each argument as its macro (`{{ column }}` is
/// `@column`), which each call then binds as it binds any audit argument. An argument used for
/// anything but its value (`{% if column == 'x' %}`, `{{ column | upper }}`) would render the
/// same for every call, so it is refused.
pub fn render_audit_blocks(
    file: &str,
    text: &str,
    env: &JinjaEnv,
) -> Option<Result<String, Diagnostic>> {
    render_blocks(file, text, env, true)
}

fn render_blocks(
    file: &str,
    text: &str,
    env: &JinjaEnv,
    audit: bool,
) -> Option<Result<String, Diagnostic>> {
    let markers: &[&str] = if audit {
        &[QUERY_BEGIN]
    } else {
        &[QUERY_BEGIN, STATEMENT_BEGIN]
    };
    let next = |from: usize| {
        markers
            .iter()
            .copied()
            .filter_map(|m| find_word(text, m, from).map(|at| (at, m)))
            .min()
    };
    let (first, _) = next(0)?;
    let mut out = String::with_capacity(text.len() * 2);
    out.push_str(&text[..first]);
    let mut from = first;
    let mut queries = 0;
    while let Some((begin, marker)) = next(from) {
        out.push_str(&text[from..begin]);
        if marker == QUERY_BEGIN && !audit {
            queries += 1;
            if queries > 1 {
                return Some(Err(Diagnostic::at(
                    Problem::JinjaTemplate {
                        message: "a model file holds one `JINJA_QUERY_BEGIN; ... JINJA_END;` block"
                            .into(),
                    },
                    loc_at(file, text, begin),
                )));
            }
        }
        match render_block(file, text, begin, marker, env, audit) {
            Ok((after, rendered)) => {
                out.push_str(&rendered);
                from = after;
            }
            Err(d) => return Some(Err(d)),
        }
    }
    out.push_str(&text[from..]);
    Some(Ok(out))
}

const QUERY_BEGIN: &str = "JINJA_QUERY_BEGIN";
const STATEMENT_BEGIN: &str = "JINJA_STATEMENT_BEGIN";

/// The location of byte `offset` of `text`.
fn loc_at(file: &str, text: &str, offset: usize) -> Location {
    let line = text[..offset].matches('\n').count() as u64 + 1;
    let col = text[..offset]
        .rsplit('\n')
        .next()
        .map_or(0, |l| l.chars().count()) as u64
        + 1;
    Location::new(file, (line, col), (line, col + 1))
}

/// Render the block whose `marker` starts at byte `begin`: where the block ends (after its
/// `JINJA_END;`) and what takes its place.
fn render_block(
    file: &str,
    text: &str,
    begin: usize,
    marker: &str,
    env: &JinjaEnv,
    audit: bool,
) -> Result<(usize, String), Diagnostic> {
    let fail = |offset: usize, message: String| {
        Diagnostic::at(
            Problem::JinjaTemplate { message },
            loc_at(file, text, offset),
        )
    };
    let Some(body) = after_semicolon(text, begin + marker.len()) else {
        return Err(fail(begin, format!("`{marker}` must be followed by `;`")));
    };
    let Some(end) = find_word(text, "JINJA_END", body) else {
        return Err(fail(
            begin,
            format!("`{marker};` has no `JINJA_END;` after it"),
        ));
    };
    let Some(after) = after_semicolon(text, end + "JINJA_END".len()) else {
        return Err(fail(end, "`JINJA_END` must be followed by `;`".into()));
    };
    let template = &text[body..end];
    if marker == STATEMENT_BEGIN {
        if let Some(k) = find_word(template, "RUNTIME_STAGE", 0) {
            return Err(fail(
                body + k,
                "efmesh renders a Jinja statement once, when the model is read, so it cannot branch on `runtime_stage`; write the statement outside Jinja with `@IF(@runtime_stage = '...', ...)`".into(),
            ));
        }
    }
    // `start` and `end` are words too common in templates to be taken for the variables
    let time_names: Vec<String> = jinja_names()
        .filter(|n| n.contains('_'))
        .map(|n| n.to_string())
        .collect();
    if let Some((line, name, tag)) = misused(template, &time_names) {
        let first = text[..body].matches('\n').count() + 1;
        let line = (first + line - 1) as u64;
        return Err(Diagnostic::at(
            Problem::JinjaTemplate {
                message: format!(
                    "`{name}` is used in `{tag}`; efmesh renders a Jinja query once and binds the time variables per batch, so they may only be written as `{{{{ {name} }}}}` or `'{{{{ {name} }}}}'`; move the logic to SQL (`WHERE @{name} > ...`)"
                ),
            },
            Location::new(file, (line, 1), (line, 2)),
        ));
    }
    let rendered = match render(template, env, audit) {
        Ok(r) => r,
        Err((line, message)) => {
            // the template's line, counted in the file
            let first = text[..body].matches('\n').count() as u64 + 1;
            let line = first + line.saturating_sub(1) as u64;
            return Err(Diagnostic::at(
                Problem::JinjaTemplate { message },
                Location::new(file, (line, 1), (line, 2)),
            ));
        }
    };
    let mut rendered = efmesh_macros(&rendered).map_err(|message| fail(body, message))?;
    if marker == STATEMENT_BEGIN
        && !rendered.trim_end().ends_with(';')
        && !rendered.trim().is_empty()
    {
        // the block's statements end where the block does
        let trimmed = rendered.trim_end().len();
        rendered.insert(trimmed, ';');
    }
    let spaces = |s: &str| -> String {
        s.chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect()
    };
    let mut out = String::with_capacity(rendered.len() + 64);
    out.push_str(&spaces(&text[begin..body]));
    out.push_str(&rendered);
    let missing = template
        .matches('\n')
        .count()
        .saturating_sub(rendered.matches('\n').count());
    out.extend(std::iter::repeat_n('\n', missing));
    out.push_str(&spaces(&text[end..after]));
    Ok((after, out))
}

/// Render `template` with the project's macros prepended; an error carries the template's own
/// line (1-based) when minijinja knows it.
fn render(template: &str, env: &JinjaEnv, audit: bool) -> Result<String, (usize, String)> {
    use minijinja::{Environment, Value};
    let mut jinja = Environment::new();
    jinja.set_keep_trailing_newline(true);
    if audit {
        for name in audit_arguments(template, env)? {
            jinja.add_global(name.clone(), format!("@{name}"));
        }
    }
    let variables = env.variables.clone();
    jinja.add_function(
        "var",
        move |name: String, default: Option<Value>| -> Value {
            match variables.get(&name.to_ascii_lowercase()) {
                Some(v) => Value::from_serialize(v),
                None => default.unwrap_or(Value::from(())),
            }
        },
    );
    let gateway = env.gateway.map(str::to_string);
    jinja.add_function("gateway", move || -> Value {
        Value::from(gateway.clone().unwrap_or_default())
    });
    for name in jinja_names() {
        jinja.add_global(*name, sentinel(name));
    }
    // the macros end on the template's first line, so its lines keep their numbers
    let macros = env.macros.trim_end();
    let joined = if macros.is_empty() {
        template.to_string()
    } else {
        format!("{macros}{{#- efmesh: the query begins here -#}}{template}")
    };
    let offset = if macros.is_empty() {
        0
    } else {
        macros.matches('\n').count()
    };
    // whitespace control on the join strips the template's leading newlines: put them back
    let leading: String = template.chars().take_while(|c| c.is_whitespace()).collect();
    match jinja.render_str(&joined, ()) {
        Ok(out) if macros.is_empty() => Ok(out),
        Ok(out) => Ok(format!("{leading}{}", out.trim_start())),
        Err(e) => {
            let line = e.line().unwrap_or(1).saturating_sub(offset);
            let mut message = e.kind().to_string();
            if let Some(detail) = e.detail() {
                message = format!("{message}: {detail}");
            }
            Err((line.max(1), message))
        }
    }
}

/// The variables an audit's template reads that nothing defines: its arguments. Each must be
/// written alone in an output tag (`{{ column }}`), so rendering it as its macro is what
/// SQLMesh renders for every call; the error carries the template line of another use.
fn audit_arguments(template: &str, env: &JinjaEnv) -> Result<Vec<String>, (usize, String)> {
    let macros = env.macros.trim_end();
    let joined = format!("{macros}{template}");
    let probe = minijinja::Environment::new();
    let Ok(parsed) = probe.template_from_str(&joined) else {
        // the render reports the syntax error at its line
        return Ok(vec![]);
    };
    // what the template reads that neither the macros (their names) nor efmesh defines; a
    // global a macro body reads is not one of the audit's arguments
    let own = match probe.template_from_str(template) {
        Ok(t) => t.undeclared_variables(false),
        Err(_) => return Ok(vec![]),
    };
    let known = |n: &str| matches!(n, "var" | "gateway") || jinja_names().any(|j| *j == n);
    let mut names: Vec<String> = parsed
        .undeclared_variables(false)
        .into_iter()
        .filter(|n| !known(n) && own.contains(n))
        .collect();
    names.sort();
    if let Some((line, name, tag)) = misused(template, &names) {
        return Err((
            line,
            format!(
                "the audit's argument `{name}` is used in `{tag}`; efmesh renders a Jinja audit once, with each argument as its macro, so an argument may only be written alone as `{{{{ {name} }}}}` (or as @{name} outside Jinja)"
            ),
        ));
    }
    Ok(names)
}

/// The first tag of `template` that uses one of `names` for more than its value (anything but
/// `{{ name }}` alone): its line, the name and the tag. Such a variable renders as a stand-in
/// that efmesh replaces afterwards, so logic or a filter on it would see the stand-in.
fn misused<'n>(template: &str, names: &'n [String]) -> Option<(usize, &'n str, String)> {
    let mut at = 0;
    while let Some(k) = template[at..].find('{') {
        let open = at + k;
        let rest = &template[open..];
        let (output, close) = if rest.starts_with("{{") {
            (true, "}}")
        } else if rest.starts_with("{%") {
            (false, "%}")
        } else {
            at = open + 1;
            continue;
        };
        let len = rest[2..].find(close)?;
        let inner =
            rest[2..2 + len].trim_matches(|c: char| c == '-' || c == '+' || c.is_whitespace());
        for name in names {
            let plain = output && inner == name;
            if !plain && find_word(inner, &name.to_ascii_uppercase(), 0).is_some() {
                let line = template[..open].matches('\n').count() + 1;
                return Some((line, name, rest[..2 + len + 2].to_string()));
            }
        }
        at = open + 2 + len + 2;
    }
    None
}

/// The rendered query with each time variable and `this_model` as efmesh's macro: `'...'`
/// around one becomes the macro itself (which renders as a quoted literal, as SQLMesh's
/// `'{{ start_ds }}'` does), a bare one the macro. One inside a longer string literal is left
/// there: [`crate::time::string_template`] turns such a literal into one macro that renders the whole string
/// per batch, as SQLMesh's Jinja writes it. `this_model` inside a string, or a time variable
/// without a text form, is refused.
fn efmesh_macros(rendered: &str) -> Result<String, String> {
    let mut out = rendered.to_string();
    for name in jinja_names() {
        let s = sentinel(name);
        out = out.replace(&format!("'{s}'"), &format!("@{name}"));
        out = out.replace(&format!("\"{s}\""), &format!("@{name}"));
    }
    // what is left is bare, or inside a longer string
    for name in jinja_names() {
        let s = sentinel(name);
        let mut from = 0;
        while let Some(k) = out[from..].find(&s) {
            let at = from + k;
            let line_start = out[..at].rfind('\n').map_or(0, |k| k + 1);
            let quotes = out[line_start..at].matches('\'').count();
            if quotes % 2 == 1 {
                if *name == crate::sql::macros::THIS_MODEL || !has_text_form(name) {
                    return Err(format!(
                        "`{{{{ {name} }}}}` is inside a longer string literal, which efmesh cannot render per batch; write it alone in its quotes (`'{{{{ {name} }}}}'`) and concatenate, or use @{name}"
                    ));
                }
                from = at + s.len();
                continue;
            }
            out.replace_range(at..at + s.len(), &format!("@{name}"));
            from = at;
        }
    }
    Ok(out)
}

/// Whether a time variable has the text SQLMesh's Jinja writes for it
/// ([`crate::time::jinja_text`]).
fn has_text_form(name: &str) -> bool {
    name.contains('_')
}

/// The `jinja` error for a file whose tokens hold Jinja, at the first marker.
pub fn refuse(file: &str, tokens: &[TokenWithSpan]) -> Option<Diagnostic> {
    find(tokens).map(|(what, span)| {
        Diagnostic::at(Problem::Jinja { what }, Location::from_span(file, span))
    })
}

/// The first Jinja marker in `tokens`: its text and where it is.
pub fn find(tokens: &[TokenWithSpan]) -> Option<(String, Span)> {
    for (i, t) in tokens.iter().enumerate() {
        match &t.token {
            Token::Word(w)
                if ["JINJA_QUERY_BEGIN", "JINJA_STATEMENT_BEGIN", "JINJA_END"]
                    .iter()
                    .any(|k| w.value.eq_ignore_ascii_case(k)) =>
            {
                return Some((w.value.to_ascii_uppercase(), t.span));
            }
            Token::LBrace => {
                // `{{`, `{%` or `{#` written together: no DuckDB SQL starts a brace that way
                let next = tokens.get(i + 1)?;
                let opener = match next.token {
                    Token::LBrace => "{{",
                    Token::Mod => "{%",
                    Token::Sharp => "{#",
                    _ => continue,
                };
                if next.span.start == t.span.end {
                    return Some((opener.to_string(), t.span.union(&next.span)));
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::DuckDbDialect;
    use sqlparser::tokenizer::Tokenizer;

    fn first(sql: &str) -> Option<(String, u64, u64)> {
        let tokens = Tokenizer::new(&DuckDbDialect {}, sql)
            .tokenize_with_location()
            .unwrap();
        find(&tokens).map(|(w, s)| (w, s.start.line, s.start.column))
    }

    #[test]
    fn markers_are_found_at_their_position() {
        assert_eq!(
            first("JINJA_QUERY_BEGIN;\nSELECT 1\nJINJA_END;"),
            Some(("JINJA_QUERY_BEGIN".into(), 1, 1))
        );
        assert_eq!(
            first("SELECT 1 AS a,\n  {{ var('x') }} AS b"),
            Some(("{{".into(), 2, 3))
        );
        assert_eq!(
            first("{% macro double(x) %} {{ x }} * 2 {% endmacro %}"),
            Some(("{%".into(), 1, 1))
        );
        assert_eq!(first("SELECT 1 {# note #}"), Some(("{#".into(), 1, 10)));
    }

    #[test]
    fn duckdb_braces_are_not_jinja() {
        assert_eq!(
            first("SELECT {'a': {'b': 1}}, [{'x': 2}], '{{ in a string }}'"),
            None
        );
        assert_eq!(first("SELECT { 'a': 1 } -- {{ in a comment }}"), None);
    }

    fn jinja_env<'a>(
        variables: &'a std::collections::BTreeMap<String, serde_json::Value>,
        macros: &'a str,
    ) -> JinjaEnv<'a> {
        JinjaEnv {
            variables,
            macros,
            gateway: Some("local"),
        }
    }

    #[test]
    fn a_jinja_audit_renders_once_with_each_argument_as_its_macro() {
        let vars = std::collections::BTreeMap::from([("r".to_string(), serde_json::json!("eu"))]);
        let env = jinja_env(
            &vars,
            "{% macro gt(a, b) %}{{ a }} > {{ b }}{% endmacro %}\n",
        );
        let text = "AUDIT (name a, defaults (t = 1));\nJINJA_QUERY_BEGIN;\nSELECT * FROM {{ this_model }} WHERE {{ col }} > {{t}} AND r = '{{ var('r') }}'\nJINJA_END;\nAUDIT (name b);\nJINJA_QUERY_BEGIN;\nSELECT * FROM {{ this_model }} WHERE {{ gt('x', 2) }}\nJINJA_END;\n";
        let out = render_audit_blocks("a.sql", text, &env).unwrap().unwrap();
        assert!(
            out.contains("SELECT * FROM @this_model WHERE @col > @t AND r = 'eu'"),
            "{out}"
        );
        assert!(
            out.contains("SELECT * FROM @this_model WHERE x > 2"),
            "{out}"
        );
        // logic on an argument is refused at its line
        let logic = "AUDIT (name a);\nJINJA_QUERY_BEGIN;\nSELECT 1\n{% for c in cols %}, {{ c }}{% endfor %}\nJINJA_END;\n";
        let d = render_audit_blocks("a.sql", logic, &env)
            .unwrap()
            .unwrap_err();
        assert_eq!(d.location.map(|l| l.line), Some(4));
        assert!(d.problem.to_string().contains("`cols`"), "{}", d.problem);
    }

    #[test]
    fn jinja_statements_render_in_place_around_a_plain_or_jinja_query() {
        let vars = std::collections::BTreeMap::new();
        let env = jinja_env(&vars, "");
        let text = "MODEL (name a.b);\nJINJA_STATEMENT_BEGIN;\n{% for t in ['x', 'y'] %}CREATE TABLE IF NOT EXISTS {{ t }} (a INT);\n{% endfor %}\nJINJA_END;\nSELECT 1 AS a;\nJINJA_STATEMENT_BEGIN;\nDELETE FROM {{ this_model }} WHERE d < '{{ start_ds }}'\nJINJA_END;\n";
        let out = render_query_block("m.sql", text, &env).unwrap().unwrap();
        assert!(
            out.contains(
                "CREATE TABLE IF NOT EXISTS x (a INT);\nCREATE TABLE IF NOT EXISTS y (a INT);"
            ),
            "{out}"
        );
        // the block's last statement ends with it
        assert!(
            out.contains("DELETE FROM @this_model WHERE d < @start_ds;"),
            "{out}"
        );
        assert!(out.contains("\nSELECT 1 AS a;\n"), "{out}");
        assert!(!out.contains("JINJA"), "{out}");
        // two query blocks are refused at the second
        let two = "MODEL (name a.b);\nJINJA_QUERY_BEGIN;\nSELECT 1\nJINJA_END;\nJINJA_QUERY_BEGIN;\nSELECT 2\nJINJA_END;\n";
        let d = render_query_block("m.sql", two, &env).unwrap().unwrap_err();
        assert_eq!(d.location.map(|l| l.line), Some(5));
    }

    #[test]
    fn a_jinja_query_renders_in_place_with_time_variables_as_efmesh_macros() {
        let vars = std::collections::BTreeMap::from([("n".to_string(), serde_json::json!(3))]);
        let text = "MODEL (name a.b);\nJINJA_QUERY_BEGIN;\nSELECT {{ twice('x') }} AS y,\n  {{ var('n') }} AS n, '{{ gateway() }}' AS g\n{% if true %}\nFROM t\n{% endif %}\nWHERE ds BETWEEN '{{ start_ds }}' AND '{{ end_ds }}' AND e < {{ end_epoch }}\nJINJA_END;\n";
        let out = render_query_block(
            "m.sql",
            text,
            &jinja_env(&vars, "{% macro twice(c) %}{{ c }} * 2{% endmacro %}\n"),
        )
        .unwrap()
        .unwrap();
        assert!(out.starts_with("MODEL (name a.b);\n"), "{out}");
        assert!(
            out.contains("SELECT x * 2 AS y,\n  3 AS n, 'local' AS g"),
            "{out}"
        );
        assert!(
            out.contains("WHERE ds BETWEEN @start_ds AND @end_ds AND e < @end_epoch"),
            "{out}"
        );
        // the MODEL block and the lines of the query keep their numbers
        assert_eq!(out.lines().count(), text.lines().count(), "{out}");
        assert_eq!(
            out.lines().nth(2),
            text.lines().nth(2).map(|_| "SELECT x * 2 AS y,")
        );
        assert!(!out.contains("JINJA"), "{out}");
        // no block, nothing to do
        assert!(render_query_block(
            "m.sql",
            "MODEL (name a.b);\nSELECT 1",
            &jinja_env(&vars, "")
        )
        .is_none());
    }

    #[test]
    fn a_template_that_does_not_render_is_located_in_the_file() {
        let vars = Default::default();
        let e = render_query_block(
            "m.sql",
            "MODEL (name a.b);\nJINJA_QUERY_BEGIN;\nSELECT 1,\n  {{ x }\nJINJA_END;",
            &jinja_env(
                &vars,
                "{% macro m() %}1{% endmacro %}\n{% macro n() %}2{% endmacro %}\n",
            ),
        )
        .unwrap()
        .unwrap_err();
        assert_eq!(e.problem.code(), "jinja-template");
        assert_eq!(e.location.unwrap().line, 4);
        let e = render_query_block(
            "m.sql",
            "MODEL (name a.b);\nJINJA_QUERY_BEGIN;\nSELECT 1",
            &jinja_env(&vars, ""),
        )
        .unwrap()
        .unwrap_err();
        assert!(e.to_string().contains("JINJA_END"), "{e}");
        let e = render_query_block(
            "m.sql",
            "MODEL (name a.b);\nJINJA_QUERY_BEGIN;\nSELECT 'x{{ this_model }}' AS s\nJINJA_END;",
            &jinja_env(&vars, ""),
        )
        .unwrap()
        .unwrap_err();
        assert!(e.to_string().contains("inside a longer string"), "{e}");
    }

    #[test]
    fn logic_on_a_time_variable_is_refused_at_its_line() {
        let vars = std::collections::BTreeMap::new();
        let e = render_query_block(
            "m.sql",
            "MODEL (name a.b);\nJINJA_QUERY_BEGIN;\nSELECT 1 AS a\n{% if start_ds > '2024-01-01' %}, 2 AS b{% endif %}\nJINJA_END;",
            &jinja_env(&vars, ""),
        )
        .unwrap()
        .unwrap_err();
        assert_eq!(e.location.as_ref().map(|l| l.line), Some(4));
        assert!(e.to_string().contains("start_ds"), "{e}");
    }

    #[test]
    fn a_time_variable_inside_a_longer_string_renders_per_batch_as_sqlmesh_writes_it() {
        let vars = std::collections::BTreeMap::new();
        let out = render_query_block(
            "m.sql",
            "MODEL (name a.b);\nJINJA_QUERY_BEGIN;\nSELECT '{{ start_ds }}T00:{{ end_hour }}' AS s\nJINJA_END;",
            &jinja_env(&vars, ""),
        )
        .unwrap()
        .unwrap();
        let tokens = crate::sql::tokenize("m.sql", &out, crate::sql::Dialect::DuckDb).unwrap();
        let folded = crate::sql::macros::fold_macros(&tokens, "m.sql", false).unwrap();
        let name = folded
            .iter()
            .find_map(|t| match &t.token {
                Token::Placeholder(p) => Some(p.trim_start_matches('@').to_string()),
                _ => None,
            })
            .unwrap();
        let day = |d: u32| {
            chrono::NaiveDate::from_ymd_opt(2024, 3, d)
                .unwrap()
                .and_hms_opt(0, 0, 0)
                .unwrap()
        };
        let times = crate::time::MacroTimes {
            start: day(1),
            end: day(2),
            execution: day(3),
        };
        assert_eq!(
            crate::time::bind_macro(&name, &times).as_deref(),
            Some("'2024-03-01T00:23'")
        );
    }
}
