//! Applying a plan: build the missing physics in DAG order, swap the environment's views in
//! one engine transaction, then record the new state in one state transaction.
//!
//! Consumers never see a half-applied plan: views change only after every build succeeded.
//! A build that fails or is killed leaves the physics already built (and recorded) in place,
//! and the next apply reuses it.

use crate::engine::{Engine, EngineError};
use crate::exec::audits::{self, AuditResult, AuditStatus};
use crate::lake::publish::{is_parquet, LakeContext};
use crate::state::{JournalEntry, StateStore};
use crate::Error;
use chrono::{DateTime, NaiveDateTime, Utc};
use efmesh_core::audit::query::AuditQuery;
use efmesh_core::interval::Range;
use efmesh_core::materialize;
use efmesh_core::model::{Kind, Model};
use efmesh_core::model_sql::{render_model, RelationTarget};
use efmesh_core::naming::{self, PHYSICAL_SCHEMA};
use efmesh_core::plan::{Category, Plan};
use efmesh_core::project::{seed_path, Project};
use efmesh_core::sql::render::Relation;
use serde::Serialize;
use std::collections::HashMap;
use std::time::Instant;

/// One interval batch an apply computed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchDone {
    /// The model.
    pub model: String,
    /// The batch's first instant.
    pub start: String,
    /// The first instant after it.
    pub end: String,
}

/// What every batch of one apply shares.
pub(crate) struct BatchContext<'a> {
    pub(crate) project: &'a Project,
    names: &'a HashMap<String, String>,
    retries: u32,
    lake: &'a LakeContext<'a>,
    env: &'a str,
    progress: Option<&'a ProgressHook>,
    fence: Option<&'a crate::ops::lock::Fence>,
}

impl BatchContext<'_> {
    /// Stop before a write when our environment lock is gone.
    fn fenced(&self) -> Result<(), Error> {
        self.fence.map_or(Ok(()), |f| f.check())
    }
}

/// A model's audits, split by where they run.
struct ModelAudits<'a> {
    /// Run over each batch written (`per_interval` and unscoped).
    per_batch: Vec<AuditQuery<'a>>,
    /// Run over the whole table before promotion (`whole` and unscoped).
    whole: Vec<AuditQuery<'a>>,
}

impl<'a> ModelAudits<'a> {
    fn of(project: &'a Project, m: &'a Model) -> ModelAudits<'a> {
        let all: Vec<AuditQuery<'a>> = m
            .audits
            .iter()
            .filter_map(|c| efmesh_core::audit::query::resolve(c, &|n| project.audits.get(n)))
            .collect();
        ModelAudits {
            per_batch: all
                .iter()
                .filter(|q| q.scope.per_batch())
                .cloned()
                .collect(),
            whole: all.into_iter().filter(|q| q.scope.whole()).collect(),
        }
    }

    /// Whether intervals must wait for the whole-table audits before they count as done.
    fn defers_marks(&self) -> bool {
        self.whole.iter().any(|q| q.blocking)
    }
}

/// How named audits see the rest of the project during an apply: other models by the physics
/// this plan pins, EXTERNAL sources directly.
fn physical_resolver<'a>(
    project: &'a Project,
    names: &'a HashMap<String, String>,
) -> impl Fn(&str) -> Option<Relation> + 'a {
    move |n: &str| match names.get(n) {
        Some(p) => Some(Relation::Name(p.clone())),
        None => match &project.model(n)?.kind {
            Kind::External { source } => Some(efmesh_core::model_sql::external_relation(source)),
            _ => None,
        },
    }
}

/// Why an audited write did not commit.
enum WriteError {
    /// The engine failed; the write may be retried.
    Engine(EngineError),
    /// Blocking audits found violations; retrying would find them again.
    Audit(Vec<AuditResult>),
    /// Anything else.
    Other(Error),
}

/// Run `statements` in one transaction, then `audits` over what they wrote, then `cleanup`;
/// commit unless a blocking audit failed, so failed data is never left behind.
fn write_audited(
    engine: &mut dyn Engine,
    context: &str,
    statements: &[String],
    cleanup: &[String],
    audits: &[AuditQuery],
    target: &audits::Target,
) -> Result<Vec<AuditResult>, WriteError> {
    if audits.is_empty() {
        let all: Vec<String> = statements.iter().chain(cleanup).cloned().collect();
        engine
            .transaction(context, &all)
            .map_err(WriteError::Engine)?;
        return Ok(vec![]);
    }
    engine.begin(context).map_err(WriteError::Engine)?;
    let mut run = || -> Result<Vec<AuditResult>, WriteError> {
        for sql in statements {
            engine.execute(context, sql).map_err(WriteError::Engine)?;
        }
        let mut results = vec![];
        for q in audits {
            results.push(audits::run(engine, q, target).map_err(WriteError::Other)?);
        }
        for sql in cleanup {
            engine.execute(context, sql).map_err(WriteError::Engine)?;
        }
        if results.iter().any(|r| r.status == AuditStatus::Failed) {
            return Err(WriteError::Audit(
                results
                    .into_iter()
                    .filter(|r| r.status == AuditStatus::Failed)
                    .collect(),
            ));
        }
        Ok(results)
    };
    match run() {
        Ok(results) => {
            engine.commit(context).map_err(WriteError::Engine)?;
            Ok(results)
        }
        Err(e) => {
            let _ = engine.rollback(context);
            Err(e)
        }
    }
}

