//! SQLMesh's `before_all` and `after_all`: statements a project runs around every apply that
//! builds or promotes, before the first build and after the promotion, each list in one
//! transaction. Projects use them to attach databases, create secrets and schemas, or grant
//! access to what an environment serves. Ignoring them changes what is built, so efmesh runs
//! them, with SQLMesh's macros for them: the project's variables, `@this_env` (the
//! environment's name), `@schemas` and `@views` (what the environment serves, as efmesh names
//! it) and `@runtime_stage` (`'before_all'` or `'after_all'`), and the built-in macros (`@IF`,
//! `@EACH`, ...). Time macros are not rendered there and are refused by name.

use crate::diagnostic::{Diagnostic, Problem};
use crate::location::Location;
use crate::project::macros::value_of_json;
use crate::sql::macro_lang::{self, MacroEnv, Value};
use crate::sql::Dialect;
use serde::Serialize;
use sqlparser::tokenizer::Token;
use std::collections::BTreeMap;

/// One statement of `before_all` or `after_all`, with where it is written for messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvironmentStatement {
    /// The statement as written (macros unexpanded).
    pub sql: String,
    /// Its line in the configuration file.
    pub location: Location,
}

/// When a list of statements runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Before the first build of an apply.
    BeforeAll,
    /// After an apply's promotion.
    AfterAll,
}

impl Stage {
    /// The key it is configured under, and the value of `@runtime_stage`.
    pub fn key(self) -> &'static str {
        match self {
            Stage::BeforeAll => "before_all",
            Stage::AfterAll => "after_all",
        }
    }
}

/// What an environment serves, for `@this_env`, `@schemas` and `@views`.
#[derive(Debug, Clone, Default)]
pub struct Serving {
    /// The environment's name.
    pub env: String,
    /// The schemas of its views (`dev__mart`, or `mart` in prod), each once.
    pub schemas: Vec<String>,
    /// Its views, `schema.table`.
    pub views: Vec<String>,
}

/// `statements` with their macros expanded for `serving` at `stage`: the SQL to run, in order.
/// A statement that expands to nothing (an `@IF` whose condition is false) is left out.
pub fn render(
    statements: &[EnvironmentStatement],
    stage: Stage,
    serving: &Serving,
    variables: &BTreeMap<String, serde_json::Value>,
) -> Result<Vec<String>, Diagnostic> {
    let mut env = MacroEnv::default();
    for (name, v) in variables {
        env.variables.insert(name.clone(), value_of_json(v));
    }
    let strings = |v: &[String]| Value::List(v.iter().cloned().map(Value::Str).collect());
    env.variables
        .insert("this_env".into(), Value::Str(serving.env.clone()));
    env.variables
        .insert("schemas".into(), strings(&serving.schemas));
    env.variables
        .insert("views".into(), strings(&serving.views));
    env.variables
        .insert("runtime_stage".into(), Value::Str(stage.key().into()));
    let mut out = vec![];
    for s in statements {
        let file = s.location.file.as_str();
        let at = |message: String| {
            Diagnostic::at(
                Problem::ConfigValue {
                    key: stage.key().into(),
                    message,
                },
                s.location.clone(),
            )
        };
        let tokens = crate::sql::tokenize(file, &s.sql, Dialect::DuckDb)
            .map_err(|d| at(format!("`{}` is not SQL: {}", s.sql, d.problem)))?;
        let expanded = macro_lang::expand(&tokens, &env, file, false).map_err(|d| {
            let why = d.first().map(|d| d.problem.to_string()).unwrap_or_default();
            at(format!(
                "`{}`: {why}; {} renders the project's variables, @this_env, @schemas, @views, @runtime_stage and the built-in macros (a Python macro from macros/ is not run)",
                s.sql,
                stage.key()
            ))
        })?;
        if let Some(w) = expanded
            .windows(2)
            .find_map(|w| match (&w[0].token, &w[1].token) {
                (Token::AtSign, Token::Word(word)) => Some(word.value.clone()),
                _ => None,
            })
        {
            return Err(at(format!(
                "`{}` uses @{w}, which efmesh does not render in {}; it renders variables, @this_env, @schemas, @views, @runtime_stage and the built-in macros there",
                s.sql,
                stage.key()
            )));
        }
        let sql = crate::sql::canonical::tokens_to_sql(&expanded);
        if !sql.trim().is_empty() {
            out.push(sql);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stmt(sql: &str) -> EnvironmentStatement {
        EnvironmentStatement {
            sql: sql.into(),
            location: Location::new("config.yaml", (3, 5), (3, 9)),
        }
    }

    fn serving(env: &str) -> Serving {
        Serving {
            env: env.into(),
            schemas: vec!["mart".into()],
            views: vec!["mart.a".into(), "mart.b".into()],
        }
    }

    #[test]
    fn variables_and_the_environment_are_rendered_and_a_false_if_drops_the_statement() {
        let vars = BTreeMap::from([("role".to_string(), serde_json::json!("reader"))]);
        let out = render(
            &[
                stmt("CREATE TABLE IF NOT EXISTS audit_log (env VARCHAR, role VARCHAR)"),
                stmt("INSERT INTO audit_log VALUES (@this_env, @role)"),
                stmt("@IF(@this_env = 'prod', INSERT INTO audit_log VALUES ('prod only', @runtime_stage))"),
            ],
            Stage::AfterAll,
            &serving("dev"),
            &vars,
        )
        .unwrap();
        assert_eq!(
            out,
            [
                "CREATE TABLE IF NOT EXISTS audit_log (env VARCHAR, role VARCHAR)",
                "INSERT INTO audit_log VALUES ('dev', 'reader')",
            ]
        );
        let out = render(
            &[stmt("@IF(@this_env = 'prod', INSERT INTO audit_log VALUES ('prod only', @runtime_stage))")],
            Stage::AfterAll,
            &serving("prod"),
            &vars,
        )
        .unwrap();
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(out[0].contains("'after_all'"), "{out:?}");
    }

    #[test]
    fn a_time_macro_or_an_unknown_variable_is_refused_at_its_line() {
        let e = render(
            &[stmt("DELETE FROM t WHERE ds < @start_ds")],
            Stage::BeforeAll,
            &serving("prod"),
            &BTreeMap::new(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("@start_ds"), "{e}");
        assert_eq!(e.location.unwrap().line, 3);
        let e = render(
            &[stmt("SELECT @nope")],
            Stage::BeforeAll,
            &serving("prod"),
            &BTreeMap::new(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("nope"), "{e}");
    }
}
