//! What a plan warns about even when nothing is wrong with it.

use crate::model::Kind;
use crate::project::Project;

/// The plan's warnings: time-range models whose window functions make their result depend on
/// how wide a batch is.
pub(super) fn of(project: &Project) -> Vec<String> {
    let mut warnings = vec![];
    for &i in project.dag.topological_order() {
        let m = &project.models[i];
        if !matches!(m.kind, Kind::IncrementalByTimeRange { .. }) {
            continue;
        }
        let batch_size = m.batching.size;
        let windowed = m
            .query
            .as_ref()
            .and_then(|q| q.ast())
            .is_some_and(crate::sql::columns::has_window_function);
        if !windowed || batch_size == Some(1) {
            continue;
        }
        let width = batch_size
            .map(|n| format!("batch_size {n}"))
            .unwrap_or_else(|| "no batch_size (one batch for the whole missing range)".into());
        // a per-batch audit sees the batch as rendered, so it inherits the dependence
        let audits = if m.audits.iter().any(|c| {
            crate::audit::query::resolve(c, &|n| project.audits.get(n))
                .is_some_and(|q| q.scope.per_batch())
        }) {
            "; its per-interval audits check each batch as rendered, so they depend on it too (the manual, docs/src/quality.md: \"Audits and batches\")"
        } else {
            ""
        };
        warnings.push(format!(
            "window-over-batch: `{}` computes a window function over each batch, and with {width} its result depends on how wide a batch is; set `batch_size 1` if every interval must be computed alone{audits}",
            m.name
        ));
    }
    warnings
}
