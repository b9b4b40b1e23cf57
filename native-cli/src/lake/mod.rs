//! `target parquet`: a model's versions as folders of immutable parquet files plus a manifest.
//!
//! Layout: `<lake>/<schema>/<table>/fp=<fp8>/` per version (its physical fingerprint), with one
//! partition per interval for time-range models (`interval=<start, ISO basic>/`) and the files
//! directly in the version folder for other kinds. Data files are content-addressed
//! (`data-<sha256:8>.parquet`), so a name always means the same bytes and caches may keep them
//! forever.
//!
//! Publishing is ordered so a reader never sees a partial state: write a scratch file, publish
//! it under its content address, point the engine's physical view at the new file set, write
//! the manifest (atomically), and only then remove the files that were replaced. The caller marks intervals done after that. A process killed at
//! any step leaves the previous manifest naming files that still exist; the next run recomputes
//! the interval and removes whatever the killed run left behind.

//!
//! Storage goes through [`store::LakeStore`] (`local.rs`: a folder); this module and
//! `publish.rs` never touch a file system themselves.

pub mod landing;
pub mod local;
pub mod publish;
pub mod s3;
pub mod store;

use crate::engine::Engine;
use crate::Error;
use chrono::NaiveDateTime;
use efmesh_core::interval::Range;
use efmesh_core::manifest::{
    Freshness, Manifest, ManifestColumn, ManifestFile, MANIFEST_FILE, MANIFEST_VERSION,
};
use efmesh_core::passport::Effective;
use efmesh_core::sql::dialect::FileSql;
use efmesh_core::types::TypeFamily;
use std::collections::BTreeMap;
use std::sync::Arc;
use store::{join, LakeStore, Scratch};

/// Where one version of one model lives in the lake.
#[derive(Clone)]
pub struct VersionDir {
    /// The store holding it.
    pub store: Arc<dyn LakeStore>,
    /// `<schema>/<table>/fp=<fp8>`, relative to the store's root.
    pub key: String,
}

impl std::fmt::Debug for VersionDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.url())
    }
}

impl VersionDir {
    /// The folder of `model`'s version with physical fingerprint `pfp` in `store`.
    pub fn new(store: Arc<dyn LakeStore>, model: &str, pfp: &str) -> VersionDir {
        let (schema, table) = model.split_once('.').unwrap_or(("main", model));
        VersionDir {
            store,
            key: format!("{schema}/{table}/fp={}", efmesh_core::naming::fp8(pfp)),
        }
    }

    /// Where it is, for messages and the janitor's report.
    pub fn url(&self) -> String {
        self.store.url(&self.key)
    }

    /// The key of `rel` (a path relative to the version folder).
    pub fn file(&self, rel: &str) -> String {
        join(&self.key, rel)
    }

    /// Whether anything of the version is stored.
    pub fn exists(&self) -> bool {
        self.store.exists(&self.key)
    }

    /// The published manifest, if any. A manifest that cannot be read is an error naming it.
    pub fn manifest(&self) -> Result<Option<Manifest>, Error> {
        self.read_manifest()?.transpose()
    }

    /// The manifest in two layers: the outer error is the store's (unreachable, refused),
    /// the inner one a manifest that is there but does not parse. Only the inner kind is
    /// missing physics; a store that cannot be reached must stop a plan, never rebuild.
    pub fn read_manifest(&self) -> Result<Option<Result<Manifest, Error>>, Error> {
        let key = self.file(MANIFEST_FILE);
        let Some(bytes) = self.store.read(&key)? else {
            return Ok(None);
        };
        let text = String::from_utf8_lossy(&bytes);
        Ok(Some(Manifest::parse(&text).map_err(|e| Error::Io {
            path: self.store.url(&key).into(),
            message: format!("{e}; delete it and re-apply to republish"),
        })))
    }

    /// Remove the version's manifest if it does not parse, so a rebuild publishes a fresh one
    /// from the files it writes (the files stay until they are replaced or swept).
    pub fn discard_unreadable_manifest(&self) -> Result<(), Error> {
        if let Some(Err(_)) = self.read_manifest()? {
            self.store.delete(&self.file(MANIFEST_FILE))?;
        }
        Ok(())
    }

    /// The folder name of the partition holding interval `start`.
    pub fn partition(start: NaiveDateTime) -> String {
        format!("interval={}", start.format("%Y%m%dT%H%M%SZ"))
    }
}

/// A staged file: written by the engine to a scratch file, not yet published.
pub struct Staged {
    store: Arc<dyn LakeStore>,
    scratch: Scratch,
}

impl Staged {
    /// Write `select` to a scratch file for folder `sub` ("" for the version folder itself)
    /// of `dir`.
    pub fn write(
        engine: &mut dyn Engine,
        dir: &VersionDir,
        sub: &str,
        select: &str,
        context: &str,
    ) -> Result<Staged, Error> {
        let scratch = dir.store.scratch(&dir.file(sub))?;
        let copy =
            parquet_sql(engine)?.copy_to_parquet(select, &scratch.path.display().to_string());
        if let Err(e) = engine.execute(context, &copy) {
            dir.store.discard(scratch);
            return Err(e.into());
        }
        Ok(Staged {
            store: dir.store.clone(),
            scratch,
        })
    }

