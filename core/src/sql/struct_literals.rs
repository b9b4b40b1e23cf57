//! `STRUCT(expr AS name, ...)`, the struct literal of BigQuery and sqlglot, which SQLMesh users
//! write and SQLMesh transpiles for DuckDB as `{'name': expr, ...}`. DuckDB (and sqlparser's
//! DuckDB dialect) does not read the `AS` form, so in a SQLMesh project it is rewritten on
//! tokens before the query is parsed, keeping every token's position for diagnostics.

use super::macro_lang::args::{closes, matching, opens};
use sqlparser::tokenizer::{Token, TokenWithSpan};
use std::borrow::Cow;

fn significant(t: &Token) -> bool {
    !matches!(t, Token::Whitespace(_))
}

/// `tokens` with each `STRUCT(expr AS name, ...)` written as `{'name': expr, ...}`; borrowed
/// when there is none. A `STRUCT(...)` whose every argument is not `expr AS name` (DuckDB's own
/// `STRUCT` type in a cast, say) is left as written.
pub fn rewrite(tokens: &[TokenWithSpan]) -> Cow<'_, [TokenWithSpan]> {
    let is_struct = |t: &Token| matches!(t, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("struct"));
    if !tokens.iter().any(|t| is_struct(&t.token)) {
        return Cow::Borrowed(tokens);
    }
    let mut out: Vec<TokenWithSpan> = Vec::with_capacity(tokens.len());
    let mut changed = false;
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        if is_struct(&t.token) {
            if let Some(open) = (i + 1..tokens.len()).find(|&k| significant(&tokens[k].token)) {
                if tokens[open].token == Token::LParen {
                    if let Some(close) = matching(tokens, open) {
                        if let Some(fields) = named_fields(&tokens[open + 1..close]) {
                            let at = |tok: Token| TokenWithSpan::new(tok, t.span);
                            out.push(at(Token::LBrace));
                            for (k, (expr, name)) in fields.into_iter().enumerate() {
                                if k > 0 {
                                    out.push(at(Token::Comma));
                                }
                                out.push(at(Token::SingleQuotedString(name)));
                                out.push(at(Token::Colon));
                                out.extend(rewrite(expr).iter().cloned());
                            }
                            out.push(TokenWithSpan::new(Token::RBrace, tokens[close].span));
                            changed = true;
                            i = close + 1;
                            continue;
                        }
                    }
                }
            }
        }
        out.push(t.clone());
        i += 1;
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(tokens)
    }
}

/// The arguments of a struct call as `(expr, name)` pairs, when every one is `expr AS name`.
fn named_fields(args: &[TokenWithSpan]) -> Option<Vec<(&[TokenWithSpan], String)>> {
    let mut out = vec![];
    let mut depth = 0usize;
    let mut start = 0;
    let mut pieces = vec![];
    for (k, t) in args.iter().enumerate() {
        if opens(&t.token) {
            depth += 1;
        } else if closes(&t.token) {
            depth = depth.saturating_sub(1);
        } else if depth == 0 && t.token == Token::Comma {
            pieces.push(&args[start..k]);
            start = k + 1;
        }
    }
    pieces.push(&args[start..]);
    for piece in pieces {
        let sig: Vec<usize> = (0..piece.len())
            .filter(|&k| significant(&piece[k].token))
            .collect();
        let [.., as_at, name_at] = sig.as_slice() else {
            return None;
        };
        let is_as = matches!(&piece[*as_at].token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("as"));
        let Token::Word(name) = &piece[*name_at].token else {
            return None;
        };
        if !is_as || sig.len() < 3 {
            return None;
        }
        out.push((&piece[..*as_at], name.value.clone()));
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::{canonical::tokens_to_sql, tokenize, Dialect};

    fn rw(sql: &str) -> String {
        let toks = tokenize("m.sql", sql, Dialect::DuckDb).unwrap();
        // spacing aside
        tokens_to_sql(&rewrite(&toks)).split_whitespace().collect()
    }

    fn sq(s: &str) -> String {
        s.split_whitespace().collect()
    }

    #[test]
    fn named_struct_arguments_become_a_duckdb_struct_literal() {
        assert_eq!(
            rw("SELECT STRUCT('7' AS product_id, f(a, b) AS q) AS items"),
            sq("SELECT {'product_id': '7', 'q': f(a, b)} AS items")
        );
        assert_eq!(
            rw("SELECT STRUCT(STRUCT(1 AS x) AS inner_s) AS s"),
            sq("SELECT {'inner_s': {'x': 1}} AS s")
        );
        // DuckDB's own STRUCT type, and a call without names, are left alone
        assert_eq!(
            rw("SELECT CAST(x AS STRUCT(a INT)) AS y"),
            sq("SELECT CAST(x AS STRUCT(a INT)) AS y")
        );
        assert_eq!(
            rw("SELECT struct_pack(a := 1)"),
            sq("SELECT struct_pack(a := 1)")
        );
    }
}
