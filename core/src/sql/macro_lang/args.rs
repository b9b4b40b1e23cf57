//! The shapes inside a macro call: arguments split at top-level commas, `name := value`
//! keyword arguments, lambdas (`x -> ...`, `(x, y) -> ...`), arrays (`[a, b]`, `(a, b)`), and
//! where a clause macro's clause ends.

use super::Lambda;
use sqlparser::tokenizer::{Token, TokenWithSpan};

/// One argument of a call.
#[derive(Debug, Clone)]
pub(super) struct Arg {
    /// `name` of `name := value`.
    pub name: Option<String>,
    /// The value's tokens.
    pub tokens: Vec<TokenWithSpan>,
}

/// Whether a token means something (not whitespace or a comment).
pub(super) fn significant(t: &Token) -> bool {
    !matches!(t, Token::Whitespace(_))
}

pub(crate) fn opens(t: &Token) -> bool {
    matches!(t, Token::LParen | Token::LBracket | Token::LBrace)
}

pub(crate) fn closes(t: &Token) -> bool {
    matches!(t, Token::RParen | Token::RBracket | Token::RBrace)
}

/// The index of the bracket closing the one at `open`.
pub(crate) fn matching(tokens: &[TokenWithSpan], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, t) in tokens.iter().enumerate().skip(open) {
        if opens(&t.token) {
            depth += 1;
        } else if closes(&t.token) {
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                return Some(k);
            }
        }
    }
    None
}

/// Split `tokens` at separators outside brackets. `keep` leaves each separator at the end of
/// the piece before it.
pub(super) fn split_top_level(
    tokens: &[TokenWithSpan],
    is_sep: impl Fn(&Token) -> bool,
    keep: bool,
) -> Vec<&[TokenWithSpan]> {
    let mut out = vec![];
    let mut depth = 0usize;
    let mut start = 0;
    for (k, t) in tokens.iter().enumerate() {
        if opens(&t.token) {
            depth += 1;
        } else if closes(&t.token) {
            depth = depth.saturating_sub(1);
        } else if depth == 0 && is_sep(&t.token) {
            out.push(&tokens[start..if keep { k + 1 } else { k }]);
            start = k + 1;
        }
    }
    if start < tokens.len() {
        out.push(&tokens[start..]);
    }
    out
}

/// The arguments between a call's parentheses.
pub(super) fn split_args(tokens: &[TokenWithSpan]) -> Vec<Arg> {
    if !tokens.iter().any(|t| significant(&t.token)) {
        return vec![];
    }
    split_top_level(tokens, |t| *t == Token::Comma, false)
        .into_iter()
        .map(|piece| {
            let t = trim(piece);
            match t {
                [first, rest @ ..]
                    if matches!(&first.token, Token::Word(w) if w.quote_style.is_none()) =>
                {
                    let after: Vec<&TokenWithSpan> =
                        rest.iter().filter(|t| significant(&t.token)).collect();
                    if after
                        .first()
                        .is_some_and(|t| matches!(t.token, Token::Assignment | Token::RArrow))
                    {
                        let Token::Word(w) = &first.token else {
                            unreachable!("matched a word above")
                        };
                        let op = rest
                            .iter()
                            .position(|t| matches!(t.token, Token::Assignment | Token::RArrow))
                            .unwrap_or(0);
                        return Arg {
                            name: Some(w.value.clone()),
                            tokens: trim(&rest[op + 1..]).to_vec(),
                        };
                    }
                    Arg {
                        name: None,
                        tokens: t.to_vec(),
                    }
                }
                _ => Arg {
                    name: None,
                    tokens: t.to_vec(),
                },
            }
        })
        .collect()
}

/// `tokens` without leading and trailing whitespace.
pub(super) fn trim(tokens: &[TokenWithSpan]) -> &[TokenWithSpan] {
    let start = tokens
        .iter()
        .position(|t| significant(&t.token))
        .unwrap_or(tokens.len());
    let end = tokens
        .iter()
        .rposition(|t| significant(&t.token))
        .map_or(start, |e| e + 1);
    &tokens[start..end]
}

/// The same for bare tokens.
pub(super) fn trim_tokens(mut tokens: Vec<Token>) -> Vec<Token> {
    while tokens.last().is_some_and(|t| !significant(t)) {
        tokens.pop();
    }
    let start = tokens.iter().position(significant).unwrap_or(tokens.len());
    tokens.drain(..start);
    tokens
}

/// The word `tokens` consist of, if they are one unquoted word.
pub(super) fn single_word(tokens: &[TokenWithSpan]) -> Option<String> {
    match trim(tokens) {
        [TokenWithSpan {
            token: Token::Word(w),
            ..
        }] if w.quote_style.is_none() => Some(w.value.clone()),
        _ => None,
    }
}

