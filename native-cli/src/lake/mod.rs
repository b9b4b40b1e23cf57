//! `target parquet`: a model's versions as folders of immutable parquet files plus a manifest.
//!
//! Layout: `<lake>/<schema>/<table>/fp=<fp8>/` per version (its physical fingerprint), with one
//! partition per interval for time-range models (`interval=<start, ISO basic>/`) and the files
//! directly in the version folder for other kinds. Data files are content-addressed
//! (`data-<sha256:8>.parquet`), so a name always means the same bytes and caches may keep them
//! forever.
//!
//! Publishing is ordered so a reader never sees a partial state: write under a dot-prefixed
//! temporary name, rename into place, point the engine's physical view at the new file set,
//! write the manifest (itself through a temporary name and a rename), and only then remove the
//! files that were replaced. The caller marks intervals done after that. A process killed at
//! any step leaves the previous manifest naming files that still exist; the next run recomputes
//! the interval and removes whatever the killed run left behind.

pub mod publish;

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
use std::path::{Path, PathBuf};

/// Where one version of one model lives in the lake.
#[derive(Debug, Clone)]
pub struct VersionDir {
    /// `<lake>/<schema>/<table>/fp=<fp8>`, absolute.
    pub path: PathBuf,
}

impl VersionDir {
    /// The folder of `model`'s version with physical fingerprint `pfp` under `lake`.
    pub fn new(lake: &Path, model: &str, pfp: &str) -> VersionDir {
        let (schema, table) = model.split_once('.').unwrap_or(("main", model));
        VersionDir {
            path: lake
                .join(schema)
                .join(table)
                .join(format!("fp={}", efmesh_core::naming::fp8(pfp))),
        }
    }

    /// The published manifest, if any. A manifest that cannot be read is an error naming it.
    pub fn manifest(&self) -> Result<Option<Manifest>, Error> {
        let p = self.path.join(MANIFEST_FILE);
        match std::fs::read_to_string(&p) {
            Ok(text) => Manifest::parse(&text).map(Some).map_err(|e| Error::Io {
                path: p,
                message: format!("{e}; delete it and re-apply to republish"),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(&p, e)),
        }
    }

    /// The folder name of the partition holding interval `start`.
    pub fn partition(start: NaiveDateTime) -> String {
        format!("interval={}", start.format("%Y%m%dT%H%M%SZ"))
    }
}

/// The prefix of temporary data files; with [`TMP_SUFFIX`], a name no `*.parquet` glob
/// matches, so readers of a folder never pick up a half-written file.
pub const TMP_PREFIX: &str = ".data-";
/// The suffix of temporary data files.
pub const TMP_SUFFIX: &str = ".parquet.tmp";

/// A fresh temporary file name in `dir` (process id and clock, so concurrent writers differ).
pub fn temp_path(dir: &Path) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    dir.join(format!(
        "{TMP_PREFIX}{}-{nanos}{TMP_SUFFIX}",
        std::process::id()
    ))
}

/// The content address of a data file: a name that always means the same bytes.
pub fn content_name(bytes: &[u8]) -> String {
    format!(
        "data-{}.parquet",
        &efmesh_core::fingerprint::content_hash(bytes)[..8]
    )
}

/// Make a directory's entries (a rename, deletions) durable.
pub fn sync_dir(dir: &Path) -> Result<(), Error> {
    #[cfg(unix)]
    {
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| Error::io(dir, e))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// A staged file: written by the engine under a temporary name, not yet in place.
pub struct Staged {
    /// The temporary file.
    pub tmp: PathBuf,
}

impl Staged {
    /// Write `select` to a temporary file in `dir`.
    pub fn write(
        engine: &mut dyn Engine,
        dir: &Path,
        select: &str,
        context: &str,
    ) -> Result<Staged, Error> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let tmp = temp_path(dir);
        let copy = parquet_sql(engine)?.copy_to_parquet(select, &tmp.display().to_string());
        engine.execute(context, &copy)?;
        Ok(Staged { tmp })
    }

    /// Rename it into place under its content address, durably.
    pub fn publish(self) -> Result<(String, u64), Error> {
        let io = |p: &Path| {
            let p = p.to_path_buf();
            move |e| Error::io(&p, e)
        };
        let bytes = std::fs::read(&self.tmp).map_err(io(&self.tmp))?;
        let name = content_name(&bytes);
        let dest = self.tmp.with_file_name(&name);
        std::fs::File::open(&self.tmp)
            .and_then(|f| f.sync_all())
            .map_err(io(&self.tmp))?;
        std::fs::rename(&self.tmp, &dest).map_err(io(&dest))?;
        sync_dir(dest.parent().unwrap_or(Path::new(".")))?;
        Ok((name, bytes.len() as u64))
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
                if dir.path.join(&f.path).exists() {
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
            .map(|p| dir.path.join(p).display().to_string())
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
/// and whatever a killed run left behind (temporary files, files renamed in but never
/// published). Only ever called after the new manifest is in place.
pub fn sweep(dir: &VersionDir, prefix: &str, keep: &FileSet) -> Result<(), Error> {
    let folder = if prefix.is_empty() {
        dir.path.clone()
    } else {
        dir.path.join(prefix)
    };
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let rel = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        let is_data = name.ends_with(".parquet") || name.ends_with(TMP_SUFFIX);
        if e.path().is_file() && is_data && !keep.files.contains_key(&rel) {
            std::fs::remove_file(e.path()).map_err(|err| Error::io(&e.path(), err))?;
        }
    }
    Ok(())
}

/// Write `manifest` beside the version's files through a temporary name and a rename.
pub fn write_manifest(dir: &VersionDir, manifest: &Manifest) -> Result<(), Error> {
    std::fs::create_dir_all(&dir.path).map_err(|e| Error::io(&dir.path, e))?;
    let text = serde_json::to_string_pretty(manifest).expect("manifests serialize");
    crate::util::atomic_file::write(&dir.path.join(MANIFEST_FILE), text.as_bytes())
        .map_err(|(path, e)| Error::io(&path, e))
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
