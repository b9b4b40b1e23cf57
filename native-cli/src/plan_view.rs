//! How plans look: the `--json` contract and the compact human screen.

use efmesh_core::plan::{Action, Category, Plan};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Lines shown per category before the rest are counted, so 2,000 models stay readable.
const SHOWN_PER_CATEGORY: usize = 12;

/// The `--json` form of a plan: every changed model, and counts for all.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanJson<'a> {
    /// The environment.
    pub env: &'a str,
    /// Whether applying would change anything.
    pub has_changes: bool,
    /// Models per category, unchanged ones included.
    pub summary: BTreeMap<&'static str, usize>,
    /// One entry per model that is not unchanged (or needs a build).
    pub actions: Vec<&'a Action>,
    /// Warnings for a human.
    pub warnings: &'a [String],
}

impl<'a> PlanJson<'a> {
    /// The view of `plan`.
    pub fn of(plan: &'a Plan) -> Self {
        PlanJson {
            env: &plan.env,
            has_changes: plan.has_changes(),
            summary: plan
                .counts()
                .into_iter()
                .map(|(c, n)| (c.label(), n))
                .collect(),
            actions: plan
                .actions
                .iter()
                .filter(|a| a.category != Category::Unchanged || a.build)
                .collect(),
            warnings: &plan.warnings,
        }
    }
}

fn marker(c: Category) -> &'static str {
    match c {
        Category::Added => "+",
        Category::Removed => "-",
        Category::Breaking => "!",
        Category::NonBreaking => "~",
        Category::Indirect => ">",
        Category::MetadataOnly => "·",
        Category::Unchanged => " ",
    }
}

/// The human plan screen.
pub fn render(plan: &Plan, explain: bool) -> String {
    let mut out = String::new();
    let counts = plan.counts();
    let summary: Vec<String> = counts
        .iter()
        .map(|(c, n)| format!("{n} {}", c.label()))
        .collect();
    let _ = writeln!(
        out,
        "Plan for `{}`: {}",
        plan.env,
        if summary.is_empty() {
            "no models".into()
        } else {
            summary.join(", ")
        }
    );
    if !plan.has_changes() {
        let _ = writeln!(out, "No changes.");
        return out;
    }
    let width = plan
        .actions
        .iter()
        .map(|a| a.model.len())
        .max()
        .unwrap_or(0)
        .min(48);
    let mut by_cat: BTreeMap<Category, Vec<&Action>> = BTreeMap::new();
    for a in plan
        .actions
        .iter()
        .filter(|a| a.category != Category::Unchanged || a.build)
    {
        by_cat.entry(a.category).or_default().push(a);
    }
    for (cat, actions) in by_cat {
        let _ = writeln!(out);
        for (k, a) in actions.iter().enumerate() {
            if k == SHOWN_PER_CATEGORY && actions.len() > SHOWN_PER_CATEGORY + 2 {
                let _ = writeln!(out, "  … and {} more {}", actions.len() - k, cat.label());
                break;
            }
            let build = if a.build { "  [build]" } else { "" };
            let mut line = format!(
                "  {} {:width$}  {:<26} {}{build}",
                marker(cat),
                a.model,
                a.kind,
                cat.label()
            );
            if explain && !a.explain.is_empty() {
                let _ = write!(line, "\n      {}", a.explain.join("\n      "));
            } else if cat == Category::Indirect && !a.caused_by.is_empty() {
                let _ = write!(line, " (via {})", a.caused_by.join(", "));
            }
            let _ = writeln!(out, "{line}");
        }
    }
    let builds = plan.actions.iter().filter(|a| a.build).count();
    let _ = writeln!(
        out,
        "\n{builds} physical build(s); views of `{}` swap in one transaction.",
        plan.env
    );
    for w in &plan.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}
