//! `efmesh compact`: merge each settled partition's small files into one, deduplicating by key.
//!
//! Compaction works on EXTERNAL models reading parquet files that declare a `maintenance`
//! policy ([`efmesh_core::model::Maintenance`]). A partition is a hive directory
//! `<partition_key>=<value>` holding files the model's `path` glob matches. One is compacted
//! only when it is settled: its value is a date before today (efmesh's clock, `EFMESH_NOW`
//! overrides it) and its newest file is older than the grace period.
//!
//! For each partition it compacts, compaction
//!
//! 1. lists the partition's files (the only files it will ever delete),
//! 2. merges exactly those with DuckDB (`read_parquet([...], union_by_name = true)`, so every
//!    column survives, including ones the policy does not name), keeping one row per unique key:
//!    the first by `order` ascending (NULLs last), ties broken by file name and row position,
//! 3. writes the result under a temporary name in the same directory,
//!    `.data-<pid>-<nanos>.parquet.tmp`, which a glob ending in `*.parquet` never matches,
//! 4. fsyncs it, renames it to its content address `data-<sha256:8>.parquet`, fsyncs the
//!    directory,
//! 5. deletes the files listed in step 1, and nothing else: a file that lands while it runs
//!    survives, and is merged by the next run.
//!
//! Readers never see a partial file. Between steps 4 and 5 a reader can see a row twice (in the
//! merged file and in an old one), never zero times; consumers that deduplicate by key (as the
//! eventlake example's `core.events` does) are unaffected. The merged file gets the newest
//! mtime of the files it replaces, so the grace period keeps measuring the data's arrival.

use crate::engine::Engine;
use crate::lake::landing::Listed;
use crate::lake::local::{TMP_PREFIX, TMP_SUFFIX};
use crate::{Efmesh, Error};
use chrono::{DateTime, NaiveDateTime, Utc};
use efmesh_core::model::maintenance::{self, LeftAlone, Maintenance};
use efmesh_core::model::{ExternalSource, Kind, Model};
use efmesh_core::project::Project;
use efmesh_core::sql::dialect::FileSql;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Options for a compaction run.
#[derive(Debug, Clone, Default)]
pub struct CompactOptions {
    /// Only these models (`schema.table`); empty: every model with a `maintenance` policy.
    pub models: Vec<String>,
    /// Report what would happen; change nothing.
    pub dry_run: bool,
    /// Override every policy's grace period (minutes).
    pub grace_minutes: Option<u32>,
    /// "Now" (defaults to the clock, which `EFMESH_NOW` overrides).
    pub now: Option<DateTime<Utc>>,
}

/// What compaction did, or would do, to one partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Action {
    /// Its files were merged into one.
    #[serde(rename = "compacted")]
    Compacted,
    /// A dry run: its files would be merged into one.
    #[serde(rename = "would compact")]
    WouldCompact,
    /// It was not touched; the reason says why.
    #[serde(rename = "left alone")]
    LeftAlone,
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Action::Compacted => "compacted",
            Action::WouldCompact => "would compact",
            Action::LeftAlone => "left alone",
        })
    }
}

/// One partition in a [`CompactReport`].
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionReport {
    /// The model whose files these are.
    pub model: String,
    /// The partition directory, relative to the project root when under it.
    pub path: String,
    /// What happened to it.
    pub action: Action,
    /// Why: for a partition left alone, the rule that kept it; otherwise what the merge does.
    pub reason: String,
    /// A stable identifier of a left-alone reason (`today-or-later`, `within-grace`,
    /// `already-compact`, `not-a-date`, `not-a-partition`); `null` when it is (or would be)
    /// compacted.
    pub reason_code: Option<&'static str>,
    /// Files the model's glob matched in the partition.
    pub files_before: usize,
    /// Files after the run (the same as before when left alone or in a dry run).
    pub files_after: usize,
    /// Rows in those files; `null` when they were not read (a partition not settled).
    pub rows_before: Option<u64>,
    /// Rows after the merge (or that it would keep); `null` when not read.
    pub rows_after: Option<u64>,
    /// The merged file's name (`data-<sha256:8>.parquet`), when one was written.
    pub file: Option<String>,
}