/// Log non-blocking violations and keep them for the outcome.
fn keep_warnings(results: Vec<AuditResult>, warnings: &mut Vec<AuditResult>) -> u64 {
    log_warned(&results);
    collect_warned(results, warnings)
}

/// Log the non-blocking violations among `results` as they are found.
fn log_warned(results: &[AuditResult]) {
    for r in results.iter().filter(|r| r.status == AuditStatus::Warned) {
        tracing::warn!(
            model = r.model.as_str(),
            audit = r.audit.as_str(),
            violations = r.violations,
            over = r.over.as_str(),
            interval = r.over.strip_prefix("batch ").unwrap_or("whole"),
            "audit found violations (non-blocking)"
        );
    }
}

/// Keep the non-blocking violations (already logged) for the outcome; how many audits ran.
fn collect_warned(results: Vec<AuditResult>, warnings: &mut Vec<AuditResult>) -> u64 {
    let n = results.len() as u64;
    warnings.extend(
        results
            .into_iter()
            .filter(|r| r.status == AuditStatus::Warned),
    );
    n
}

/// Run whole-table audits (read-only); blocking violations stop the apply before promotion.
fn run_whole(
    engine: &mut dyn Engine,
    queries: &[AuditQuery],
    target: &audits::Target,
    env: &str,
    warnings: &mut Vec<AuditResult>,
) -> Result<u64, Error> {
    let mut results = vec![];
    for q in queries {
        results.push(audits::run(engine, q, target)?);
    }
    let failures: Vec<AuditResult> = results
        .iter()
        .filter(|r| r.status == AuditStatus::Failed)
        .cloned()
        .collect();
    if !failures.is_empty() {
        return Err(Error::AuditFailed {
            env: env.into(),
            failures,
        });
    }
    Ok(keep_warnings(results, warnings))
}

/// What a model's batches left to do once they all committed.
struct BatchesRun {
    done: Vec<BatchDone>,
    /// Intervals written but not yet marked done: they wait for the whole-table audits.
    deferred: Vec<Range>,
    audits_run: u64,
}

/// Compute a model's planned batches: each is one engine transaction (for a time range, a
/// DELETE of the range and an INSERT of the query rendered for it, filtered to it), audited
/// before it commits, and recorded done only after it committed. Recomputing an interval
/// therefore never duplicates rows, and a batch that is interrupted is simply computed again.
///
/// With `batch_concurrency N` (time-range models on engine tables, whose batches touch
/// disjoint rows) up to N batches run at once, each on its own engine and state connection;
/// otherwise they run in order, and the first failure stops the rest.
#[allow(clippy::too_many_arguments)]
fn run_batches(
    cx: &BatchContext,
    i: usize,
    a: &efmesh_core::plan::Action,
    physical: &str,
    model_audits: &ModelAudits,
    warnings: &mut Vec<AuditResult>,
    state: &mut dyn StateStore,
    engine: &mut dyn Engine,
) -> Result<BatchesRun, Error> {
    let m = &cx.project.models[i];
    let mut out = BatchesRun {
        done: vec![],
        deferred: vec![],
        audits_run: 0,
    };
    let concurrency = m.batching.concurrency.unwrap_or(1) as usize;
    let independent =
        matches!(m.kind, Kind::IncrementalByTimeRange { .. }) && !is_parquet(cx.project, i);
    let outcomes = if concurrency > 1 && independent && a.batches.len() > 1 {
        run_batches_concurrently(cx, i, a, physical, model_audits, concurrency, state, engine)?
    } else {
        let mut outcomes = vec![];
        for (k, b) in a.batches.iter().enumerate() {
            cx.report(&a.model, k, a.batches.len());
            let Some(o) = run_batch(
                cx,
                i,
                a,
                k,
                *b,
                physical,
                model_audits,
                &out.deferred,
                state,
                engine,
            )?
            else {
                return Ok(out);
            };
            out.deferred.extend(o.deferred);
            outcomes.push(o);
        }
        out.deferred.clear();
        outcomes
    };
    for o in outcomes {
        out.audits_run += collect_warned(o.audit_results, warnings);
        out.deferred.extend(o.deferred);
        out.done.push(o.done);
    }
    cx.report(&a.model, a.batches.len(), a.batches.len());
    Ok(out)
}

/// Up to `concurrency` of a model's batches at once: the calling thread is one worker, the
/// others get connections of their own. A failure stops handing out batches; those already
/// running finish (and are recorded), and the earliest failure is returned.
#[allow(clippy::too_many_arguments)]
fn run_batches_concurrently(
    cx: &BatchContext,
    i: usize,
    a: &efmesh_core::plan::Action,
    physical: &str,
    model_audits: &ModelAudits,
    concurrency: usize,
    state: &mut dyn StateStore,
    engine: &mut dyn Engine,
) -> Result<Vec<BatchOutcome>, Error> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Mutex;
    let n = a.batches.len();
    let workers = concurrency.min(n);
    let mut engines: Vec<Box<dyn Engine + Send>> = vec![];
    let mut states: Vec<Box<dyn StateStore + Send>> = vec![];
    for _ in 1..workers {
        engines.push(engine.another_connection()?);
        states.push(state.reopen()?);
    }
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let results: Mutex<Vec<Option<BatchOutcome>>> = Mutex::new((0..n).map(|_| None).collect());
    let errors: Mutex<Vec<(usize, Error)>> = Mutex::new(vec![]);
    tracing::info!(
        model = a.model.as_str(),
        env = cx.env,
        batches = n,
        workers,
        "backfilling batches concurrently"
    );
    let worker = |engine: &mut dyn Engine, state: &mut dyn StateStore| loop {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let k = next.fetch_add(1, Ordering::SeqCst);
        if k >= n {
            return;
        }
        cx.report(&a.model, finished.load(Ordering::SeqCst), n);
        match run_batch(
            cx,
            i,
            a,
            k,
            a.batches[k],
            physical,
            model_audits,
            &[],
            state,
            engine,
        ) {
            Ok(o) => {
                finished.fetch_add(1, Ordering::SeqCst);
                results.lock().unwrap_or_else(|p| p.into_inner())[k] = o;
            }
            Err(e) => {
                stop.store(true, Ordering::SeqCst);
                errors
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((k, e));
            }
        }
    };
    std::thread::scope(|scope| {
        for (mut e, mut s) in engines.into_iter().zip(states) {
            let worker = &worker;
            scope.spawn(move || worker(e.as_mut(), s.as_mut()));
        }
        worker(engine, state);
    });
    let mut errors = errors.into_inner().unwrap_or_else(|p| p.into_inner());
    if !errors.is_empty() {
        errors.sort_by_key(|(k, _)| *k);
        return Err(errors.remove(0).1);
    }
    Ok(results
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .flatten()
        .collect())
}

