//! `efmesh restate`: replay a past time range of a time-range model and its time-range
//! descendants in one environment.
//!
//! It only clears done intervals in the ledger; the next apply (or run) recomputes them through
//! the ordinary planner, with the usual DELETE+INSERT per batch. The physics is never touched
//! here.

use crate::state::StateStore;
use crate::Error;
use chrono::NaiveDateTime;
use efmesh_core::interval::Range;
use efmesh_core::model::Kind;
use efmesh_core::project::Project;
use serde::Serialize;

/// One model whose intervals a restatement clears.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Restated {
    /// The model.
    pub model: String,
    /// The cleared range's first instant.
    pub start: String,
    /// The first instant after it.
    pub end: String,
    /// Whether any of it was done (and so will be recomputed).
    pub was_done: bool,
}

/// What a restatement did (or, dry, would do).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RestateReport {
    /// The environment.
    pub env: String,
    /// Whether nothing was changed.
    pub dry_run: bool,
    /// The models and ranges cleared.
    pub restated: Vec<Restated>,
}

fn iso(t: NaiveDateTime) -> String {
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn argument(message: String, help: Option<String>) -> Error {
    Error::Argument { message, help }
}

/// Clear `[from, to)` of `model` and its time-range descendants in `env`.
pub fn restate(
    project: &Project,
    state: &mut dyn StateStore,
    env: &str,
    model: &str,
    from: &str,
    to: &str,
    dry_run: bool,
) -> Result<RestateReport, Error> {
    let parse = |s: &str, what: &str| {
        efmesh_core::time::parse_instant(s).map_err(|e| argument(format!("--{what}: {e}"), None))
    };
    let (start, end) = (parse(from, "from")?, parse(to, "to")?);
    restate_between(project, state, env, model, start, end, dry_run)
}

/// [`restate`] with the range's edges as instants (`auto_restatement_cron` computes them).
pub(crate) fn restate_between(
    project: &Project,
    state: &mut dyn StateStore,
    env: &str,
    model: &str,
    start: NaiveDateTime,
    end: NaiveDateTime,
    dry_run: bool,
) -> Result<RestateReport, Error> {
    let i = project.index_of(model).ok_or_else(|| Error::UnknownModel {
        name: model.into(),
        suggestion: efmesh_core::suggest::closest(
            model,
            project.models.iter().map(|m| m.name.as_str()),
        ),
    })?;
    let m = &project.models[i];
    match &m.kind {
        Kind::IncrementalByTimeRange { .. } => {}
        Kind::ScdType2 { .. } | Kind::ScdType2ByColumn { .. } => {
            return Err(argument(
                format!("`{model}` is {}: its history is versions of rows, not time ranges, so it cannot be restated", m.kind.name()),
                Some("rebuild it with a breaking change if its history is wrong".into()),
            ))
        }
        other => {
            return Err(argument(
                format!("`{model}` is {}: only INCREMENTAL_BY_TIME_RANGE models have intervals to restate", other.name()),
                Some("a FULL or VIEW model is recomputed whenever it is rebuilt".into()),
            ))
        }
    }
    if m.policy.disable_restatement {
        return Err(argument(
            format!("`{model}` declares `disable_restatement true`: its history is not recomputed by hand"),
            Some("remove `disable_restatement` from its kind to restate it".into()),
        ));
    }
    let unit = m.interval_unit();
    for (t, what) in [(start, "from"), (end, "to")] {
        if !unit.is_aligned(t) {
            let before = unit.floor(t);
            return Err(argument(
                format!(
                    "--{what} {} is not aligned to `{model}`'s {} intervals",
                    iso(t),
                    unit.label()
                ),
                Some(format!(
                    "the nearest aligned values are {} and {}",
                    iso(before),
                    iso(before + unit.step())
                )),
            ));
        }
    }
    if end <= start {
        return Err(argument(
            format!("--to ({}) must be after --from ({})", iso(end), iso(start)),
            None,
        ));
    }
    let pointers = state.environment(env)?;
    let mut affected = vec![i];
    affected.extend(
        project
            .dag
            .descendants(i)
            .into_iter()
            // a descendant that disables restatement keeps its history, as in SQLMesh
            .filter(|&d| {
                let dm = &project.models[d];
                matches!(dm.kind, Kind::IncrementalByTimeRange { .. })
                    && !dm.policy.disable_restatement
            }),
    );
    let mut clear = vec![];
    let mut restated = vec![];
    for k in affected {
        let dm = &project.models[k];
        let Some(p) = pointers.get(&dm.name) else {
            if k == i {
                return Err(argument(
                    format!("`{model}` is not applied in `{env}`"),
                    Some(format!("apply it with `efmesh apply {env}` first")),
                ));
            }
            continue;
        };
        // a descendant with coarser intervals is cleared over every interval the range touches
        let du = dm.interval_unit();
        let widened_end = if du.is_aligned(end) {
            end
        } else {
            du.floor(end) + du.step()
        };
        let range = Range::new(du.floor(start), widened_end);
        // only the model's own history [start, end) is ever computed, so only it is cleared
        let lower = project.history_start(k).map(|s| du.floor(s));
        let upper = project.history_end(k).map(|e| du.ceil(e));
        let range = Range::new(
            lower.map_or(range.start, |l| range.start.max(l)),
            upper.map_or(range.end, |u| range.end.min(u)),
        );
        if range.is_empty() {
            if k == i {
                let bound = |t: Option<NaiveDateTime>| t.map_or("-".to_string(), iso);
                return Err(argument(
                    format!(
                        "[{}, {}) lies outside `{model}`'s history [{}, {}), so there is nothing to restate",
                        iso(start),
                        iso(end),
                        bound(lower),
                        bound(upper)
                    ),
                    Some("restate a range inside the model's `start` and `end`".into()),
                ));
            }
            continue;
        }
        let ledger = state
            .ledgers(std::slice::from_ref(&p.physical_fingerprint))?
            .remove(&p.physical_fingerprint)
            .unwrap_or_default();
        let was_done = ledger.missing(range) != vec![range];
        restated.push(Restated {
            model: dm.name.clone(),
            start: iso(range.start),
            end: iso(range.end),
            was_done,
        });
        clear.push((p.physical_fingerprint.clone(), range));
    }
    if !dry_run {
        state.clear_intervals(&clear)?;
    }
    Ok(RestateReport {
        env: env.into(),
        dry_run,
        restated,
    })
}
