//! Column-level lineage across a project: from a model (or one of its columns) down to the
//! columns it is ultimately made of, which are columns of EXTERNAL and SEED models, columns a
//! model computes from nothing (a generated feed), or columns of relations efmesh does not
//! manage. Each model's query is traced by [`crate::sql::lineage`]; this walk joins them.
//!
//! Pure: it reads the loaded [`Project`], so `efmesh lineage` needs no state store or engine and
//! answers for the project as written, not for what an environment serves.

use crate::project::Project;
use crate::sql::lineage::{query_lineage, ColumnRef, QueryLineage};
use serde::Serialize;
use std::collections::{BTreeSet, HashMap, VecDeque};

/// One column reached by the walk, with the columns its value is computed from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LineageNode {
    /// The model (or unmanaged relation) and column.
    #[serde(flatten)]
    pub at: ColumnRef,
    /// The model's kind (`FULL`, `SEED`, …), or `relation` for one efmesh does not manage.
    pub kind: String,
    /// The columns this one is computed from; empty at an origin.
    pub sources: Vec<ColumnRef>,
    /// Why the walk could not look further, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What decides which rows a model on the walk holds, apart from what each row holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelConditions {
    /// The model.
    pub model: String,
    /// Its kind.
    pub kind: String,
    /// Columns its WHERE, HAVING and QUALIFY clauses read.
    pub filters: Vec<ColumnRef>,
    /// Columns its join conditions read.
    pub joins: Vec<ColumnRef>,
    /// What in its query could not be traced.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gaps: Vec<String>,
}

/// The lineage of a model or of one of its columns.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Lineage {
    /// The model asked about.
    pub model: String,
    /// The column asked about, or `None` for all of the model's columns.
    pub column: Option<String>,
    /// Every column reached, breadth first from the ones asked about.
    pub nodes: Vec<LineageNode>,
    /// The columns the ones asked about are ultimately made of: nodes without sources.
    pub origins: Vec<ColumnRef>,
    /// Filters and joins of every model on the walk, in the order they were reached.
    pub models: Vec<ModelConditions>,
}

/// Why a lineage could not be given.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LineageError {
    /// The target names no model (nor `model.column` of one).
    #[error("no model `{target}` in the project")]
    UnknownModel {
        /// What was asked for.
        target: String,
        /// The closest model name, if any is close.
        suggestion: Option<String>,
    },
    /// The model exists but has no such output column.
    #[error("model `{model}` has no column `{column}`")]
    UnknownColumn {
        /// The model.
        model: String,
        /// The column asked for.
        column: String,
        /// The model's columns.
        available: Vec<String>,
        /// The closest of them, if any is close.
        suggestion: Option<String>,
    },
    /// The model's query could not be traced to columns at all.
    #[error("the columns of `{model}` cannot be traced: {reason}")]
    NotTraceable {
        /// The model.
        model: String,
        /// Why (sqlparser refused the query, its outputs cannot be derived).
        reason: String,
    },
}