/// What one committed batch left to record.
struct BatchOutcome {
    /// Its audits' results (failures already stopped it).
    audit_results: Vec<AuditResult>,
    /// Its range, when its done mark waits for the whole-table audits.
    deferred: Option<Range>,
    /// The batch, for the report.
    done: BatchDone,
}

/// Compute batch `k` (`b`) of model `i`: write it and its audits in one transaction with
/// retries, publish it (parquet), mark it done (or leave that to the whole-table audits).
/// `pending` are earlier batches of this apply whose done marks are deferred. `None` for a kind
/// without batches.
#[allow(clippy::too_many_arguments)]
fn run_batch(
    cx: &BatchContext,
    i: usize,
    a: &efmesh_core::plan::Action,
    k: usize,
    b: Range,
    physical: &str,
    model_audits: &ModelAudits,
    pending: &[Range],
    state: &mut dyn StateStore,
    engine: &mut dyn Engine,
) -> Result<Option<BatchOutcome>, Error> {
    let (project, names, retries) = (cx.project, cx.names, cx.retries);
    let m = &project.models[i];
    let pfp = a.physical_fingerprint.as_deref().unwrap_or_default();
    let defer = model_audits.defers_marks();
    let resolve = physical_resolver(project, names);
    let sql = render_model(
        project,
        i,
        &RelationTarget::Physical(names.clone()),
        b.start,
        b.end,
        false,
    )
    .map_err(|e| Error::Render(e.to_string()))?;
    let parquet = is_parquet(project, i);
    let d = engine.dialect();
    let write = match &m.kind {
        Kind::IncrementalByTimeRange { time_column, .. } if parquet => {
            materialize::time_range::stage(d, &sql, time_column, b)
        }
        Kind::IncrementalByTimeRange { time_column, .. } => {
            materialize::time_range::batch(d, physical, &sql, time_column, b)
        }
        Kind::IncrementalByUniqueKey { unique_key, .. } => {
            materialize::unique_key::batch(d, physical, &sql, unique_key)
        }
        Kind::ScdType2 { .. } | Kind::ScdType2ByColumn { .. } => {
            materialize::scd2::batch(d, project, i, physical, &sql, b.end)
                .map_err(|e| Error::Render(e.to_string()))?
        }
        _ => return Ok(None),
    };
    let materialize::Write {
        statements,
        audited,
        cleanup,
    } = write;
    let over = format!("batch {b}");
    let target = audits::Target {
        env: cx.env,
        model: &a.model,
        relation: &audited,
        over: &over,
        dialect: project.config.dialect(),
        resolve: &resolve,
        interval: b,
    };
    let batch = format!("{}/{}", k + 1, a.batches.len());
    tracing::info!(model = a.model.as_str(), env = cx.env, batch = batch.as_str(), interval = %b, "backfilling");
    let started = Instant::now();
    let mut attempt = 0;
    let context = format!("computing {} for {b}", a.model);
    cx.fenced()?;
    let unit = m.interval_unit();
    loop {
        match write_audited(
            engine,
            &context,
            &statements,
            &cleanup,
            &model_audits.per_batch,
            &target,
        ) {
            Ok(results) => {
                log_warned(&results);
                if let (true, Kind::IncrementalByTimeRange { time_column, .. }) = (parquet, &m.kind)
                {
                    cx.lake.publish_batch(
                        engine,
                        state,
                        i,
                        b,
                        unit,
                        time_column,
                        PARQUET_STAGING,
                        &sql,
                        pending,
                    )?;
                }
                if !defer {
                    state.mark_done(pfp, b)?;
                    crate::exec::metrics::global()
                        .intervals_done
                        .with_label_values(&[a.model.as_str(), cx.env])
                        .inc_by(b.intervals(unit).max(0) as u64);
                }
                tracing::info!(model = a.model.as_str(), env = cx.env, batch = batch.as_str(), interval = %b, duration_ms = started.elapsed().as_millis() as u64, "backfilled");
                let iso = |t: NaiveDateTime| t.format("%Y-%m-%dT%H:%M:%SZ").to_string();
                return Ok(Some(BatchOutcome {
                    audit_results: results,
                    deferred: defer.then_some(b),
                    done: BatchDone {
                        model: a.model.clone(),
                        start: iso(b.start),
                        end: iso(b.end),
                    },
                }));
            }
            Err(WriteError::Audit(failures)) => {
                return Err(Error::AuditFailed {
                    env: String::new(),
                    failures,
                })
            }
            Err(WriteError::Other(e)) => return Err(e),
            Err(WriteError::Engine(err)) if attempt < retries => {
                let wait = retry_base() * 2u32.pow(attempt.min(16));
                attempt += 1;
                tracing::warn!(model = a.model.as_str(), interval = %b, attempt, retries, wait_ms = wait.as_millis() as u64, error = %err, "batch failed; retrying");
                std::thread::sleep(wait);
            }
            Err(WriteError::Engine(err)) => {
                state.mark_failed(pfp, b)?;
                crate::exec::metrics::global()
                    .intervals_failed
                    .with_label_values(&[a.model.as_str(), cx.env])
                    .inc_by(b.intervals(unit).max(0) as u64);
                // readers of the lake learn of the failure too; a failure to say so must
                // not hide the batch's own error
                if parquet && cx.lake.dir(i)?.manifest()?.is_some() {
                    if let Err(e) = cx.lake.refresh_manifest(engine, state, i) {
                        tracing::warn!(model = a.model.as_str(), error = %e, "could not republish the manifest after a failed batch");
                    }
                }
                let message = match err {
                    EngineError::Statement { message, .. } => message,
                    other => other.to_string(),
                };
                let message = if attempt > 0 {
                    format!("{message} (after {} attempts)", attempt + 1)
                } else {
                    message
                };
                return Err(Error::Batch {
                    model: a.model.clone(),
                    interval: b.to_string(),
                    message,
                });
            }
        }
    }
}

