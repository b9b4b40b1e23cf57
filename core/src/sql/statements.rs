//! A model file's statements besides its query, as SQLMesh runs them: the pre-statements
//! written before the query and the post-statements after it run around each write of the
//! model's rows, in the write's transaction, and the statements between
//! `ON_VIRTUAL_UPDATE_BEGIN;` and `ON_VIRTUAL_UPDATE_END;` run after an environment's views of
//! the model are swapped. Projects use them to set engine options, create the helper tables
//! or macros a query reads, index or analyse a table, or grant access to a view.
//!
//! A statement may branch on `@runtime_stage` (`@IF(@runtime_stage = 'evaluating', ...)`), so
//! each is expanded once per stage it can run at, when the file is read: what runs and what is
//! fingerprinted are both fixed at `check`. Time macros and `@this_model` (the relation being
//! written, or the view being promoted) stay placeholders until the executor renders them.

use super::canonical;
use super::macro_lang::{self, MacroEnv, Value};
use super::{has_content, macros, ModelQuery, QueryForm};
use crate::diagnostic::{Diagnostic, Problem};
use crate::location::Location;
use sqlparser::tokenizer::{Span, Token, TokenWithSpan};
use std::borrow::Cow;

/// When a statement runs, which is what SQLMesh's `@runtime_stage` says to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuntimeStage {
    /// Around the write that creates a model's table: a FULL or VIEW model's first build, or
    /// the empty table an incremental model's batches fill.
    Creating,
    /// Around every later write: each batch, a FULL model refreshed in place.
    Evaluating,
    /// After an environment's view of the model was swapped (on-virtual-update statements).
    Promoting,
}

impl RuntimeStage {
    /// The value of `@runtime_stage` at this stage, as SQLMesh spells it.
    pub fn key(self) -> &'static str {
        match self {
            RuntimeStage::Creating => "creating",
            RuntimeStage::Evaluating => "evaluating",
            RuntimeStage::Promoting => "promoting",
        }
    }
}

/// The stages pre- and post-statements run at.
pub const WRITE_STAGES: [RuntimeStage; 2] = [RuntimeStage::Creating, RuntimeStage::Evaluating];

/// One statement as it reads at each stage it runs at.
#[derive(Debug, Clone)]
pub struct StagedStatement {
    /// Where the statement is written.
    pub location: Location,
    /// The statement expanded for each stage; a stage it expands to nothing at (an `@IF` whose
    /// condition is false there) is absent.
    rendered: Vec<(RuntimeStage, ModelQuery)>,
}

impl StagedStatement {
    /// The statement as it runs at `stage`, if it runs there.
    pub fn at(&self, stage: RuntimeStage) -> Option<&ModelQuery> {
        self.rendered
            .iter()
            .find(|(s, _)| *s == stage)
            .map(|(_, q)| q)
    }

    /// Its canonical text per stage, for fingerprints.
    fn canonical(&self) -> Vec<String> {
        self.rendered
            .iter()
            .map(|(s, q)| format!("{}: {}", s.key(), q.canonical))
            .collect()
    }
}

/// A model's statements besides its query.
#[derive(Debug, Clone, Default)]
pub struct ModelStatements {
    /// Run before the query's rows are written, in the same transaction.
    pub pre: Vec<StagedStatement>,
    /// Run after they are written, before the write's audits and commit.
    pub post: Vec<StagedStatement>,
    /// Run after an environment's view of the model is swapped.
    pub on_virtual_update: Vec<StagedStatement>,
}

impl ModelStatements {
    /// Whether the model has no statements at all (almost every model).
    pub fn is_empty(&self) -> bool {
        self.pre.is_empty() && self.post.is_empty() && self.on_virtual_update.is_empty()
    }

    /// Whether statements run around the model's writes.
    pub fn around_writes(&self) -> bool {
        !(self.pre.is_empty() && self.post.is_empty())
    }

    /// The canonical text of the pre- and post-statements, which shape the data as the query
    /// does (SQLMesh hashes them into its data hash too); `None` when there are none, so a model
    /// without statements keeps the fingerprint it always had.
    pub fn data_canonical(&self) -> Option<Vec<String>> {
        if !self.around_writes() {
            return None;
        }
        let side = |list: &[StagedStatement], label: &str| {
            list.iter()
                .flat_map(|s| s.canonical())
                .map(|c| format!("{label} {c}"))
                .collect::<Vec<_>>()
        };
        let mut out = side(&self.pre, "pre");
        out.extend(side(&self.post, "post"));
        Some(out)
    }

