//! `efmesh passport <env>`: what each model an environment serves may be believed to answer,
//! declared and effective side by side.
//!
//! Read through the environment's pointers: the coverage is the ledger of the physics the
//! environment serves, so a dev environment that backfilled further than prod says so.

use crate::state::StateStore;
use crate::Error;
use efmesh_core::manifest::Freshness;
use efmesh_core::model::Kind;
use efmesh_core::passport::{Answerable, Effective};
use efmesh_core::project::Project;
use serde::Serialize;

/// One served model's passport.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPassport {
    /// The model.
    pub model: String,
    /// Its kind.
    pub kind: String,
    /// `answerable` as declared on the model.
    pub answerable: Answerable,
    /// Caveats as declared on the model.
    pub caveats: Vec<String>,
    /// What its own ledger says (time-range models only).
    pub freshness: Option<Freshness>,
    /// Narrowed by every ancestor.
    pub effective: Effective,
}

/// Every passport of an environment, in topological order.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PassportReport {
    /// The environment.
    pub env: String,
    /// One per model the environment serves.
    pub models: Vec<ModelPassport>,
}

/// Compute the passports of what `env` serves.
pub fn passports(
    project: &Project,
    state: &mut dyn StateStore,
    env: &str,
) -> Result<PassportReport, Error> {
    let pointers = super::served(state, env)?;
    let pfps: Vec<String> = pointers
        .values()
        .map(|p| p.physical_fingerprint.clone())
        .collect();
    let ledgers = state.ledgers(&pfps)?;
    let ledger_of = |i: usize| {
        pointers
            .get(&project.models[i].name)
            .and_then(|p| ledgers.get(&p.physical_fingerprint))
    };
    let coverage = |i: usize| {
        let start = project.history_start(i)?;
        ledger_of(i)?.covered_through(start, project.history_end(i))
    };
    let effective = project.passports(&coverage);
    let mut models = vec![];
    for &i in project.dag.topological_order() {
        let m = &project.models[i];
        let Some(pointer) = pointers.get(&m.name) else {
            continue;
        };
        let freshness = match &m.kind {
            Kind::IncrementalByTimeRange { .. } => {
                let ledger = ledger_of(i).cloned().unwrap_or_default();
                let failed = state.failed_intervals(&pointer.physical_fingerprint)?;
                Some(Freshness::of(
                    &ledger,
                    project.history_start(i),
                    project.history_end(i),
                    m.interval_unit(),
                    &failed,
                ))
            }
            _ => None,
        };
        models.push(ModelPassport {
            model: m.name.clone(),
            kind: m.kind.name().to_string(),
            answerable: m.answerable,
            caveats: m.caveats.clone(),
            freshness,
            effective: effective[i].clone(),
        });
    }
    Ok(PassportReport {
        env: env.into(),
        models,
    })
}

impl std::fmt::Display for PassportReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dash = |s: Option<&str>| s.unwrap_or("-").to_string();
        let rows: Vec<[String; 6]> = self
            .models
            .iter()
            .map(|m| {
                let e = &m.effective;
                let complete = match (&e.complete_through, &e.limited_by) {
                    (Some(t), _) => t.clone(),
                    (None, Some(_)) => "nothing yet".into(),
                    (None, None) => "-".into(),
                };
                [
                    m.model.clone(),
                    m.answerable.label().into(),
                    e.answerable.label().into(),
                    dash(e.answerable_limited_by.as_deref()),
                    complete,
                    dash(e.limited_by.as_deref()),
                ]
            })
            .collect();
        let header = [
            "model",
            "declared",
            "effective",
            "limited by",
            "complete through",
            "limited by",
        ];
        let mut widths = header.map(str::len);
        for r in &rows {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.len());
            }
        }
        let line = |cells: Vec<&str>| {
            cells
                .iter()
                .zip(widths)
                .map(|(c, w)| format!("{c:w$}"))
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_string()
        };
        writeln!(f, "{}", line(header.to_vec()))?;
        for r in &rows {
            writeln!(f, "{}", line(r.iter().map(String::as_str).collect()))?;
        }
        for m in &self.models {
            for c in &m.effective.caveats {
                if c.model != m.model {
                    continue;
                }
                writeln!(f, "caveat ({}): {}", c.model, c.text)?;
            }
        }
        Ok(())
    }
}
