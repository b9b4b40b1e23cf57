//! Running audits on an engine, and what they found.
//!
//! Apply runs a model's audits over each batch it writes and over the whole table before
//! promotion; `efmesh audit` runs them over an environment's views. Both call [`run`], so a
//! report reads the same wherever it came from: the model, the audit with its arguments, the
//! violation count, and up to [`SAMPLE_ROWS`] violating rows (or, for a continuity gate, the
//! boundaries of the first hole).

use crate::engine::{Engine, Rows};
use crate::Error;
use efmesh_core::audit::builtin::Shape;
use efmesh_core::audit::query::{describe_gaps, AuditQuery};
use efmesh_core::sql::render::Relation;
use efmesh_core::sql::Dialect;
use serde::Serialize;

/// How many violating rows a report shows.
pub const SAMPLE_ROWS: usize = 5;

/// What one audit run found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AuditStatus {
    /// No violations.
    Passed,
    /// Violations of a blocking audit: the apply stops, `efmesh audit` exits 1.
    Failed,
    /// Violations of a non-blocking audit: logged and counted, and the pipeline moves on.
    Warned,
    /// Not run here, and why is in `note` (a per-interval audit in `efmesh audit`).
    Skipped,
}

/// One audit's outcome over one relation.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditResult {
    /// The audited model.
    pub model: String,
    /// The audit with its arguments, as the model calls it.
    pub audit: String,
    /// `per_interval`, `whole` or `everywhere`.
    pub scope: &'static str,
    /// Whether a violation stops the pipeline.
    pub blocking: bool,
    /// What was audited: `whole`, or the batch's interval.
    pub over: String,
    /// The outcome.
    pub status: AuditStatus,
    /// How many violations (rows of the audit query, or holes for a gate).
    pub violations: u64,
    /// Up to five (`SAMPLE_ROWS`) violating rows, values as text (NULL is `None`).
    pub sample: Rows,
    /// For a skipped audit, why; for a gate, where the first hole is.
    pub note: Option<String>,
}

impl AuditResult {
    /// A per-interval audit that an after-the-fact audit cannot evaluate: shown, so a clean
    /// run is not mistaken for full coverage.
    pub fn skipped(model: &str, q: &AuditQuery, why: &str) -> AuditResult {
        AuditResult {
            model: model.into(),
            audit: q.display(),
            scope: q.scope.label(),
            blocking: q.blocking,
            over: "whole".into(),
            status: AuditStatus::Skipped,
            violations: 0,
            sample: Rows::default(),
            note: Some(why.into()),
        }
    }
}

impl std::fmt::Display for AuditResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let word = match self.status {
            AuditStatus::Passed => "passed",
            AuditStatus::Failed => "FAILED",
            AuditStatus::Warned => "warning",
            AuditStatus::Skipped => "skipped",
        };
        write!(f, "{}: {} {word}", self.model, self.audit)?;
        if matches!(self.status, AuditStatus::Failed | AuditStatus::Warned) {
            let s = if self.violations == 1 { "" } else { "s" };
            write!(f, ": {} violation{s} over {}", self.violations, self.over)?;
        }
        if let Some(n) = &self.note {
            write!(f, "\n    {n}")?;
        } else {
            let shown = self.sample.rows.len() as u64;
            for row in &self.sample.rows {
                let cells: Vec<String> = self
                    .sample
                    .columns
                    .iter()
                    .zip(row)
                    .map(|(c, v)| format!("{c}={}", v.as_deref().unwrap_or("NULL")))
                    .collect();
                write!(f, "\n    {}", cells.join(" "))?;
            }
            if self.violations > shown && shown > 0 {
                write!(f, "\n    ... and {} more", self.violations - shown)?;
            }
        }
        Ok(())
    }
}

/// Where an audit runs: the relation it checks and how the rest of its SQL resolves.
pub struct Target<'a> {
    /// The audited model.
    pub model: &'a str,
    /// The environment the audit is for (a metrics label).
    pub env: &'a str,
    /// The relation: a table or view name, or a parenthesized subquery (a batch).
    pub relation: &'a str,
    /// What the report says was audited.
    pub over: &'a str,
    /// The SQL dialect of the engine.
    pub dialect: Dialect,
    /// Other models a named audit references.
    pub resolve: &'a dyn Fn(&str) -> Option<Relation>,
    /// `[start, end)` that a named audit's time macros (`@start_ds`, ...) bind to: the batch,
    /// or the model's whole history.
    pub interval: efmesh_core::interval::Range,
    /// The execution time `@execution_ds` and its siblings bind to.
    pub execution: chrono::NaiveDateTime,
}

/// Run one audit over `target` and report what it found.
pub fn run(engine: &mut dyn Engine, q: &AuditQuery, target: &Target) -> Result<AuditResult, Error> {
    let times = efmesh_core::time::MacroTimes {
        start: target.interval.start,
        end: target.interval.end,
        execution: target.execution,
    };
    let bind_time = |n: &str| efmesh_core::time::bind_macro(n, &times);
    let (sql, shape) = q
        .sql(target.relation, target.dialect, target.resolve, &bind_time)
        .map_err(Error::Render)?;
    let context = format!("auditing {} with {}", target.model, q.call.name);
    let violations = engine
        .query(
            &context,
            &format!("SELECT count(*) FROM ({sql}) AS v"),
            None,
        )?
        .count();
    let result_label = match violations {
        0 => "passed",
        _ if q.blocking => "failed",
        _ => "warned",
    };
    crate::exec::metrics::global()
        .audits
        .with_label_values(&[target.model, target.env, result_label])
        .inc();
    let mut result = AuditResult {
        model: target.model.into(),
        audit: q.display(),
        scope: q.scope.label(),
        blocking: q.blocking,
        over: target.over.into(),
        status: AuditStatus::Passed,
        violations,
        sample: Rows::default(),
        note: None,
    };
    if violations == 0 {
        return Ok(result);
    }
    result.status = if q.blocking {
        AuditStatus::Failed
    } else {
        AuditStatus::Warned
    };
    result.sample = engine.query(&context, &sql, Some(SAMPLE_ROWS))?;
    if shape == Shape::Gaps {
        if let Some(first) = result.sample.rows.first() {
            let cell = |i: usize| first.get(i).cloned().flatten().unwrap_or_default();
            result.note = Some(describe_gaps(&cell(0), &cell(1), violations));
        }
    }
    Ok(result)
}
