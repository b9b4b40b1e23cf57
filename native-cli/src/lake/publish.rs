//! Applying models with `target parquet`: the steps of `apply` that differ from engine tables.
//!
//! The data is computed by the engine as usual, audited while it is still staged (a table in
//! the batch's transaction), then written out as content-addressed parquet files and published
//! in the order [`crate::lake`] describes. The model's physical relation in the engine is a
//! view over the explicit file list, so environments, children and `efmesh audit` read the
//! lake through the same names as any other model.

use crate::engine::{Engine, RelationKind};
use crate::lake::store::LakeStore;
use crate::lake::{self, FileSet, Staged, VersionDir};
use crate::state::StateStore;
use crate::Error;
use chrono::{DateTime, Utc};
use efmesh_core::interval::{IntervalUnit, Range};
use efmesh_core::manifest::{ManifestFile, ManifestInterval};
use efmesh_core::materialize::time_column::TimeColumn;
use efmesh_core::model::Target;
use efmesh_core::project::Project;
use std::collections::HashMap;
use std::sync::Arc;

/// What the parquet steps of one apply share.
pub struct LakeContext<'a> {
    /// The project.
    pub project: &'a Project,
    /// Model → qualified physical relation, as the plan pins it.
    pub names: &'a HashMap<String, String>,
    /// Model → physical fingerprint, as the plan pins it.
    pub pfps: &'a HashMap<String, String>,
    /// The lake, when `[lake] path` is configured.
    pub lake: Option<Arc<dyn LakeStore>>,
    /// When the apply runs.
    pub now: DateTime<Utc>,
    /// Whether the environment builds redacted physics (`[environments.<env>] redacted`).
    pub redacted: bool,
}

/// Whether model `i` is published as parquet.
pub fn is_parquet(project: &Project, i: usize) -> bool {
    project.models[i].target == Target::Parquet
}

