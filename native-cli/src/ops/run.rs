//! `efmesh run <env>`: one unattended scheduler tick.
//!
//! A tick computes what has newly become due in an environment (new intervals, plus lookback)
//! and nothing else: it never applies a model change. When the project has changes the
//! environment does not serve yet, it stops and names them (`blockedBy`), because applying a
//! change is a human's decision. It runs under the environment's lock, so two ticks never
//! interleave, and every tick, whatever its end, is written to the runs journal so `efmesh
//! status` can tell "awaiting a human" from "lock held" from "broken".

use crate::exec::apply::{ApplyOptions, BatchDone};
use crate::state::{LockInfo, Outcome, RunRecord};
use crate::{Efmesh, Error};
use chrono::{DateTime, Utc};
use efmesh_core::plan::Category;
use serde::Serialize;

/// Options of a tick.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// How often a failed batch write is retried before the tick fails.
    pub retries: u32,
    /// How many models may build at once (see `ApplyOptions::jobs`).
    pub jobs: usize,
    /// Told how far each backfill is (the CLI's progress bar).
    pub progress: Option<crate::exec::apply::ProgressHook>,
}

/// What one model's work in a tick was.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Processed {
    /// The model.
    pub model: String,
    /// The intervals computed, as `[start, end)` batches.
    pub batches: Vec<Batch>,
}

/// One computed batch, `[start, end)`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Batch {
    /// The first instant.
    pub start: String,
    /// The first instant after it.
    pub end: String,
}

/// An unapplied change that stops a tick.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Blocker {
    /// The model.
    pub model: String,
    /// How it changed (`breaking`, `added`, ...), as `efmesh plan` says.
    pub category: String,
}

/// Where a failed tick died.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RunFailure {
    /// The error's stable code (as in every `--json` error).
    pub code: String,
    /// The message.
    pub message: String,
    /// The model it died on, when known.
    pub model: Option<String>,
    /// The interval it died on, when known.
    pub interval: Option<String>,
}

impl RunFailure {
    fn of(e: &Error) -> RunFailure {
        let (model, interval) = match e {
            Error::Batch {
                model, interval, ..
            } => (Some(model.clone()), Some(interval.clone())),
            Error::Build { model, .. } | Error::SchemaMismatch { model, .. } => {
                (Some(model.clone()), None)
            }
            Error::AuditFailed { failures, .. } => {
                (failures.first().map(|f| f.model.clone()), None)
            }
            _ => (None, None),
        };
        RunFailure {
            code: e.code().into(),
            message: e.to_string(),
            model,
            interval,
        }
    }
}

/// The tick's report: `--json` prints it, and the journal keeps its detail.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunReport {
    /// The environment.
    pub env: String,
    /// How the tick ended.
    pub outcome: Outcome,
    /// What was computed, per model (empty when nothing was due).
    pub processed: Vec<Processed>,
    /// Models whose tables the tick rebuilt: FULL models whose cron came round, and physics
    /// the janitor had dropped.
    pub built: Vec<String>,
    /// The unapplied changes that stopped the tick (`awaiting-human`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_by: Option<Vec<Blocker>>,
    /// Who holds the lock (`lock-held`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lock: Option<LockInfo>,
    /// Where it failed (`error`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<RunFailure>,
    /// When it started.
    pub started_at: DateTime<Utc>,
    /// How long it took, in milliseconds.
    pub duration_ms: u64,
    /// Set when the journal could not be written; the outcome above is still the tick's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub journal_error: Option<String>,
    /// What `auto_restatement_cron` cleared before this tick computed what was missing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub auto_restated: Vec<crate::ops::restate::Restated>,
}

impl RunReport {
    /// An `ok` tick of `env` that has done nothing yet.
    fn new(env: &str, started: DateTime<Utc>) -> RunReport {
        RunReport {
            env: env.into(),
            outcome: Outcome::Ok,
            processed: vec![],
            built: vec![],
            blocked_by: None,
            lock: None,
            error: None,
            started_at: started,
            auto_restated: vec![],
            duration_ms: 0,
            journal_error: None,
        }
    }
}