    /// Publish it under its content address, durably: its file name and size.
    pub fn publish(self) -> Result<(String, u64), Error> {
        self.store.publish(self.scratch)
    }
}

/// The published file set of a version, keyed by path, as the next manifest will list it.
#[derive(Debug, Clone, Default)]
pub struct FileSet {
    /// Path (relative to the version folder) → file entry.
    pub files: BTreeMap<String, ManifestFile>,
}

impl FileSet {
    /// The set the version's current manifest publishes.
    pub fn published(dir: &VersionDir) -> Result<FileSet, Error> {
        let mut out = FileSet::default();
        if let Some(m) = dir.manifest()? {
            for f in m.files {
                // a manifest never names a missing file; a file deleted by hand is dropped
                if dir.store.exists(&dir.file(&f.path)) {
                    out.files.insert(f.path.clone(), f);
                }
            }
        }
        Ok(out)
    }

    /// Replace everything in `prefix` (a partition folder, or "" for the whole version) by
    /// `new`. The replaced files stay on disk until [`sweep`] runs after the manifest.
    pub fn replace(&mut self, prefix: &str, new: Vec<ManifestFile>) {
        let within = format!("{prefix}/");
        self.files
            .retain(|p, _| !(prefix.is_empty() || p.starts_with(&within)));
        for f in new {
            self.files.insert(f.path.clone(), f);
        }
    }

    /// The SQL that reads every file (absolute paths), or `None` for an empty set.
    pub fn read_sql(&self, dir: &VersionDir, files: &dyn FileSql) -> Option<String> {
        if self.files.is_empty() {
            return None;
        }
        let paths: Vec<String> = self
            .files
            .keys()
            .map(|p| dir.store.sql_path(&dir.file(p)))
            .collect();
        Some(format!("SELECT * FROM {}", files.read_parquet(&paths)))
    }
}

/// How the engine reads and writes parquet; an engine without file access cannot hold a lake.
pub fn parquet_sql(engine: &dyn Engine) -> Result<&'static dyn FileSql, Error> {
    let d = engine.dialect();
    d.files().ok_or_else(|| {
        Error::Unsupported(format!(
            "{} cannot read or write parquet files, so it cannot hold `target parquet` models",
            d.name()
        ))
    })
}

/// Remove files of a partition that the published set no longer names: the replaced files,
/// and whatever a killed run left behind (scratch files, files published but never named by a
/// manifest). Only ever called after the new manifest is in place.
pub fn sweep(dir: &VersionDir, prefix: &str, keep: &FileSet) -> Result<(), Error> {
    for e in dir.store.list(&dir.file(prefix))? {
        let name = e.key.rsplit('/').next().unwrap_or_default();
        let rel = join(prefix, name);
        // a live writer's scratch file is its own; one whose writer is gone is litter
        let replaced = name.ends_with(".parquet") && !keep.files.contains_key(&rel);
        if replaced || crate::util::process::left_by_dead_process(name) {
            dir.store.delete(&e.key)?;
        }
    }
    Ok(())
}

/// Write `manifest` beside the version's files, atomically.
pub fn write_manifest(dir: &VersionDir, manifest: &Manifest) -> Result<(), Error> {
    let text = serde_json::to_string_pretty(manifest).expect("manifests serialize");
    dir.store.write(&dir.file(MANIFEST_FILE), text.as_bytes())
}

/// Everything a manifest says besides the file set.
pub struct ManifestFacts<'a> {
    /// The model.
    pub model: &'a efmesh_core::model::Model,
    /// The version's physical fingerprint.
    pub physical_fingerprint: &'a str,
    /// The columns the files hold (name, engine type).
    pub columns: Vec<(String, String)>,
    /// Done intervals.
    pub done: Vec<Range>,
    /// Where the model's history starts (for contiguous coverage).
    pub history_start: Option<NaiveDateTime>,
    /// Where a closed history ends (exclusive), from the model's `end`.
    pub history_end: Option<NaiveDateTime>,
    /// Intervals whose last attempt failed.
    pub failed: Vec<Range>,
    /// The passport narrowed by ancestry.
    pub effective: Effective,
    /// Columns left out (redacted physics).
    pub redacted: Vec<String>,
    /// When it is written.
    pub now: chrono::DateTime<chrono::Utc>,
}

/// Assemble a version's manifest.
pub fn manifest(files: &FileSet, f: ManifestFacts) -> Manifest {
    let ledger = efmesh_core::interval::Ledger::from_ranges(f.done.iter().copied());
    let unit = f.model.interval_unit();
    let freshness = Freshness::of(&ledger, f.history_start, f.history_end, unit, &f.failed);
    Manifest {
        manifest_version: MANIFEST_VERSION,
        model: f.model.name.clone(),
        fingerprint: f.physical_fingerprint.into(),
        kind: f.model.kind.name().to_string(),
        files: files.files.values().cloned().collect(),
        schema: f
            .columns
            .into_iter()
            .map(|(name, sql_type)| ManifestColumn {
                family: TypeFamily::of(&sql_type),
                name,
                sql_type,
            })
            .collect(),
        intervals: ledger.ranges().iter().map(|r| (*r).into()).collect(),
        answerable: f.model.answerable,
        caveats: f.model.caveats.clone(),
        freshness,
        effective: Some(f.effective),
        redacted: f.redacted,
        generated_at: f.now.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
    }
}
