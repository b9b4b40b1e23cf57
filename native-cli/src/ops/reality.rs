//! The state against reality: the physics an environment serves, looked for where it should
//! be. The state store records what was built; a deleted DuckDB file, a dropped table, a lost
//! or garbled manifest or a deleted parquet file makes that record a lie. What is missing is
//! planned as physics to rebuild (`PlanOptions::missing_physics`), reported by `status`, and
//! never served as if it were whole.

use crate::engine::Engine;
use crate::lake::store::LakeStore;
use crate::lake::VersionDir;
use crate::Error;
use efmesh_core::model::Target;
use efmesh_core::naming;
use efmesh_core::plan::Pointer;
use efmesh_core::project::Project;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

/// One served version that is not where the state says it is.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MissingPhysics {
    /// The model.
    pub model: String,
    /// The version's physical fingerprint.
    pub physical_fingerprint: String,
    /// What is missing, for the warning and `status`.
    pub what: String,
}

/// The served `target parquet` versions of `project` in `pointers` whose manifest is missing
/// or unreadable, or names files that are gone. Reads manifests only: cheap enough for every
/// plan.
pub fn missing_in_lake(
    project: &Project,
    pointers: &BTreeMap<String, Pointer>,
    lake: Option<&Arc<dyn LakeStore>>,
) -> Vec<MissingPhysics> {
    let Some(lake) = lake else {
        return vec![];
    };
    let mut out = vec![];
    for m in project
        .models
        .iter()
        .filter(|m| m.target == Target::Parquet)
    {
        let Some(p) = pointers.get(&m.name) else {
            continue;
        };
        let dir = VersionDir::new(lake.clone(), &m.name, &p.physical_fingerprint);
        let what = match dir.manifest() {
            Ok(None) => Some(format!("{} has no manifest", dir.url())),
            Err(e) => Some(format!("its manifest cannot be read: {e}")),
            Ok(Some(manifest)) => {
                let gone: Vec<&str> = manifest
                    .files
                    .iter()
                    .filter(|f| !lake.exists(&dir.file(&f.path)))
                    .map(|f| f.path.as_str())
                    .collect();
                (!gone.is_empty()).then(|| {
                    format!(
                        "{} file(s) its manifest names are gone, first `{}`",
                        gone.len(),
                        gone[0]
                    )
                })
            }
        };
        if let Some(what) = what {
            out.push(MissingPhysics {
                model: m.name.clone(),
                physical_fingerprint: p.physical_fingerprint.clone(),
                what,
            });
        }
    }
    out
}

/// The served versions of `project` in `pointers` that hold physics in the engine (tables,
/// and the views a parquet version reads its files through) but are not there: a deleted
/// database file, a dropped table, an older backup restored. One catalog query.
pub fn missing_in_engine(
    project: &Project,
    pointers: &BTreeMap<String, Pointer>,
    engine: &mut dyn Engine,
) -> Result<Vec<MissingPhysics>, Error> {
    let d = engine.dialect();
    let rows = engine.query(
        "looking up physical tables",
        &format!(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = {}",
            d.literal(naming::PHYSICAL_SCHEMA)
        ),
        None,
    )?;
    let present: HashSet<String> = rows.rows.into_iter().flatten().flatten().collect();
    let mut out = vec![];
    for m in &project.models {
        if !efmesh_core::plan::has_physics(&m.kind) {
            continue;
        }
        let Some(p) = pointers.get(&m.name) else {
            continue;
        };
        let (_, table) = naming::physical_name(&m.name, &p.physical_fingerprint);
        if !present.contains(&table) {
            out.push(MissingPhysics {
                model: m.name.clone(),
                physical_fingerprint: p.physical_fingerprint.clone(),
                what: format!(
                    "{} has no `{}.{table}`",
                    engine.name(),
                    naming::PHYSICAL_SCHEMA
                ),
            });
        }
    }
    Ok(out)
}

/// Every served version of `project` in `pointers` that holds physics in the engine, missing
/// for `what` (the engine's whole database is gone).
pub fn all_served(
    project: &Project,
    pointers: &BTreeMap<String, Pointer>,
    what: &str,
) -> Vec<MissingPhysics> {
    project
        .models
        .iter()
        .filter(|m| efmesh_core::plan::has_physics(&m.kind))
        .filter_map(|m| {
            let p = pointers.get(&m.name)?;
            Some(MissingPhysics {
                model: m.name.clone(),
                physical_fingerprint: p.physical_fingerprint.clone(),
                what: what.to_string(),
            })
        })
        .collect()
}
