//! What is due: the batches an interval model computes, from its ledger and the clock.

use super::{has_intervals, PlanState};
use crate::interval::{self, Ledger, Range};
use crate::model::Kind;
use crate::project::Project;

/// The batches model `i` computes into `physical`: what is missing from its history
/// `[start, min(now, end))` (plus lookback for new intervals), cut into `batch_size` batches.
/// Empty for kinds without intervals.
pub(super) fn due(project: &Project, i: usize, state: &PlanState, physical: &str) -> Vec<Range> {
    let m = &project.models[i];
    if !has_intervals(&m.kind) {
        return vec![];
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
    let ledger = state.ledgers.get(physical).unwrap_or(&empty);
    interval::expected(start, project.history_end(i), state.now, unit)
        .map(|exp| {
            interval::batches(
                &interval::to_compute(ledger, exp, unit, lookback),
                unit,
                batch_size,
            )
        })
        .unwrap_or_default()
}