/// What a compaction run did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactReport {
    /// Whether this was a dry run (nothing changed).
    pub dry_run: bool,
    /// Today by efmesh's clock (UTC): partitions dated today or later are left alone.
    pub today: String,
    /// Every partition of every model compacted, in model and path order.
    pub partitions: Vec<PartitionReport>,
    /// Partitions compacted (or, in a dry run, that would be).
    pub compacted: usize,
    /// Partitions left alone.
    pub left_alone: usize,
    /// Files replaced by merged files (or that would be).
    pub files_merged: usize,
    /// Duplicate rows dropped (or that would be).
    pub duplicates_dropped: u64,
}

impl std::fmt::Display for CompactReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let width = self
            .partitions
            .iter()
            .map(|p| p.path.len())
            .max()
            .unwrap_or(0);
        for p in &self.partitions {
            writeln!(
                f,
                "{:<13} {}  {:<width$}  {}",
                p.action.to_string(),
                p.model,
                p.path,
                p.reason
            )?;
        }
        let verb = if self.dry_run {
            "would compact"
        } else {
            "compacted"
        };
        let done = if self.compacted == 0 {
            "nothing to compact".to_string()
        } else {
            format!(
                "{verb} {} partition(s) ({} file(s) into {}, {} duplicate row(s) dropped)",
                self.compacted, self.files_merged, self.compacted, self.duplicates_dropped
            )
        };
        writeln!(
            f,
            "compact: {done}, left {} alone{}",
            self.left_alone,
            if self.dry_run {
                "; nothing was changed (dry run)"
            } else {
                ""
            }
        )
    }
}

/// Called for each partition being compacted, after the merged file is written under its
/// temporary name and before it is published and the listed files are deleted: the window in
/// which a writer can land a new file. Tests use it to prove such a file survives.
pub type Hook<'a> = dyn FnMut(&Path) + 'a;

impl Efmesh {
    /// Compact the files of the models with a `maintenance` policy (`efmesh compact`).
    pub fn compact(&self, opts: &CompactOptions) -> Result<CompactReport, Error> {
        self.compact_with_hook(opts, &mut |_| {})
    }

    /// [`Efmesh::compact`], calling `hook` between the merge and the deletions of each partition.
    pub fn compact_with_hook(
        &self,
        opts: &CompactOptions,
        hook: &mut Hook<'_>,
    ) -> Result<CompactReport, Error> {
        compact(
            self.root(),
            self.project(),
            self.backends().scratch.as_ref(),
            opts,
            hook,
        )
    }
}

/// Compact the project's models at `root` as `opts` says; `scratch` opens the engine that
/// merges files (no warehouse needed).
pub fn compact(
    root: &Path,
    project: &Project,
    scratch: &dyn crate::engine::EngineFactory,
    opts: &CompactOptions,
    hook: &mut Hook<'_>,
) -> Result<CompactReport, Error> {
    let now = opts.now.unwrap_or_else(crate::util::clock::now).naive_utc();
    let models = select(project, &opts.models)?;
    let mut engine: Option<Box<dyn Engine + Send>> = None;
    let mut partitions = vec![];
    for (m, policy) in models {
        let mut policy = policy.clone();
        if let Some(g) = opts.grace_minutes {
            policy.grace_minutes = g;
        }
        let engine = match &mut engine {
            Some(e) => e,
            None => engine.insert(scratch.open()?),
        };
        let mut model_run = ModelRun {
            root,
            model: m,
            policy: &policy,
            now,
            dry_run: opts.dry_run,
            engine,
        };
        partitions.extend(model_run.run(hook)?);
    }
    let mut report = CompactReport {
        dry_run: opts.dry_run,
        today: now.date().to_string(),
        compacted: 0,
        left_alone: 0,
        files_merged: 0,
        duplicates_dropped: 0,
        partitions,
    };
    for p in &report.partitions {
        if p.action == Action::LeftAlone {
            report.left_alone += 1;
        } else {
            report.compacted += 1;
            report.files_merged += p.files_before;
            report.duplicates_dropped += p
                .rows_before
                .unwrap_or(0)
                .saturating_sub(p.rows_after.unwrap_or(0));
        }
    }
    Ok(report)
}

