//! `efmesh query <env> "SQL"`: a read-only query in which model names mean that
//! environment's views, so `SELECT … FROM mart.stays` asks dev what dev serves and prod what
//! prod serves, without anyone spelling `dev__mart.stays`.

use crate::engine::{Engine, Rows};
use crate::state::StateStore;
use crate::Error;
use efmesh_core::model::Kind;
use efmesh_core::model_sql::external_relation;
use efmesh_core::naming;
use efmesh_core::project::Project;
use efmesh_core::sql::render::Relation;
use std::cell::RefCell;

/// Run `sql` (one SELECT) against what `env` serves. Model names resolve to `env`'s views and
/// EXTERNAL models to their sources; any other relation is read as written. A model `env` does
/// not serve is an error naming it, never a silent read of another environment's view.
pub fn query(
    project: &Project,
    state: &mut dyn StateStore,
    engine: &mut dyn Engine,
    env: &str,
    sql: &str,
) -> Result<Rows, Error> {
    let pointers = super::served(state, env)?;
    let dialect = project.config.dialect();
    let argument = |message: String| {
        Error::Argument {
        message,
        help: Some("give one SELECT (or WITH … SELECT) statement; model names mean the environment's views".into()),
    }
    };
    let tokens = efmesh_core::sql::tokenize("<query>", sql, dialect)
        .map_err(|d| argument(format!("the query does not tokenize: {}", d.problem)))?;
    let (parsed, _) =
        efmesh_core::sql::prepare_query(&tokens, "<query>", dialect, false).map_err(|d| {
            argument(format!(
                "the query is not one SELECT: {}",
                d.first()
                    .map(|d| d
                        .problem
                        .to_string()
                        .replace("the model's statement", "the statement"))
                    .unwrap_or_default()
            ))
        })?;
    let unserved = RefCell::new(Vec::<String>::new());
    let resolve = |name: &str| -> Option<Relation> {
        let m = project.model(name)?;
        match &m.kind {
            Kind::External { source } => Some(external_relation(source)),
            Kind::Embedded => None,
            _ if pointers.contains_key(name) => {
                let (s, t) = naming::view_name(env, name);
                Some(Relation::Name(efmesh_core::quote::relation(&s, &t)))
            }
            _ => {
                unserved.borrow_mut().push(name.to_string());
                None
            }
        }
    };
    let rendered = efmesh_core::sql::render::render(&parsed, dialect, &resolve, &|_| None, false)
        .map_err(|e| argument(format!("the query cannot be rendered: {e}")))?;
    if let Some(name) = unserved.borrow().first() {
        return Err(Error::Argument {
            message: format!("`{env}` does not serve `{name}`"),
            help: Some(format!(
                "apply the project to `{env}` first (`efmesh apply {env}`)"
            )),
        });
    }
    Ok(engine.query(&format!("querying {env}"), &rendered, None)?)
}