    /// The canonical text of the on-virtual-update statements: metadata, since they change no
    /// table's rows (as in SQLMesh). `None` when there are none.
    pub fn virtual_canonical(&self) -> Option<Vec<String>> {
        (!self.on_virtual_update.is_empty()).then(|| {
            self.on_virtual_update
                .iter()
                .flat_map(|s| s.canonical())
                .collect()
        })
    }
}

/// The statements after a MODEL block, told apart: the query, and the tokens of each other
/// statement, each preceded by the `@DEF`s written before it so its macros are defined.
#[derive(Debug)]
pub struct Parts<'t> {
    /// The query with the `@DEF`s before it (the whole text when there is nothing else).
    pub query: Cow<'t, [TokenWithSpan]>,
    /// Statements before the query.
    pub pre: Vec<Vec<TokenWithSpan>>,
    /// Statements after it.
    pub post: Vec<Vec<TokenWithSpan>>,
    /// Statements between `ON_VIRTUAL_UPDATE_BEGIN;` and `ON_VIRTUAL_UPDATE_END;`.
    pub on_virtual_update: Vec<Vec<TokenWithSpan>>,
}

const VIRTUAL_BEGIN: &str = "ON_VIRTUAL_UPDATE_BEGIN";
const VIRTUAL_END: &str = "ON_VIRTUAL_UPDATE_END";

fn significant(t: &TokenWithSpan) -> bool {
    !matches!(t.token, Token::Whitespace(_) | Token::SemiColon)
}

/// The statement's first significant token.
fn first(stmt: &[TokenWithSpan]) -> Option<&TokenWithSpan> {
    stmt.iter().find(|t| significant(t))
}

/// Whether `stmt` is only the marker `word` (and its `;`).
fn is_marker(stmt: &[TokenWithSpan], word: &str) -> bool {
    let mut sig = stmt.iter().filter(|t| significant(t));
    matches!(sig.next().map(|t| &t.token), Some(Token::Word(w)) if w.value.eq_ignore_ascii_case(word))
        && sig.next().is_none()
}

/// Whether `stmt` defines rows, as SQLMesh tells a model's query from its other statements: a
/// SELECT (or WITH, FROM-first, VALUES, PIVOT), a parenthesized query, or `@UNION(...)`.
fn is_query(stmt: &[TokenWithSpan]) -> bool {
    let mut sig = stmt.iter().filter(|t| significant(t));
    match sig.next().map(|t| &t.token) {
        Some(Token::LParen) => true,
        Some(Token::Word(w)) if w.quote_style.is_none() => {
            ["SELECT", "WITH", "FROM", "VALUES", "PIVOT", "UNPIVOT"]
                .iter()
                .any(|k| w.value.eq_ignore_ascii_case(k))
        }
        Some(Token::AtSign) => matches!(
            sig.next().map(|t| &t.token),
            Some(Token::Word(w)) if w.value.eq_ignore_ascii_case("union")
        ),
        _ => false,
    }
}

/// The span from a statement's first significant token to its last.
pub fn span_of(stmt: &[TokenWithSpan]) -> Span {
    let mut sig = stmt.iter().filter(|t| significant(t));
    match (sig.next(), sig.next_back()) {
        (Some(a), Some(b)) => a.span.union(&b.span),
        (Some(a), None) => a.span,
        _ => Span::empty(),
    }
}

