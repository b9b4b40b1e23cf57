//! SQL analysis on top of sqlparser: macros, canonical form, references, columns, rendering.
//!
//! Everything here works on sqlparser's tokens and AST so that the same code computes the
//! same canonical form natively and in WebAssembly.

pub mod annotate;
pub mod canonical;
pub mod catalog;
pub mod columns;
pub mod dialect;
pub mod jinja;
pub mod lineage;
pub mod macro_lang;
pub mod macros;
pub mod output_names;
pub mod references;
pub mod render;
pub mod statements;
pub mod struct_literals;
pub mod unit_test;

use crate::diagnostic::{Diagnostic, Problem};
use crate::location::Location;
use serde::Serialize;
use sqlparser::ast::{Query, Statement};
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Span, Token, TokenWithSpan};

/// The SQL dialect a project is written in. It follows the engine, because efmesh does not
/// transpile: you write your engine's SQL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// DuckDB's SQL, for a `duckdb` engine.
    DuckDb,
    /// PostgreSQL's SQL, for a `postgres` engine.
    Postgres,
}

impl Dialect {
    /// The sqlparser dialect that tokenizes and parses this SQL.
    pub fn parser(self) -> Box<dyn sqlparser::dialect::Dialect> {
        match self {
            Dialect::DuckDb => Box::new(sqlparser::dialect::DuckDbDialect {}),
            Dialect::Postgres => Box::new(sqlparser::dialect::PostgreSqlDialect {}),
        }
    }
}

/// How well efmesh understood a model's query.
#[derive(Debug, Clone)]
pub enum QueryForm {
    /// Fully parsed: references, columns and rendering work on the AST.
    Parsed(Box<Query>),
    /// sqlparser lacks the syntax (DuckDB's PIVOT statement, ASOF JOIN, ...). The model still
    /// plans from a token-level canonical form; column-level checks are off.
    Fallback {
        /// The query's tokens with macros folded, still searched for table references.
        tokens: Vec<TokenWithSpan>,
        /// Why sqlparser refused the query, for the fallback-parse warning.
        parser_error: String,
    },
}

/// A model's (or audit's) query, prepared for analysis.
#[derive(Debug, Clone)]
pub struct ModelQuery {
    /// The AST, or the tokens when sqlparser could not parse the query.
    pub form: QueryForm,
    /// The canonical text that enters the fingerprint: normalized case, no comments or
    /// formatting, time macros as placeholders.
    pub canonical: String,
    /// Where the query is written in its file.
    pub span: Span,
}

impl ModelQuery {
    /// The parsed AST, when the full parse succeeded.
    pub fn ast(&self) -> Option<&Query> {
        match &self.form {
            QueryForm::Parsed(q) => Some(q),
            QueryForm::Fallback { .. } => None,
        }
    }
}

/// Lay canonical SQL out over indented lines for people (as written when it does not parse).
pub fn pretty(sql: &str, dialect: Dialect) -> String {
    let d = dialect.parser();
    match Parser::parse_sql(d.as_ref(), sql) {
        Ok(stmts) if stmts.len() == 1 => format!("{:#}", stmts[0]),
        _ => sql.to_string(),
    }
}

/// Whether the tokens hold anything but whitespace, comments and semicolons.
pub fn has_content(tokens: &[TokenWithSpan]) -> bool {
    tokens
        .iter()
        .any(|t| !matches!(t.token, Token::Whitespace(_) | Token::SemiColon))
}

/// Tokenize a model or audit file, turning a tokenizer failure (an unterminated string, say)
/// into a diagnostic at the position where it happened.
pub fn tokenize(
    file: &str,
    text: &str,
    dialect: Dialect,
) -> Result<Vec<TokenWithSpan>, Diagnostic> {
    let d = dialect.parser();
    sqlparser::tokenizer::Tokenizer::new(d.as_ref(), text)
        .tokenize_with_location()
        .map_err(|e| {
            Diagnostic::at(
                Problem::SqlTokenize { message: e.message },
                Location::new(
                    file,
                    (e.location.line, e.location.column),
                    (e.location.line, e.location.column + 1),
                ),
            )
        })
}

