//! What a project's model files are parsed with: the config's variables, the `@DEF` macros of
//! `macros/*.sql` and the model defaults, gathered once for every model file.

use super::ProjectSources;
use crate::diagnostic::Diagnostic;
use crate::model::ParseEnv;
use crate::sql::macro_lang::{self, MacroEnv, Value};

/// The glob that selects a project's macro files.
pub const MACRO_GLOB: &str = "macros/**/*.sql";

/// What the project's model files are parsed with, and the problems of its macro files.
pub fn parse_env(sources: &ProjectSources) -> (ParseEnv, Vec<Diagnostic>) {
    let (macros, problems) = macro_env(sources);
    let env = ParseEnv {
        macros,
        defaults: sources.config.model_defaults.clone(),
        sqlmesh: sources.config.is_sqlmesh(),
        gateway: sources.config.sqlmesh_gateway.clone(),
        catalog: sources.config.default_catalog(),
    };
    (env, problems)
}

/// The project's macro environment, and the problems of its macro files.
pub fn macro_env(sources: &ProjectSources) -> (MacroEnv, Vec<Diagnostic>) {
    let mut env = MacroEnv::default();
    for (name, v) in &sources.config.variables {
        env.variables.insert(name.clone(), value_of_json(v));
    }
    env.jinja_variables = sources.config.variables.clone();
    let mut problems = vec![];
    let dialect = sources.config.dialect();
    for src in &sources.macros {
        match crate::sql::tokenize(&src.path, &src.text, dialect) {
            // a SQLMesh project's `{% macro %}` files serve its Jinja queries
            Ok(tokens)
                if sources.config.is_sqlmesh() && crate::sql::jinja::find(&tokens).is_some() =>
            {
                env.jinja_macros.push_str(&src.text);
                env.jinja_macros.push('\n');
            }
            Ok(tokens) => {
                if let Err(d) = macro_lang::parse_macro_file(&src.path, &tokens, &mut env) {
                    problems.extend(d);
                }
            }
            Err(d) => problems.push(d),
        }
    }
    (env, problems)
}

/// A config variable as a macro value.
pub fn value_of_json(v: &serde_json::Value) -> Value {
    use serde_json::Value as J;
    match v {
        J::Null => Value::Null,
        J::Bool(b) => Value::Bool(*b),
        J::Number(n) => Value::Num(n.to_string()),
        J::String(s) => Value::Str(s.clone()),
        J::Array(items) => Value::List(items.iter().map(value_of_json).collect()),
        J::Object(_) => Value::Sql(map_literal(v)),
    }
}

/// A map variable as SQLMesh writes it into SQL: `MAP(['k', ...], [v, ...])`, with lists
/// inside it as `[a, b]`.
fn map_literal(v: &serde_json::Value) -> Vec<sqlparser::tokenizer::Token> {
    use serde_json::Value as J;
    use sqlparser::tokenizer::{Token, Whitespace};
    let list = |out: &mut Vec<Token>, items: Vec<Vec<Token>>| {
        out.push(Token::LBracket);
        for (k, item) in items.into_iter().enumerate() {
            if k > 0 {
                out.push(Token::Comma);
                out.push(Token::Whitespace(Whitespace::Space));
            }
            out.extend(item);
        }
        out.push(Token::RBracket);
    };
    let mut out = vec![];
    match v {
        J::Object(m) => {
            out.push(Token::make_word("MAP", None));
            out.push(Token::LParen);
            list(
                &mut out,
                m.keys()
                    .map(|k| vec![Token::SingleQuotedString(k.clone())])
                    .collect(),
            );
            out.push(Token::Comma);
            out.push(Token::Whitespace(Whitespace::Space));
            list(&mut out, m.values().map(map_literal).collect());
            out.push(Token::RParen);
        }
        J::Array(a) => list(&mut out, a.iter().map(map_literal).collect()),
        scalar => crate::sql::macro_lang::render_into(&value_of_json(scalar), &mut out),
    }
    out
}
