//! Plans: the diff between the project and an environment, as a value.
//!
//! The planner gets the environment's compact pointers (model → fingerprint, metadata hash),
//! the stored snapshots it needs (previous versions of changed models, and any version of the
//! project's fingerprints the store already knows), and which physics exist. It returns one
//! [`Action`] per model: its category, where its data lives, and whether that physics must be
//! built. Applying a plan is then mechanical, and a no-op plan never touches a stored payload.

mod batches;
pub mod categorize;
mod classify;
mod overrides;
mod physics;
mod warnings;

pub use categorize::{Category, Verdict};

use crate::fingerprint::{self, FINGERPRINT_VERSION};
use crate::interval::{Ledger, Range};
use crate::model::Kind;
use crate::project::Project;
use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// What an environment records about one model: the version it serves and the metadata it
/// was promoted with. Listing these is all a no-op plan reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pointer {
    /// The snapshot (version) the environment serves.
    pub fingerprint: String,
    /// [`fingerprint::metadata_hash`] at promotion.
    pub metadata_hash: String,
    /// Where that version's data lives (its snapshot's physical fingerprint).
    pub physical_fingerprint: String,
}

/// A version as the state store keeps it. Fetched only for the models a plan must compare.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredSnapshot {
    /// The version's fingerprint.
    pub fingerprint: String,
    /// The model name.
    pub name: String,
    /// The fingerprint whose physical table holds this version's data (its own, or an older
    /// version's when an indirect change reused it).
    pub physical_fingerprint: String,
    /// [`fingerprint::definition_hash`] of the version.
    pub definition_hash: String,
    /// The `FINGERPRINT_VERSION` it was computed with.
    pub fingerprint_version: u32,
    /// The fingerprint payload, for field-by-field comparison.
    pub payload: serde_json::Value,
}

/// A snapshot introduced by a plan, for the state store to record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewSnapshot {
    /// The version's fingerprint.
    pub fingerprint: String,
    /// The model name.
    pub name: String,
    /// The model kind's name.
    pub kind: String,
    /// Where its data lives (see [`StoredSnapshot::physical_fingerprint`]).
    pub physical_fingerprint: String,
    /// Its own definition's hash, parents excluded.
    pub definition_hash: String,
    /// Its metadata hash at creation.
    pub metadata_hash: String,
    /// The fingerprint payload.
    pub payload: serde_json::Value,
    /// The algorithm version.
    pub fingerprint_version: u32,
}

/// The state a plan is computed against, as data.
#[derive(Debug, Clone, Copy)]
pub struct PlanState<'a> {
    /// The environment's pointers (empty for a new environment).
    pub pointers: &'a BTreeMap<String, Pointer>,
    /// Stored snapshots by fingerprint; must hold at least those [`needed_snapshots`] names.
    pub snapshots: &'a HashMap<String, StoredSnapshot>,
    /// Physical fingerprints whose physics exist.
    pub built: &'a HashSet<String>,
    /// Done intervals by physical fingerprint (time-range models; see [`ledger_candidates`]).
    pub ledgers: &'a HashMap<String, Ledger>,
    /// "Now": intervals up to the last complete one before it are due.
    pub now: NaiveDateTime,
}

/// The operator's overrides for one plan.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanOptions {
    /// `--reclassify model=breaking|non-breaking`: the operator's verdict on a direct change.
    pub reclassify: BTreeMap<String, Category>,
    /// `--forward-only model,...`: apply the change without replaying history.
    pub forward_only: BTreeSet<String>,
    /// Physical fingerprints whose physics the state records but reality lacks (a dropped
    /// table, a lost manifest, deleted files), each with what is missing: found by the native
    /// side before planning, and planned as physics to rebuild from its whole history, never
    /// as served data.
    pub missing_physics: BTreeMap<String, String>,
}

/// What the plan does to one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Action {
    /// The model name.
    pub model: String,
    /// The model kind (`FULL`, ...), or the removed version's kind.
    pub kind: String,
    /// How the model changed.
    pub category: Category,
    /// The version the environment will serve (`None` when removed).
    pub fingerprint: Option<String>,
    /// The version it served before (`None` when added).
    pub previous_fingerprint: Option<String>,
    /// Where the served version's data lives.
    pub physical_fingerprint: Option<String>,
    /// Whether that physics must be built by this apply.
    pub build: bool,
    /// Diverged definition paths, or the reason for the category.
    pub explain: Vec<String>,
    /// For indirect changes: the changed parents that caused it.
    pub caused_by: Vec<String>,
    /// Whether the new version keeps the previous version's physics and history
    /// (`--forward-only`); added columns arrive through ALTER and are NULL for past rows.
    pub forward_only: bool,
    /// For time-range models: the batches to compute, each one `[start, end)` written in one
    /// transaction.
    pub batches: Vec<Range>,
    /// The previous and the new canonical query, for a human diff of direct changes.
    #[serde(skip)]
    pub sql_change: Option<(String, String)>,
}

