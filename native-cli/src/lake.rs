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

use crate::engine::Engine;
use crate::Error;
use chrono::NaiveDateTime;
use efmesh_core::interval::{IntervalUnit, Range};
use efmesh_core::manifest::{
    Freshness, Manifest, ManifestColumn, ManifestFile, ManifestInterval, MANIFEST_FILE,
    MANIFEST_VERSION,
};
use efmesh_core::passport::Effective;
use efmesh_core::types::TypeFamily;
use sha2::{Digest, Sha256};
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

fn sql_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A staged file: written, not yet renamed into place (audits look at it first).
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
        let tmp = dir.join(format!(
            ".tmp-{}-{}.parquet",
            std::process::id(),
            rand_suffix()
        ));
        engine.execute(
            context,
            &format!(
                "COPY ({select}) TO {} (FORMAT parquet)",
                sql_literal(&tmp.display().to_string())
            ),
        )?;
        Ok(Staged { tmp })
    }

    /// The relation that reads it, for audits.
    pub fn relation(&self) -> String {
        format!(
            "(SELECT * FROM read_parquet({}))",
            sql_literal(&self.tmp.display().to_string())
        )
    }

    /// Rename it into place under its content address.
    pub fn publish(self) -> Result<(String, u64), Error> {
        let bytes = std::fs::read(&self.tmp).map_err(|e| Error::io(&self.tmp, e))?;
        let hash = hex::encode(Sha256::digest(&bytes));
        let name = format!("data-{}.parquet", &hash[..8]);
        let dest = self.tmp.with_file_name(&name);
        std::fs::rename(&self.tmp, &dest).map_err(|e| Error::io(&dest, e))?;
        Ok((name, bytes.len() as u64))
    }

    /// Throw it away (a failed audit).
    pub fn discard(self) {
        let _ = std::fs::remove_file(&self.tmp);
    }
}

fn rand_suffix() -> String {
    use std::time::{SystemTime, UNIX_EPOCH};
    let n = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{:x}", n & 0xffff_ffff_ffff)
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
    /// `new`, returning the paths it replaced.
    pub fn replace(&mut self, prefix: &str, new: Vec<ManifestFile>) -> Vec<String> {
        let old: Vec<String> = self
            .files
            .keys()
            .filter(|p| prefix.is_empty() || p.starts_with(&format!("{prefix}/")))
            .cloned()
            .collect();
        for p in &old {
            self.files.remove(p);
        }
        let kept: Vec<String> = new.iter().map(|f| f.path.clone()).collect();
        for f in new {
            self.files.insert(f.path.clone(), f);
        }
        old.into_iter().filter(|p| !kept.contains(p)).collect()
    }

    /// The SQL that reads every file (absolute paths), or `None` for an empty set.
    pub fn read_sql(&self, dir: &VersionDir) -> Option<String> {
        if self.files.is_empty() {
            return None;
        }
        let list: Vec<String> = self
            .files
            .keys()
            .map(|p| sql_literal(&dir.path.join(p).display().to_string()))
            .collect();
        Some(format!(
            "SELECT * FROM read_parquet([{}], union_by_name = true, hive_partitioning = false)",
            list.join(", ")
        ))
    }
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
        let is_data = name.ends_with(".parquet") || name.ends_with(".parquet.tmp");
        if e.path().is_file() && is_data && !keep.files.contains_key(&rel) {
            std::fs::remove_file(e.path()).map_err(|err| Error::io(&e.path(), err))?;
        }
    }
    Ok(())
}

/// Write `manifest` beside the version's files through a temporary name and a rename.
pub fn write_manifest(dir: &VersionDir, manifest: &Manifest) -> Result<(), Error> {
    std::fs::create_dir_all(&dir.path).map_err(|e| Error::io(&dir.path, e))?;
    let dest = dir.path.join(MANIFEST_FILE);
    let tmp = dir
        .path
        .join(format!(".{MANIFEST_FILE}.tmp-{}", std::process::id()));
    let text = serde_json::to_string_pretty(manifest).expect("manifests serialize");
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
        f.write_all(text.as_bytes())
            .and_then(|_| f.sync_all())
            .map_err(|e| Error::io(&tmp, e))?;
    }
    std::fs::rename(&tmp, &dest).map_err(|e| Error::io(&dest, e))
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
    let contiguous = f
        .history_start
        .and_then(|s| ledger.contiguous_through(s))
        .map(efmesh_core::passport::iso);
    let latest = ledger.ranges().last().map(|r| {
        let unit: IntervalUnit = efmesh_core::interval::unit_of(f.model);
        ManifestInterval::from(Range::new(r.end - unit.step(), r.end))
    });
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
        freshness: Freshness {
            contiguous_through: contiguous,
            latest_interval: latest,
            failed_intervals: f.failed.into_iter().map(Into::into).collect(),
        },
        effective: f.effective,
        redacted: f.redacted,
        generated_at: f.now.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
    }
}
