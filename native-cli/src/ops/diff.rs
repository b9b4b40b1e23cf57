//! `efmesh diff <a> <b>`: what B serves compared with A. Without `--data` it reads only the
//! state store (pointers and the snapshots they name); with `--data` it also measures, through
//! both environments' views, how each differing model's rows differ.

use crate::engine::Engine;
use crate::state::StateStore;
use crate::Error;
use efmesh_core::diff::data::{keyed_query, sample_threshold, KeyedError, KeyedInput};
use efmesh_core::diff::{compare_environments, KeyedStats, SchemaDrift, VersionDiff};
use efmesh_core::model::Kind;
use efmesh_core::naming;
use efmesh_core::project::Project;
use efmesh_core::quote;
use serde::Serialize;
use std::collections::BTreeSet;

/// What to compare beyond versions.
#[derive(Debug, Clone, Default)]
pub struct DiffOptions {
    /// Measure rows, keys, columns and schemas, not only versions.
    pub data: bool,
    /// Only these models (listed even when both serve the same version).
    pub models: Vec<String>,
    /// Compare only this share of keys (percent), the same keys on both sides.
    pub sample_percent: Option<f64>,
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvDiff {
    /// The environment compared against.
    pub env_a: String,
    /// The environment compared.
    pub env_b: String,
    /// Models both serve at the same version with the same metadata (not listed unless named).
    pub unchanged: usize,
    /// Each model that differs, or was named, in name order.
    pub models: Vec<ModelDiff>,
}

/// One model's versions and, with `--data`, its rows.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelDiff {
    /// How the versions differ.
    #[serde(flatten)]
    pub version: VersionDiff,
    /// How the rows differ (with `--data`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<DataDiff>,
}

/// How one model's rows differ between the two environments.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DataDiff {
    /// All rows A serves (absent when A does not serve the model).
    pub rows_a: Option<u64>,
    /// All rows B serves.
    pub rows_b: Option<u64>,
    /// Columns added, removed or retyped from A to B.
    pub schema: SchemaDrift,
    /// The columns rows are matched on: the model's grain, else its kind's key.
    pub key: Vec<String>,
    /// The share of keys compared, when sampled.
    pub sample_percent: Option<f64>,
    /// The keyed comparison, when the model has a key both sides hold.
    pub keyed: Option<KeyedStats>,
    /// Why there is no keyed comparison.
    pub note: Option<String>,
}

/// Compare what `env_b` serves with what `env_a` serves.
pub fn diff(
    project: &Project,
    state: &mut dyn StateStore,
    mut engine: Option<&mut dyn Engine>,
    env_a: &str,
    env_b: &str,
    options: &DiffOptions,
) -> Result<EnvDiff, Error> {
    if let Some(p) = options.sample_percent {
        sample_threshold(p).map_err(|e| Error::Argument {
            message: e.to_string(),
            help: Some("for example `--sample 10` compares a tenth of the keys".into()),
        })?;
        if !options.data {
            return Err(Error::Argument {
                message: "--sample only applies to --data".into(),
                help: Some("add --data".into()),
            });
        }
    }
    let a = super::served(state, env_a)?;
    let b = super::served(state, env_b)?;
    let named: BTreeSet<String> = options.models.iter().cloned().collect();
    for m in &named {
        if !a.contains_key(m) && !b.contains_key(m) {
            let served: BTreeSet<&str> = a.keys().chain(b.keys()).map(String::as_str).collect();
            return Err(Error::Argument {
                message: format!("neither `{env_a}` nor `{env_b}` serves `{m}`"),
                help: Some(match efmesh_core::suggest::closest(m, served) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => "give models by their full name (`schema.table`)".into(),
                }),
            });
        }
    }
    let fingerprints: Vec<String> = a
        .values()
        .chain(b.values())
        .map(|p| p.fingerprint.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let snapshots = state.snapshots(&fingerprints)?;
    let mut versions = compare_environments(&a, &b, &snapshots, project.config.dialect(), &named);
    if !named.is_empty() {
        versions.retain(|v| named.contains(&v.model));
    }
    let unchanged = a
        .iter()
        .filter(|(m, p)| {
            b.get(*m).is_some_and(|q| {
                q.fingerprint == p.fingerprint && q.metadata_hash == p.metadata_hash
            })
        })
        .count();
    let mut models = vec![];
    for version in versions {
        let data = match engine.as_deref_mut() {
            Some(engine) if options.data => {
                Some(data_diff(project, engine, env_a, env_b, &version, options)?)
            }
            _ => None,
        };
        models.push(ModelDiff { version, data });
    }
    Ok(EnvDiff {
        env_a: env_a.into(),
        env_b: env_b.into(),
        unchanged,
        models,
    })
}

