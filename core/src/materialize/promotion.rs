//! Promotion: an environment is views over physics, so applying a plan to it swaps views.

use super::{RelationKind, SqlDialect};
use crate::naming;
use crate::plan::{Category, Plan};
use std::collections::{BTreeSet, HashMap};

/// The statements (one transaction) that make `plan.env`'s views point at the physics the
/// plan pins (`names`: model → qualified physical relation): create or replace the view of
/// every changed model, drop the view of a removed one or of one that no longer has physics.
/// `comments` gives the statements that document a (re)created view: (model, view) to SQL.
pub fn swap(
    d: &dyn SqlDialect,
    plan: &Plan,
    names: &HashMap<String, String>,
    comments: &dyn Fn(&str, &str) -> Vec<String>,
) -> Vec<String> {
    let mut statements = vec![];
    let mut schemas = BTreeSet::new();
    for a in &plan.actions {
        // physics rebuilt because it was missing may have lost its view with it
        let rebuilt = a
            .physical_fingerprint
            .as_ref()
            .is_some_and(|p| plan.missing_physics.contains(p));
        let changed = a.category != Category::Unchanged || rebuilt;
        let (vs, vt) = naming::view_name(&plan.env, &a.model);
        let view = crate::quote::relation(&vs, &vt);
        match (&a.physical_fingerprint, a.category) {
            (_, Category::Removed) => statements.push(d.drop(RelationKind::View, &view, true)),
            (Some(_), _) if changed => {
                if schemas.insert(vs.clone()) {
                    statements.push(d.create_schema(&vs));
                }
                statements
                    .push(d.replace_view(&view, &format!("SELECT * FROM {}", names[&a.model])));
                statements.extend(comments(&a.model, &view));
            }
            // a version without physics (EMBEDDED, EXTERNAL) has no view; drop one an older
            // version of it may have left
            (None, _) if changed && a.previous_fingerprint.is_some() => {
                statements.push(d.drop(RelationKind::View, &view, true))
            }
            _ => {}
        }
    }
    statements
}
