//! The `MODEL ( ... );` and `AUDIT ( ... );` blocks, parsed into a small untyped term tree.
//!
//! SQLMesh's property syntax is loose: `key value` pairs separated by commas, where a value is
//! an identifier, a string, a number, a parenthesized tuple, a bracketed array, or a sequence of
//! those (`kind INCREMENTAL_BY_TIME_RANGE (time_column ds)`, `id DECIMAL(10, 2)`). Parsing it
//! into terms first and interpreting per property afterwards keeps one grammar for all of
//! them, and every term keeps its span for diagnostics.

use crate::diagnostic::{Diagnostic, Problem};
use crate::location::Location;
use sqlparser::tokenizer::{Span, Token, TokenWithSpan};

/// One syntactic value inside a block.
#[derive(Debug, Clone, PartialEq)]
pub enum TermKind {
    /// An identifier or dotted path (`sushi.orders`), with whether any part was quoted.
    Ident(String, bool),
    /// A quoted string literal, unescaped.
    Str(String),
    /// A numeric literal as written, sign included.
    Number(String),
    /// A parenthesized, comma-separated list (`(a, b INT)`).
    Tuple(Vec<Item>),
    /// A bracketed, comma-separated list (`[a, b]`).
    Array(Vec<Item>),
    /// Any other single token, such as `:=` or `=`.
    Op(String),
}

/// A term with its source span.
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    /// What the term is.
    pub kind: TermKind,
    /// Where it is written, so a property's diagnostic can point at its value.
    pub span: Span,
}

/// A comma-separated entry: a sequence of terms (`time_column ds`, `id INT`).
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// The terms in order; for a property the first is its key.
    pub terms: Vec<Term>,
    /// From the first term to the last.
    pub span: Span,
}

impl Term {
    /// The identifier text, if this term is one.
    pub fn ident(&self) -> Option<&str> {
        match &self.kind {
            TermKind::Ident(s, _) => Some(s),
            _ => None,
        }
    }

    /// A scalar rendered as text: identifiers, strings and numbers.
    pub fn scalar(&self) -> Option<&str> {
        match &self.kind {
            TermKind::Ident(s, _) | TermKind::Str(s) | TermKind::Number(s) => Some(s),
            _ => None,
        }
    }

    /// The entries of a tuple or array.
    pub fn list(&self) -> Option<&[Item]> {
        match &self.kind {
            TermKind::Tuple(v) | TermKind::Array(v) => Some(v),
            _ => None,
        }
    }
}

impl std::fmt::Display for Term {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            TermKind::Ident(s, _) | TermKind::Number(s) | TermKind::Op(s) => f.write_str(s),
            TermKind::Str(s) => f.write_str(&crate::quote::literal(s)),
            TermKind::Tuple(items) => write!(f, "({})", join_items(items)),
            TermKind::Array(items) => write!(f, "[{}]", join_items(items)),
        }
    }
}

impl std::fmt::Display for Item {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = String::new();
        for (i, t) in self.terms.iter().enumerate() {
            let s = t.to_string();
            let glue = matches!(t.kind, TermKind::Tuple(_) | TermKind::Array(_))
                && i > 0
                && matches!(self.terms[i - 1].kind, TermKind::Ident(..));
            if i > 0 && !glue {
                out.push(' ');
            }
            out.push_str(&s);
        }
        f.write_str(&out)
    }
}

