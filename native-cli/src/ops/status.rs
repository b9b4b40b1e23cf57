//! `efmesh status <env>`: is the environment healthy, and if not, why?
//!
//! For the operator (a person, or an agent reading `--json`) who was not watching at 3 a.m.:
//! the last applied plan, how far each incremental model lags what is due, the intervals whose
//! last attempt failed, recent ticks, and the lock. `--check` turns it into a health probe that
//! fails only for what needs fixing (failed intervals, a last tick that errored); awaiting a
//! human, a held lock, plain lag and a never-applied environment are not failures.

use crate::state::{LockInfo, Outcome, RunRecord, StateStore};
use crate::Error;
use chrono::{DateTime, Utc};
use efmesh_core::interval::{expected, Ledger};
use efmesh_core::model::Kind;
use efmesh_core::project::Project;
use serde::Serialize;

/// The last plan applied to the environment.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LastPlan {
    /// When.
    pub applied_at: DateTime<Utc>,
    /// Who (the OS user, or `efmesh run (...)` for a tick).
    pub applied_by: String,
    /// The plan's journal summary (categories, changed models), as structured JSON.
    pub summary: serde_json::Value,
}

/// How far a time-range model lags what is due.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ModelLag {
    /// The model.
    pub model: String,
    /// Its interval unit.
    pub unit: String,
    /// Complete without a gap from its start up to this instant (exclusive).
    pub complete_through: Option<String>,
    /// Everything before this instant is due now.
    pub due_through: Option<String>,
    /// Where a closed history ends (exclusive), from the model's `end`; `None` when open.
    pub history_end: Option<String>,
    /// `due_through - complete_through`, in seconds (0 when up to date).
    pub lag_seconds: i64,
    /// Due intervals not done.
    pub missing_intervals: i64,
}

/// An interval whose last attempt failed.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FailedInterval {
    /// The model.
    pub model: String,
    /// `[start, end)`.
    pub start: String,
    /// The first instant after it.
    pub end: String,
}

/// `efmesh status`'s report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusReport {
    /// The environment.
    pub env: String,
    /// Whether anything was ever applied to it.
    pub exists: bool,
    /// The last applied plan.
    pub last_plan: Option<LastPlan>,
    /// Every time-range model the environment serves.
    pub lag: Vec<ModelLag>,
    /// Intervals whose last attempt failed.
    pub failed_intervals: Vec<FailedInterval>,
    /// The latest ticks, newest first.
    pub recent_runs: Vec<RunRecord>,
    /// The live lock, if someone holds it now.
    pub lock: Option<LockInfo>,
    /// Served versions whose physics is not where the state says (a dropped table, a lost
    /// manifest, a deleted database file): served data that is not there.
    pub missing_physics: Vec<crate::ops::reality::MissingPhysics>,
    /// With `--deep`: every other way the engine, the lake and the state disagree (views,
    /// stray tables, file sizes, unlisted files); absent without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mismatches: Option<Vec<crate::ops::reality::Mismatch>>,
    /// No failed intervals, no missing physics, no deep mismatch that serves wrong data, and
    /// the last tick did not end in error.
    pub healthy: bool,
    /// Why it is not healthy, one sentence each.
    pub problems: Vec<String>,
}

/// How many ticks `status` shows.
const RECENT_RUNS: usize = 10;

