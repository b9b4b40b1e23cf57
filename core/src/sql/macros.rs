//! Time macros (`@start_ds`, ...) folded into placeholder tokens before parsing.
//!
//! Folding at the token level (not by text replacement) leaves string literals and comments
//! alone and keeps every other token's position, so diagnostics still point at the source.
//! The canonical form keeps the placeholder (`@start_ds`), which is what makes it independent
//! of the interval a model happens to be rendered for.

use crate::diagnostic::{Diagnostic, Problem};
use crate::location::Location;
use crate::time::TIME_MACROS;
use sqlparser::tokenizer::{Token, TokenWithSpan};

/// The macro audits may use to name the audited relation.
pub const THIS_MODEL: &str = "this_model";

/// Replace `@` + name with `Token::Placeholder("@name")`; unknown macros are errors.
pub fn fold_macros(
    tokens: &[TokenWithSpan],
    file: &str,
    audit: bool,
) -> Result<Vec<TokenWithSpan>, Vec<Diagnostic>> {
    fold(tokens, file, audit, audit)
}

/// [`fold_macros`] for a model's pre- and post-statements, which name their own model's
/// relation with `@this_model` as audits do, but take no arguments.
pub fn fold_statement_macros(
    tokens: &[TokenWithSpan],
    file: &str,
) -> Result<Vec<TokenWithSpan>, Vec<Diagnostic>> {
    fold(tokens, file, true, false)
}

/// `this_model`: `@this_model` names a relation; `audit`: any other unknown `@name` is an
/// audit argument, left as a placeholder.
fn fold(
    tokens: &[TokenWithSpan],
    file: &str,
    this_model: bool,
    audit: bool,
) -> Result<Vec<TokenWithSpan>, Vec<Diagnostic>> {
    let mut out = Vec::with_capacity(tokens.len());
    let mut errors = vec![];
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        if t.token == Token::AtSign {
            if let Some(TokenWithSpan {
                token: Token::Word(w),
                span,
            }) = tokens.get(i + 1)
            {
                // a macro's result carries its call's span on every token, so `@` and its
                // name written together inside `@IF(...)` come out with one span
                let adjacent = (span.start.line == t.span.start.line
                    && span.start.column == t.span.end.column)
                    || *span == t.span;
                if adjacent && w.quote_style.is_none() {
                    let name = w.value.to_ascii_lowercase();
                    // in an audit, any other macro is one of its arguments, checked against
                    // each call (`audit::check_call`)
                    let known = TIME_MACROS.contains(&name.as_str())
                        || audit
                        || (this_model && name == THIS_MODEL);
                    if known && name == THIS_MODEL {
                        // a relation, not a value: a quoted identifier the renderer resolves
                        out.push(TokenWithSpan::new(
                            Token::make_word("@this_model", Some('"')),
                            t.span.union(span),
                        ));
                    } else if known {
                        out.push(TokenWithSpan::new(
                            Token::Placeholder(format!("@{name}")),
                            t.span.union(span),
                        ));
                    } else {
                        let mut candidates: Vec<&str> = TIME_MACROS.to_vec();
                        if this_model {
                            candidates.push(THIS_MODEL);
                        }
                        errors.push(Diagnostic::at(
                            Problem::UnknownMacro {
                                name: w.value.clone(),
                                suggestion: crate::suggest::closest(&name, candidates),
                            },
                            Location::from_span(file, t.span.union(span)),
                        ));
                    }
                    i += 2;
                    continue;
                }
            }
        }
        // a string a Jinja template left time variables in renders per batch
        if let Token::SingleQuotedString(v) = &t.token {
            if let Some(template) = crate::time::string_template(v) {
                out.push(TokenWithSpan::new(
                    Token::Placeholder(format!("@{template}")),
                    t.span,
                ));
                i += 1;
                continue;
            }
        }
        out.push(t.clone());
        i += 1;
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}
