//! The operator's overrides: `--reclassify model=verdict` and `--forward-only model`.

use super::classify::Classified;
use super::{Category, PlanError, PlanOptions, Pointer};
use crate::project::Project;

/// Every model an override names is in the project.
pub(super) fn check_names(project: &Project, options: &PlanOptions) -> Result<(), PlanError> {
    for name in options.reclassify.keys().chain(&options.forward_only) {
        if project.index_of(name).is_none() {
            return Err(PlanError::Reclassify {
                model: name.clone(),
                reason: "no such model in the project".into(),
            });
        }
    }
    Ok(())
}

/// Apply the overrides for model `i` to its classification; whether it is forward-only.
pub(super) fn apply(
    project: &Project,
    i: usize,
    pointer: Option<&Pointer>,
    options: &PlanOptions,
    c: &mut Classified,
) -> Result<bool, PlanError> {
    let m = &project.models[i];
    if let Some(&verdict) = options.reclassify.get(&m.name) {
        reclassify(&m.name, verdict, c)?;
    }
    let changed = matches!(
        c.category,
        Category::Breaking | Category::NonBreaking | Category::Indirect
    );
    // `forward_only true` in the model: every change to a served version is forward-only
    if m.policy.forward_only && changed && pointer.is_some() && m.kind.has_history() {
        c.explain.push(
            "forward-only (the model's `forward_only`): keeps the physics and history of the version it replaces"
                .into(),
        );
        return Ok(true);
    }
    let forward_only = options.forward_only.contains(&m.name);
    if forward_only {
        let why = match (c.category, pointer) {
            (_, None) => Some("it has no previous version in this environment".to_string()),
            (Category::Breaking | Category::NonBreaking | Category::Indirect, Some(_))
                if !m.kind.has_history() =>
            {
                Some(format!("a {} model has no history to keep", m.kind.name()))
            }
            (Category::Breaking | Category::NonBreaking | Category::Indirect, Some(_)) => None,
            (other, Some(_)) => Some(format!("it is {} here; nothing to apply", other.label())),
        };
        if let Some(reason) = why {
            return Err(PlanError::ForwardOnly {
                model: m.name.clone(),
                reason,
            });
        }
        c.explain
            .push("forward-only: keeps the physics and history of the version it replaces".into());
    }
    Ok(forward_only)
}

/// The operator's verdict on a direct change, refused where it contradicts the definitions.
fn reclassify(model: &str, verdict: Category, c: &mut Classified) -> Result<(), PlanError> {
    let refuse = |reason: String| PlanError::Reclassify {
        model: model.to_string(),
        reason,
    };
    if !matches!(c.category, Category::Breaking | Category::NonBreaking) {
        return Err(refuse(format!(
            "it is {} here, not a direct change",
            c.category.label()
        )));
    }
    if !matches!(verdict, Category::Breaking | Category::NonBreaking) {
        return Err(refuse("the verdict is `breaking` or `non-breaking`".into()));
    }
    if verdict == Category::NonBreaking {
        if let Some(p) = c
            .explain
            .iter()
            .find(|p| p.ends_with("(removed)") || p.as_str() == "columns")
        {
            return Err(refuse(format!("the change removes or rewrites output columns ({p}), which consumers may read; that is breaking")));
        }
    }
    c.explain.push(format!(
        "reclassified as {} by the operator",
        verdict.label()
    ));
    c.category = verdict;
    Ok(())
}