/// One tick of `env` for the project at (or above) `dir`: `Efmesh::run` when the project loads;
/// when it does not (a model that no longer checks), the failure is journaled through the
/// config alone, so `efmesh status` still sees that the last tick failed.
pub fn run_dir(dir: &std::path::Path, env: &str, opts: &RunOptions) -> (RunReport, Option<Error>) {
    let started = crate::util::clock::now();
    let clock = std::time::Instant::now();
    match Efmesh::open(dir) {
        Ok(ef) => run(&ef, env, opts),
        Err(e) => (journal_load_failure(dir, env, started, clock, &e), Some(e)),
    }
}

/// Journal a tick that could not even load its project.
fn journal_load_failure(
    dir: &std::path::Path,
    env: &str,
    started: DateTime<Utc>,
    clock: std::time::Instant,
    e: &Error,
) -> RunReport {
    let report = RunReport {
        outcome: Outcome::Error,
        error: Some(RunFailure::of(e)),
        duration_ms: clock.elapsed().as_millis() as u64,
        ..RunReport::new(env, started)
    };
    let written =
        crate::state_for_dir(dir).and_then(|mut s| Ok(s.record_run(&record_of(&report))?));
    match written {
        Ok(()) => report,
        Err(j) => RunReport {
            journal_error: Some(j.to_string()),
            ..report
        },
    }
}

/// Run one tick of `env`. The report carries every outcome; the error, when there is one, is
/// returned beside it for a full diagnostic.
pub fn run(ef: &Efmesh, env: &str, opts: &RunOptions) -> (RunReport, Option<Error>) {
    // the journal keeps the clock that decides what is due (`EFMESH_NOW` when set), so
    // `auto_restatement_cron` compares like with like
    let started = crate::util::clock::now();
    let clock = std::time::Instant::now();
    let (mut report, error) = tick(ef, env, opts, started);
    report.duration_ms = clock.elapsed().as_millis() as u64;
    // the journal records every ending; failing to write it never changes the outcome
    if let Err(e) = journal(ef, &report) {
        tracing::warn!(env, error = %e, "could not write the runs journal");
        report.journal_error = Some(e.to_string());
    }
    (report, error)
}