impl LakeContext<'_> {
    /// The version folder of model `i` as this plan pins it.
    pub fn dir(&self, i: usize) -> Result<VersionDir, Error> {
        let m = &self.project.models[i];
        let Some(lake) = &self.lake else {
            return Err(Error::Config {
                message: format!(
                    "`{}` ({}) has `target parquet`, but efmesh.toml has no `[lake] path`; add `[lake]\\npath = \"lake\"`",
                    m.name, m.file
                ),
            });
        };
        // `check` refuses kinds the target cannot hold (`efmesh_core::support`)
        debug_assert!(m.target.holds(&m.kind), "{} passed check", m.name);
        let pfp = self
            .pfps
            .get(&m.name)
            .map(String::as_str)
            .unwrap_or_default();
        Ok(VersionDir::new(lake.clone(), &m.name, pfp))
    }

    /// Point the engine's physical view at `files` (or at an empty relation shaped like
    /// `empty_sql` when there are none).
    fn point_view(
        &self,
        engine: &mut dyn Engine,
        i: usize,
        dir: &VersionDir,
        files: &FileSet,
        empty_sql: Option<&str>,
        extra: &[String],
    ) -> Result<(), Error> {
        let m = &self.project.models[i];
        let physical = &self.names[&m.name];
        let body = match (files.read_sql(dir, lake::parquet_sql(engine)?), empty_sql) {
            (Some(read), _) => read,
            (None, Some(q)) => efmesh_core::materialize::empty_like(q),
            (None, None) => return Ok(()),
        };
        let mut statements = vec![engine.dialect().replace_view(physical, &body)];
        statements.extend(extra.iter().cloned());
        engine.transaction(&format!("publishing {}", m.name), &statements)?;
        Ok(())
    }

    /// Write the version's manifest from the published files and the ledger. `pending` are
    /// intervals published in this step but not yet marked done.
    pub fn publish_manifest(
        &self,
        engine: &mut dyn Engine,
        state: &mut dyn StateStore,
        i: usize,
        dir: &VersionDir,
        files: &FileSet,
        pending: &[Range],
    ) -> Result<(), Error> {
        let m = &self.project.models[i];
        let pfp = self.pfps.get(&m.name).cloned().unwrap_or_default();
        let columns = engine.describe(&format!("SELECT * FROM {}", self.names[&m.name]))?;
        // the versions this plan pins for the model and its ancestors: the passport's coverage
        let project = self.project;
        let wanted: Vec<String> = project
            .dag
            .ancestors(i)
            .into_iter()
            .chain([i])
            .filter_map(|j| self.pfps.get(&project.models[j].name).cloned())
            .collect();
        let ledgers = state.ledgers(&wanted)?;
        let mut own = ledgers.get(&pfp).cloned().unwrap_or_default();
        for r in pending {
            own.insert(*r);
        }
        let coverage = |j: usize| {
            let name = &project.models[j].name;
            let (start, end) = (project.history_start(j)?, project.history_end(j));
            if *name == m.name {
                return own.covered_through(start, end);
            }
            ledgers
                .get(self.pfps.get(name)?)
                .and_then(|l| l.covered_through(start, end))
        };
        let effective = project.passports(&coverage).swap_remove(i);
        let manifest = lake::manifest(
            files,
            lake::ManifestFacts {
                model: m,
                physical_fingerprint: &pfp,
                columns,
                done: own.ranges().to_vec(),
                history_start: project.history_start(i),
                history_end: project.history_end(i),
                failed: state.failed_intervals(&pfp)?,
                effective,
                redacted: if self.redacted {
                    m.redact.clone()
                } else {
                    vec![]
                },
                now: self.now,
            },
        );
        lake::write_manifest(dir, &manifest)?;
        // temporary files a killed run left beside the manifest go with this publication
        lake::sweep(dir, "", files)
    }

    /// Publish a table built whole (FULL, SEED) from the staged, audited table `stage`.
    pub fn publish_whole(
        &self,
        engine: &mut dyn Engine,
        state: &mut dyn StateStore,
        i: usize,
        stage: &str,
    ) -> Result<(), Error> {
        let m = &self.project.models[i];
        let dir = self.dir(i)?;
        let staged = Staged::write(
            engine,
            &dir,
            "",
            &format!("SELECT * FROM {stage}"),
            &format!("writing {}", m.name),
        )?;
        let rows = count(engine, &format!("SELECT count(*) FROM {stage}"))?;
        let (name, bytes) = staged.publish()?;
        let mut files = FileSet::published(&dir)?;
        files.replace(
            "",
            vec![ManifestFile {
                path: name,
                bytes,
                rows,
                interval: None,
            }],
        );
        let drop_stage = engine.dialect().drop(RelationKind::Table, stage, true);
        self.point_view(engine, i, &dir, &files, None, &[drop_stage])?;
        self.publish_manifest(engine, state, i, &dir, &files, &[])?;
        lake::sweep(&dir, "", &files)
    }

    /// Republish model `i`'s manifest as the ledger now stands (after deferred intervals were
    /// marked done, or when the passport upstream moved).
    pub fn refresh_manifest(
        &self,
        engine: &mut dyn Engine,
        state: &mut dyn StateStore,
        i: usize,
    ) -> Result<(), Error> {
        let dir = self.dir(i)?;
        let files = FileSet::published(&dir)?;
        self.publish_manifest(engine, state, i, &dir, &files, &[])
    }

    /// Create a time-range version's physical view: over the files already published (a
    /// version resumed after a kill) or empty, shaped like its query.
    pub fn create_incremental(
        &self,
        engine: &mut dyn Engine,
        i: usize,
        shape_sql: &str,
    ) -> Result<(), Error> {
        let dir = self.dir(i)?;
        let files = FileSet::published(&dir)?;
        self.point_view(engine, i, &dir, &files, Some(shape_sql), &[])
    }

    /// Publish one audited batch, staged in `stage`, as one partition per interval.
    /// `shape_sql` (the batch's query) shapes the view while no file exists yet; `pending` are
    /// earlier batches of this apply that wait for whole-table audits before they are marked.
    #[allow(clippy::too_many_arguments)]
    pub fn publish_batch(
        &self,
        engine: &mut dyn Engine,
        state: &mut dyn StateStore,
        i: usize,
        batch: Range,
        unit: IntervalUnit,
        time: &TimeColumn,
        stage: &str,
        shape_sql: &str,
        pending: &[Range],
    ) -> Result<(), Error> {
        let m = &self.project.models[i];
        let dir = self.dir(i)?;
        let mut files = FileSet::published(&dir)?;
        let tc = engine.quote(&time.name);
        let mut partitions = vec![];
        let mut start = batch.start;
        while start < batch.end {
            let end = (start + unit.step()).min(batch.end);
            let r = Range::new(start, end);
            let filter = time
                .filter(engine.dialect(), &tc, r)
                .map_err(|e| Error::Render(format!("`{}`: {e}", m.name)))?;
            let part = VersionDir::partition(start);
            let rows = count(
                engine,
                &format!("SELECT count(*) FROM {stage} WHERE {filter}"),
            )?;
            let new = if rows == 0 {
                vec![]
            } else {
                let staged = Staged::write(
                    engine,
                    &dir,
                    &part,
                    &format!("SELECT * FROM {stage} WHERE {filter}"),
                    &format!("writing {} for {r}", m.name),
                )?;
                let (name, bytes) = staged.publish()?;
                vec![ManifestFile {
                    path: format!("{part}/{name}"),
                    bytes,
                    rows,
                    interval: Some(ManifestInterval::from(r)),
                }]
            };
            tracing::debug!(
                model = m.name.as_str(),
                partition = part.as_str(),
                "renamed into place"
            );
            files.replace(&part, new);
            partitions.push(part);
            start = end;
        }
        let drop_stage = engine.dialect().drop(RelationKind::Table, stage, true);
        self.point_view(engine, i, &dir, &files, Some(shape_sql), &[drop_stage])?;
        let mut pending = pending.to_vec();
        pending.push(batch);
        tracing::debug!(model = m.name.as_str(), "view repointed");
        self.publish_manifest(engine, state, i, &dir, &files, &pending)?;
        tracing::debug!(model = m.name.as_str(), "manifest written");
        for p in &partitions {
            lake::sweep(&dir, p, &files)?;
        }
        tracing::debug!(model = m.name.as_str(), "replaced files removed");
        Ok(())
    }
}

fn count(engine: &mut dyn Engine, sql: &str) -> Result<u64, Error> {
    Ok(engine.query("counting rows", sql, None)?.count())
}
