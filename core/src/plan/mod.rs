//! Plans: the diff between the project and an environment, as a value.
//!
//! The planner gets the environment's compact pointers (model → fingerprint, metadata hash),
//! the stored snapshots it needs (previous versions of changed models, and any version of the
//! project's fingerprints the store already knows), and which physics exist. It returns one
//! [`Action`] per model: its category, where its data lives, and whether that physics must be
//! built. Applying a plan is then mechanical, and a no-op plan never touches a stored payload.

pub mod categorize;

pub use categorize::{Category, Verdict};

use crate::fingerprint::{self, FINGERPRINT_VERSION};
use crate::interval::{self, Ledger, Range};
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

/// Compute the plan for `env`.
pub fn plan(
    project: &Project,
    env: &str,
    state: PlanState,
    options: &PlanOptions,
) -> Result<Plan, PlanError> {
    for name in options.reclassify.keys().chain(&options.forward_only) {
        if project.index_of(name).is_none() {
            return Err(PlanError::Reclassify {
                model: name.clone(),
                reason: "no such model in the project".into(),
            });
        }
    }
    let dialect = project.config.dialect();
    let n = project.models.len();
    // versions served from an older fingerprint algorithm: the project's fingerprints as that
    // algorithm computes them, to tell an unchanged definition from a changed one
    let mut legacy: BTreeMap<u32, Option<fingerprint::legacy::Legacy>> = BTreeMap::new();
    for p in state.pointers.values() {
        if let Some(old) = state.snapshots.get(&p.fingerprint) {
            if old.fingerprint_version < FINGERPRINT_VERSION {
                legacy
                    .entry(old.fingerprint_version)
                    .or_insert_with(|| project.legacy(old.fingerprint_version));
            }
        }
    }
    let legacy_of = |old: &StoredSnapshot| {
        legacy
            .get(&old.fingerprint_version)
            .and_then(|l| l.as_ref())
    };
    let mut actions: Vec<Option<Action>> = vec![None; n];
    // per model: did its served data stay the same (so children may reuse their physics)?
    let mut data_kept = vec![true; n];
    let mut new_snapshots = vec![];
    for &i in project.dag.topological_order() {
        let m = &project.models[i];
        let fp = &project.fingerprints[i];
        let seed = project.seed_hashes[i].as_deref();
        let def_hash = fingerprint::definition_hash(m, seed);
        let meta = fingerprint::metadata_hash(m);
        let pointer = state.pointers.get(&m.name);
        let changed_parents: Vec<usize> = project
            .dag
            .parents(i)
            .iter()
            .copied()
            .filter(|&p| {
                state
                    .pointers
                    .get(&project.models[p].name)
                    .map(|x| &x.fingerprint)
                    != Some(&project.fingerprints[p])
            })
            .collect();
        let mut explain = vec![];
        let mut caused_by = vec![];
        let mut previous_physical = None;
        // the new fingerprint names the data the previous version built (an algorithm upgrade)
        let mut same_data = false;
        let mut sql_change = None;
        let category = match pointer {
            None => Category::Added,
            Some(p) if &p.fingerprint == fp => {
                if p.metadata_hash == meta {
                    Category::Unchanged
                } else {
                    Category::MetadataOnly
                }
            }
            Some(p) => match state.snapshots.get(&p.fingerprint) {
                None => {
                    explain.push("the previous version is missing from the state store".into());
                    Category::Breaking
                }
                Some(old) if old.fingerprint_version > FINGERPRINT_VERSION => {
                    return Err(PlanError::NewerFingerprintVersion {
                        model: m.name.clone(),
                        found: old.fingerprint_version,
                    })
                }
                Some(old)
                    if old.fingerprint_version < FINGERPRINT_VERSION
                        && legacy_of(old).is_some_and(|l| l.fingerprints[i] == old.fingerprint) =>
                {
                    explain.push(format!(
                        "fingerprint version changed from {} to {FINGERPRINT_VERSION}; the definition is the one built, so it keeps its physics and history",
                        old.fingerprint_version
                    ));
                    previous_physical = Some(old.physical_fingerprint.clone());
                    same_data = true;
                    Category::MetadataOnly
                }
                Some(old)
                    if old.definition_hash
                        == if old.fingerprint_version < FINGERPRINT_VERSION {
                            legacy_of(old)
                                .map(|l| l.definition_hashes[i].as_str())
                                .unwrap_or_default()
                        } else {
                            def_hash.as_str()
                        } =>
                {
                    previous_physical = Some(old.physical_fingerprint.clone());
                    // across an algorithm upgrade every parent is re-fingerprinted; name the
                    // ones whose data really changed
                    let real: Vec<usize> = changed_parents
                        .iter()
                        .copied()
                        .filter(|&p| !data_kept[p])
                        .collect();
                    let causes = if real.is_empty() {
                        &changed_parents
                    } else {
                        &real
                    };
                    caused_by = causes
                        .iter()
                        .map(|&p| project.models[p].name.clone())
                        .collect();
                    explain.push(format!("changed through {}", caused_by.join(", ")));
                    Category::Indirect
                }
                Some(old) if old.fingerprint_version < FINGERPRINT_VERSION => {
                    explain.push(format!(
                        "fingerprint version changed from {} to {FINGERPRINT_VERSION}, and the definition changed since it was built",
                        old.fingerprint_version
                    ));
                    Category::Breaking
                }
                Some(old) => {
                    let new_payload = fingerprint::payload_json(m, seed, &[]);
                    let mut old_payload = old.payload.clone();
                    if let Some(o) = old_payload.as_object_mut() {
                        o.insert("parents".into(), serde_json::json!([]));
                    }
                    let v = categorize::compare(&old_payload, &new_payload, dialect);
                    let q = |p: &serde_json::Value| {
                        p.get("query")
                            .and_then(|q| q.as_str())
                            .map(|q| crate::sql::pretty(q, dialect))
                    };
                    if let (Some(o), Some(n)) = (q(&old_payload), q(&new_payload)) {
                        sql_change = Some((o, n));
                    }
                    explain = v.paths;
                    v.category
                }
            },
        };
        let mut category = category;
        if let Some(&verdict) = options.reclassify.get(&m.name) {
            if !matches!(category, Category::Breaking | Category::NonBreaking) {
                return Err(PlanError::Reclassify {
                    model: m.name.clone(),
                    reason: format!("it is {} here, not a direct change", category.label()),
                });
            }
            if !matches!(verdict, Category::Breaking | Category::NonBreaking) {
                return Err(PlanError::Reclassify {
                    model: m.name.clone(),
                    reason: "the verdict is `breaking` or `non-breaking`".into(),
                });
            }
            if verdict == Category::NonBreaking {
                if let Some(p) = explain
                    .iter()
                    .find(|p| p.ends_with("(removed)") || p.as_str() == "columns")
                {
                    return Err(PlanError::Reclassify {
                        model: m.name.clone(),
                        reason: format!("the change removes or rewrites output columns ({p}), which consumers may read; that is breaking"),
                    });
                }
            }
            explain.push(format!(
                "reclassified as {} by the operator",
                verdict.label()
            ));
            category = verdict;
        }
        let forward_only = options.forward_only.contains(&m.name);
        if forward_only {
            let why = match (category, pointer) {
                (_, None) => Some("it has no previous version in this environment".to_string()),
                (Category::Breaking | Category::NonBreaking | Category::Indirect, Some(_))
                    if matches!(
                        m.kind,
                        Kind::View { .. }
                            | Kind::Embedded
                            | Kind::External { .. }
                            | Kind::Seed { .. }
                    ) =>
                {
                    Some(format!("a {} model has no history to keep", m.kind.name()))
                }
                (Category::Breaking | Category::NonBreaking | Category::Indirect, Some(_)) => None,
                (c, Some(_)) => Some(format!("it is {} here; nothing to apply", c.label())),
            };
            if let Some(reason) = why {
                return Err(PlanError::ForwardOnly {
                    model: m.name.clone(),
                    reason,
                });
            }
            explain.push(
                "forward-only: keeps the physics and history of the version it replaces".into(),
            );
        }
        // where the data of this version lives
        let known = state.snapshots.get(fp);
        let reusable_parents = changed_parents.iter().all(|&p| data_kept[p]);
        let physical = if let (true, Some(p)) = (forward_only, pointer) {
            p.physical_fingerprint.clone()
        } else if let Some(p) = pointer.filter(|p| &p.fingerprint == fp) {
            // the version the environment serves: its data is where the pointer says
            p.physical_fingerprint.clone()
        } else if let Some(k) = known {
            k.physical_fingerprint.clone()
        } else if let (true, Some(prev)) = (same_data, &previous_physical) {
            prev.clone()
        } else if let (Category::Indirect, Some(prev)) = (category, &previous_physical) {
            let materialized = has_physics(&m.kind) && !matches!(m.kind, Kind::View { .. });
            let star = m
                .query
                .as_ref()
                .is_none_or(|q| q.ast().is_none_or(crate::sql::columns::has_wildcard));
            if materialized && reusable_parents && !star {
                explain.push("reuses the previous version's physics: every changed parent kept its existing columns".into());
                prev.clone()
            } else {
                fp.clone()
            }
        } else {
            fp.clone()
        };
        data_kept[i] = forward_only
            || match category {
                Category::Unchanged | Category::MetadataOnly => true,
                Category::NonBreaking => true,
                Category::Indirect => {
                    physical != *fp
                        || (reusable_parents
                            && matches!(m.kind, Kind::View { .. } | Kind::Embedded))
                }
                _ => false,
            };
        // a version the environment already serves was built before it was promoted
        let served = pointer.is_some_and(|p| &p.fingerprint == fp);
        let build = has_physics(&m.kind) && !served && !state.built.contains(&physical);
        let batches = match &m.kind {
            kind if has_intervals(kind) => {
                let (batch_size, lookback) = match kind {
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
                let ledger = state.ledgers.get(&physical).unwrap_or(&empty);
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
            _ => vec![],
        };
        if known.is_none() {
            new_snapshots.push(NewSnapshot {
                fingerprint: fp.clone(),
                name: m.name.clone(),
                kind: m.kind.name().to_string(),
                physical_fingerprint: physical.clone(),
                definition_hash: def_hash,
                metadata_hash: meta,
                payload: fingerprint::payload_json(
                    m,
                    seed,
                    &project
                        .dag
                        .parents(i)
                        .iter()
                        .map(|&p| {
                            (
                                project.models[p].name.as_str(),
                                project.fingerprints[p].as_str(),
                            )
                        })
                        .collect::<Vec<_>>(),
                ),
                fingerprint_version: FINGERPRINT_VERSION,
            });
        }
        actions[i] = Some(Action {
            model: m.name.clone(),
            kind: m.kind.name().to_string(),
            category,
            fingerprint: Some(fp.clone()),
            previous_fingerprint: pointer.map(|p| p.fingerprint.clone()),
            physical_fingerprint: has_physics(&m.kind).then(|| physical.clone()),
            build,
            explain,
            caused_by,
            forward_only,
            batches,
            sql_change,
        });
    }
    let mut warnings = vec![];
    for &i in project.dag.topological_order() {
        let m = &project.models[i];
        if let Kind::IncrementalByTimeRange { .. } = &m.kind {
            let batch_size = &m.batching.size;
            let windowed = m
                .query
                .as_ref()
                .and_then(|q| q.ast())
                .is_some_and(crate::sql::columns::has_window_function);
            if windowed && *batch_size != Some(1) {
                let width = batch_size
                    .map(|n| format!("batch_size {n}"))
                    .unwrap_or_else(|| {
                        "no batch_size (one batch for the whole missing range)".into()
                    });
                // a per-batch audit sees the batch as rendered, so it inherits the dependence
                let audits = if m.audits.iter().any(|c| {
                    crate::audit::query::resolve(c, &|n| project.audits.get(n))
                        .is_some_and(|q| q.scope.per_batch())
                }) {
                    "; its per-interval audits check each batch as rendered, so they depend on it too (README: \"Audits and batches\")"
                } else {
                    ""
                };
                warnings.push(format!(
                    "window-over-batch: `{}` computes a window function over each batch, and with {width} its result depends on how wide a batch is; set `batch_size 1` if every interval must be computed alone{audits}",
                    m.name
                ));
            }
        }
    }
    let mut ordered: Vec<Action> = project
        .dag
        .topological_order()
        .iter()
        .filter_map(|&i| actions[i].take())
        .collect();
    for (name, p) in state.pointers {
        if project.index_of(name).is_none() {
            ordered.push(Action {
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
            });
        }
    }
    Ok(Plan {
        env: env.to_string(),
        actions: ordered,
        warnings,
        new_snapshots,
    })
}