fn tick(
    ef: &Efmesh,
    env: &str,
    opts: &RunOptions,
    started: DateTime<Utc>,
) -> (RunReport, Option<Error>) {
    let mut report = RunReport::new(env, started);
    let fail = |mut report: RunReport, e: Error| {
        // the engine's own write lock held by another process is a lock conflict too
        report.outcome = match e {
            Error::Engine(crate::engine::EngineError::Locked { .. }) => Outcome::LockHeld,
            _ => Outcome::Error,
        };
        report.error = Some(RunFailure::of(&e));
        (report, Some(e))
    };
    let lock = match ef.lock(env) {
        Ok(l) => l,
        Err(Error::LockHeld { lock }) => {
            tracing::info!(env, holder = lock.holder.as_str(), since = %lock.acquired_at, "lock held; nothing to do this tick");
            report.outcome = Outcome::LockHeld;
            report.lock = Some(lock);
            return (report, None);
        }
        Err(e) => return fail(report, e),
    };
    match auto_restate(ef, env) {
        Ok(restated) => report.auto_restated = restated,
        Err(e) => return fail(report, e),
    }
    let plan = match ef.state().and_then(|mut s| {
        ef.plan_checked(
            s.as_mut(),
            env,
            &efmesh_core::plan::PlanOptions::default(),
            true,
        )
    }) {
        Ok(p) => p,
        Err(e) => return fail(report, e),
    };
    crate::exec::metrics::record_plan(&plan);
    let blockers: Vec<Blocker> = plan
        .actions
        .iter()
        .filter(|a| a.category != Category::Unchanged)
        .map(|a| Blocker {
            model: a.model.clone(),
            category: a.category.label().into(),
        })
        .collect();
    if !blockers.is_empty() {
        tracing::warn!(
            env,
            changes = blockers.len(),
            "the project has unapplied changes; a human must apply them before ticks resume"
        );
        report.outcome = Outcome::AwaitingHuman;
        report.blocked_by = Some(blockers);
        return (report, None);
    }
    // FULL models whose cron came round since they were built are rebuilt in place
    let mut plan = plan;
    match full_models_due(ef, &plan) {
        Ok(due) => {
            for a in plan.actions.iter_mut().filter(|a| due.contains(&a.model)) {
                tracing::info!(env, model = a.model.as_str(), "cron due; refreshing");
                a.build = true;
            }
        }
        Err(e) => return fail(report, e),
    }
    if !plan.has_changes() {
        tracing::info!(env, "nothing is due");
        return (report, None);
    }
    let applied = ef.apply(
        &plan,
        ApplyOptions {
            retries: opts.retries,
            jobs: opts.jobs,
            progress: opts.progress.clone(),
            applied_by: Some(format!("efmesh run ({})", lock.info().holder)),
            fence: Some(lock.fence()),
            ..Default::default()
        },
    );
    match applied {
        Ok(out) => {
            let mut processed: Vec<Processed> = vec![];
            for BatchDone { model, start, end } in out.batches {
                let batch = Batch { start, end };
                match processed.iter_mut().find(|p| p.model == model) {
                    Some(p) => p.batches.push(batch),
                    None => processed.push(Processed {
                        model,
                        batches: vec![batch],
                    }),
                }
            }
            report.processed = processed;
            report.built = out.built;
            (report, None)
        }
        Err(e) => fail(report, e),
    }
}

/// The FULL models of `plan` (unchanged, already built) whose `cron` (UTC; `@daily` when
/// unset, as in SQLMesh) has fired since their physics was last built.
fn full_models_due(ef: &Efmesh, plan: &efmesh_core::plan::Plan) -> Result<Vec<String>, Error> {
    let project = ef.project_for(&plan.env)?;
    let now = crate::util::clock::now();
    let candidates: Vec<(&str, &str, &str, Option<chrono::NaiveDateTime>)> = plan
        .actions
        .iter()
        // an INCREMENTAL_BY_PARTITION model is refreshed on its cron as a FULL one is
        .filter(|a| {
            a.category == Category::Unchanged
                && !a.build
                && matches!(a.kind.as_str(), "FULL" | "INCREMENTAL_BY_PARTITION")
        })
        .filter_map(|a| {
            let m = project.models.iter().find(|m| m.name == a.model)?;
            Some((
                a.model.as_str(),
                a.physical_fingerprint.as_deref()?,
                m.cron.as_deref().unwrap_or("@daily"),
                m.history_end(),
            ))
        })
        .collect();
    if candidates.is_empty() {
        return Ok(vec![]);
    }
    let pfps: Vec<String> = candidates
        .iter()
        .map(|(_, p, _, _)| p.to_string())
        .collect();
    let built = ef.state()?.built_times(&pfps)?;
    let mut due = vec![];
    for (model, pfp, cron, end) in candidates {
        // a closed history (`end`) built after its end has nothing left to refresh
        if let (Some(end), Some(t)) = (end, built.get(pfp)) {
            if t.naive_utc() >= end {
                continue;
            }
        }
        let expr = match crate::ops::schedule::CronExpr::parse(cron) {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!(model, cron, error = %e, "cannot read the model's cron; it is not refreshed on a schedule");
                continue;
            }
        };
        let next = built.get(pfp).and_then(|t| expr.next_after_utc(*t));
        if next.is_some_and(|next| next <= now) {
            due.push(model.to_string());
        }
    }
    Ok(due)
}

