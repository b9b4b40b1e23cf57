//! The final SQL of a model: its query with every reference resolved for a target and every
//! time macro bound to an interval.
//!
//! `efmesh render` shows it; the executor runs it. Both go through [`render_model`], so what
//! a user reads is what the engine gets.

use crate::model::{ExternalSource, FileFormat, Kind};
use crate::naming;
use crate::project::Project;
use crate::sql::render::{render, Relation, RenderError};

/// Where references point.
#[derive(Debug, Clone, PartialEq)]
pub enum RelationTarget {
    /// The views of an environment (what `render --env` shows).
    Environment(String),
    /// Physical tables: model name → qualified physical relation. A version always reads the
    /// exact parent versions its plan pins.
    Physical(std::collections::HashMap<String, String>),
    /// Unit tests (`efmesh test`): model name → relation holding its fixture rows (a CTE
    /// name). A mapped model resolves to its relation whatever its kind, EXTERNAL and EMBEDDED
    /// included, so a test never reads real sources; an unmapped EMBEDDED model is inlined as
    /// usual (its own parents resolving through the map), and any other unmapped model is left
    /// as written.
    Fixtures(std::collections::HashMap<String, String>),
}

pub use crate::quote::literal as quote_literal;

/// The table expression that reads an EXTERNAL model's source.
pub fn external_relation(source: &ExternalSource) -> Relation {
    let reader = |f: FileFormat| match f {
        FileFormat::Parquet => "read_parquet",
        FileFormat::Csv => "read_csv",
        FileFormat::Json => "read_json",
    };
    match source {
        ExternalSource::Table { table } => Relation::Name(table.clone()),
        ExternalSource::Files {
            path,
            format,
            union_by_name,
            hive_partitioning,
        } => {
            let mut args = vec![quote_literal(path)];
            if *union_by_name {
                args.push("union_by_name = true".into());
            }
            if *hive_partitioning {
                args.push("hive_partitioning = true".into());
            }
            Relation::Expr(format!("{}({})", reader(*format), args.join(", ")))
        }
        ExternalSource::Url { url, format } => {
            Relation::Expr(format!("{}({})", reader(*format), quote_literal(url)))
        }
    }
}

/// Render model `i` of `project` for `target`, binding macros to `[start, end)`; `pretty`
/// formats it for reading.
pub fn render_model(
    project: &Project,
    i: usize,
    target: &RelationTarget,
    times: &crate::time::MacroTimes,
    pretty: bool,
) -> Result<String, RenderError> {
    let m = &project.models[i];
    let Some(q) = &m.query else {
        return Err(RenderError(format!(
            "{} model `{}` has no query",
            m.kind.name(),
            m.name
        )));
    };
    render_query(project, q, target, times, pretty)
}

/// [`render_model`] for a query of the project's models parsed anew, as a unit test does when
/// it sets the project's variables to other values.
pub fn render_query(
    project: &Project,
    q: &crate::sql::ModelQuery,
    target: &RelationTarget,
    times: &crate::time::MacroTimes,
    pretty: bool,
) -> Result<String, RenderError> {
    let resolve = resolver(project, target, times);
    let bind = |name: &str| crate::time::bind_macro(name, times);
    render(q, project.config.dialect(), &resolve, &bind, pretty)
}

/// A statement of model `i` (one of its [`crate::sql::statements::ModelStatements`] at a stage)
/// rendered as [`render_query`] renders its query, with `@this_model` as `this_model` (the
/// relation being written, or the view being promoted) and SQLMesh's catalog-qualified names
/// of models read as their `schema.table`.
pub fn render_statement(
    project: &Project,
    statement: &crate::sql::ModelQuery,
    target: &RelationTarget,
    times: &crate::time::MacroTimes,
    this_model: &str,
) -> Result<String, RenderError> {
    let models = resolver(project, target, times);
    let catalog = project.config.default_catalog();
    let resolve = |name: &str| -> Option<Relation> {
        if name == "@this_model" {
            return Some(Relation::Name(this_model.to_string()));
        }
        let stripped = catalog
            .as_deref()
            .map(|c| crate::sql::catalog::strip(name, c));
        models(stripped.as_deref().unwrap_or(name))
    };
    let bind = |name: &str| crate::time::bind_macro(name, times);
    render(statement, project.config.dialect(), &resolve, &bind, false)
}

/// How references to the project's models resolve for `target`.
fn resolver<'a>(
    project: &'a Project,
    target: &'a RelationTarget,
    times: &'a crate::time::MacroTimes,
) -> impl Fn(&str) -> Option<Relation> + 'a {
    move |name: &str| -> Option<Relation> {
        let p = project.index_of(name)?;
        let parent = &project.models[p];
        if let RelationTarget::Fixtures(names) = target {
            if let Some(fixture) = names.get(&parent.name) {
                return Some(Relation::Name(fixture.clone()));
            }
            if !matches!(parent.kind, Kind::Embedded) {
                return None;
            }
        }
        match &parent.kind {
            Kind::External { source } => Some(external_relation(source)),
            Kind::Embedded => render_model(project, p, target, times, false)
                .ok()
                .map(|sql| Relation::Expr(format!("({sql})"))),
            _ => Some(Relation::Name(match target {
                RelationTarget::Environment(env) => {
                    let (s, t) = naming::view_name(env, &parent.name);
                    crate::quote::relation(&s, &t)
                }
                RelationTarget::Physical(names) => {
                    names.get(&parent.name).cloned().unwrap_or_else(|| {
                        naming::physical_relation(
                            &parent.name,
                            &project.fingerprints[p],
                            parent.target == crate::model::Target::Ducklake,
                        )
                    })
                }
                // mapped and EMBEDDED models returned above: the rest stay as written
                RelationTarget::Fixtures(_) => return None,
            })),
        }
    }
}