/// Split the tokens after a MODEL block (inline audits removed) into the query and its
/// statements. A file whose only statement is its query comes back whole, so such a model
/// reads exactly as it always did.
pub fn split<'t>(rest: &'t [TokenWithSpan], file: &str) -> Result<Parts<'t>, Diagnostic> {
    let stmts = macro_lang::split_statements(rest);
    let mut defs: Vec<TokenWithSpan> = vec![];
    // (statement, the length of `defs` when it was written)
    let mut others: Vec<(&[TokenWithSpan], usize)> = vec![];
    let mut virtual_update: Vec<Vec<TokenWithSpan>> = vec![];
    let mut open_virtual: Option<&TokenWithSpan> = None;
    for stmt in stmts {
        if !has_content(stmt) {
            continue;
        }
        if is_marker(stmt, VIRTUAL_BEGIN) {
            if open_virtual.is_some() {
                return Err(statement_error(
                    file,
                    stmt,
                    format!(
                        "`{VIRTUAL_BEGIN};` inside another; close the first with `{VIRTUAL_END};`"
                    ),
                ));
            }
            open_virtual = first(stmt);
            continue;
        }
        if is_marker(stmt, VIRTUAL_END) {
            if open_virtual.take().is_none() {
                return Err(statement_error(
                    file,
                    stmt,
                    format!("`{VIRTUAL_END};` without a `{VIRTUAL_BEGIN};` before it"),
                ));
            }
            continue;
        }
        if open_virtual.is_some() {
            let mut tokens = defs.clone();
            tokens.extend_from_slice(stmt);
            virtual_update.push(tokens);
        } else if macro_lang::is_definition(stmt) {
            defs.extend_from_slice(stmt);
        } else {
            others.push((stmt, defs.len()));
        }
    }
    if let Some(t) = open_virtual {
        return Err(Diagnostic::at(
            Problem::ModelStatement {
                message: format!(
                    "`{VIRTUAL_BEGIN};` has no `{VIRTUAL_END};` after it; end the block with `{VIRTUAL_END};`"
                ),
            },
            Location::from_span(file, t.span),
        ));
    }
    if others.len() <= 1 && virtual_update.is_empty() {
        return Ok(Parts {
            query: Cow::Borrowed(rest),
            pre: vec![],
            post: vec![],
            on_virtual_update: vec![],
        });
    }
    let queries: Vec<usize> = if others.len() == 1 {
        vec![0]
    } else {
        (0..others.len())
            .filter(|&k| is_query(others[k].0))
            .collect()
    };
    let at = match queries.as_slice() {
        [one] => *one,
        [] => {
            let stmt = others.first().map_or(rest, |(s, _)| *s);
            return Err(Diagnostic::at(
                Problem::NotAQuery,
                Location::from_span(file, span_of(stmt)),
            ));
        }
        [_, second, ..] => {
            return Err(Diagnostic::at(
                Problem::MultipleStatements {
                    count: queries.len(),
                },
                Location::from_span(file, span_of(others[*second].0)),
            ))
        }
    };
    let with_defs = |(stmt, n): &(&[TokenWithSpan], usize)| {
        let mut tokens = defs[..*n].to_vec();
        tokens.extend_from_slice(stmt);
        tokens
    };
    Ok(Parts {
        query: Cow::Owned(with_defs(&others[at])),
        pre: others[..at].iter().map(with_defs).collect(),
        post: others[at + 1..].iter().map(with_defs).collect(),
        on_virtual_update: virtual_update,
    })
}

fn statement_error(file: &str, stmt: &[TokenWithSpan], message: String) -> Diagnostic {
    Diagnostic::at(
        Problem::ModelStatement { message },
        Location::from_span(file, span_of(stmt)),
    )
}

/// The macro environment a statement expands in at `stage`: the project's variables and
/// macros, and `@runtime_stage`.
pub fn stage_env(env: &MacroEnv, stage: RuntimeStage) -> MacroEnv {
    let mut variables = env.variables.clone();
    variables.insert("runtime_stage".into(), Value::Str(stage.key().into()));
    MacroEnv {
        variables,
        macros: env.macros.clone(),
        relations: None,
        jinja_macros: String::new(),
        jinja_variables: Default::default(),
    }
}