/// SQLMesh's `auto_restatement_cron`: a model whose restatement cron has fired since the
/// previous tick (or since its physics was built, whichever is later) has its latest
/// `auto_restatement_intervals` complete intervals (its whole history without it), and the
/// overlapping intervals downstream, cleared, so this tick computes them again. Runs under the
/// environment's lock, before the plan, so the cleared intervals are in it.
fn auto_restate(ef: &Efmesh, env: &str) -> Result<Vec<crate::ops::restate::Restated>, Error> {
    let project = ef.project_for(env)?;
    let scheduled: Vec<(usize, &efmesh_core::model::kind::AutoRestatement)> = project
        .models
        .iter()
        .enumerate()
        // `disable_restatement` wins, as in SQLMesh
        .filter(|(_, m)| !m.policy.disable_restatement)
        .filter_map(|(i, m)| Some((i, m.policy.auto_restatement.as_ref()?)))
        .collect();
    if scheduled.is_empty() {
        return Ok(vec![]);
    }
    let now = crate::util::clock::now();
    let mut state = ef.state()?;
    let pointers = state.environment(env)?;
    // the previous tick that got past the lock considered restatements already
    let previous = state
        .runs(env, 50)?
        .into_iter()
        .find(|r| r.command == "run" && r.outcome != crate::state::Outcome::LockHeld)
        .map(|r| r.started_at);
    let pfps: Vec<String> = scheduled
        .iter()
        .filter_map(|(i, _)| {
            Some(
                pointers
                    .get(&project.models[*i].name)?
                    .physical_fingerprint
                    .clone(),
            )
        })
        .collect();
    let built = state.built_times(&pfps)?;
    let mut out = vec![];
    for (i, auto) in scheduled {
        let m = &project.models[i];
        let Some(pfp) = pointers.get(&m.name).map(|p| &p.physical_fingerprint) else {
            continue;
        };
        let Some(built_at) = built.get(pfp) else {
            continue;
        };
        let since = previous.map_or(*built_at, |p| p.max(*built_at));
        let expr =
            crate::ops::schedule::CronExpr::parse(&auto.cron).map_err(|e| Error::Argument {
                message: format!("`{}`: auto_restatement_cron `{}`: {e}", m.name, auto.cron),
                help: None,
            })?;
        if expr.next_after_utc(since).is_none_or(|next| next > now) {
            continue;
        }
        let unit = m.interval_unit();
        let mut end = unit.floor(now.naive_utc());
        if let Some(e) = project.history_end(i) {
            end = end.min(unit.ceil(e));
        }
        let first = project.history_start(i).map(|s| unit.floor(s));
        let start = match (auto.intervals, first) {
            (Some(n), Some(first)) => (end - unit.step() * n as i32).max(first),
            (Some(n), None) => end - unit.step() * n as i32,
            (None, Some(first)) => first,
            (None, None) => continue,
        };
        if start >= end {
            continue;
        }
        tracing::info!(
            env,
            model = m.name.as_str(),
            cron = auto.cron.as_str(),
            from = %start,
            to = %end,
            "auto_restatement_cron fired; restating"
        );
        let report = crate::ops::restate::restate_between(
            &project,
            state.as_mut(),
            env,
            &m.name,
            start,
            end,
            false,
        )?;
        out.extend(report.restated);
    }
    Ok(out)
}

fn journal(ef: &Efmesh, report: &RunReport) -> Result<(), Error> {
    ef.state()?.record_run(&record_of(report))?;
    Ok(())
}

fn record_of(report: &RunReport) -> RunRecord {
    let mut detail = serde_json::to_value(report).unwrap_or_default();
    if let Some(o) = detail.as_object_mut() {
        for k in ["env", "outcome", "startedAt"] {
            o.remove(k);
        }
    }
    RunRecord {
        env: report.env.clone(),
        command: "run".into(),
        started_at: report.started_at,
        finished_at: report.started_at + chrono::Duration::milliseconds(report.duration_ms as i64),
        outcome: report.outcome,
        detail,
    }
}
