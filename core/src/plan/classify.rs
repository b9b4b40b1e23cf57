//! How one model changed: its category against the version the environment serves.

use super::categorize;
use super::{Category, PlanError, PlanState, StoredSnapshot};
use crate::fingerprint::{self, legacy::Legacy, FINGERPRINT_VERSION};
use crate::project::Project;
use std::collections::BTreeMap;

/// The project as each older fingerprint algorithm the environment still serves computed it,
/// so a version built before an upgrade is recognised (`None`: not reproducible).
pub(super) struct Legacies(BTreeMap<u32, Option<Legacy>>);

impl Legacies {
    /// Only the algorithm versions some served snapshot was made with.
    pub(super) fn of(project: &Project, state: &PlanState) -> Legacies {
        let mut out = BTreeMap::new();
        for p in state.pointers.values() {
            if let Some(old) = state.snapshots.get(&p.fingerprint) {
                if old.fingerprint_version < FINGERPRINT_VERSION {
                    out.entry(old.fingerprint_version)
                        .or_insert_with(|| project.legacy(old.fingerprint_version));
                }
            }
        }
        Legacies(out)
    }

    fn get(&self, old: &StoredSnapshot) -> Option<&Legacy> {
        self.0
            .get(&old.fingerprint_version)
            .and_then(|l| l.as_ref())
    }
}

/// What [`classify`] decided about one model.
pub(super) struct Classified {
    /// How it changed.
    pub category: Category,
    /// Why: diverged definition paths, or the reason for the category.
    pub explain: Vec<String>,
    /// For indirect changes, the changed parents behind it.
    pub caused_by: Vec<String>,
    /// Parents whose served version differs from the project's.
    pub changed_parents: Vec<usize>,
    /// The physics of the version it replaces, when its data may carry over.
    pub previous_physical: Option<String>,
    /// The new fingerprint names exactly the data the previous version built (a fingerprint
    /// algorithm upgrade over an unchanged definition).
    pub same_data: bool,
    /// The previous and new canonical query, for a human diff.
    pub sql_change: Option<(String, String)>,
}

/// Classify model `i` against the environment in `state`. `data_kept` says, for models
/// already classified (its parents), whether their served data stayed the same.
pub(super) fn classify(
    project: &Project,
    i: usize,
    state: &PlanState,
    legacy: &Legacies,
    data_kept: &[bool],
) -> Result<Classified, PlanError> {
    let m = &project.models[i];
    let fp = &project.fingerprints[i];
    let seed = project.seed_hashes[i].as_deref();
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
    let mut c = Classified {
        category: Category::Added,
        explain: vec![],
        caused_by: vec![],
        changed_parents,
        previous_physical: None,
        same_data: false,
        sql_change: None,
    };
    let Some(pointer) = state.pointers.get(&m.name) else {
        return Ok(c);
    };
    if &pointer.fingerprint == fp {
        c.category = if pointer.metadata_hash == fingerprint::metadata_hash(m) {
            Category::Unchanged
        } else {
            Category::MetadataOnly
        };
        return Ok(c);
    }
    let Some(old) = state.snapshots.get(&pointer.fingerprint) else {
        c.explain
            .push("the previous version is missing from the state store".into());
        c.category = Category::Breaking;
        return Ok(c);
    };
    if old.fingerprint_version > FINGERPRINT_VERSION {
        return Err(PlanError::NewerFingerprintVersion {
            model: m.name.clone(),
            found: old.fingerprint_version,
        });
    }
    let upgraded = old.fingerprint_version < FINGERPRINT_VERSION;
    let (old_fp, old_def) = if upgraded {
        match legacy.get(old) {
            Some(l) => (
                Some(l.fingerprints[i].clone()),
                Some(l.definition_hashes[i].clone()),
            ),
            None => (None, None),
        }
    } else {
        (None, Some(fingerprint::definition_hash(m, seed)))
    };
    if upgraded && old_fp.as_deref() == Some(old.fingerprint.as_str()) {
        c.explain.push(format!(
            "fingerprint version changed from {} to {FINGERPRINT_VERSION}; the definition is the one built, so it keeps its physics and history",
            old.fingerprint_version
        ));
        c.previous_physical = Some(old.physical_fingerprint.clone());
        c.same_data = true;
        c.category = Category::MetadataOnly;
    } else if old_def.as_deref() == Some(old.definition_hash.as_str()) {
        c.previous_physical = Some(old.physical_fingerprint.clone());
        // across an algorithm upgrade every parent is re-fingerprinted; name the ones whose
        // data really changed
        let real: Vec<usize> = c
            .changed_parents
            .iter()
            .copied()
            .filter(|&p| !data_kept[p])
            .collect();
        let causes = if real.is_empty() {
            &c.changed_parents
        } else {
            &real
        };
        c.caused_by = causes
            .iter()
            .map(|&p| project.models[p].name.clone())
            .collect();
        c.explain
            .push(format!("changed through {}", c.caused_by.join(", ")));
        c.category = Category::Indirect;
    } else if upgraded {
        c.explain.push(format!(
            "fingerprint version changed from {} to {FINGERPRINT_VERSION}, and the definition changed since it was built",
            old.fingerprint_version
        ));
        c.category = Category::Breaking;
    } else {
        let dialect = project.config.dialect();
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
            c.sql_change = Some((o, n));
        }
        c.explain = v.paths;
        c.category = v.category;
    }
    Ok(c)
}
