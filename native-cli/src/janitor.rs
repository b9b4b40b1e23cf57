//! The janitor: drops physics no environment has referenced for longer than a ttl.
//!
//! Each drop is preceded by a claim in one state transaction, so two janitors, or a janitor
//! and an apply that re-references the physics, can never drop live physics.

use crate::engine::Engine;
use crate::state::StateStore;
use crate::Error;
use chrono::{DateTime, Utc};
use efmesh_core::naming;
use serde::Serialize;

/// Options for a janitor run.
#[derive(Debug, Clone)]
pub struct JanitorOptions {
    /// Drop physics orphaned longer ago than this many days.
    pub ttl_days: f64,
    /// Report what would be dropped, drop nothing.
    pub dry_run: bool,
    /// "Now" (defaults to the clock).
    pub now: Option<DateTime<Utc>>,
}

impl Default for JanitorOptions {
    fn default() -> Self {
        JanitorOptions {
            ttl_days: 7.0,
            dry_run: false,
            now: None,
        }
    }
}

/// One physical relation the janitor handled.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Collected {
    /// The model it belonged to.
    pub model: String,
    /// The relation.
    pub table: String,
    /// When the last environment stopped referencing it.
    pub orphaned_at: Option<String>,
}

/// What a janitor run did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JanitorReport {
    /// Dropped (or, with `dryRun`, droppable) physics.
    pub dropped: Vec<Collected>,
    /// Candidates another process claimed or re-referenced first.
    pub skipped: Vec<Collected>,
    /// Whether this was a dry run.
    pub dry_run: bool,
}

/// Run the janitor.
pub fn run(
    state: &mut dyn StateStore,
    engine: &mut dyn Engine,
    opts: &JanitorOptions,
) -> Result<JanitorReport, Error> {
    let now = opts.now.unwrap_or_else(Utc::now);
    let cutoff = now - chrono::Duration::milliseconds((opts.ttl_days * 86_400_000.0) as i64);
    let claimer = format!("janitor-{}-{}", std::process::id(), now.timestamp_micros());
    let mut report = JanitorReport {
        dropped: vec![],
        skipped: vec![],
        dry_run: opts.dry_run,
    };
    for p in state.orphans(cutoff)? {
        let (schema, table) = naming::physical_name(&p.model, &p.physical_fingerprint);
        let item = Collected {
            model: p.model.clone(),
            table: format!("{schema}.{table}"),
            orphaned_at: p.orphaned_at.map(|t| t.to_rfc3339()),
        };
        if opts.dry_run {
            report.dropped.push(item);
            continue;
        }
        if !state.claim(&p.physical_fingerprint, &claimer, cutoff)? {
            report.skipped.push(item);
            continue;
        }
        let what = if p.kind == "VIEW" { "VIEW" } else { "TABLE" };
        match engine.execute(
            &format!("dropping {}", item.table),
            &format!("DROP {what} IF EXISTS {}", item.table),
        ) {
            Ok(()) => {
                state.forget(&p.physical_fingerprint, &claimer)?;
                tracing::info!(
                    model = p.model.as_str(),
                    table = item.table.as_str(),
                    "dropped orphaned physics"
                );
                report.dropped.push(item);
            }
            Err(e) => {
                state.release(&p.physical_fingerprint, &claimer)?;
                return Err(e.into());
            }
        }
    }
    Ok(report)
}
