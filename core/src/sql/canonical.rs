//! The canonical form of a query: what a fingerprint is computed over.
//!
//! Normalization happens on tokens before parsing: unquoted identifiers and keywords are
//! lower-cased (quoted identifiers and string literals are left alone), comments and
//! whitespace vanish when the AST is printed. Reformatting a query therefore never changes its
//! canonical form, while any change to the tree does.

use sqlparser::tokenizer::{Token, TokenWithSpan, Whitespace};

/// Lower-case every unquoted word, keeping positions.
pub fn normalize_tokens(tokens: &[TokenWithSpan]) -> Vec<TokenWithSpan> {
    tokens
        .iter()
        .map(|t| match &t.token {
            Token::Word(w)
                if w.quote_style.is_none() && w.value.bytes().any(|b| b.is_ascii_uppercase()) =>
            {
                let mut w = w.clone();
                w.value = w.value.to_ascii_lowercase();
                TokenWithSpan::new(Token::Word(w), t.span)
            }
            _ => t.clone(),
        })
        .collect()
}

/// [`normalize_tokens`] in place, for the parse path that owns its tokens.
pub fn normalize_tokens_owned(mut tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    for t in &mut tokens {
        if let Token::Word(w) = &mut t.token {
            if w.quote_style.is_none() {
                w.value.make_ascii_lowercase();
            }
        }
    }
    tokens
}

/// The token-level canonical form used when sqlparser cannot parse the query: the same
/// normalization, one space between significant tokens, no structure.
pub fn fallback_canonical(normalized: &[TokenWithSpan]) -> String {
    let mut out = String::new();
    for t in normalized {
        match &t.token {
            Token::Whitespace(_) | Token::SemiColon => continue,
            tok => {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(&tok.to_string());
            }
        }
    }
    out
}

/// Concatenate tokens back into SQL text, dropping comments (used to render fallback models).
pub fn tokens_to_sql(tokens: &[TokenWithSpan]) -> String {
    let mut out = String::new();
    for t in tokens {
        match &t.token {
            Token::Whitespace(Whitespace::SingleLineComment { .. }) => out.push('\n'),
            Token::Whitespace(Whitespace::MultiLineComment(_)) => out.push(' '),
            tok => out.push_str(&tok.to_string()),
        }
    }
    out.trim().trim_end_matches(';').trim().to_string()
}