fn join_items(items: &[Item]) -> String {
    items
        .iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A parsed block: its entries and the index of the first token after it (past the `;`).
pub struct Block {
    /// The comma-separated entries between the parentheses.
    pub items: Vec<Item>,
    /// From the keyword to the closing parenthesis.
    pub span: Span,
    /// Index into the tokens where what follows the block (its query) begins.
    pub rest: usize,
}

/// Parse `KEYWORD ( items ) [;]` at the start of `tokens` (which may contain whitespace).
///
/// Returns `Ok(None)` when the tokens do not start with `keyword`.
pub fn parse_block(
    keyword: &str,
    block: &'static str,
    tokens: &[TokenWithSpan],
    file: &str,
) -> Result<Option<Block>, Diagnostic> {
    let mut p = Cursor {
        tokens,
        pos: 0,
        file,
        block,
        depth: 0,
    };
    p.skip_ws();
    match p.peek() {
        Some(TokenWithSpan {
            token: Token::Word(w),
            ..
        }) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(keyword) => {}
        _ => return Ok(None),
    }
    let start = p.next().expect("peeked").span;
    p.expect(&Token::LParen, "`(`")?;
    let items = p.items(&Token::RParen)?;
    let end = p.tokens[p.pos - 1].span;
    p.skip_ws();
    if matches!(p.peek().map(|t| &t.token), Some(Token::SemiColon)) {
        p.pos += 1;
    }
    Ok(Some(Block {
        items,
        span: start.union(&end),
        rest: p.pos,
    }))
}

/// How deeply parentheses and brackets may nest inside a block: real properties nest two or
/// three levels; the bound keeps a hostile file from overflowing the stack.
pub const MAX_DEPTH: usize = 64;

struct Cursor<'a> {
    tokens: &'a [TokenWithSpan],
    pos: usize,
    file: &'a str,
    block: &'static str,
    /// Open parentheses and brackets around the current term.
    depth: usize,
}

impl<'a> Cursor<'a> {
    fn skip_ws(&mut self) {
        while matches!(
            self.tokens.get(self.pos).map(|t| &t.token),
            Some(Token::Whitespace(_))
        ) {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<&'a TokenWithSpan> {
        self.skip_ws();
        self.tokens.get(self.pos)
    }

    fn next(&mut self) -> Option<&'a TokenWithSpan> {
        let t = self.peek();
        if t.is_some() {
            self.pos += 1;
        }
        t
    }

    fn error(&self, expected: &str, found: Option<&TokenWithSpan>) -> Diagnostic {
        let (found_s, loc) = match found {
            Some(t) => (
                format!("`{}`", t.token),
                Location::from_span(self.file, t.span),
            ),
            None => {
                let last = self.tokens.last().map(|t| t.span).unwrap_or(Span::empty());
                (
                    "end of file".to_string(),
                    Location::from_span(self.file, last),
                )
            }
        };
        Diagnostic::at(
            Problem::BlockSyntax {
                block: self.block,
                expected: expected.into(),
                found: found_s,
            },
            loc,
        )
    }

    fn expect(&mut self, tok: &Token, what: &str) -> Result<Span, Diagnostic> {
        match self.next() {
            Some(t) if &t.token == tok => Ok(t.span),
            other => Err(self.error(what, other)),
        }
    }

    /// Comma-separated items up to and including `close`. Empty items (trailing commas) vanish.
    fn items(&mut self, close: &Token) -> Result<Vec<Item>, Diagnostic> {
        let mut items = vec![];
        let mut terms: Vec<Term> = vec![];
        loop {
            let Some(t) = self.peek() else {
                return Err(self.error(&format!("`{close}`"), None));
            };
            if &t.token == close || t.token == Token::Comma {
                self.pos += 1;
                if !terms.is_empty() {
                    let span = terms[0].span.union(&terms[terms.len() - 1].span);
                    items.push(Item {
                        terms: std::mem::take(&mut terms),
                        span,
                    });
                }
                if &t.token == close {
                    return Ok(items);
                }
                continue;
            }
            terms.push(self.term()?);
        }
    }

