//! Finding Jinja in SQLMesh files, so that it is refused where it is written.
//!
//! SQLMesh models may wrap their query in `JINJA_QUERY_BEGIN; ... JINJA_END;` (or statements in
//! `JINJA_STATEMENT_BEGIN`), and projects keep `{% macro %}` files next to their `@DEF` ones.
//! efmesh renders only SQLMesh's own macro language; read as SQL, a template either fails to
//! parse or, worse, parses as something else (`{{ x }}` is a DuckDB struct-ish brace pair), so
//! the first Jinja marker in a file is reported at its line instead.

use crate::diagnostic::{Diagnostic, Problem};
use crate::location::Location;
use sqlparser::tokenizer::{Span, Token, TokenWithSpan};

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
}
