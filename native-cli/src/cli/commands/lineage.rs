//! `efmesh lineage <model[.column]>`: the column tree down to its origins, then the filters
//! and joins of every model on the way.

use crate::cli::exit::Exit;
use crate::cli::output::{fail, print_json};
use crate::Efmesh;
use efmesh_core::lineage::{Lineage, LineageNode};
use efmesh_core::sql::lineage::ColumnRef;
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;
use std::path::Path;

/// Run `efmesh lineage`.
pub(crate) fn run(dir: &Path, target: &str, json: bool) -> Exit {
    match Efmesh::open(dir).and_then(|p| p.lineage(target)) {
        Err(e) => fail(e, json),
        Ok(l) => {
            if json {
                print_json(&l);
            } else {
                out!("{}", human(&l));
            }
            Exit::Ok
        }
    }
}

fn name(r: &ColumnRef) -> String {
    format!("{}.{}", r.model, r.column)
}

fn list(refs: &[ColumnRef]) -> String {
    refs.iter().map(name).collect::<Vec<_>>().join(", ")
}

/// The tree for people: each column once in full; a column met again says so instead of
/// repeating its subtree.
fn human(l: &Lineage) -> String {
    let by: HashMap<&ColumnRef, &LineageNode> = l.nodes.iter().map(|n| (&n.at, n)).collect();
    // the walk starts with the columns asked about, each reached once
    let roots: Vec<&LineageNode> = l
        .nodes
        .iter()
        .filter(|n| n.at.model == l.model && l.column.as_ref().is_none_or(|c| &n.at.column == c))
        .collect();
    let mut out = String::new();
    let mut shown: BTreeSet<&ColumnRef> = BTreeSet::new();
    for root in roots {
        tree(&mut out, root, &by, &mut shown, "", None);
    }
    let _ = writeln!(out, "\norigins: {}", list(&l.origins));
    let conditions: Vec<_> = l
        .models
        .iter()
        .filter(|m| !m.filters.is_empty() || !m.joins.is_empty() || !m.gaps.is_empty())
        .collect();
    if !conditions.is_empty() {
        let _ = writeln!(out, "\nrows decided by:");
        let width = conditions.iter().map(|m| m.model.len()).max().unwrap_or(0);
        for m in conditions {
            if !m.filters.is_empty() {
                let _ = writeln!(out, "  {:width$}  filter  {}", m.model, list(&m.filters));
            }
            if !m.joins.is_empty() {
                let _ = writeln!(out, "  {:width$}  join    {}", m.model, list(&m.joins));
            }
            for g in &m.gaps {
                let _ = writeln!(out, "  {:width$}  not traced: {g}", m.model);
            }
        }
    }
    out
}

fn tree<'a>(
    out: &mut String,
    node: &'a LineageNode,
    by: &HashMap<&ColumnRef, &'a LineageNode>,
    shown: &mut BTreeSet<&'a ColumnRef>,
    prefix: &str,
    last: Option<bool>,
) {
    let (branch, child_prefix) = match last {
        None => (String::new(), String::new()),
        Some(true) => (format!("{prefix}└── "), format!("{prefix}    ")),
        Some(false) => (format!("{prefix}├── "), format!("{prefix}│   ")),
    };
    let again = !shown.insert(&node.at);
    let what = match (&node.note, node.sources.is_empty(), again) {
        (_, _, true) if !node.sources.is_empty() => format!("{}, shown above", node.kind),
        (Some(note), _, _) => format!("{}, not traced: {note}", node.kind),
        (None, true, _) if node.kind == "SEED" || node.kind == "EXTERNAL" => node.kind.clone(),
        (None, true, _) if node.kind == "relation" => "not managed by efmesh".into(),
        (None, true, _) => format!("{}, computed here", node.kind),
        (None, false, _) => node.kind.clone(),
    };
    let _ = writeln!(out, "{branch}{}  ({what})", name(&node.at));
    if again {
        return;
    }
    let children: Vec<&LineageNode> = node
        .sources
        .iter()
        .filter_map(|s| by.get(s).copied())
        .collect();
    for (k, child) in children.iter().enumerate() {
        tree(
            out,
            child,
            by,
            shown,
            &child_prefix,
            Some(k + 1 == children.len()),
        );
    }
}