/// Expand statement `tokens` (with the `@DEF`s before it) at each of `stages` (each with its
/// environment from [`stage_env`]).
pub fn prepare(
    tokens: &[TokenWithSpan],
    file: &str,
    stages: &[(RuntimeStage, &MacroEnv)],
) -> Result<StagedStatement, Vec<Diagnostic>> {
    // the statement's own tokens come after the `@DEF`s
    let own = macro_lang::split_statements(tokens)
        .into_iter()
        .rfind(|s| has_content(s))
        .unwrap_or(tokens);
    let span = span_of(own);
    let mut rendered = vec![];
    for (stage, env) in stages {
        let expanded = macro_lang::expand(tokens, env, file, false)?;
        let folded = macros::fold_statement_macros(&expanded, file)?;
        let start = folded.iter().position(significant);
        let end = folded.iter().rposition(significant);
        let (Some(start), Some(end)) = (start, end) else {
            continue;
        };
        let body = folded[start..=end].to_vec();
        let canonical = canonical::fallback_canonical(&canonical::normalize_tokens(&body));
        rendered.push((
            *stage,
            ModelQuery {
                form: QueryForm::Fallback {
                    tokens: body,
                    parser_error: String::new(),
                },
                canonical,
                span,
            },
        ));
    }
    Ok(StagedStatement {
        location: Location::from_span(file, span),
        rendered,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::{tokenize, Dialect};

    fn parts(sql: &str) -> Result<(String, Vec<String>, Vec<String>, Vec<String>), String> {
        let toks = tokenize("m.sql", sql, Dialect::DuckDb).unwrap();
        let text = |t: &[TokenWithSpan]| canonical::tokens_to_sql(t).trim().to_string();
        split(&toks, "m.sql")
            .map(|p| {
                (
                    text(&p.query),
                    p.pre.iter().map(|s| text(s)).collect(),
                    p.post.iter().map(|s| text(s)).collect(),
                    p.on_virtual_update.iter().map(|s| text(s)).collect(),
                )
            })
            .map_err(|d| {
                format!(
                    "{} at {}",
                    d.problem.code(),
                    d.location.map_or(0, |l| l.line)
                )
            })
    }

    #[test]
    fn the_query_is_told_from_the_statements_around_it() {
        let (q, pre, post, vu) = parts(
            "SET threads = 1;\n@DEF(x, 1);\nCREATE TABLE IF NOT EXISTS t (a INT);\nSELECT @x AS a;\nINSERT INTO t SELECT 1;\nON_VIRTUAL_UPDATE_BEGIN;\nSELECT 1 FROM @this_model;\nON_VIRTUAL_UPDATE_END;",
        )
        .unwrap();
        assert_eq!(q, "@DEF(x, 1);\nSELECT @x AS a");
        assert_eq!(
            pre,
            vec![
                "SET threads = 1".to_string(),
                "@DEF(x, 1);\nCREATE TABLE IF NOT EXISTS t (a INT)".into()
            ]
        );
        assert_eq!(
            post,
            vec!["@DEF(x, 1);\nINSERT INTO t SELECT 1".to_string()]
        );
        assert_eq!(
            vu,
            vec!["@DEF(x, 1);\nSELECT 1 FROM @this_model".to_string()]
        );
    }

    #[test]
    fn a_lone_query_comes_back_whole() {
        let (q, pre, post, _) = parts("@DEF(x, 1);\n-- note\nSELECT @x AS a;\n").unwrap();
        // comments are kept in the tokens (the text here leaves them out)
        assert_eq!(q, "@DEF(x, 1);\n\n\nSELECT @x AS a");
        assert!(pre.is_empty() && post.is_empty());
        // a lone statement is the query, whatever it is (and then refused as not a query)
        let (q, ..) = parts("CREATE TABLE x (a INT)").unwrap();
        assert_eq!(q, "CREATE TABLE x (a INT)");
    }

    #[test]
    fn two_queries_or_none_are_refused_where_written() {
        assert_eq!(
            parts("SELECT 1;\nSELECT 2;").unwrap_err(),
            "multiple-statements at 2"
        );
        assert_eq!(
            parts("SET a = 1;\nINSERT INTO t VALUES (1);").unwrap_err(),
            "not-a-query at 1"
        );
        assert_eq!(
            parts("SELECT 1;\nON_VIRTUAL_UPDATE_BEGIN;\nSELECT 2;").unwrap_err(),
            "model-statement at 2"
        );
        assert_eq!(
            parts("SELECT 1;\nON_VIRTUAL_UPDATE_END;").unwrap_err(),
            "model-statement at 2"
        );
    }

    #[test]
    fn each_stage_expands_the_statement_on_its_own() {
        let sql = "@DEF(n, 2);\n@IF(@runtime_stage = 'evaluating', UPDATE @this_model SET a = @n WHERE d >= @start_ds);";
        let toks = tokenize("m.sql", sql, Dialect::DuckDb).unwrap();
        let env = MacroEnv::default();
        let creating = stage_env(&env, RuntimeStage::Creating);
        let evaluating = stage_env(&env, RuntimeStage::Evaluating);
        let s = prepare(
            &toks,
            "m.sql",
            &[
                (RuntimeStage::Creating, &creating),
                (RuntimeStage::Evaluating, &evaluating),
            ],
        )
        .unwrap();
        assert!(s.at(RuntimeStage::Creating).is_none());
        let q = s.at(RuntimeStage::Evaluating).unwrap();
        assert_eq!(
            q.canonical,
            "update \"@this_model\" set a = 2 where d >= @start_ds"
        );
        assert_eq!(s.location.line, 2);
    }
}
