//! What is due: the batches an interval model computes, from its ledger and the clock.

use super::{has_intervals, PlanState};
use crate::interval::{self, Ledger, Range};
use crate::model::Kind;
use crate::project::Project;

/// The most batches one model may compute in one plan. A year of minutes in batches of 60 is
/// 8,760; a history that needs more is refused with what to change.
pub const MAX_BATCHES: usize = 100_000;

/// The batches model `i` computes into `physical`: what is missing from its history
/// `[start, min(now, end))` (plus lookback for new intervals), cut into `batch_size` batches.
/// Empty for kinds without intervals.
pub(super) fn due(
    project: &Project,
    i: usize,
    state: &PlanState,
    physical: &str,
    missing: bool,
) -> Result<Vec<Range>, super::PlanError> {
    let m = &project.models[i];
    if !has_intervals(&m.kind) {
        return Ok(vec![]);
    }
    let (batch_size, lookback) = match &m.kind {
        Kind::IncrementalByTimeRange { lookback, .. }
        | Kind::IncrementalByUniqueKey { lookback, .. } => (m.batching.size, *lookback),
        // each SCD run compares one snapshot of the source with the history
        _ => (Some(1), 0),
    };
    let unit = m.interval_unit();
    let start = project
        .history_start(i)
        .unwrap_or_else(|| unit.floor(state.now) - unit.step());
    let empty = Ledger::default();
    // physics that is missing holds nothing, whatever its ledger says
    let ledger = match missing {
        true => &empty,
        false => state.ledgers.get(physical).unwrap_or(&empty),
    };
    let Some(exp) = interval::expected(start, project.history_end(i), state.now, unit) else {
        return Ok(vec![]);
    };
    let ranges = interval::to_compute(ledger, exp, unit, lookback);
    // counted before any is made, so a runaway history never reaches memory
    let per_batch = i64::from(batch_size.unwrap_or(0).max(1));
    let count: i64 = match batch_size {
        None | Some(0) => ranges.len() as i64,
        Some(_) => ranges
            .iter()
            .map(|r| (r.intervals(unit) + per_batch - 1) / per_batch)
            .sum(),
    };
    if count > MAX_BATCHES as i64 {
        return Err(super::PlanError::TooManyBatches {
            model: m.name.clone(),
            batches: count,
            limit: MAX_BATCHES,
        });
    }
    Ok(interval::batches(&ranges, unit, batch_size))
}