/// `x -> body` or `(x, y) -> body`.
pub(super) fn lambda(tokens: &[TokenWithSpan]) -> Option<Lambda> {
    let arrow = tokens.iter().position(|t| t.token == Token::Arrow)?;
    let head = trim(&tokens[..arrow]);
    let params = match head {
        [TokenWithSpan {
            token: Token::Word(w),
            ..
        }] => vec![w.value.to_ascii_lowercase()],
        [open, inner @ .., close]
            if open.token == Token::LParen && close.token == Token::RParen =>
        {
            let mut ps = vec![];
            for p in split_top_level(inner, |t| *t == Token::Comma, false) {
                ps.push(single_word(p)?.to_ascii_lowercase());
            }
            ps
        }
        _ => return None,
    };
    Some(Lambda {
        params,
        body: trim(&tokens[arrow + 1..])
            .iter()
            .map(|t| t.token.clone())
            .collect(),
    })
}

/// The items of `[a, b]`, or of `(a, b)` with at least one comma (a parenthesized single
/// expression is not a list).
pub(super) fn array_items(tokens: &[TokenWithSpan]) -> Option<Vec<&[TokenWithSpan]>> {
    let (open, close) = (tokens.first()?, tokens.last()?);
    if matching(tokens, 0) != Some(tokens.len() - 1) {
        return None;
    }
    let inner = &tokens[1..tokens.len() - 1];
    match (&open.token, &close.token) {
        (Token::LBracket, Token::RBracket) => {
            Some(if inner.iter().any(|t| significant(&t.token)) {
                split_top_level(inner, |t| *t == Token::Comma, false)
            } else {
                vec![]
            })
        }
        (Token::LParen, Token::RParen) => {
            let items = split_top_level(inner, |t| *t == Token::Comma, false);
            (items.len() > 1).then_some(items)
        }
        _ => None,
    }
}

/// Where the clause that starts at `from` ends: at the next clause keyword, closing bracket or
/// `;` outside brackets.
pub(super) fn clause_end(tokens: &[TokenWithSpan], from: usize) -> usize {
    const ENDS: &[&str] = &[
        "where",
        "group",
        "having",
        "window",
        "qualify",
        "order",
        "limit",
        "offset",
        "union",
        "intersect",
        "except",
        "select",
        "left",
        "right",
        "inner",
        "full",
        "cross",
        "join",
        "natural",
        "anti",
        "semi",
        "positional",
        "asof",
        "using",
        "from",
    ];
    let mut depth = 0usize;
    // the clause's own first word is never its end (`@JOIN(c) country ON ...` starts with
    // the joined table; `@WITH(c) x AS (...)` with its name)
    let mut seen = false;
    for (k, t) in tokens.iter().enumerate().skip(from) {
        match &t.token {
            x if opens(x) => depth += 1,
            x if closes(x) => {
                if depth == 0 {
                    return k;
                }
                depth -= 1;
            }
            Token::SemiColon if depth == 0 => return k,
            Token::AtSign if depth == 0 && seen => return k,
            Token::Word(w)
                if depth == 0
                    && seen
                    && w.quote_style.is_none()
                    && ENDS.contains(&w.value.to_ascii_lowercase().as_str()) =>
            {
                return k
            }
            _ => {}
        }
        if significant(&t.token) {
            seen = true;
        }
    }
    tokens.len()
}

/// Bind a call's arguments to a macro's parameters, positionally or by `name := value`: one
/// slot per parameter, the first `required` of which must be filled. Shared by the project's
/// macros (all parameters required) and the built-ins with optional ones, so both refuse a
/// wrong call in the same words.
pub(super) fn bind<'a, P: AsRef<str>>(
    x: &super::Expander<'_>,
    name: &str,
    call: &[TokenWithSpan],
    list: &'a [Arg],
    params: &[P],
    required: usize,
) -> Result<Vec<Option<&'a Arg>>, crate::diagnostic::Diagnostic> {
    let names: Vec<&str> = params.iter().map(AsRef::as_ref).collect();
    let usage = format!("its parameters: {}", names.join(", "));
    let mut args: Vec<Option<&Arg>> = vec![None; names.len()];
    let mut next = 0;
    for a in list {
        let slot = match &a.name {
            Some(n) => names
                .iter()
                .position(|p| p.eq_ignore_ascii_case(n))
                .ok_or_else(|| {
                    x.error(
                        name,
                        &a.tokens,
                        format!("has no argument `{n}`"),
                        usage.clone(),
                    )
                })?,
            None => {
                next += 1;
                next - 1
            }
        };
        if slot >= names.len() {
            return Err(x.error(
                name,
                call,
                format!(
                    "takes at most {} argument(s), got {}",
                    names.len(),
                    list.len()
                ),
                usage,
            ));
        }
        args[slot] = Some(a);
    }
    if let Some(missing) = args[..required].iter().position(Option::is_none) {
        return Err(x.error(
            name,
            call,
            format!("is missing its argument `{}`", names[missing]),
            usage,
        ));
    }
    Ok(args)
}
