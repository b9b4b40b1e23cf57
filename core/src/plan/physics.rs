//! Where a version's data lives: its own physics, or an older version's when the change
//! cannot have changed existing rows (physics reuse).

use super::classify::Classified;
use super::{has_physics, Category, PlanState};
use crate::model::Kind;
use crate::project::Project;

/// What [`place`] decided.
pub(super) struct Placed {
    /// The physical fingerprint that holds the version's data.
    pub physical: String,
    /// Whether the data children read stays the same (so they may reuse theirs).
    pub data_kept: bool,
    /// Why, when it reuses older physics.
    pub explain: Vec<String>,
}

/// Place model `i`'s new version.
pub(super) fn place(
    project: &Project,
    i: usize,
    state: &PlanState,
    c: &Classified,
    forward_only: bool,
    data_kept: &[bool],
) -> Placed {
    let m = &project.models[i];
    let fp = &project.fingerprints[i];
    let pointer = state.pointers.get(&m.name);
    let known = state.snapshots.get(fp);
    let reusable_parents = c.changed_parents.iter().all(|&p| data_kept[p]);
    let mut explain = vec![];
    let physical = if let (true, Some(p)) = (forward_only, pointer) {
        p.physical_fingerprint.clone()
    } else if let Some(p) = pointer.filter(|p| &p.fingerprint == fp) {
        // the version the environment serves: its data is where the pointer says
        p.physical_fingerprint.clone()
    } else if let Some(k) = known {
        k.physical_fingerprint.clone()
    } else if let (true, Some(prev)) = (c.same_data, &c.previous_physical) {
        prev.clone()
    } else if let (Category::Indirect, Some(prev)) = (c.category, &c.previous_physical) {
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
    let data_kept = forward_only
        || match c.category {
            Category::Unchanged | Category::MetadataOnly | Category::NonBreaking => true,
            Category::Indirect => {
                physical != *fp
                    || (reusable_parents && matches!(m.kind, Kind::View { .. } | Kind::Embedded))
            }
            _ => false,
        };
    Placed {
        physical,
        data_kept,
        explain,
    }
}