    fn term(&mut self) -> Result<Term, Diagnostic> {
        let t = self.next().expect("caller peeked");
        let span = t.span;
        if matches!(t.token, Token::LParen | Token::LBracket) && self.depth >= MAX_DEPTH {
            return Err(self.error(
                &format!("at most {MAX_DEPTH} levels of nested parentheses and brackets"),
                Some(t),
            ));
        }
        let kind = match &t.token {
            Token::Word(w) => {
                let mut quoted = w.quote_style.is_some();
                let mut name = w.value.clone();
                let mut end = span;
                // dotted path: a.b.c (no whitespace allowed around the dots)
                while matches!(
                    self.tokens.get(self.pos).map(|t| &t.token),
                    Some(Token::Period)
                ) {
                    match self.tokens.get(self.pos + 1) {
                        Some(TokenWithSpan {
                            token: Token::Word(w2),
                            span: s2,
                        }) => {
                            name.push('.');
                            name.push_str(&w2.value);
                            quoted |= w2.quote_style.is_some();
                            end = *s2;
                            self.pos += 2;
                        }
                        _ => break,
                    }
                }
                return Ok(Term {
                    kind: TermKind::Ident(name, quoted),
                    span: span.union(&end),
                });
            }
            Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => TermKind::Str(s.clone()),
            Token::Number(n, _) => TermKind::Number(n.clone()),
            Token::Minus => match self.tokens.get(self.pos).map(|t| &t.token) {
                Some(Token::Number(n, _)) => {
                    let s2 = self.tokens[self.pos].span;
                    self.pos += 1;
                    return Ok(Term {
                        kind: TermKind::Number(format!("-{n}")),
                        span: span.union(&s2),
                    });
                }
                _ => TermKind::Op("-".into()),
            },
            Token::LParen => {
                self.depth += 1;
                let items = self.items(&Token::RParen);
                self.depth -= 1;
                let items = items?;
                let end = self.tokens[self.pos - 1].span;
                return Ok(Term {
                    kind: TermKind::Tuple(items),
                    span: span.union(&end),
                });
            }
            Token::LBracket => {
                self.depth += 1;
                let items = self.items(&Token::RBracket);
                self.depth -= 1;
                let items = items?;
                let end = self.tokens[self.pos - 1].span;
                return Ok(Term {
                    kind: TermKind::Array(items),
                    span: span.union(&end),
                });
            }
            Token::RParen | Token::RBracket | Token::SemiColon => {
                return Err(self.error("a value", Some(t)));
            }
            other => TermKind::Op(other.to_string()),
        };
        Ok(Term { kind, span })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::DuckDbDialect;
    use sqlparser::tokenizer::Tokenizer;

    fn parse(src: &str) -> Block {
        let toks = Tokenizer::new(&DuckDbDialect {}, src)
            .tokenize_with_location()
            .unwrap();
        parse_block("MODEL", "MODEL", &toks, "m.sql")
            .unwrap()
            .unwrap()
    }

    #[test]
    fn parses_nested_properties_and_trailing_commas() {
        let b = parse("model (\n name a.b,\n kind INCREMENTAL_BY_TIME_RANGE (time_column (ds, '%Y'), batch_size 7,),\n columns (id DECIMAL(10, 2), t TIMESTAMP WITH TIME ZONE, l INT[]),\n audits (not_null(columns := (id))),\n);\nSELECT 1");
        assert_eq!(b.items.len(), 4);
        assert_eq!(b.items[0].to_string(), "name a.b");
        assert_eq!(
            b.items[1].to_string(),
            "kind INCREMENTAL_BY_TIME_RANGE(time_column(ds, '%Y'), batch_size 7)"
        );
        let cols = b.items[2].terms[1].list().unwrap();
        assert_eq!(cols[0].to_string(), "id DECIMAL(10, 2)");
        assert_eq!(cols[1].to_string(), "t TIMESTAMP WITH TIME ZONE");
        assert_eq!(cols[2].to_string(), "l INT[]");
        assert_eq!(b.items[3].to_string(), "audits(not_null(columns := (id)))");
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = |n: usize| {
            format!(
                "MODEL (name a.b, tags {}x{});",
                "(".repeat(n),
                ")".repeat(n)
            )
        };
        let ok = deep(MAX_DEPTH - 1);
        let tokens = Tokenizer::new(&DuckDbDialect {}, &ok)
            .tokenize_with_location()
            .unwrap();
        assert!(parse_block("MODEL", "MODEL", &tokens, "a.sql").is_ok());
        let hostile = deep(20_000);
        let tokens = Tokenizer::new(&DuckDbDialect {}, &hostile)
            .tokenize_with_location()
            .unwrap();
        let e = parse_block("MODEL", "MODEL", &tokens, "a.sql")
            .err()
            .unwrap();
        assert!(e.to_string().contains("at most 64 levels"), "{e}");
    }

    #[test]
    fn unclosed_block_is_an_error_with_position() {
        let toks = Tokenizer::new(&DuckDbDialect {}, "MODEL (name a.b,\n kind FULL")
            .tokenize_with_location()
            .unwrap();
        let err = parse_block("MODEL", "MODEL", &toks, "m.sql").err().unwrap();
        assert!(err.to_string().contains("end of file"), "{err}");
    }
}