/// The models to compact, with their policies, in project order.
fn select<'a>(
    project: &'a Project,
    only: &[String],
) -> Result<Vec<(&'a Model, &'a Maintenance)>, Error> {
    if only.is_empty() {
        let all: Vec<_> = project
            .models
            .iter()
            .filter_map(|m| m.maintenance.as_ref().map(|p| (m, p)))
            .collect();
        if all.is_empty() {
            return Err(Error::NoMaintenance { model: None });
        }
        return Ok(all);
    }
    let mut out = vec![];
    for name in only {
        let name = name.trim().to_ascii_lowercase();
        let Some(i) = project.index_of(&name) else {
            return Err(Error::UnknownModel {
                suggestion: efmesh_core::suggest::closest(
                    &name,
                    project
                        .models
                        .iter()
                        .filter(|m| m.maintenance.is_some())
                        .map(|m| m.name.as_str()),
                ),
                name,
            });
        };
        let m = &project.models[i];
        match &m.maintenance {
            Some(p) => out.push((m, p)),
            None => {
                return Err(Error::NoMaintenance {
                    model: Some(m.name.clone()),
                })
            }
        }
    }
    Ok(out)
}

struct ModelRun<'a> {
    root: &'a Path,
    model: &'a Model,
    policy: &'a Maintenance,
    now: NaiveDateTime,
    dry_run: bool,
    engine: &'a mut Box<dyn Engine + Send>,
}

/// Temporary files of an earlier, killed run older than this are removed when their partition
/// is compacted.
const STALE_TMP: std::time::Duration = std::time::Duration::from_secs(3600);