/// The columns a model's rows are matched on, as the project declares them.
fn key_of(project: &Project, model: &str) -> Vec<String> {
    let Some(m) = project.model(model) else {
        return vec![];
    };
    if !m.grain.is_empty() {
        return m.grain.clone();
    }
    match &m.kind {
        Kind::IncrementalByUniqueKey { unique_key, .. } => unique_key.clone(),
        Kind::ScdType2 {
            unique_key,
            valid_from_name,
            ..
        }
        | Kind::ScdType2ByColumn {
            unique_key,
            valid_from_name,
            ..
        } => unique_key
            .iter()
            .cloned()
            .chain([valid_from_name.clone()])
            .collect(),
        _ => vec![],
    }
}

fn data_diff(
    project: &Project,
    engine: &mut dyn Engine,
    env_a: &str,
    env_b: &str,
    version: &VersionDiff,
    options: &DiffOptions,
) -> Result<DataDiff, Error> {
    let view = |env: &str| {
        let (s, t) = naming::view_name(env, &version.model);
        quote::relation(&s, &t)
    };
    let (rel_a, rel_b) = (view(env_a), view(env_b));
    let context = format!("diffing {}", version.model);
    // a side's row count (when it exists) and its (column, type) pairs
    type Side = (Option<u64>, Vec<(String, String)>);
    let mut side = |present: bool, rel: &str| -> Result<Side, Error> {
        if !present {
            return Ok((None, vec![]));
        }
        let count = engine
            .query(&context, &format!("SELECT count(*) FROM {rel}"), Some(1))?
            .count();
        let columns = engine.describe(&format!("SELECT * FROM {rel}"))?;
        Ok((Some(count), columns))
    };
    let (rows_a, columns_a) = side(version.version_a.is_some(), &rel_a)?;
    let (rows_b, columns_b) = side(version.version_b.is_some(), &rel_b)?;
    let key = key_of(project, &version.model);
    let mut out = DataDiff {
        rows_a,
        rows_b,
        schema: SchemaDrift::between(&columns_a, &columns_b),
        key: key.clone(),
        sample_percent: options.sample_percent,
        keyed: None,
        note: None,
    };
    if rows_a.is_none() || rows_b.is_none() {
        out.note = Some(format!(
            "only `{}` serves it",
            if rows_a.is_some() { env_a } else { env_b }
        ));
        return Ok(out);
    }
    let input = KeyedInput {
        relation_a: &rel_a,
        relation_b: &rel_b,
        columns_a: &columns_a,
        columns_b: &columns_b,
        key: &key,
        sample_percent: options.sample_percent,
    };
    match keyed_query(engine.dialect(), &input) {
        Err(KeyedError::KeyMissing { column, side }) => {
            let env = if side == "A" { env_a } else { env_b };
            out.note = Some(format!("key column `{column}` is not in `{env}`"));
        }
        Err(e) => out.note = Some(e.to_string()),
        Ok(q) => {
            let rows = engine.query(&context, &q.sql, Some(1))?;
            let row = rows.rows.first().cloned().unwrap_or_default();
            out.keyed =
                Some(
                    KeyedStats::from_row(&row, &q.compared).ok_or_else(|| Error::Argument {
                        message: format!(
                            "the comparison of `{}` returned an unexpected row",
                            version.model
                        ),
                        help: Some("report this as a bug, with `--log-level debug` output".into()),
                    })?,
                );
        }
    }
    Ok(out)
}
