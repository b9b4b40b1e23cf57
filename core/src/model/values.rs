//! Reading typed values out of block terms, with a diagnostic when the shape is wrong.

use super::block::{Item, Term, TermKind};
use crate::diagnostic::{Diagnostic, Problem};
use crate::location::Location;
use sqlparser::tokenizer::Span;

/// Interprets the value terms of one property, reporting shape errors against `property`.
pub struct Value<'a> {
    /// The property name that diagnostics blame.
    pub property: &'a str,
    /// The value's terms, without the key.
    pub terms: &'a [Term],
    /// Where the value is written.
    pub span: Span,
    /// The file the value is in, for locations.
    pub file: &'a str,
}

impl<'a> Value<'a> {
    /// A value of `property`, made of `terms` spanning `span` in `file`.
    pub fn new(property: &'a str, terms: &'a [Term], span: Span, file: &'a str) -> Self {
        Value {
            property,
            terms,
            span,
            file,
        }
    }

    /// Where the value is written, for diagnostics.
    pub fn location(&self) -> Location {
        Location::from_span(self.file, self.span)
    }

    /// An invalid-value diagnostic saying what `expected` shape the property needs.
    pub fn invalid(&self, expected: &str) -> Diagnostic {
        Diagnostic::at(
            Problem::InvalidValue {
                property: self.property.into(),
                expected: expected.into(),
            },
            self.location(),
        )
    }

    fn single(&self) -> Option<&'a Term> {
        match self.terms {
            [t] => Some(t),
            _ => None,
        }
    }

    /// An identifier, string or number, as text.
    pub fn scalar(&self) -> Result<String, Diagnostic> {
        self.single()
            .and_then(|t| t.scalar())
            .map(str::to_string)
            .ok_or_else(|| self.invalid("a single value"))
    }

    /// A string literal or bare identifier.
    pub fn text(&self) -> Result<String, Diagnostic> {
        match self.single().map(|t| &t.kind) {
            Some(TermKind::Str(s)) | Some(TermKind::Ident(s, _)) => Ok(s.clone()),
            _ => Err(self.invalid("a string")),
        }
    }

    /// A bare identifier, lower-cased (SQL names are case-insensitive here).
    pub fn ident(&self) -> Result<String, Diagnostic> {
        match self.single().map(|t| &t.kind) {
            Some(TermKind::Ident(s, _)) => Ok(s.to_ascii_lowercase()),
            Some(TermKind::Str(s)) => Ok(s.to_ascii_lowercase()),
            _ => Err(self.invalid("a name")),
        }
    }

    /// A non-negative integer literal that fits in `u32`.
    pub fn u32(&self) -> Result<u32, Diagnostic> {
        match self.single().map(|t| &t.kind) {
            Some(TermKind::Number(n)) => n
                .parse()
                .map_err(|_| self.invalid("a non-negative integer")),
            _ => Err(self.invalid("a non-negative integer")),
        }
    }

    /// An integer literal from `min` to `max`: counts that size loops and time arithmetic
    /// are range-checked here, so a typo such as `lookback 100000000` is a diagnostic at its
    /// line instead of an overflow later.
    pub fn u32_in(&self, min: u32, max: u32) -> Result<u32, Diagnostic> {
        let expected = format!("an integer from {min} to {max}");
        match self.u32() {
            Ok(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(self.invalid(&expected)),
        }
    }

    /// `true` or `false`, in any case.
    pub fn bool(&self) -> Result<bool, Diagnostic> {
        match self
            .single()
            .and_then(|t| t.scalar())
            .map(|s| s.to_ascii_lowercase())
        {
            Some(s) if s == "true" => Ok(true),
            Some(s) if s == "false" => Ok(false),
            _ => Err(self.invalid("true or false")),
        }
    }

    /// One name or a tuple/array of names, lower-cased.
    pub fn ident_list(&self) -> Result<Vec<String>, Diagnostic> {
        self.list_of(
            |t| match &t.kind {
                TermKind::Ident(s, _) => Some(s.to_ascii_lowercase()),
                TermKind::Str(s) => Some(s.to_ascii_lowercase()),
                _ => None,
            },
            "a name or a list of names",
        )
    }

    /// One string or a tuple/array of strings (identifiers accepted too), case kept.
    pub fn text_list(&self) -> Result<Vec<String>, Diagnostic> {
        self.list_of(
            |t| t.scalar().map(str::to_string),
            "a string or a list of strings",
        )
    }

    fn list_of(
        &self,
        f: impl Fn(&Term) -> Option<String>,
        expected: &str,
    ) -> Result<Vec<String>, Diagnostic> {
        let Some(t) = self.single() else {
            return Err(self.invalid(expected));
        };
        if let Some(items) = t.list() {
            items
                .iter()
                .map(|i| match i.terms.as_slice() {
                    [t] => f(t).ok_or_else(|| self.invalid(expected)),
                    _ => Err(self.invalid(expected)),
                })
                .collect()
        } else {
            f(t).map(|s| vec![s]).ok_or_else(|| self.invalid(expected))
        }
    }

    /// The entries of a tuple or array value.
    pub fn items(&self) -> Result<&'a [Item], Diagnostic> {
        self.single()
            .and_then(|t| t.list())
            .ok_or_else(|| self.invalid("a parenthesized list"))
    }
}

/// Split a `key value...` item into its key term and the value terms.
pub fn key_value(item: &Item) -> Option<(&Term, &[Term])> {
    let (k, rest) = item.terms.split_first()?;
    k.ident()?;
    Some((k, rest))
}

/// The span covering a run of terms (or the fallback when there are none).
pub fn span_of(terms: &[Term], fallback: Span) -> Span {
    match (terms.first(), terms.last()) {
        (Some(a), Some(b)) => a.span.union(&b.span),
        _ => fallback,
    }
}