impl BatchContext<'_> {
    /// Tell the progress hook, if any, how far a model's backfill is.
    fn report(&self, model: &str, done: usize, total: usize) {
        if let Some(hook) = self.progress {
            (hook.0)(BatchProgress { model, done, total });
        }
    }
}

/// Where a parquet model's batch waits, audited, before it is written out as files.
const PARQUET_STAGING: &str = materialize::time_range::PARQUET_STAGING;

/// Bring kept physics in line with a forward-only version: add its new columns, refuse to
/// drop any (that would rewrite the history forward-only promises to keep).
fn evolve_schema(
    project: &Project,
    i: usize,
    physical: &str,
    names: &HashMap<String, String>,
    engine: &mut dyn Engine,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let m = &project.models[i];
    let edge = complete_until(m, now);
    let sql = render_model(
        project,
        i,
        &RelationTarget::Physical(names.clone()),
        edge,
        edge,
        false,
    )
    .map_err(|e| Error::Render(e.to_string()))?;
    let mut wanted = engine.describe(&sql)?;
    if let Kind::ScdType2 {
        valid_from_name,
        valid_to_name,
        ..
    }
    | Kind::ScdType2ByColumn {
        valid_from_name,
        valid_to_name,
        ..
    } = &m.kind
    {
        wanted.push((valid_from_name.clone(), "TIMESTAMP".into()));
        wanted.push((valid_to_name.clone(), "TIMESTAMP".into()));
    }
    let existing = engine.table_columns(physical)?;
    let added = materialize::evolve::add_columns(engine.dialect(), physical, &wanted, &existing)
        .map_err(|dropped| {
            Error::Plan(efmesh_core::plan::PlanError::ForwardOnly {
                model: m.name.clone(),
                reason: format!(
                    "the new version drops column(s) {}; forward-only keeps the existing rows, so it can only add columns. Apply it without --forward-only (a breaking change rebuilds the history)",
                    dropped.join(", ")
                ),
            })
        })?;
    if !added.is_empty() {
        tracing::info!(
            model = m.name.as_str(),
            columns = added.len(),
            "adding columns (forward-only)"
        );
        engine.transaction(&format!("evolving {}", m.name), &added)?;
    }
    Ok(())
}

/// What building one model left behind, for the apply's report.
#[derive(Default)]
pub(crate) struct ModelDone {
    /// Its physics was built (not only new intervals).
    pub built: bool,
    /// The batches computed.
    pub batches: Vec<BatchDone>,
    /// Non-blocking audit violations.
    pub audit_warnings: Vec<AuditResult>,
    /// Audits run.
    pub audits_run: u64,
}

