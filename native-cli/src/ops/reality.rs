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

/// Each served `target parquet` model of `project` in `pointers`, with its pointer and its
/// version folder in `lake`.
fn served_lake_versions<'a>(
    project: &'a Project,
    pointers: &'a BTreeMap<String, Pointer>,
    lake: &'a Arc<dyn LakeStore>,
) -> impl Iterator<Item = (&'a efmesh_core::model::Model, &'a Pointer, VersionDir)> + 'a {
    project
        .models
        .iter()
        .filter(|m| m.target == Target::Parquet)
        .filter_map(move |m| {
            let p = pointers.get(&m.name)?;
            let dir = VersionDir::new(lake.clone(), &m.name, &p.physical_fingerprint);
            Some((m, p, dir))
        })
}

/// The served `target parquet` versions of `project` in `pointers` whose manifest is missing
/// or unreadable, or names files that are gone. Reads manifests only: cheap enough for every
/// plan. A store that cannot be reached is an error, never missing physics: an outage must
/// stop a plan, not rebuild every version.
pub fn missing_in_lake(
    project: &Project,
    pointers: &BTreeMap<String, Pointer>,
    lake: Option<&Arc<dyn LakeStore>>,
) -> Result<Vec<MissingPhysics>, Error> {
    let Some(lake) = lake else {
        return Ok(vec![]);
    };
    let mut out = vec![];
    for (m, p, dir) in served_lake_versions(project, pointers, lake) {
        let what = match dir.read_manifest()? {
            None => Some(format!("{} has no manifest", dir.url())),
            Some(Err(e)) => Some(format!("its manifest cannot be read: {e}")),
            Some(Ok(manifest)) => {
                let present: HashSet<String> = lake
                    .list_all(&dir.key)?
                    .into_iter()
                    .map(|e| e.key)
                    .collect();
                let gone: Vec<&str> = manifest
                    .files
                    .iter()
                    .filter(|f| !present.contains(&dir.file(&f.path)))
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
    Ok(out)
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

/// One way the engine, the lake and the state disagree beyond missing physics, as
/// `status --deep` reports it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Mismatch {
    /// What kind of disagreement.
    pub kind: MismatchKind,
    /// The relation or file it is about.
    pub object: String,
    /// What is wrong and what to do, one sentence.
    pub what: String,
}

/// The kinds of [`Mismatch`]. The first three mean served data is wrong or unreachable, so
/// they make `status --check --deep` unhealthy; the rest are debris that serves nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MismatchKind {
    /// An environment's view of a served model is not in the engine.
    MissingView,
    /// An environment's view reads some other relation than the version the state pins.
    StaleView,
    /// A file the manifest names has another size than the manifest says.
    FileSize,
    /// A table in the physical schema that no state record knows.
    StrayTable,
    /// A staging table an interrupted apply left.
    LeftoverStage,
    /// A file in a served version's folder that its manifest does not name.
    UnlistedFile,
}

impl MismatchKind {
    /// Whether it means served data is wrong or unreachable.
    pub fn serves_wrong(self) -> bool {
        matches!(
            self,
            MismatchKind::MissingView | MismatchKind::StaleView | MismatchKind::FileSize
        )
    }
}

/// Everything `status --deep` compares beyond [`missing_in_engine`] and [`missing_in_lake`]:
/// every served model's view against the version the state pins, every table in the
/// physical schema against the physics the state knows (`known`), and every file in a served
/// parquet version's folders against its manifest, size included. A catalog query per
/// kind and a listing per folder: too slow for every plan, cheap for an operator's check.
pub fn deep_mismatches(
    project: &Project,
    env: &str,
    pointers: &BTreeMap<String, Pointer>,
    known: &HashSet<String>,
    engine: &mut dyn Engine,
    lake: Option<&Arc<dyn LakeStore>>,
) -> Result<Vec<Mismatch>, Error> {
    let mut out = vec![];
    let d = engine.dialect();
    let views = engine.query(
        "looking up environment views",
        "SELECT table_schema, table_name, view_definition FROM information_schema.views",
        None,
    )?;
    let views: BTreeMap<(String, String), String> = views
        .rows
        .into_iter()
        .filter_map(|r| {
            let mut r = r.into_iter();
            let (s, t, v) = (
                r.next()??,
                r.next()??,
                r.next().flatten().unwrap_or_default(),
            );
            Some(((s.to_lowercase(), t.to_lowercase()), v.to_lowercase()))
        })
        .collect();
    for m in project
        .models
        .iter()
        .filter(|m| efmesh_core::plan::has_physics(&m.kind))
    {
        let Some(p) = pointers.get(&m.name) else {
            continue;
        };
        let (vs, vt) = naming::view_name(env, &m.name);
        let view = efmesh_core::quote::relation(&vs, &vt);
        let (_, physical) = naming::physical_name(&m.name, &p.physical_fingerprint);
        match views.get(&(vs.to_lowercase(), vt.to_lowercase())) {
            None => out.push(Mismatch {
                kind: MismatchKind::MissingView,
                object: view,
                what: format!(
                    "`{env}` serves `{}` but its view is not in {}; `efmesh apply {env}` recreates it",
                    m.name,
                    engine.name()
                ),
            }),
            Some(def) if !def.contains(&physical.to_lowercase()) => out.push(Mismatch {
                kind: MismatchKind::StaleView,
                object: view,
                what: format!(
                    "the view does not read `{}.{physical}`, the version the state pins; `efmesh apply {env}` repoints it",
                    naming::PHYSICAL_SCHEMA
                ),
            }),
            Some(_) => {}
        }
    }

    let tables = engine.query(
        "looking up physical tables",
        &format!(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = {} ORDER BY table_name",
            d.literal(naming::PHYSICAL_SCHEMA)
        ),
        None,
    )?;
    let known8: HashSet<&str> = known.iter().map(|f| naming::fp8(f)).collect();
    for table in tables.rows.into_iter().flatten().flatten() {
        let object = efmesh_core::quote::relation(naming::PHYSICAL_SCHEMA, &table);
        if table.starts_with("efmesh_stage_") {
            out.push(Mismatch {
                kind: MismatchKind::LeftoverStage,
                object,
                what: "an interrupted apply left this staging table; the next apply of its model replaces it, or drop it".into(),
            });
        } else if !table
            .rsplit_once("__")
            .is_some_and(|(_, fp8)| known8.contains(fp8))
        {
            out.push(Mismatch {
                kind: MismatchKind::StrayTable,
                object,
                what: "no state record knows this table, so the janitor never collects it; drop it if nothing outside efmesh reads it".into(),
            });
        }
    }

    if let Some(lake) = lake {
        for (m, _, dir) in served_lake_versions(project, pointers, lake) {
            // a missing or unreadable manifest is missing physics, reported already
            let Ok(Some(manifest)) = dir.manifest() else {
                continue;
            };
            let named: BTreeMap<String, &efmesh_core::manifest::ManifestFile> = manifest
                .files
                .iter()
                .map(|f| (dir.file(&f.path), f))
                .collect();
            let mut folders: std::collections::BTreeSet<String> =
                [dir.key.clone()].into_iter().collect();
            folders.extend(
                named
                    .keys()
                    .filter_map(|k| k.rsplit_once('/').map(|(d, _)| d.to_string())),
            );
            let manifest_key = dir.file(efmesh_core::manifest::MANIFEST_FILE);
            for folder in folders {
                for e in lake.list(&folder)? {
                    match named.get(&e.key) {
                        Some(f) if f.bytes != e.size => out.push(Mismatch {
                            kind: MismatchKind::FileSize,
                            object: lake.url(&e.key),
                            what: format!(
                                "the manifest says {} bytes, the file has {}; {}",
                                f.bytes,
                                e.size,
                                match &f.interval {
                                    Some(i) => format!(
                                        "`efmesh restate {env} --model {} --from {} --to {}` recomputes it",
                                        m.name, i.start, i.end
                                    ),
                                    None => format!(
                                        "remove `{}` and `efmesh apply {env}` rebuilds the version",
                                        lake.url(&manifest_key)
                                    ),
                                }
                            ),
                        }),
                        Some(_) => {}
                        None if e.key == manifest_key => {}
                        None => out.push(Mismatch {
                            kind: MismatchKind::UnlistedFile,
                            object: lake.url(&e.key),
                            what: if e.key.ends_with(".tmp") {
                                "an interrupted write left this file; the next successful run sweeps it".into()
                            } else {
                                "the manifest does not name this file, so no reader sees it; delete it if nothing outside efmesh wrote it".into()
                            },
                        }),
                    }
                }
            }
        }
    }
    Ok(out)
}
