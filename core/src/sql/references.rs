//! Table references: which relations a query reads, with where each one is written.
//!
//! CTE names are scoped (a CTE shadows a model of the same name only inside its query), and
//! table functions such as `range(10)` or `read_parquet(...)` are not references.

use crate::location::Location;
use sqlparser::ast::{ObjectName, ObjectNamePart, Query, TableFactor, Visit, Visitor};
use sqlparser::tokenizer::{Span, Token, TokenWithSpan};
use std::ops::ControlFlow;

/// A relation named in a query.
#[derive(Debug, Clone, PartialEq)]
pub struct TableRef {
    /// Lower-cased dotted name as written (`src.events`).
    pub name: String,
    /// Where the name is written, so an unknown reference points at it.
    pub location: Location,
}

/// The dotted, lower-cased form of an object name.
pub fn object_name(name: &ObjectName) -> String {
    name.0
        .iter()
        .map(|p| match p {
            ObjectNamePart::Identifier(i) => i.value.to_ascii_lowercase(),
            other => other.to_string().to_ascii_lowercase(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// The span of an object name (from its first to its last part).
pub fn object_name_span(name: &ObjectName) -> Span {
    let spans: Vec<Span> = name
        .0
        .iter()
        .filter_map(|p| match p {
            ObjectNamePart::Identifier(i) => Some(i.span),
            _ => None,
        })
        .collect();
    Span::union_iter(spans)
}

struct Collector<'a> {
    file: &'a str,
    ctes: Vec<Vec<String>>,
    refs: Vec<TableRef>,
}

impl Visitor for Collector<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
        let names = q
            .with
            .as_ref()
            .map(|w| {
                w.cte_tables
                    .iter()
                    .map(|c| c.alias.name.value.to_ascii_lowercase())
                    .collect()
            })
            .unwrap_or_default();
        self.ctes.push(names);
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _q: &Query) -> ControlFlow<()> {
        self.ctes.pop();
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, tf: &TableFactor) -> ControlFlow<()> {
        if let TableFactor::Table {
            name, args: None, ..
        } = tf
        {
            let n = object_name(name);
            let is_cte = name.0.len() == 1 && self.ctes.iter().any(|s| s.contains(&n));
            if !is_cte {
                self.refs.push(TableRef {
                    name: n,
                    location: Location::from_span(self.file, object_name_span(name)),
                });
            }
        }
        ControlFlow::Continue(())
    }
}

/// Every relation a parsed query reads, in source order, CTE names excluded.
pub fn table_refs(query: &Query, file: &str) -> Vec<TableRef> {
    let mut c = Collector {
        file,
        ctes: vec![],
        refs: vec![],
    };
    let _ = query.visit(&mut c);
    c.refs
}

/// Token-level references for queries sqlparser could not parse.
///
/// Any dotted name that `is_model` recognizes is a reference wherever it appears (DuckDB's
/// `PIVOT sales ON ...` has no FROM). A dotted name right after FROM or JOIN that is not a
/// model is reported as unknown, unless it sits inside a function call's parentheses
/// (`EXTRACT(year FROM t.col)`).
pub fn fallback_refs(
    tokens: &[TokenWithSpan],
    file: &str,
    is_model: &dyn Fn(&str) -> bool,
) -> (Vec<TableRef>, Vec<TableRef>) {
    let sig: Vec<&TokenWithSpan> = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let mut known = vec![];
    let mut unknown = vec![];
    let mut parens: Vec<bool> = vec![]; // true = function-call parenthesis
    let mut i = 0;
    while i < sig.len() {
        match &sig[i].token {
            Token::LParen => {
                let call = match i.checked_sub(1).map(|j| &sig[j].token) {
                    Some(Token::Word(w)) => {
                        use sqlparser::keywords::Keyword as K;
                        w.quote_style.is_some()
                            || matches!(
                                w.keyword,
                                K::NoKeyword
                                    | K::EXTRACT
                                    | K::TRIM
                                    | K::SUBSTRING
                                    | K::POSITION
                                    | K::OVERLAY
                            )
                    }
                    _ => false,
                };
                parens.push(call);
            }
            Token::RParen => {
                parens.pop();
            }
            Token::Word(_) => {
                // gather a dotted name
                let mut parts = vec![];
                let mut j = i;
                while let Some(Token::Word(w)) = sig.get(j).map(|t| &t.token) {
                    parts.push(w.value.to_ascii_lowercase());
                    if matches!(sig.get(j + 1).map(|t| &t.token), Some(Token::Period))
                        && matches!(sig.get(j + 2).map(|t| &t.token), Some(Token::Word(_)))
                    {
                        j += 2;
                    } else {
                        break;
                    }
                }
                if parts.len() > 1 {
                    let name = parts.join(".");
                    let loc = Location::from_span(file, sig[i].span.union(&sig[j].span));
                    let after_from = matches!(
                        i.checked_sub(1).map(|k| &sig[k].token),
                        Some(Token::Word(w)) if w.keyword == sqlparser::keywords::Keyword::FROM || w.keyword == sqlparser::keywords::Keyword::JOIN
                    );
                    let followed_by_call =
                        matches!(sig.get(j + 1).map(|t| &t.token), Some(Token::LParen));
                    if is_model(&name) {
                        known.push(TableRef {
                            name,
                            location: loc,
                        });
                    } else if after_from && !followed_by_call && !parens.iter().any(|c| *c) {
                        unknown.push(TableRef {
                            name,
                            location: loc,
                        });
                    }
                    i = j + 1;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    (known, unknown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::{prepare_query, Dialect, QueryForm};
    use sqlparser::tokenizer::Tokenizer;

    fn refs(sql: &str) -> Vec<String> {
        let toks = Tokenizer::new(&sqlparser::dialect::DuckDbDialect {}, sql)
            .tokenize_with_location()
            .unwrap();
        let (q, _) = prepare_query(&toks, "m.sql", Dialect::DuckDb, false).unwrap();
        table_refs(q.ast().unwrap(), "m.sql")
            .into_iter()
            .map(|r| r.name)
            .collect()
    }

    #[test]
    fn ctes_and_table_functions_are_not_references() {
        assert_eq!(
            refs("WITH a AS (SELECT * FROM src.x) SELECT * FROM a JOIN Src.Y y ON a.id = y.id, range(3) WHERE a.id IN (SELECT id FROM src.z)"),
            vec!["src.x", "src.y", "src.z"]
        );
    }

    #[test]
    fn fallback_finds_models_and_flags_unknown_tables() {
        let sql = "PIVOT stg.orders ON channel USING sum(amount) -- x\n; SELECT extract(year FROM o.ts) FROM stg.ordrs o";
        let toks = Tokenizer::new(&sqlparser::dialect::DuckDbDialect {}, sql)
            .tokenize_with_location()
            .unwrap();
        let (known, unknown) = fallback_refs(&toks, "m.sql", &|n| n == "stg.orders");
        assert_eq!(
            known.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
            vec!["stg.orders"]
        );
        assert_eq!(
            unknown.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
            vec!["stg.ordrs"]
        );
        let _ = QueryForm::Fallback {
            tokens: vec![],
            parser_error: String::new(),
        };
    }
}