/// Build one model of the plan: its physics when new, then its batches, its whole-table
/// audits, and its deferred done marks. One engine connection and one state connection; the
/// DAG scheduler (`apply_dag`) calls it from several threads, each with its own.
pub(crate) fn build_model(
    cx: &BatchContext,
    plan: &Plan,
    a: &efmesh_core::plan::Action,
    now: DateTime<Utc>,
    engine: &mut dyn Engine,
    state: &mut dyn StateStore,
) -> Result<ModelDone, Error> {
    let (project, names) = (cx.project, cx.names);
    let mut out = ModelDone::default();
    let i = project.index_of(&a.model).ok_or_else(|| {
        Error::Render(format!("plan names `{}`, which the project lacks", a.model))
    })?;
    // debug lines (the SQL each statement runs) carry the model they are for
    let _model = tracing::debug_span!("model", model = a.model.as_str()).entered();
    let model_clock = Instant::now();
    let labels = [a.model.as_str(), plan.env.as_str()];
    let metrics = crate::exec::metrics::global();
    let pfp = a.physical_fingerprint.as_deref().unwrap_or_default();
    let physical = &names[&a.model];
    let m = &project.models[i];
    let model_audits = ModelAudits::of(project, m);
    let with_intervals = efmesh_core::plan::has_intervals(&m.kind);
    if a.build || (with_intervals && !a.batches.is_empty()) {
        cx.fenced()?;
        check_contract(project, i, names, engine, now)?;
    }
    let resolve = physical_resolver(project, names);
    let whole_start = project.history_start(i).unwrap_or_default();
    let whole_end = complete_until(m, now);
    let whole_target = audits::Target {
        env: &plan.env,
        model: &a.model,
        relation: physical,
        over: "whole",
        dialect: project.config.dialect(),
        resolve: &resolve,
        interval: Range::new(whole_start, whole_end),
    };
    let fail = |failures| Error::AuditFailed {
        env: plan.env.clone(),
        failures,
    };
    if a.build {
        crate::exec::seeds::check_values(project, i, engine)?;
        let sql = build_statement(project, i, physical, names, now, engine.dialect())?;
        let started = Instant::now();
        tracing::info!(
            model = a.model.as_str(),
            env = plan.env.as_str(),
            table = physical.as_str(),
            "building"
        );
        // a table built whole is audited whole, inside the transaction that builds it
        let checks: Vec<AuditQuery> = if with_intervals {
            vec![]
        } else {
            let mut all = model_audits.per_batch.clone();
            all.extend(
                model_audits
                    .whole
                    .iter()
                    .filter(|q| !q.scope.per_batch())
                    .cloned(),
            );
            all
        };
        // a parquet version is built in a staging table, audited there, then written out
        let parquet = is_parquet(project, i);
        let stage = format!("{PHYSICAL_SCHEMA}.efmesh_stage_{}", naming::fp8(pfp));
        let (sql, audited) = if parquet && !with_intervals {
            cx.lake.dir(i)?;
            (
                build_statement(project, i, &stage, names, now, engine.dialect())?,
                stage.clone(),
            )
        } else {
            (sql, physical.clone())
        };
        let build_target = audits::Target {
            relation: &audited,
            ..whole_target
        };
        let written = if parquet && with_intervals {
            cx.lake
                .create_incremental(engine, i, &shape_sql(project, i, names, now)?)
                .map(|_| vec![])
                .map_err(WriteError::Other)
        } else {
            write_audited(
                engine,
                &format!("building {}", a.model),
                &[sql],
                &[],
                &checks,
                &build_target,
            )
        };
        let written = match written {
            Ok(r) if parquet && !with_intervals => cx
                .lake
                .publish_whole(engine, state, i, &stage)
                .map(|_| r)
                .map_err(WriteError::Other),
            other => other,
        };
        match written {
            Ok(results) => out.audits_run += keep_warnings(results, &mut out.audit_warnings),
            Err(WriteError::Audit(failures)) => return Err(fail(failures)),
            Err(WriteError::Other(e)) => return Err(e),
            Err(WriteError::Engine(EngineError::Statement { message, sql, .. })) => {
                return Err(Error::Build {
                    model: a.model.clone(),
                    message,
                    sql,
                })
            }
            Err(WriteError::Engine(other)) => return Err(Error::Engine(other)),
        }
        // the apply's clock, which a FULL model's cron is measured from
        state.mark_built(pfp, &a.model, &a.kind, now)?;
        metrics.snapshots_built.with_label_values(&labels).inc();
        tracing::info!(
            model = a.model.as_str(),
            env = plan.env.as_str(),
            duration_ms = started.elapsed().as_millis() as u64,
            "built"
        );
        out.built = true;
    }
    let run = run_batches(
        cx,
        i,
        a,
        physical,
        &model_audits,
        &mut out.audit_warnings,
        state,
        engine,
    )
    .map_err(|e| match e {
        Error::AuditFailed { failures, .. } => fail(failures),
        other => other,
    })?;
    out.audits_run += run.audits_run;
    // history as a whole, before anything is promoted or (for deferred intervals) done
    if with_intervals && !a.batches.is_empty() && !model_audits.whole.is_empty() {
        out.audits_run += run_whole(
            engine,
            &model_audits.whole,
            &whole_target,
            &plan.env,
            &mut out.audit_warnings,
        )?;
    }
    for r in &run.deferred {
        state.mark_done(pfp, *r)?;
        metrics
            .intervals_done
            .with_label_values(&labels)
            .inc_by(r.intervals(m.interval_unit()).max(0) as u64);
    }
    if !run.deferred.is_empty() && is_parquet(project, i) {
        cx.lake.refresh_manifest(engine, state, i)?;
    }
    out.batches = run.done;
    metrics
        .model_build_duration
        .with_label_values(&labels)
        .set(model_clock.elapsed().as_secs_f64());
    Ok(out)
}

/// Options for applying a plan.
#[derive(Debug, Clone, Default)]
pub struct ApplyOptions {
    /// Recorded in the plans journal; defaults to the OS user.
    pub applied_by: Option<String>,
    /// "Now", for the end of time-range builds (defaults to the clock).
    pub now: Option<DateTime<Utc>>,
    /// How often a failed batch write is retried (exponential backoff) before it is marked
    /// failed.
    pub retries: u32,
    /// The environment lock this apply runs under; checked before every write. `Efmesh::apply`
    /// takes the lock itself when this is `None`.
    pub fence: Option<crate::ops::lock::Fence>,
    /// How many models may build at once (`--jobs`); 0 and 1 build one at a time. A model
    /// starts when its ancestors in the plan are done, on its own engine connection.
    pub jobs: usize,
    /// Told how far each model's backfill is, so a front end (the CLI's progress bar) can show
    /// it without parsing logs.
    pub progress: Option<ProgressHook>,
}