/// Turn the tokens after a MODEL/AUDIT block into a [`ModelQuery`].
///
/// `audit` enables `@this_model`. Returns warnings alongside the query (a fallback parse), or
/// the errors that make the query unusable.
pub fn prepare_query(
    tokens: &[TokenWithSpan],
    file: &str,
    dialect: Dialect,
    audit: bool,
) -> Result<(ModelQuery, Vec<Diagnostic>), Vec<Diagnostic>> {
    prepare_query_in(
        tokens,
        file,
        dialect,
        audit,
        &macro_lang::MacroEnv::default(),
    )
}

/// [`prepare_query`] with the project's variables and macros: SQLMesh's macro language is
/// expanded first ([`macro_lang::expand`]), so what is parsed, fingerprinted and run is the
/// expanded query.
pub fn prepare_query_in(
    tokens: &[TokenWithSpan],
    file: &str,
    dialect: Dialect,
    audit: bool,
    env: &macro_lang::MacroEnv,
) -> Result<(ModelQuery, Vec<Diagnostic>), Vec<Diagnostic>> {
    let expanded = macro_lang::expand(tokens, env, file, audit)?;
    let tokens: &[TokenWithSpan] = &expanded;
    // one pass on the hot path: fold macros and normalize case, then hand the tokens to the
    // parser; the original-case tokens are rebuilt only when the fallback needs them
    let normalized = canonical::normalize_tokens_owned(macros::fold_macros(tokens, file, audit)?);
    let mut significant = normalized
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_) | Token::SemiColon));
    let first = significant.next();
    let span = match (first, significant.next_back().or(first)) {
        (Some(a), Some(b)) => a.span.union(&b.span),
        _ => Span::empty(),
    };
    let d = dialect.parser();
    let parsed = Parser::new(d.as_ref())
        .with_tokens_with_locations(normalized)
        .parse_statements();
    match parsed {
        Ok(mut stmts) => {
            if stmts.len() != 1 {
                return Err(vec![Diagnostic::at(
                    Problem::MultipleStatements { count: stmts.len() },
                    Location::from_span(file, span),
                )]);
            }
            match stmts.pop() {
                Some(Statement::Query(q)) => {
                    let canonical = q.to_string();
                    Ok((
                        ModelQuery {
                            form: QueryForm::Parsed(q),
                            canonical,
                            span,
                        },
                        vec![],
                    ))
                }
                _ => Err(vec![Diagnostic::at(
                    Problem::NotAQuery,
                    Location::from_span(file, span),
                )]),
            }
        }
        Err(e) => {
            let parser_error = e
                .to_string()
                .trim_start_matches("sql parser error: ")
                .to_string();
            let tokens = macros::fold_macros(tokens, file, audit)?;
            let canonical = canonical::fallback_canonical(&canonical::normalize_tokens(&tokens));
            let at = error_position(&parser_error)
                .map(|(l, c)| Location::new(file, (l, c), (l, c + 1)))
                .unwrap_or_else(|| Location::from_span(file, span));
            let parser_error = parser_error
                .split(" at Line: ")
                .next()
                .unwrap_or_default()
                .to_string();
            let warning = Diagnostic::at(
                Problem::FallbackParse {
                    parser_error: parser_error.clone(),
                },
                at,
            );
            Ok((
                ModelQuery {
                    form: QueryForm::Fallback {
                        tokens,
                        parser_error,
                    },
                    canonical,
                    span,
                },
                vec![warning],
            ))
        }
    }
}

/// The `(line, column)` sqlparser appends to its messages (`... at Line: 3, Column: 7`).
fn error_position(message: &str) -> Option<(u64, u64)> {
    let rest = message.rsplit_once(" at Line: ")?.1;
    let (line, col) = rest.split_once(", Column: ")?;
    let col: String = col.chars().take_while(|c| c.is_ascii_digit()).collect();
    Some((line.trim().parse().ok()?, col.parse().ok()?))
}
