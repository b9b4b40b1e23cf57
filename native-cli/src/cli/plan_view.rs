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
                .filter(|a| a.category != Category::Unchanged || a.build || !a.batches.is_empty())
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

/// A unified diff of two SQL texts, colored for a terminal.
fn sql_diff(old: &str, new: &str, color: bool) -> String {
    let (red, green, reset) = if color {
        ("\x1b[31m", "\x1b[32m", "\x1b[0m")
    } else {
        ("", "", "")
    };
    let mut out = String::new();
    let diff = similar::TextDiff::from_lines(old, new);
    let changes = diff
        .grouped_ops(3)
        .into_iter()
        .enumerate()
        .flat_map(|(g, ops)| {
            let sep = (g > 0).then_some(None);
            sep.into_iter().chain(
                ops.into_iter()
                    .flat_map(|op| diff.iter_changes(&op).map(Some).collect::<Vec<_>>()),
            )
        });
    for change in changes {
        let Some(change) = change else {
            out.push_str("      ...\n");
            continue;
        };
        let (sign, c) = match change.tag() {
            similar::ChangeTag::Delete => ("-", red),
            similar::ChangeTag::Insert => ("+", green),
            similar::ChangeTag::Equal => (" ", ""),
        };
        let r = if c.is_empty() { "" } else { reset };
        let _ = write!(out, "      {c}{sign} {}{r}", change.value());
        if !change.value().ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// The human plan screen. `color` adds a colored SQL diff of every directly changed model.
pub fn render(plan: &Plan, explain: bool, color: bool) -> String {
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
        .filter(|a| a.category != Category::Unchanged || a.build || !a.batches.is_empty())
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
            let batches = match (a.batches.first(), a.batches.last()) {
                (Some(f), Some(l)) => format!(
                    "  {} batch(es) {}",
                    a.batches.len(),
                    efmesh_core::interval::Range::new(f.start, l.end)
                ),
                _ => String::new(),
            };
            let mut line = format!(
                "  {} {:width$}  {:<26} {}{build}{batches}",
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
            if color && k < SHOWN_PER_CATEGORY {
                if let Some((old, new)) = &a.sql_change {
                    out.push_str(&sql_diff(old, new, true));
                }
            }
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
