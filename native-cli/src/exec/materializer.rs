//! Where a model's physics is written: engine tables, or parquet files in the lake. The
//! executor asks the model's [`Materializer`] for every write, so the build and batch logic
//! is one path for both.

use crate::engine::Engine;
use crate::exec::audited::{write_audited, WriteError};
use crate::exec::audits::{self, AuditResult};
use crate::lake::publish::LakeContext;
use crate::state::StateStore;
use crate::Error;
use efmesh_core::audit::query::AuditQuery;
use efmesh_core::interval::Range;
use efmesh_core::materialize::time_column::TimeColumn;
use efmesh_core::materialize::{self, time_range::PARQUET_STAGING, Write};
use efmesh_core::model::{Kind, Target};
use efmesh_core::naming::{self, PHYSICAL_SCHEMA};
use efmesh_core::project::Project;

/// What a build asks of its materializer.
pub(crate) struct Build<'a> {
    /// The model.
    pub i: usize,
    /// Its physical relation, as the plan pins it.
    pub physical: &'a str,
    /// Its physical fingerprint.
    pub pfp: &'a str,
    /// The statement that creates the physics at a relation (`physical`, or a staging table).
    pub create: &'a dyn Fn(&str) -> Result<String, Error>,
    /// The model's query as a build renders it, to shape an empty relation.
    pub shape: &'a dyn Fn() -> Result<String, Error>,
    /// The model's pre-statements as the build runs them, in its transaction before the write.
    pub before: &'a [String],
    /// Its post-statements, after the write and before the audits.
    pub after: &'a [String],
    /// Audits to run inside the build's transaction.
    pub checks: &'a [AuditQuery<'a>],
    /// Where they run (its relation is replaced by what the build wrote).
    pub target: &'a audits::Target<'a>,
}

/// How one model's physics is written.
pub(crate) trait Materializer {
    /// Build the physics: a table built whole (audited in its transaction), or an interval
    /// model's empty physics that batches fill.
    fn build(
        &self,
        engine: &mut dyn Engine,
        state: &mut dyn StateStore,
        b: &Build,
    ) -> Result<Vec<AuditResult>, WriteError>;
    /// The write of one batch of model `i` (rendered as `sql`), or `None` for a kind without
    /// batches. `time` is a time-range model's time column.
    #[allow(clippy::too_many_arguments)]
    fn batch(
        &self,
        project: &Project,
        d: &dyn materialize::SqlDialect,
        i: usize,
        physical: &str,
        sql: &str,
        b: Range,
        time: Option<&TimeColumn>,
    ) -> Result<Option<Write>, Error>;
    /// After a batch committed (the lake publishes it). `pending`: earlier batches of this
    /// apply whose done marks wait for the whole-table audits.
    #[allow(clippy::too_many_arguments)]
    fn batch_committed(
        &self,
        engine: &mut dyn Engine,
        state: &mut dyn StateStore,
        i: usize,
        b: Range,
        sql: &str,
        time: Option<&TimeColumn>,
        pending: &[Range],
    ) -> Result<(), Error>;
    /// After a batch failed for good, so readers learn of it.
    fn batch_failed(&self, engine: &mut dyn Engine, state: &mut dyn StateStore, i: usize);
    /// After deferred done marks were recorded.
    fn marks_recorded(
        &self,
        engine: &mut dyn Engine,
        state: &mut dyn StateStore,
        i: usize,
    ) -> Result<(), Error>;
}

/// A time-range model's time column, which the batches resolved from the engine before the
/// first one.
fn resolved<'t>(
    project: &Project,
    i: usize,
    time: Option<&'t TimeColumn>,
) -> Result<&'t TimeColumn, Error> {
    time.ok_or_else(|| {
        Error::Render(format!(
            "`{}`: its time column was not resolved before its batches (a bug in efmesh)",
            project.models[i].name
        ))
    })
}

/// The materializer of model `i`.
pub(crate) fn of<'a>(
    project: &Project,
    i: usize,
    lake: &'a LakeContext<'a>,
) -> Box<dyn Materializer + 'a> {
    match project.models[i].target {
        Target::Parquet => Box::new(Lake(lake)),
        // `target ducklake` is refused at check
        Target::Table | Target::Ducklake => Box::new(Table),
    }
}

/// Physics as engine tables (and views).
pub(crate) struct Table;

impl Materializer for Table {
    fn build(
        &self,
        engine: &mut dyn Engine,
        _state: &mut dyn StateStore,
        b: &Build,
    ) -> Result<Vec<AuditResult>, WriteError> {
        let sql = (b.create)(b.physical).map_err(WriteError::Other)?;
        let statements: Vec<String> = b
            .before
            .iter()
            .cloned()
            .chain([sql])
            .chain(b.after.iter().cloned())
            .collect();
        write_audited(
            engine,
            &format!("building {}", b.target.model),
            &statements,
            &[],
            b.checks,
            b.target,
        )
    }

