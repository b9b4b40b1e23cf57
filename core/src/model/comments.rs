//! The comments SQLMesh reads as documentation: the one before a file's MODEL block (the
//! model's description when it declares none) and those at the outer SELECT's items (each
//! column's description when `column_descriptions` is not declared). SQLMesh writes both into
//! the engine as table and column comments, and so does efmesh.

use sqlparser::tokenizer::{Token, TokenWithSpan, Whitespace};

/// The text of a comment token, without its markers; `None` for other tokens.
fn comment_text(t: &Token) -> Option<String> {
    let text = match t {
        Token::Whitespace(Whitespace::SingleLineComment { comment, .. }) => comment.as_str(),
        Token::Whitespace(Whitespace::MultiLineComment(c)) => c.as_str(),
        _ => return None,
    };
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// The comments before the first token that is not whitespace, joined by newlines.
pub fn leading(tokens: &[TokenWithSpan]) -> Option<String> {
    let texts: Vec<String> = tokens
        .iter()
        .take_while(|t| matches!(t.token, Token::Whitespace(_)))
        .filter_map(|t| comment_text(&t.token))
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// Words that end an outer SELECT's items when it has no FROM.
const AFTER_ITEMS: &[&str] = &[
    "from",
    "where",
    "group",
    "having",
    "qualify",
    "window",
    "order",
    "limit",
    "union",
    "except",
    "intersect",
];

/// The last comment at each item of the outer SELECT of `tokens` (a model's query), by the
/// item's position: a comment on its own line before the item, one inside it, and one after
/// its comma on the same line all belong to it, and the last one wins, as in SQLMesh. Empty
/// when an item is a `*`, whose columns no position names.
pub fn projections(tokens: &[TokenWithSpan]) -> Vec<(usize, String)> {
    let word = |t: &Token| match t {
        Token::Word(w) => Some(w.value.to_ascii_lowercase()),
        _ => None,
    };
    let mut depth = 0i32;
    let mut start = None;
    for (i, t) in tokens.iter().enumerate() {
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            other if depth == 0 && word(other).as_deref() == Some("select") => {
                start = Some(i + 1);
                break;
            }
            _ => {}
        }
    }
    let Some(start) = start else {
        return vec![];
    };
    let mut out: Vec<(usize, String)> = vec![];
    let mut set = |k: usize, text: String| match out.iter_mut().find(|(i, _)| *i == k) {
        Some(slot) => slot.1 = text,
        None => out.push((k, text)),
    };
    let (mut depth, mut item) = (0i32, 0usize);
    // after an item's comma, until the line ends, a comment still belongs to that item
    let mut trailing_of: Option<usize> = None;
    // the current item's significant tokens
    let mut sig: Vec<&Token> = vec![];
    let is_star = |sig: &[&Token]| match sig {
        [Token::Mul, ..] | [_, Token::Period, Token::Mul, ..] => true,
        [Token::Word(w), Token::LParen, ..] => w.value.eq_ignore_ascii_case("columns"),
        _ => false,
    };
    for t in &tokens[start..] {
        let tok = &t.token;
        if depth == 0 {
            if let Some(w) = word(tok) {
                if AFTER_ITEMS.contains(&w.as_str()) {
                    break;
                }
            }
            if matches!(tok, Token::SemiColon) {
                break;
            }
        }
        if let Some(text) = comment_text(tok) {
            set(trailing_of.unwrap_or(item), text);
            if matches!(tok, Token::Whitespace(Whitespace::SingleLineComment { .. })) {
                trailing_of = None;
            }
            continue;
        }
        match tok {
            Token::Whitespace(Whitespace::Newline) => trailing_of = None,
            Token::Whitespace(_) => {}
            Token::Comma if depth == 0 => {
                if is_star(&sig) {
                    return vec![];
                }
                trailing_of = Some(item);
                item += 1;
                sig.clear();
            }
            other => {
                match other {
                    Token::LParen => depth += 1,
                    Token::RParen => depth -= 1,
                    _ => {}
                }
                sig.push(other);
                trailing_of = None;
            }
        }
    }
    if is_star(&sig) {
        return vec![];
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::Dialect;

    fn tokens(sql: &str) -> Vec<TokenWithSpan> {
        crate::sql::tokenize("m.sql", sql, Dialect::DuckDb).unwrap()
    }

    #[test]
    fn the_comment_before_the_model_block_is_its_description() {
        assert_eq!(
            leading(&tokens(
                "/* Orders, one a row */\n-- and more\nMODEL (name a.b)"
            ))
            .as_deref(),
            Some("Orders, one a row\nand more")
        );
        assert_eq!(leading(&tokens("MODEL (name a.b) /* not */")), None);
    }

    #[test]
    fn each_items_last_comment_is_its_own_and_a_star_stops_it() {
        let q = "SELECT\n  -- id before\n  id, -- id after\n  a + 1 AS b /* inside */,\n  c,\n  d -- d last\nFROM t WHERE x -- not an item";
        assert_eq!(
            projections(&tokens(q)),
            [
                (0, "id after".to_string()),
                (1, "inside".to_string()),
                (3, "d last".to_string())
            ]
        );
        let q = "WITH x AS (SELECT 1 AS a -- cte\n) SELECT a, -- outer\n 2 AS b FROM x";
        assert_eq!(projections(&tokens(q)), [(0, "outer".to_string())]);
        assert!(projections(&tokens("SELECT *, a -- c\nFROM t")).is_empty());
        assert!(projections(&tokens("SELECT t.*, a -- c\nFROM t")).is_empty());
        assert_eq!(
            projections(&tokens("SELECT a * 2 AS b -- doubled\nFROM t")),
            [(0, "doubled".to_string())]
        );
    }
}
