//! The project cache: the fingerprints of the last full load, keyed by the content of every
//! file that shapes them, so a plan with nothing to do answers without parsing a model.
//!
//! The key hashes this efmesh build, the config (`efmesh.toml` or `config.yaml`), every model,
//! audit, macro and `external_models.yaml` text (with their paths) and every seed file's content. Any change
//! misses the cache and the plan is computed in full; the cache only ever answers "nothing
//! changed", and only when the environment serves exactly the cached versions.

use efmesh_core::fingerprint::{content_hash, FINGERPRINT_VERSION};
use efmesh_core::model::Kind;
use efmesh_core::plan::{Action, Category, Plan, Pointer};
use efmesh_core::project::{seed_path, Project, ProjectSources};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where the cache lives, relative to the project root (hidden, so globs skip it).
pub const CACHE_PATH: &str = ".efmesh/project-cache.json";

/// One model as the cache remembers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedModel {
    /// The model name.
    pub name: String,
    /// The kind's name.
    pub kind: String,
    /// Its fingerprint.
    pub fingerprint: String,
    /// Its metadata hash.
    pub metadata_hash: String,
    /// Whether it is computed interval by interval (then only a full plan knows what is due).
    #[serde(default)]
    pub intervals: bool,
    /// Whether it is published to the lake (then only a full plan checks its manifest).
    #[serde(default)]
    pub parquet: bool,
}

#[derive(Serialize, Deserialize)]
struct Cache {
    key: String,
    /// Project-relative seed files whose content is part of the key.
    seeds: Vec<String>,
    models: Vec<CachedModel>,
}

/// Something that changes whenever the efmesh binary does, so a rebuilt efmesh never trusts
/// an old cache.
fn build_identity() -> String {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::metadata(p).ok());
    let stamp = exe
        .map(|m| format!("{}:{:?}", m.len(), m.modified().ok()))
        .unwrap_or_default();
    format!(
        "{}|{FINGERPRINT_VERSION}|{stamp}",
        env!("CARGO_PKG_VERSION")
    )
}

fn key(config_text: &str, sources: &ProjectSources, seeds: &[(String, String)]) -> String {
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut put = |label: &str, bytes: &[u8]| {
        buf.extend_from_slice(label.as_bytes());
        buf.push(0);
        buf.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        buf.extend_from_slice(bytes);
    };
    put("build", build_identity().as_bytes());
    put("config", config_text.as_bytes());
    for f in sources
        .models
        .iter()
        .chain(&sources.audits)
        .chain(&sources.macros)
        .chain(&sources.external_models)
    {
        put(&f.path, f.text.as_bytes());
    }
    for (path, hash) in seeds {
        put(path, hash.as_bytes());
    }
    content_hash(&buf)
}

fn cache_file(root: &Path) -> PathBuf {
    root.join(CACHE_PATH)
}

/// Remember a freshly loaded project. Failures only cost speed, so they are logged, not raised.
pub fn remember(root: &Path, config_text: &str, sources: &ProjectSources, project: &Project) {
    let seeds: Vec<(String, String)> = project
        .models
        .iter()
        .zip(&project.seed_hashes)
        .filter_map(|(m, h)| match (&m.kind, h) {
            (Kind::Seed { path }, Some(h)) => Some((seed_path(&m.file, path), h.clone())),
            _ => None,
        })
        .collect();
    let cache = Cache {
        key: key(config_text, sources, &seeds),
        seeds: seeds.into_iter().map(|(p, _)| p).collect(),
        models: project
            .models
            .iter()
            .zip(&project.fingerprints)
            .map(|(m, fp)| CachedModel {
                name: m.name.clone(),
                kind: m.kind.name().to_string(),
                fingerprint: fp.clone(),
                metadata_hash: efmesh_core::fingerprint::metadata_hash(m),
                intervals: efmesh_core::plan::has_intervals(&m.kind),
                parquet: m.target == efmesh_core::model::Target::Parquet,
            })
            .collect(),
    };
    let path = cache_file(root);
    if read(&path).is_some_and(|c| c.key == cache.key) {
        return;
    }
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(path.parent().expect("cache path has a parent"))?;
        crate::util::atomic_file::write(
            &path,
            &serde_json::to_vec(&cache).expect("cache serializes"),
        )
        .map_err(|(_, e)| e)
    };
    if let Err(e) = write() {
        tracing::debug!(path = %path.display(), error = %e, "could not write the project cache");
    }
}

fn read(path: &Path) -> Option<Cache> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// The cached models, when no input changed since they were computed.
pub fn lookup(
    root: &Path,
    config_text: &str,
    sources: &ProjectSources,
) -> Option<Vec<CachedModel>> {
    let cache = read(&cache_file(root))?;
    let mut seeds = Vec::with_capacity(cache.seeds.len());
    for p in &cache.seeds {
        seeds.push((p.clone(), content_hash(&std::fs::read(root.join(p)).ok()?)));
    }
    (key(config_text, sources, &seeds) == cache.key).then_some(cache.models)
}

/// The all-unchanged plan, when the environment serves exactly the cached versions.
pub fn noop_plan(
    env: &str,
    models: &[CachedModel],
    pointers: &BTreeMap<String, Pointer>,
) -> Option<Plan> {
    // intervals fall due as time passes: only a full plan can tell for incremental models
    // lake versions are checked against their manifests by a full plan
    if pointers.len() != models.len() || models.iter().any(|m| m.intervals || m.parquet) {
        return None;
    }
    let mut actions = Vec::with_capacity(models.len());
    for m in models {
        let p = pointers.get(&m.name)?;
        if p.fingerprint != m.fingerprint || p.metadata_hash != m.metadata_hash {
            return None;
        }
        actions.push(Action {
            model: m.name.clone(),
            kind: m.kind.clone(),
            category: Category::Unchanged,
            fingerprint: Some(m.fingerprint.clone()),
            previous_fingerprint: Some(m.fingerprint.clone()),
            physical_fingerprint: None,
            build: false,
            explain: vec![],
            caused_by: vec![],
            forward_only: false,
            batches: vec![],
            sql_change: None,
        });
    }
    tracing::debug!(
        env,
        models = models.len(),
        "plan answered from the project cache"
    );
    Some(Plan {
        env: env.to_string(),
        actions,
        warnings: vec![],
        new_snapshots: vec![],
        missing_physics: vec![],
    })
}

/// Remove the temporary files killed runs left in the project's `.efmesh` folder (an atomic
/// write's `.<file>.tmp-<pid>` whose process is gone); called after a successful apply.
pub(crate) fn sweep_dead_temps(root: &Path) {
    let dir = root.join(".efmesh");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if crate::util::process::left_by_dead_process(&name) {
            tracing::info!(file = %e.path().display(), "removing a temporary file a killed run left");
            let _ = std::fs::remove_file(e.path());
        }
    }
}