/// A plan: every model's action, parents before children, removals last.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    /// The target environment.
    pub env: String,
    /// One action per model in the project or the environment.
    pub actions: Vec<Action>,
    /// Warnings to show with the plan.
    pub warnings: Vec<String>,
    /// Versions the store does not know yet.
    #[serde(skip)]
    pub new_snapshots: Vec<NewSnapshot>,
    /// Physical fingerprints this plan rebuilds because their physics is missing
    /// ([`PlanOptions::missing_physics`]): apply voids their ledgers before it builds them.
    #[serde(skip)]
    pub missing_physics: Vec<String>,
}

impl Plan {
    /// Whether applying the plan changes the environment or builds anything.
    pub fn has_changes(&self) -> bool {
        self.actions
            .iter()
            .any(|a| a.category != Category::Unchanged || a.build || !a.batches.is_empty())
    }

    /// How many models fall in each category.
    pub fn counts(&self) -> BTreeMap<Category, usize> {
        let mut c = BTreeMap::new();
        for a in &self.actions {
            *c.entry(a.category).or_default() += 1;
        }
        c
    }

    /// The pointers the environment holds after the plan is applied.
    pub fn pointers_after(&self, project: &Project) -> BTreeMap<String, Pointer> {
        self.actions
            .iter()
            .filter_map(|a| {
                let fp = a.fingerprint.clone()?;
                let i = project.index_of(&a.model)?;
                Some((
                    a.model.clone(),
                    Pointer {
                        physical_fingerprint: a
                            .physical_fingerprint
                            .clone()
                            .unwrap_or_else(|| fp.clone()),
                        fingerprint: fp,
                        metadata_hash: fingerprint::metadata_hash(&project.models[i]),
                    },
                ))
            })
            .collect()
    }
}

/// Why a plan cannot be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// The environment serves a version written by a newer efmesh.
    #[error("`{model}` was last applied by an efmesh with fingerprint version {found} (this one has {FINGERPRINT_VERSION}); upgrade efmesh")]
    NewerFingerprintVersion {
        /// The model.
        model: String,
        /// The stored version.
        found: u32,
    },
    /// A `--reclassify` that names no direct change, or contradicts the definitions.
    #[error("cannot reclassify `{model}`: {reason}")]
    Reclassify {
        /// The model.
        model: String,
        /// Why not.
        reason: String,
    },
    /// A model's due work would be more batches than one plan holds: a history reaching far
    /// back at a fine grain (a minute cron from 1900), usually a mistake, and in any case more
    /// than a plan should print or an apply should journal.
    #[error("`{model}` would compute {batches} batches in one plan; at most {limit} are allowed")]
    TooManyBatches {
        /// The model.
        model: String,
        /// How many its due intervals would make.
        batches: i64,
        /// [`batches::MAX_BATCHES`].
        limit: usize,
    },
    /// A `--forward-only` that cannot apply.
    #[error("cannot apply `{model}` forward-only: {reason}")]
    ForwardOnly {
        /// The model.
        model: String,
        /// Why not.
        reason: String,
    },
}

/// The fingerprints whose stored snapshots a plan needs: the previous version of every model
/// whose fingerprint changed, and the new version (the store may know it from another
/// environment). Unchanged models need nothing.
pub fn needed_snapshots(project: &Project, pointers: &BTreeMap<String, Pointer>) -> Vec<String> {
    let mut out = vec![];
    for (m, fp) in project.models.iter().zip(&project.fingerprints) {
        match pointers.get(&m.name) {
            Some(p) if &p.fingerprint == fp => {}
            Some(p) => {
                out.push(p.fingerprint.clone());
                out.push(fp.clone());
            }
            None => out.push(fp.clone()),
        }
    }
    // removed models, so the plan can say what they were
    out.extend(
        pointers
            .iter()
            .filter(|(name, _)| project.index_of(name).is_none())
            .map(|(_, p)| p.fingerprint.clone()),
    );
    out
}