/// How far one model's backfill is: `done` of `total` batches have committed. Reported before
/// each batch starts and once after the last, so `done == total` means the model is finished.
#[derive(Debug, Clone, Copy)]
pub struct BatchProgress<'a> {
    /// The model being backfilled.
    pub model: &'a str,
    /// Batches committed so far.
    pub done: usize,
    /// Batches this apply computes for the model.
    pub total: usize,
}

/// A callback for [`BatchProgress`]: a newtype so [`ApplyOptions`] stays `Debug` and `Clone`.
#[derive(Clone)]
pub struct ProgressHook(pub std::sync::Arc<dyn Fn(BatchProgress<'_>) + Send + Sync>);

impl std::fmt::Debug for ProgressHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressHook")
    }
}

/// The first retry waits this long, the next twice as long, and so on. `EFMESH_RETRY_BASE_MS`
/// shortens it for tests.
fn retry_base() -> std::time::Duration {
    let ms = std::env::var("EFMESH_RETRY_BASE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    std::time::Duration::from_millis(ms)
}

/// What an apply did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApplyOutcome {
    /// Models whose physics this apply built, in build order.
    pub built: Vec<String>,
    /// Interval batches computed, in order.
    pub batches: Vec<BatchDone>,
    /// How many audit runs this apply made (each audit over each batch or table).
    pub audits_run: u64,
    /// Non-blocking audits that found violations: logged, counted, and not in the way.
    pub audit_warnings: Vec<AuditResult>,
    /// Whether the environment's views and pointers were swapped.
    pub promoted: bool,
    /// Engine statements issued (schema setup, builds, view swaps).
    pub statements: u64,
}

/// The OS user, for the journal.
pub fn os_user() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .or_else(|_| std::env::var("USERNAME"))
        .unwrap_or_else(|_| "unknown".into())
}

fn qualified((schema, table): (String, String)) -> String {
    format!("{schema}.{table}")
}

/// The last complete interval edge before `now`, or the end of a closed history (`end`) when
/// that comes first: what a build renders up to, and what whole-table audits cover.
fn complete_until(m: &Model, now: DateTime<Utc>) -> NaiveDateTime {
    efmesh_core::interval::complete_until(m.history_end(), now.naive_utc(), m.interval_unit())
}

fn model_start(project: &Project, i: usize, end: NaiveDateTime) -> NaiveDateTime {
    project
        .history_start(i)
        .unwrap_or(end - chrono::Duration::days(1))
        .min(end)
}

/// The query of model `i` as its build renders it, to shape an empty relation.
fn shape_sql(
    project: &Project,
    i: usize,
    names: &HashMap<String, String>,
    now: DateTime<Utc>,
) -> Result<String, Error> {
    let m = &project.models[i];
    let end = complete_until(m, now);
    let start = model_start(project, i, end);
    render_model(
        project,
        i,
        &RelationTarget::Physical(names.clone()),
        start,
        end.max(start),
        false,
    )
    .map_err(|e| Error::Render(e.to_string()))
}

/// Enforce the schema contract before anything is written: ask the engine for the columns the
/// query returns (without running it) and compare them with the declared `columns`.
fn check_contract(
    project: &Project,
    i: usize,
    names: &HashMap<String, String>,
    engine: &mut dyn Engine,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let m = &project.models[i];
    let Some(declared) = &m.columns else {
        return Ok(());
    };
    if m.query.is_none() {
        return Ok(());
    }
    let edge = complete_until(m, now);
    let start = model_start(project, i, edge);
    let sql = render_model(
        project,
        i,
        &RelationTarget::Physical(names.clone()),
        start,
        edge.max(start),
        false,
    )
    .map_err(|e| Error::Render(e.to_string()))?;
    let returned = engine.describe(&sql).map_err(|e| match e {
        EngineError::Statement { message, sql, .. } => Error::Build {
            model: m.name.clone(),
            message,
            sql,
        },
        other => Error::Engine(other),
    })?;
    let managed: Vec<&str> = match &m.kind {
        Kind::ScdType2 {
            valid_from_name,
            valid_to_name,
            ..
        }
        | Kind::ScdType2ByColumn {
            valid_from_name,
            valid_to_name,
            ..
        } => vec![valid_from_name, valid_to_name],
        _ => vec![],
    };
    let declared: Vec<(String, String)> = declared
        .iter()
        .map(|c| (c.name.clone(), c.sql_type.clone()))
        .collect();
    let differences = efmesh_core::contract::compare(&declared, &returned, &managed);
    if differences.is_empty() {
        Ok(())
    } else {
        Err(Error::SchemaMismatch {
            model: m.name.clone(),
            file: m.file.clone(),
            differences,
        })
    }
}

/// The DDL that builds model `i`'s physics at `physical`.
fn build_statement(
    project: &Project,
    i: usize,
    physical: &str,
    names: &HashMap<String, String>,
    now: DateTime<Utc>,
    d: &dyn efmesh_core::sql::dialect::SqlDialect,
) -> Result<String, Error> {
    let m = &project.models[i];
    let select = match &m.kind {
        Kind::Seed { path } => {
            // CSV or JSON, every value read as text and cast to the declared columns
            let files = d.files().ok_or_else(|| {
                Error::Unsupported(format!(
                    "`{}` is a SEED model, and {} cannot read files",
                    m.name,
                    d.name()
                ))
            })?;
            materialize::seed::select(d, files, project, i, &seed_path(&m.file, path))
        }
        _ => {
            let end = complete_until(m, now);
            let start = model_start(project, i, end);
            render_model(
                project,
                i,
                &RelationTarget::Physical(names.clone()),
                start,
                end.max(start),
                false,
            )
            .map_err(|e| Error::Render(e.to_string()))?
        }
    };
    Ok(materialize::create(d, &m.kind, physical, &select))
}