    fn batch(
        &self,
        project: &Project,
        d: &dyn materialize::SqlDialect,
        i: usize,
        physical: &str,
        sql: &str,
        b: Range,
        time: Option<&TimeColumn>,
    ) -> Result<Option<Write>, Error> {
        Ok(Some(match &project.models[i].kind {
            Kind::IncrementalByTimeRange { .. } => materialize::time_range::batch(
                d,
                physical,
                sql,
                resolved(project, i, time)?,
                b,
                project.columns[i].as_deref(),
            )
            .map_err(|e| Error::Render(format!("`{}`: {e}", project.models[i].name)))?,
            Kind::IncrementalByUniqueKey { unique_key, .. } => materialize::unique_key::batch(
                d,
                physical,
                sql,
                unique_key,
                project.columns[i].as_deref(),
            ),
            Kind::ScdType2 { .. } | Kind::ScdType2ByColumn { .. } => {
                materialize::scd2::batch(d, project, i, physical, sql, b.end)
                    .map_err(|e| Error::Render(e.to_string()))?
            }
            _ => return Ok(None),
        }))
    }

    fn batch_committed(
        &self,
        _: &mut dyn Engine,
        _: &mut dyn StateStore,
        _: usize,
        _: Range,
        _: &str,
        _: Option<&TimeColumn>,
        _: &[Range],
    ) -> Result<(), Error> {
        Ok(())
    }

    fn batch_failed(&self, _: &mut dyn Engine, _: &mut dyn StateStore, _: usize) {}

    fn marks_recorded(
        &self,
        _: &mut dyn Engine,
        _: &mut dyn StateStore,
        _: usize,
    ) -> Result<(), Error> {
        Ok(())
    }
}

/// Physics as parquet files in the lake, behind a view in the engine: rows are computed and
/// audited in a staging table, then published.
pub(crate) struct Lake<'a>(&'a LakeContext<'a>);

impl Materializer for Lake<'_> {
    fn build(
        &self,
        engine: &mut dyn Engine,
        state: &mut dyn StateStore,
        b: &Build,
    ) -> Result<Vec<AuditResult>, WriteError> {
        let lake = self.0;
        let m = &lake.project.models[b.i];
        if efmesh_core::plan::has_intervals(&m.kind) {
            let shape = (b.shape)().map_err(WriteError::Other)?;
            return lake
                .create_incremental(engine, b.i, &shape)
                .map(|_| vec![])
                .map_err(WriteError::Other);
        }
        lake.dir(b.i).map_err(WriteError::Other)?;
        let stage = efmesh_core::quote::relation(
            PHYSICAL_SCHEMA,
            &format!("efmesh_stage_{}", naming::fp8(b.pfp)),
        );
        let sql = (b.create)(&stage).map_err(WriteError::Other)?;
        let target = audits::Target {
            relation: &stage,
            ..*b.target
        };
        let results = write_audited(
            engine,
            &format!("building {}", b.target.model),
            &[sql],
            &[],
            b.checks,
            &target,
        )?;
        lake.publish_whole(engine, state, b.i, &stage)
            .map_err(WriteError::Other)?;
        Ok(results)
    }

    fn batch(
        &self,
        project: &Project,
        d: &dyn materialize::SqlDialect,
        i: usize,
        _physical: &str,
        sql: &str,
        b: Range,
        time: Option<&TimeColumn>,
    ) -> Result<Option<Write>, Error> {
        Ok(match &project.models[i].kind {
            Kind::IncrementalByTimeRange { .. } => Some(
                materialize::time_range::stage(d, sql, resolved(project, i, time)?, b)
                    .map_err(|e| Error::Render(format!("`{}`: {e}", project.models[i].name)))?,
            ),
            _ => None,
        })
    }

    fn batch_committed(
        &self,
        engine: &mut dyn Engine,
        state: &mut dyn StateStore,
        i: usize,
        b: Range,
        sql: &str,
        time: Option<&TimeColumn>,
        pending: &[Range],
    ) -> Result<(), Error> {
        let m = &self.0.project.models[i];
        let Kind::IncrementalByTimeRange { .. } = &m.kind else {
            return Ok(());
        };
        self.0.publish_batch(
            engine,
            state,
            i,
            b,
            m.interval_unit(),
            resolved(self.0.project, i, time)?,
            PARQUET_STAGING,
            sql,
            pending,
        )
    }

    fn batch_failed(&self, engine: &mut dyn Engine, state: &mut dyn StateStore, i: usize) {
        // a failure to say so must not hide the batch's own error
        let published = self
            .0
            .dir(i)
            .and_then(|d| d.manifest())
            .map(|m| m.is_some());
        if let Ok(true) = published {
            if let Err(e) = self.0.refresh_manifest(engine, state, i) {
                tracing::warn!(model = self.0.project.models[i].name.as_str(), error = %e, "could not republish the manifest after a failed batch");
            }
        }
    }

    fn marks_recorded(
        &self,
        engine: &mut dyn Engine,
        state: &mut dyn StateStore,
        i: usize,
    ) -> Result<(), Error> {
        self.0.refresh_manifest(engine, state, i)
    }
}