/// The physical fingerprints whose ledgers a plan may consult: for every interval model, the
/// served version's physics, the new version's, and (for reuse) the previous version's.
pub fn ledger_candidates(
    project: &Project,
    pointers: &BTreeMap<String, Pointer>,
    snapshots: &HashMap<String, StoredSnapshot>,
) -> Vec<String> {
    let mut out = vec![];
    for (m, fp) in project.models.iter().zip(&project.fingerprints) {
        if !has_intervals(&m.kind) {
            continue;
        }
        out.push(fp.clone());
        if let Some(s) = snapshots.get(fp) {
            out.push(s.physical_fingerprint.clone());
        }
        if let Some(p) = pointers.get(&m.name) {
            out.push(p.physical_fingerprint.clone());
            if let Some(s) = snapshots.get(&p.fingerprint) {
                out.push(s.physical_fingerprint.clone());
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Whether a model kind is computed interval by interval through the ledger.
pub fn has_intervals(kind: &Kind) -> bool {
    matches!(
        kind,
        Kind::IncrementalByTimeRange { .. }
            | Kind::IncrementalByUniqueKey { .. }
            | Kind::ScdType2 { .. }
            | Kind::ScdType2ByColumn { .. }
    )
}

/// Whether a model kind has physics of its own.
pub fn has_physics(kind: &Kind) -> bool {
    !matches!(kind, Kind::Embedded | Kind::External { .. })
}

/// Compute the plan for `env`: for each model in topological order, how it changed
/// (`classify.rs`), the operator's overrides (`overrides.rs`), where its data lives
/// (`physics.rs`), and what is due (`batches.rs`); then the plan's warnings and the models the
/// environment serves that the project no longer has.
pub fn plan(
    project: &Project,
    env: &str,
    state: PlanState,
    options: &PlanOptions,
) -> Result<Plan, PlanError> {
    overrides::check_names(project, options)?;
    let legacy = classify::Legacies::of(project, &state);
    let n = project.models.len();
    let mut actions: Vec<Option<Action>> = vec![None; n];
    // per model: did its served data stay the same (so children may reuse their physics)?
    let mut data_kept = vec![true; n];
    let mut new_snapshots = vec![];
    for &i in project.dag.topological_order() {
        let m = &project.models[i];
        let fp = &project.fingerprints[i];
        let pointer = state.pointers.get(&m.name);
        let mut c = classify::classify(project, i, &state, &legacy, &data_kept)?;
        let forward_only = overrides::apply(project, i, pointer, options, &mut c)?;
        let placed = physics::place(project, i, &state, &c, forward_only, &data_kept);
        data_kept[i] = placed.data_kept;
        c.explain.extend(placed.explain);
        let physical = placed.physical;
        // a version the environment already serves was built before it was promoted
        let served = pointer.is_some_and(|p| &p.fingerprint == fp);
        let missing = options.missing_physics.get(&physical);
        let build = has_physics(&m.kind)
            && (missing.is_some() || (!served && !state.built.contains(&physical)));
        let batches = batches::due(project, i, &state, &physical, missing.is_some())?;
        if let Some(what) = missing {
            c.explain.push(format!(
                "its physics is missing ({what}); rebuilt from its whole history"
            ));
        }
        if !state.snapshots.contains_key(fp) {
            new_snapshots.push(new_snapshot(project, i, &physical));
        }
        actions[i] = Some(Action {
            model: m.name.clone(),
            kind: m.kind.name().to_string(),
            category: c.category,
            fingerprint: Some(fp.clone()),
            previous_fingerprint: pointer.map(|p| p.fingerprint.clone()),
            physical_fingerprint: has_physics(&m.kind).then(|| physical.clone()),
            build,
            explain: c.explain,
            caused_by: c.caused_by,
            forward_only,
            batches,
            sql_change: c.sql_change,
        });
    }
    let mut ordered: Vec<Action> = project
        .dag
        .topological_order()
        .iter()
        .filter_map(|&i| actions[i].take())
        .collect();
    ordered.extend(removed(project, &state));
    let mut warnings = warnings::of(project);
    let mut missing_physics = vec![];
    for a in &ordered {
        let Some(what) = a
            .physical_fingerprint
            .as_ref()
            .and_then(|p| options.missing_physics.get(p))
        else {
            continue;
        };
        warnings.push(format!(
            "`{}`: its physics is missing ({what}); this plan rebuilds it from its whole history",
            a.model
        ));
        missing_physics.extend(a.physical_fingerprint.clone());
    }
    Ok(Plan {
        env: env.to_string(),
        actions: ordered,
        warnings,
        new_snapshots,
        missing_physics,
    })
}

/// The snapshot a plan introduces for model `i`, its data at `physical`.
fn new_snapshot(project: &Project, i: usize, physical: &str) -> NewSnapshot {
    let m = &project.models[i];
    let seed = project.seed_hashes[i].as_deref();
    let parents: Vec<(&str, &str)> = project
        .dag
        .parents(i)
        .iter()
        .map(|&p| {
            (
                project.models[p].name.as_str(),
                project.fingerprints[p].as_str(),
            )
        })
        .collect();
    NewSnapshot {
        fingerprint: project.fingerprints[i].clone(),
        name: m.name.clone(),
        kind: m.kind.name().to_string(),
        physical_fingerprint: physical.to_string(),
        definition_hash: fingerprint::definition_hash(m, seed),
        metadata_hash: fingerprint::metadata_hash(m),
        payload: fingerprint::payload_json(m, seed, &parents),
        fingerprint_version: FINGERPRINT_VERSION,
    }
}

/// One `removed` action per model the environment serves that the project no longer has.
fn removed(project: &Project, state: &PlanState) -> Vec<Action> {
    state
        .pointers
        .iter()
        .filter(|(name, _)| project.index_of(name).is_none())
        .map(|(name, p)| Action {
            model: name.clone(),
            kind: state
                .snapshots
                .get(&p.fingerprint)
                .and_then(|s| s.payload.pointer("/kind/name"))
                .and_then(|k| k.as_str())
                .unwrap_or("")
                .to_string(),
            category: Category::Removed,
            fingerprint: None,
            previous_fingerprint: Some(p.fingerprint.clone()),
            physical_fingerprint: None,
            build: false,
            explain: vec!["no longer in the project".into()],
            caused_by: vec![],
            forward_only: false,
            batches: vec![],
            sql_change: None,
        })
        .collect()
}

#[cfg(test)]
mod tests;