/// The status of `env` at `now`, read with `project`'s definitions (units and starts).
pub fn status(
    project: &Project,
    state: &mut dyn StateStore,
    env: &str,
    now: DateTime<Utc>,
) -> Result<StatusReport, Error> {
    let pointers = state.environment(env)?;
    let last_plan = state.journal(env, 1)?.pop().map(|j| LastPlan {
        applied_at: j.applied_at,
        applied_by: j.applied_by,
        summary: j.summary,
    });
    let pfps: Vec<String> = pointers
        .values()
        .map(|p| p.physical_fingerprint.clone())
        .collect();
    let ledgers = state.ledgers(&pfps)?;
    let iso = efmesh_core::passport::iso;
    let mut lag = vec![];
    let mut failed_intervals = vec![];
    for &i in project.dag.topological_order() {
        let m = &project.models[i];
        let (Some(pointer), Kind::IncrementalByTimeRange { .. }) = (pointers.get(&m.name), &m.kind)
        else {
            continue;
        };
        let ledger = ledgers
            .get(&pointer.physical_fingerprint)
            .cloned()
            .unwrap_or_else(Ledger::default);
        let unit = m.interval_unit();
        let start = project.history_start(i);
        let end = project.history_end(i);
        // a closed history (`end`) is due only through its end, and claims no more than that
        let complete = start
            .and_then(|s| ledger.contiguous_through(s))
            .map(|t| end.map_or(t, |e| t.min(e)));
        let due = start.and_then(|s| expected(s, end, now.naive_utc(), unit));
        // with nothing complete, the lag is everything due
        let (lag_seconds, missing) = match &due {
            Some(d) => (
                (d.end - complete.unwrap_or(d.start)).num_seconds().max(0),
                ledger.missing(*d).iter().map(|r| r.intervals(unit)).sum(),
            ),
            None => (0, 0),
        };
        lag.push(ModelLag {
            model: m.name.clone(),
            unit: unit.label().into(),
            complete_through: complete.map(iso),
            due_through: due.map(|d| iso(d.end)),
            history_end: end.map(iso),
            lag_seconds,
            missing_intervals: missing,
        });
        for r in state.failed_intervals(&pointer.physical_fingerprint)? {
            failed_intervals.push(FailedInterval {
                model: m.name.clone(),
                start: iso(r.start),
                end: iso(r.end),
            });
        }
    }
    let recent_runs = state.runs(env, RECENT_RUNS)?;
    let lock = state.lock_info(env)?.filter(|l| l.expires_at > now);
    let mut problems = vec![];
    if !failed_intervals.is_empty() {
        problems.push(format!(
            "{} interval(s) failed on their last attempt, the first {} [{}, {})",
            failed_intervals.len(),
            failed_intervals[0].model,
            failed_intervals[0].start,
            failed_intervals[0].end
        ));
    }
    if let Some(last) = recent_runs.first().filter(|r| r.outcome == Outcome::Error) {
        let what = last
            .detail
            .pointer("/error/message")
            .and_then(|m| m.as_str())
            .unwrap_or("an error");
        problems.push(format!(
            "the last tick ({}) ended in error: {what}",
            last.finished_at
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ));
    }
    Ok(StatusReport {
        env: env.into(),
        exists: !pointers.is_empty(),
        last_plan,
        lag,
        failed_intervals,
        recent_runs,
        lock,
        missing_physics: vec![],
        mismatches: None,
        healthy: problems.is_empty(),
        problems,
    })
}

impl std::fmt::Display for StatusReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = |t: &DateTime<Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        writeln!(
            f,
            "environment `{}`: {}",
            self.env,
            match (self.exists, self.healthy) {
                (false, _) => "never applied",
                (true, true) => "healthy",
                (true, false) => "UNHEALTHY",
            }
        )?;
        for p in &self.problems {
            writeln!(f, "  problem: {p}")?;
        }
        if let Some(p) = &self.last_plan {
            writeln!(
                f,
                "last plan: applied {} by {}",
                secs(&p.applied_at),
                p.applied_by
            )?;
        }
        if let Some(l) = &self.lock {
            writeln!(
                f,
                "lock: held by {} since {} (expires {})",
                l.holder,
                secs(&l.acquired_at),
                secs(&l.expires_at)
            )?;
        }
        if !self.lag.is_empty() {
            writeln!(f, "incremental models:")?;
            for l in &self.lag {
                let closed = match &l.history_end {
                    Some(e) => format!(" (history ends {e})"),
                    None => String::new(),
                };
                writeln!(
                    f,
                    "  {:<32} complete through {:<22} due through {:<22} missing {} {}(s){closed}",
                    l.model,
                    l.complete_through.as_deref().unwrap_or("nothing yet"),
                    l.due_through.as_deref().unwrap_or("-"),
                    l.missing_intervals,
                    l.unit
                )?;
            }
        }
        for fi in &self.failed_intervals {
            writeln!(f, "failed: {} [{}, {})", fi.model, fi.start, fi.end)?;
        }
        for m in &self.missing_physics {
            writeln!(f, "missing: {} ({})", m.model, m.what)?;
        }
        match &self.mismatches {
            Some(all) if all.is_empty() => writeln!(f, "deep check: engine, lake and state agree")?,
            Some(all) => {
                writeln!(f, "deep check: {} mismatch(es):", all.len())?;
                for m in all {
                    let kind = serde_json::to_value(m.kind).unwrap_or_default();
                    writeln!(
                        f,
                        "  {:<15} {}: {}",
                        kind.as_str().unwrap_or("?"),
                        m.object,
                        m.what
                    )?;
                }
            }
            None => {}
        }
        if !self.recent_runs.is_empty() {
            writeln!(f, "recent ticks:")?;
            for r in &self.recent_runs {
                writeln!(
                    f,
                    "  {}  {:<15} {}",
                    secs(&r.finished_at),
                    r.outcome.label(),
                    r.command
                )?;
            }
        }
        Ok(())
    }
}