/// Refuse, before anything runs, a plan that needs capabilities the engine lacks.
fn check_capabilities(project: &Project, plan: &Plan, engine: &dyn Engine) -> Result<(), Error> {
    use crate::engine::EngineFeature;
    use efmesh_core::model::ExternalSource;
    for a in &plan.actions {
        let Some(i) = project.index_of(&a.model) else {
            continue;
        };
        let m = &project.models[i];
        let needs = match &m.kind {
            Kind::Seed { .. } => Some(EngineFeature::FileSources),
            Kind::External {
                source: ExternalSource::Files { .. } | ExternalSource::Url { .. },
            } => Some(EngineFeature::FileSources),
            _ if m.target == efmesh_core::model::Target::Parquet => {
                Some(EngineFeature::ParquetTarget)
            }
            _ if m.target == efmesh_core::model::Target::Ducklake => Some(EngineFeature::DuckLake),
            _ => None,
        };
        if let Some(feature) = needs {
            if !engine.supports(feature) {
                return Err(EngineError::Feature {
                    engine: engine.name(),
                    feature,
                    detail: format!("model `{}` ({}) needs it", m.name, m.file),
                }
                .into());
            }
        }
    }
    Ok(())
}

/// Build what `plan` needs and promote it into its environment.
/// `lake` is where `target parquet` versions are published (`[lake] path`).
pub fn apply_plan(
    project: &Project,
    plan: &Plan,
    state: &mut dyn StateStore,
    engine: &mut dyn Engine,
    lake: Option<std::sync::Arc<dyn crate::lake::store::LakeStore>>,
    opts: &ApplyOptions,
) -> Result<ApplyOutcome, Error> {
    let now = opts.now.unwrap_or_else(crate::util::clock::now);
    check_capabilities(project, plan, engine)?;
    let start_statements = engine.statements_issued();
    state.record_snapshots(&plan.new_snapshots)?;

    // every model's physical relation, as this plan pins it
    let mut names: HashMap<String, String> = HashMap::new();
    let mut pfps: HashMap<String, String> = HashMap::new();
    for a in &plan.actions {
        if let Some(pfp) = &a.physical_fingerprint {
            names.insert(
                a.model.clone(),
                qualified(naming::physical_name(&a.model, pfp)),
            );
            pfps.insert(a.model.clone(), pfp.clone());
        }
    }
    let lake = LakeContext {
        project,
        names: &names,
        pfps: &pfps,
        lake,
        now,
        redacted: project
            .config
            .environments
            .get(&plan.env)
            .is_some_and(|e| e.redacted),
    };
    // keep the janitor away from the physics this plan reuses
    let reused: Vec<(String, String)> = plan
        .actions
        .iter()
        .filter(|a| !a.build)
        .filter_map(|a| a.physical_fingerprint.clone().map(|p| (p, a.model.clone())))
        .collect();
    state.pin_physics(&reused)?;

    // forward-only: the kept physics grows the new version's added columns (NULL for past rows)
    for a in plan.actions.iter().filter(|a| a.forward_only) {
        let i = project.index_of(&a.model).ok_or_else(|| {
            Error::Render(format!("plan names `{}`, which the project lacks", a.model))
        })?;
        evolve_schema(project, i, &names[&a.model], &names, engine, now)?;
    }
    let cx = BatchContext {
        project,
        names: &names,
        retries: opts.retries,
        lake: &lake,
        fence: opts.fence.as_ref(),
        env: &plan.env,
        progress: opts.progress.as_ref(),
    };
    let mut built = vec![];
    let mut batches = vec![];
    let mut audit_warnings: Vec<AuditResult> = vec![];
    let mut audits_run = 0u64;
    if plan
        .actions
        .iter()
        .any(|a| a.build || !a.batches.is_empty())
    {
        let create = engine.dialect().create_schema(PHYSICAL_SCHEMA);
        engine.execute("creating the physical schema", &create)?;
    }
    let work: Vec<&efmesh_core::plan::Action> = plan
        .actions
        .iter()
        .filter(|a| a.build || !a.batches.is_empty())
        .collect();
    let results = if opts.jobs > 1 && work.len() > 1 {
        crate::exec::dag::run_parallel(&cx, plan, &work, now, opts.jobs, engine, state)?
    } else {
        let mut results = vec![];
        for a in &work {
            results.push(build_model(&cx, plan, a, now, engine, state)?);
        }
        results
    };
    for (a, done) in work.iter().zip(results) {
        if done.built {
            built.push(a.model.clone());
        }
        batches.extend(done.batches);
        audit_warnings.extend(done.audit_warnings);
        audits_run += done.audits_run;
    }

    // reused physics that this promotion changes (a metadata change, a dev version going to
    // prod) meets the whole-table audits the new version declares before it is served
    for a in plan.actions.iter().filter(|a| {
        !a.build
            && a.batches.is_empty()
            && !matches!(a.category, Category::Unchanged | Category::Removed)
    }) {
        let (Some(i), Some(physical)) = (project.index_of(&a.model), names.get(&a.model)) else {
            continue;
        };
        let m = &project.models[i];
        let whole = ModelAudits::of(project, m).whole;
        if whole.is_empty() {
            continue;
        }
        let resolve = physical_resolver(project, &names);
        let (start, end) = (
            project.history_start(i).unwrap_or_default(),
            complete_until(m, now),
        );
        let target = audits::Target {
            env: &plan.env,
            model: &a.model,
            relation: physical,
            over: "whole",
            dialect: project.config.dialect(),
            resolve: &resolve,
            interval: Range::new(start, end),
        };
        audits_run += run_whole(engine, &whole, &target, &plan.env, &mut audit_warnings)?;
    }

    // a published version that did not change still carries an effective passport, which
    // moves when its ancestors do: republish those manifests
    if !built.is_empty() || !batches.is_empty() {
        for a in plan
            .actions
            .iter()
            .filter(|a| !a.build && a.batches.is_empty() && a.category != Category::Removed)
        {
            let Some(i) = project.index_of(&a.model) else {
                continue;
            };
            if is_parquet(project, i) && lake.dir(i)?.manifest()?.is_some() {
                lake.refresh_manifest(engine, state, i)?;
            }
        }
    }

    // swap the environment's views in one transaction
    let statements = materialize::promotion::swap(engine.dialect(), plan, &names);
    if !statements.is_empty() {
        engine.transaction(&format!("promoting to {}", plan.env), &statements)?;
    }
    let summary = serde_json::json!({
        "counts": plan.counts().into_iter().map(|(c, n)| (c.label().to_string(), n)).collect::<std::collections::BTreeMap<_, _>>(),
        "built": built,
        "auditsRun": audits_run,
        "auditWarnings": audit_warnings.len(),
        "forwardOnly": plan.actions.iter().filter(|a| a.forward_only).map(|a| a.model.clone()).collect::<Vec<_>>(),
        "reclassified": plan.actions.iter().filter(|a| a.explain.iter().any(|e| e.starts_with("reclassified as"))).map(|a| serde_json::json!({"model": a.model, "category": a.category.label()})).collect::<Vec<_>>(),
        "changed": plan.actions.iter().filter(|a| a.category != Category::Unchanged).map(|a| serde_json::json!({"model": a.model, "category": a.category.label(), "fingerprint": a.fingerprint})).collect::<Vec<_>>(),
    });
    let journal = JournalEntry {
        env: plan.env.clone(),
        summary,
        applied_by: opts.applied_by.clone().unwrap_or_else(os_user),
        applied_at: now,
    };
    cx.fenced()?;
    state.promote(&plan.env, &plan.pointers_after(project), &journal)?;
    tracing::info!(
        env = plan.env.as_str(),
        views = statements.len(),
        "promoted"
    );
    Ok(ApplyOutcome {
        built,
        batches,
        audits_run,
        audit_warnings,
        promoted: true,
        statements: engine.statements_issued() - start_statements,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineFeature;

    /// An engine without file access: the only stand-in in this crate, because no real engine
    /// that lacks the capability is wired up yet.
    struct NoFiles;
    impl Engine for NoFiles {
        fn name(&self) -> &'static str {
            "NoFiles"
        }
        fn dialect(&self) -> &'static dyn crate::engine::SqlDialect {
            &efmesh_core::sql::dialect::DuckDb
        }
        fn another_connection(&self) -> Result<Box<dyn Engine + Send>, EngineError> {
            Ok(Box::new(NoFiles))
        }
        fn supports(&self, f: EngineFeature) -> bool {
            f != EngineFeature::FileSources
        }
        fn transaction(&mut self, _: &str, _: &[String]) -> Result<(), EngineError> {
            panic!("nothing may run")
        }
        fn execute(&mut self, _: &str, _: &str) -> Result<(), EngineError> {
            panic!("nothing may run")
        }
        fn statements_issued(&self) -> u64 {
            0
        }
        fn query(
            &mut self,
            _: &str,
            _: &str,
            _: Option<usize>,
        ) -> Result<crate::engine::Rows, EngineError> {
            panic!("nothing may run")
        }
        fn describe(&mut self, _: &str) -> Result<Vec<(String, String)>, EngineError> {
            panic!("nothing may run")
        }
        fn table_columns(&mut self, _: &str) -> Result<Vec<(String, String)>, EngineError> {
            panic!("nothing may run")
        }
    }

    #[test]
    fn a_missing_capability_fails_before_anything_runs() {
        let sources = efmesh_core::project::ProjectSources {
            config: efmesh_core::config::Config::defaults("t"),
            models: vec![efmesh_core::project::SourceText {
                path: "models/s.sql".into(),
                text: "MODEL (name s.seed, kind SEED (path 's.csv'));".into(),
            }],
            audits: vec![],
            external_models: None,
        };
        let loaded = efmesh_core::project::load(&sources, &mut |_| Ok(b"a,b\n1,2\n".to_vec()));
        let project = loaded.project.unwrap();
        let pointers = Default::default();
        let snaps = Default::default();
        let built = Default::default();
        let ledgers = Default::default();
        let plan = efmesh_core::plan::plan(
            &project,
            "dev",
            efmesh_core::plan::PlanState {
                pointers: &pointers,
                snapshots: &snaps,
                built: &built,
                ledgers: &ledgers,
                now: crate::util::clock::now().naive_utc(),
            },
            &Default::default(),
        )
        .unwrap();
        let err = check_capabilities(&project, &plan, &NoFiles).unwrap_err();
        assert!(
            err.to_string().contains("NoFiles cannot FileSources"),
            "{err}"
        );
        assert!(err.to_string().contains("s.seed"), "{err}");
    }
}
