//! A model's planned batches: each one engine transaction, audited before it commits, and
//! recorded done only after it committed. Recomputing an interval never duplicates rows, and
//! a batch that is interrupted is simply computed again.

use crate::engine::{Engine, EngineError};
use crate::exec::audited::{collect_warned, log_warned, write_audited, ModelAudits, WriteError};
use crate::exec::audits::{self, AuditResult};
use crate::exec::context::{BatchContext, BatchDone, PROGRESS};
use crate::exec::dag::{self, OnFailure, SendLane};
use crate::state::StateStore;
use crate::Error;
use chrono::NaiveDateTime;
use efmesh_core::interval::Range;
use efmesh_core::materialize::time_column::TimeColumn;
use efmesh_core::materialize::Write;
use efmesh_core::model::{Kind, Target};

/// What a model's batches left to do once they all committed.
pub(crate) struct BatchesRun {
    /// The batches, in order.
    pub done: Vec<BatchDone>,
    /// Intervals written but not yet marked done: they wait for the whole-table audits.
    pub deferred: Vec<Range>,
    /// Audits run over the batches.
    pub audits_run: u64,
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

/// Compute action `a`'s batches of model `i` into `physical`. With `batch_concurrency N`
/// (time-range models on engine tables, whose batches touch disjoint rows) up to N batches
/// run at once, each on its own engine and state connection; otherwise they run in order, and
/// the first failure stops the rest.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
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
    let n = a.batches.len();
    let asked = m.batching.concurrency.unwrap_or(1) as usize;
    let allowed = cx.connections_per_model.unwrap_or(usize::MAX);
    if asked.min(n) > allowed {
        tracing::info!(
            model = a.model.as_str(),
            env = cx.env,
            batch_concurrency = asked,
            connections = allowed,
            "running fewer batches at once than batch_concurrency asks: the engine has no more connections for this model (`[engine] pool_size`, shared among `--jobs` lanes)"
        );
    }
    let concurrency = asked.min(n).min(allowed).max(1);
    let time = time_column(cx, i, a, physical, engine)?;
    let time = time.as_ref();
    // a model that reads itself reads what the batch before wrote
    let independent = matches!(m.kind, Kind::IncrementalByTimeRange { .. })
        && m.target == Target::Table
        && !cx.project.reads_itself[i];
    let outcomes = if concurrency > 1 && independent {
        concurrently(
            cx,
            i,
            a,
            physical,
            time,
            model_audits,
            concurrency,
            state,
            engine,
        )?
    } else {
        let mut outcomes = vec![];
        for (k, b) in a.batches.iter().enumerate() {
            cx.report(&a.model, k, n);
            let Some(o) = one(
                cx,
                i,
                a,
                k,
                *b,
                physical,
                time,
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
    cx.report(&a.model, n, n);
    Ok(out)
}

/// Up to `concurrency` of a model's batches at once: the calling thread is one lane, the
/// others get connections of their own. A failure stops handing out batches; those already
/// running finish (and are recorded), and the earliest failure is returned.
#[allow(clippy::too_many_arguments)]
fn concurrently(
    cx: &BatchContext,
    i: usize,
    a: &efmesh_core::plan::Action,
    physical: &str,
    time: Option<&TimeColumn>,
    model_audits: &ModelAudits,
    concurrency: usize,
    state: &mut dyn StateStore,
    engine: &mut dyn Engine,
) -> Result<Vec<BatchOutcome>, Error> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let n = a.batches.len();
    tracing::info!(
        target: PROGRESS,
        model = a.model.as_str(),
        env = cx.env,
        batches = n,
        workers = concurrency,
        "backfilling batches concurrently"
    );
    let finished = AtomicUsize::new(0);
    let lane = |engine: &mut dyn Engine, state: &mut dyn StateStore, k: usize| {
        cx.report(&a.model, finished.load(Ordering::SeqCst), n);
        let o = one(
            cx,
            i,
            a,
            k,
            a.batches[k],
            physical,
            time,
            model_audits,
            &[],
            state,
            engine,
        )?;
        finished.fetch_add(1, Ordering::SeqCst);
        Ok::<_, Error>(o)
    };
    let mut others: Vec<Box<SendLane<'_, Option<BatchOutcome>, Error>>> = vec![];
    for _ in 1..concurrency {
        let (mut e, mut s) = (engine.another_connection()?, state.reopen()?);
        let lane = &lane;
        others.push(Box::new(move |k| lane(e.as_mut(), s.as_mut(), k)));
    }
    let mut local = |k| lane(&mut *engine, &mut *state, k);
    let deps = vec![vec![]; n];
    let mut outcome = dag::run(&deps, OnFailure::Stop, &mut local, others);
    if !outcome.errors.is_empty() {
        return Err(outcome.errors.remove(0).1);
    }
    Ok(outcome.results.into_iter().flatten().flatten().collect())
}

/// A time-range model's time column as the engine holds it, once per apply: its type decides
/// how each batch's range is written (`efmesh_core::materialize::time_column`). The declared
/// `columns` say it without a query; otherwise the physics, or else the query, is described.
fn time_column(
    cx: &BatchContext,
    i: usize,
    a: &efmesh_core::plan::Action,
    physical: &str,
    engine: &mut dyn Engine,
) -> Result<Option<TimeColumn>, Error> {
    let m = &cx.project.models[i];
    let Kind::IncrementalByTimeRange {
        time_column,
        time_column_format,
        ..
    } = &m.kind
    else {
        return Ok(None);
    };
    let declared = m
        .columns
        .iter()
        .flatten()
        .find(|c| &c.name == time_column)
        .map(|c| c.sql_type.clone());
    let sql_type = match declared {
        Some(t) => Some(t),
        None => {
            let mut columns = engine.table_columns(physical)?;
            if columns.is_empty() {
                if let Some(b) = a.batches.first() {
                    columns = engine.describe(&cx.render.batch(i, *b)?)?;
                }
            }
            columns
                .into_iter()
                .find(|(c, _)| c.eq_ignore_ascii_case(time_column))
                .map(|(_, t)| t)
        }
    };
    let Some(sql_type) = sql_type else {
        return Err(Error::Render(format!(
            "`{}`: its time column `{time_column}` is not a column of its query; return it from the SELECT, or name the column that places rows in time in `time_column`",
            m.name
        )));
    };
    TimeColumn::new(time_column, &sql_type, time_column_format.as_deref())
        .map(Some)
        .map_err(|e| Error::Render(format!("`{}`: {e}", m.name)))
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

/// Compute batch `k` (`b`) of model `i`: write it and its audits in one transaction with
/// retries, let the materializer publish it, mark it done (or leave that to the whole-table
/// audits). `pending` are earlier batches of this apply whose done marks are deferred. `None`
/// for a kind without batches.
#[allow(clippy::too_many_arguments)]
fn one(
    cx: &BatchContext,
    i: usize,
    a: &efmesh_core::plan::Action,
    k: usize,
    b: Range,
    physical: &str,
    time: Option<&TimeColumn>,
    model_audits: &ModelAudits,
    pending: &[Range],
    state: &mut dyn StateStore,
    engine: &mut dyn Engine,
) -> Result<Option<BatchOutcome>, Error> {
    let (project, retries) = (cx.project, cx.retries);
    let m = &project.models[i];
    let pfp = a.physical_fingerprint.as_deref().unwrap_or_default();
    let defer = model_audits.defers_marks();
    let resolve = crate::exec::audited::physical_resolver(project, cx.names);
    let sql = cx.render.batch(i, b)?;
    let materializer = crate::exec::materializer::of(project, i, cx.lake);
    let Some(Write {
        statements,
        audited,
        cleanup,
    }) = materializer.batch(project, engine.dialect(), i, physical, &sql, b, time)?
    else {
        return Ok(None);
    };
    // the model's pre- and post-statements run around each batch's write, in its transaction
    let statements = if m.statements.around_writes() {
        let stage = efmesh_core::sql::statements::RuntimeStage::Evaluating;
        let range = (b.start, b.end);
        let mut all = cx
            .render
            .statements(&m.statements.pre, stage, range, physical)?;
        all.extend(statements);
        all.extend(
            cx.render
                .statements(&m.statements.post, stage, range, physical)?,
        );
        all
    } else {
        statements
    };
    let over = format!("batch {b}");
    let target = audits::Target {
        env: cx.env,
        model: &a.model,
        relation: &audited,
        over: &over,
        dialect: project.config.dialect(),
        resolve: &resolve,
        execution: cx.render.execution(),
        interval: b,
    };
    let batch = format!("{}/{}", k + 1, a.batches.len());
    tracing::info!(target: PROGRESS, model = a.model.as_str(), env = cx.env, batch = batch.as_str(), interval = %b, "backfilling");
    let started = std::time::Instant::now();
    let mut attempt = 0;
    let context = format!("computing {} for {b}", a.model);
    cx.fenced()?;
    let unit = m.interval_unit();
    let metrics = crate::exec::metrics::global();
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
                materializer.batch_committed(engine, state, i, b, &sql, time, pending)?;
                if !defer {
                    state.mark_done(pfp, b)?;
                    metrics
                        .intervals_done
                        .with_label_values(&[a.model.as_str(), cx.env])
                        .inc_by(b.intervals(unit).max(0) as u64);
                }
                tracing::info!(target: PROGRESS, model = a.model.as_str(), env = cx.env, batch = batch.as_str(), interval = %b, duration_ms = started.elapsed().as_millis() as u64, "backfilled");
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
                metrics
                    .intervals_failed
                    .with_label_values(&[a.model.as_str(), cx.env])
                    .inc_by(b.intervals(unit).max(0) as u64);
                // readers of the lake learn of the failure too
                materializer.batch_failed(engine, state, i);
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