impl ModelRun<'_> {
    /// How the engine reads and writes parquet.
    fn files(&self) -> Result<&'static dyn FileSql, crate::engine::EngineError> {
        self.engine
            .dialect()
            .files()
            .ok_or_else(|| crate::engine::EngineError::Feature {
                engine: self.engine.name(),
                feature: crate::engine::EngineFeature::FileSources,
                detail: format!("compacting `{}` reads and writes parquet", self.model.name),
            })
    }

    fn run(&mut self, hook: &mut Hook<'_>) -> Result<Vec<PartitionReport>, Error> {
        let Kind::External {
            source: ExternalSource::Files { path, .. },
        } = &self.model.kind
        else {
            // the model parser only accepts a policy on EXTERNAL parquet files
            return Err(Error::NoMaintenance {
                model: Some(self.model.name.clone()),
            });
        };
        let groups = self.list(path)?;
        let mut out = vec![];
        for (dir, files) in groups {
            out.push(self.partition(&dir, files, hook)?);
        }
        Ok(out)
    }

    fn unsupported(&self, why: String) -> Error {
        Error::Unsupported(format!(
            "cannot compact `{}` ({}): {why}",
            self.model.name, self.model.file
        ))
    }

    /// The files the model's glob matches, grouped by directory.
    fn list(&self, path: &str) -> Result<BTreeMap<PathBuf, Vec<Listed>>, Error> {
        if path.contains("://") {
            return Err(self.unsupported(format!(
                "`{path}` is not a local path; compaction rewrites local files only"
            )));
        }
        let pattern = path.strip_prefix("./").unwrap_or(path);
        let absolute = Path::new(pattern).is_absolute();
        let glob = globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| self.unsupported(format!("`{path}` is not a valid glob: {e}")))?
            .compile_matcher();
        // the base: every component before the first one with a glob character
        let is_glob = |c: &str| c.contains(['*', '?', '[', '{']);
        let comps: Vec<&str> = pattern.split('/').collect();
        let base_len = comps
            .iter()
            .position(|c| is_glob(c))
            .unwrap_or(comps.len() - 1);
        let base_rel = comps[..base_len].join("/");
        let base = if absolute {
            PathBuf::from(if base_rel.is_empty() { "/" } else { &base_rel })
        } else {
            self.root.join(&base_rel)
        };
        // a reader of the glob must never see a half-written merge
        let probe = format!(
            "{}{}{}=2000-01-01/{TMP_PREFIX}00000000{TMP_SUFFIX}",
            base_rel,
            if base_rel.is_empty() || base_rel.ends_with('/') {
                ""
            } else {
                "/"
            },
            self.policy.partition_key
        );
        if glob.is_match(&probe) {
            return Err(self.unsupported(format!(
                "its path `{path}` would also match compaction's temporary files (`{TMP_PREFIX}*{TMP_SUFFIX}`), so readers could see a half-written file; end the glob with `*.parquet`"
            )));
        }
        crate::lake::landing::matching(&base, self.root, absolute, &glob)
    }

    fn display(&self, p: &Path) -> String {
        match p.strip_prefix(self.root) {
            Ok(rel) => rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
            Err(_) => p.display().to_string(),
        }
    }

    fn report(&self, dir: &Path, files: usize, action: Action, reason: String) -> PartitionReport {
        PartitionReport {
            model: self.model.name.clone(),
            path: self.display(dir),
            action,
            reason,
            reason_code: None,
            files_before: files,
            files_after: files,
            rows_before: None,
            rows_after: None,
            file: None,
        }
    }

    fn left_alone(&self, dir: &Path, files: usize, why: LeftAlone) -> PartitionReport {
        let mut r = self.report(dir, files, Action::LeftAlone, why.to_string());
        r.reason_code = Some(why.code());
        r
    }

    fn failed(&self, dir: &Path, message: String) -> Error {
        Error::Compact {
            model: self.model.name.clone(),
            partition: self.display(dir),
            message,
        }
    }

    /// The key compaction deduplicates by: the policy's, else the model's grain.
    fn unique_key(&self) -> &[String] {
        if self.policy.unique_key.is_empty() {
            &self.model.grain
        } else {
            &self.policy.unique_key
        }
    }

    fn partition(
        &mut self,
        dir: &Path,
        files: Vec<Listed>,
        hook: &mut Hook<'_>,
    ) -> Result<PartitionReport, Error> {
        let n = files.len();
        let name = dir
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Some(value) = maintenance::partition_value(&name, &self.policy.partition_key) else {
            return Ok(self.left_alone(
                dir,
                n,
                LeftAlone::NotAPartition {
                    key: self.policy.partition_key.clone(),
                },
            ));
        };
        let newest = files
            .iter()
            .map(|f| f.mtime)
            .max()
            .unwrap_or(SystemTime::UNIX_EPOCH);
        let newest_utc = DateTime::<Utc>::from(newest).naive_utc();
        if let Err(why) =
            maintenance::settled(value, newest_utc, self.now, self.policy.grace_minutes)
        {
            return Ok(self.left_alone(dir, n, why));
        }
        let source = read_source(self.files()?, &files);
        let key = self.unique_key().to_vec();
        let q = |c: &String| self.engine.quote(c);
        let distinct = if key.is_empty() {
            "count(*)".to_string()
        } else {
            format!(
                "(SELECT count(*) FROM (SELECT DISTINCT {} FROM src))",
                key.iter().map(q).collect::<Vec<_>>().join(", ")
            )
        };
        let counted = self
            .engine
            .query(
                "counting a partition's rows",
                &format!(
                    "WITH src AS (SELECT * FROM {source}) SELECT count(*), {distinct} FROM src"
                ),
                Some(1),
            )
            .map_err(|e| self.failed(dir, e.to_string()))?;
        let num = |i: usize| -> u64 {
            counted
                .rows
                .first()
                .and_then(|r| r.get(i).cloned().flatten())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        let (rows, keep) = (num(0), num(1));
        if n == 1 && rows == keep {
            let mut r = self.left_alone(dir, n, LeftAlone::AlreadyCompact);
            (r.rows_before, r.rows_after) = (Some(rows), Some(rows));
            return Ok(r);
        }
        let what = |verb: &str| {
            format!(
                "{verb} {n} file(s) into 1, {} duplicate row(s) {}",
                rows - keep,
                if key.is_empty() {
                    "(no unique key)".to_string()
                } else {
                    format!("by ({})", key.join(", "))
                }
            )
        };
        if self.dry_run {
            let mut r = self.report(dir, n, Action::WouldCompact, what("would merge"));
            (r.files_after, r.rows_before, r.rows_after) = (1, Some(rows), Some(keep));
            return Ok(r);
        }
        crate::lake::landing::remove_stale_tmps(dir, STALE_TMP);
        let tmp = crate::lake::local::temp_path(dir);
        let written = self.merge(&source, &key, &tmp);
        let merged_rows = match written {
            Ok(r) => r,
            Err(e) => {
                crate::lake::landing::discard(&tmp);
                return Err(self.failed(dir, e.to_string()));
            }
        };
        hook(dir);
        let name = match crate::lake::landing::publish(&tmp, newest, &files) {
            Ok(name) => name,
            Err(e) => {
                crate::lake::landing::discard(&tmp);
                return Err(e);
            }
        };
        let dest = dir.join(&name);
        for f in files.iter().filter(|f| f.path != dest) {
            match crate::lake::landing::remove(&f.path) {
                Ok(()) => {}
                Err(e) => {
                    return Err(self.failed(
                        dir,
                        format!(
                            "the merged file {name} is published but `{}` could not be deleted: {e}; until it is, readers see its rows twice",
                            f.path.display()
                        ),
                    ))
                }
            }
        }
        crate::lake::local::sync_dir(dir)?;
        let mut r = self.report(dir, n, Action::Compacted, what("merged"));
        (r.files_after, r.rows_before, r.rows_after, r.file) =
            (1, Some(rows), Some(merged_rows), Some(name));
        Ok(r)
    }

    /// Write the partition's rows, one per key, to `tmp`; return how many were written.
    fn merge(
        &mut self,
        source: &str,
        key: &[String],
        tmp: &Path,
    ) -> Result<u64, crate::engine::EngineError> {
        let q = |c: &String| self.engine.quote(c);
        let mut order: Vec<String> = self
            .policy
            .order
            .iter()
            .map(|c| format!("{} ASC NULLS LAST", q(c)))
            .collect();
        // ties (and no order at all) go to the file listed first, then the row's position
        order.extend(["file_index".to_string(), "file_row_number".to_string()]);
        let order = order.join(", ");
        let dedup = if key.is_empty() {
            String::new()
        } else {
            format!(
                " QUALIFY row_number() OVER (PARTITION BY {} ORDER BY {order}) = 1",
                key.iter().map(q).collect::<Vec<_>>().join(", ")
            )
        };
        let files = self.files()?;
        let tmp_path = tmp.display().to_string();
        self.engine.execute(
            &format!("compacting {}", self.model.name),
            &files.copy_to_parquet(
                &format!("SELECT * FROM {source}{dedup} ORDER BY {order}"),
                &tmp_path,
            ),
        )?;
        Ok(self
            .engine
            .query(
                "counting the merged rows",
                &format!(
                    "SELECT count(*) FROM {}",
                    files.read_parquet(std::slice::from_ref(&tmp_path))
                ),
                Some(1),
            )?
            .count())
    }
}

/// `read_parquet` over exactly the listed files, columns matched by name, partition columns
/// not added (they stay in the directory name).
fn read_source(sql: &dyn FileSql, files: &[Listed]) -> String {
    let paths: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
    sql.read_parquet(&paths)
}