/// Trace `target`: `schema.table` for every column of a model, or `schema.table.column`.
pub fn trace(project: &Project, target: &str) -> Result<Lineage, LineageError> {
    let target_l = target.to_ascii_lowercase();
    let (root, column) = match project.index_of(&target_l) {
        Some(i) => (i, None),
        None => {
            let split = target_l.rsplit_once('.');
            match split.and_then(|(m, c)| Some((project.index_of(m)?, c))) {
                Some((i, c)) => (i, Some(c.to_string())),
                None => {
                    let wanted = split.map_or(target_l.as_str(), |(m, _)| m);
                    let names = project.models.iter().map(|m| m.name.as_str());
                    let suggestion = crate::suggest::closest(&target_l, names.clone())
                        .or_else(|| crate::suggest::closest(wanted, names));
                    return Err(LineageError::UnknownModel {
                        target: target.to_string(),
                        suggestion,
                    });
                }
            }
        }
    };
    let mut walk = Walk {
        project,
        traced: HashMap::new(),
    };
    let model = project.models[root].name.clone();
    let start: Vec<String> = match (walk.query(root), &column) {
        (Traced::Query(q), None) if !q.columns.is_empty() => {
            q.columns.iter().map(|(c, _)| c.clone()).collect()
        }
        (Traced::Query(q), Some(c)) if !q.columns.is_empty() => {
            if q.column(c).is_none() {
                let available: Vec<String> = q.columns.iter().map(|(c, _)| c.clone()).collect();
                return Err(LineageError::UnknownColumn {
                    suggestion: crate::suggest::closest(c, available.iter().map(String::as_str)),
                    model,
                    column: c.clone(),
                    available,
                });
            }
            vec![c.clone()]
        }
        (Traced::Query(q), _) => {
            return Err(LineageError::NotTraceable {
                model,
                reason: q.gaps.join("; "),
            })
        }
        (Traced::Untraceable(reason), _) => {
            return Err(LineageError::NotTraceable {
                model,
                reason: reason.clone(),
            })
        }
        (Traced::Leaf, _) => {
            let declared = declared_columns(project, root);
            match &column {
                Some(c) if !declared.contains(c) => {
                    return Err(LineageError::UnknownColumn {
                        suggestion: crate::suggest::closest(c, declared.iter().map(String::as_str)),
                        model,
                        column: c.clone(),
                        available: declared,
                    })
                }
                Some(c) => vec![c.clone()],
                None => declared,
            }
        }
    };

    let mut nodes: Vec<LineageNode> = vec![];
    let mut models: Vec<ModelConditions> = vec![];
    let mut seen: BTreeSet<ColumnRef> = BTreeSet::new();
    let mut seen_models: BTreeSet<usize> = BTreeSet::new();
    let mut queue: VecDeque<ColumnRef> = start
        .into_iter()
        .map(|c| ColumnRef {
            model: model.clone(),
            column: c,
        })
        .collect();
    while let Some(at) = queue.pop_front() {
        if !seen.insert(at.clone()) {
            continue;
        }
        let Some(i) = project.index_of(&at.model) else {
            nodes.push(LineageNode {
                at,
                kind: "relation".into(),
                sources: vec![],
                note: None,
            });
            continue;
        };
        let kind = project.models[i].kind.name().to_string();
        let traced = walk.query(i);
        if seen_models.insert(i) {
            if let Traced::Query(q) = traced {
                models.push(ModelConditions {
                    model: project.models[i].name.clone(),
                    kind: kind.clone(),
                    filters: q.filters.iter().cloned().collect(),
                    joins: q.joins.iter().cloned().collect(),
                    gaps: q.gaps.clone(),
                });
            }
        }
        let (sources, note) = match traced {
            Traced::Leaf => (vec![], None),
            Traced::Untraceable(reason) => (vec![], Some(reason.clone())),
            Traced::Query(q) => match q.column(&at.column) {
                Some(d) => (d.iter().cloned().collect::<Vec<_>>(), None),
                None if q.columns.is_empty() => (vec![], Some(q.gaps.join("; "))),
                None => (
                    vec![],
                    Some(format!(
                        "`{}` does not output `{}`",
                        project.models[i].name, at.column
                    )),
                ),
            },
        };
        queue.extend(sources.iter().cloned());
        nodes.push(LineageNode {
            at,
            kind,
            sources,
            note,
        });
    }
    let origins = nodes
        .iter()
        .filter(|n| n.sources.is_empty())
        .map(|n| n.at.clone())
        .collect();
    Ok(Lineage {
        model,
        column,
        nodes,
        origins,
        models,
    })
}

/// The columns a model without a query declares (its `columns`, or a seed file's header).
fn declared_columns(project: &Project, i: usize) -> Vec<String> {
    project.columns[i]
        .clone()
        .or_else(|| project.seed_columns[i].clone())
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

enum Traced {
    /// EXTERNAL and SEED models: their columns are origins.
    Leaf,
    /// sqlparser could not parse the query.
    Untraceable(String),
    Query(QueryLineage),
}

struct Walk<'p> {
    project: &'p Project,
    traced: HashMap<usize, Traced>,
}

impl Walk<'_> {
    /// Model `i`'s query lineage, traced once and then borrowed.
    fn query(&mut self, i: usize) -> &Traced {
        let p = self.project;
        self.traced
            .entry(i)
            .or_insert_with(|| match &p.models[i].query {
                None => Traced::Leaf,
                Some(q) => match &q.form {
                    crate::sql::QueryForm::Fallback { parser_error, .. } => Traced::Untraceable(
                        format!("sqlparser does not parse its query ({parser_error})"),
                    ),
                    crate::sql::QueryForm::Parsed(ast) => {
                        let catalog = |n: &str| -> Option<Vec<String>> {
                            let k = p.index_of(n)?;
                            p.columns[k].clone().or_else(|| p.seed_columns[k].clone())
                        };
                        Traced::Query(query_lineage(ast, &catalog))
                    }
                },
            })
    }
}
