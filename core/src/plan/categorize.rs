//! Change categories: how a new version of a model relates to the one an environment serves.
//!
//! A change is non-breaking only when efmesh can prove it: the select list was extended
//! strictly at its end and nothing else in the definition changed. Everything else that
//! changes a model's own definition is breaking.

use crate::sql::Dialect;
use serde::Serialize;
use sqlparser::ast::{Query, SetExpr, Statement};
use sqlparser::parser::Parser;

/// What a plan does to one model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// New in this environment.
    Added,
    /// No longer in the project; its view goes away, its physics waits for the janitor.
    Removed,
    /// Its own definition changed in a way that may change existing rows.
    Breaking,
    /// Its select list was extended at the end; existing columns keep their meaning.
    NonBreaking,
    /// Unchanged itself, but a parent changed.
    Indirect,
    /// Only properties outside the fingerprint changed (cron, description, audits, ...).
    MetadataOnly,
    /// Nothing changed.
    Unchanged,
}

impl Category {
    /// Every category, in the order reports list them.
    pub const ALL: &'static [Category] = &[
        Category::Added,
        Category::Removed,
        Category::Breaking,
        Category::NonBreaking,
        Category::Indirect,
        Category::MetadataOnly,
        Category::Unchanged,
    ];

    /// The label used in human output and `--json`.
    pub fn label(self) -> &'static str {
        match self {
            Category::Added => "added",
            Category::Removed => "removed",
            Category::Breaking => "breaking",
            Category::NonBreaking => "non-breaking",
            Category::Indirect => "indirect",
            Category::MetadataOnly => "metadata-only",
            Category::Unchanged => "unchanged",
        }
    }
}

/// The verdict on a directly changed model, with the definition paths that diverged.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// `Breaking` or `NonBreaking`.
    pub category: Category,
    /// Where the definitions diverged: `kind`, `where`, `projection[2] (added)`, ...
    pub paths: Vec<String>,
}

/// Compare two fingerprint payloads (as stored in snapshots) of the same model.
pub fn compare(old: &serde_json::Value, new: &serde_json::Value, dialect: Dialect) -> Verdict {
    let mut paths = vec![];
    let mut non_breaking_candidate = true;
    for key in ["kind", "grain", "target", "seed_hash", "redact", "name"] {
        if old.get(key) != new.get(key) {
            paths.push(key.to_string());
            non_breaking_candidate = false;
        }
    }
    let (oc, nc) = (old.get("columns"), new.get("columns"));
    if oc != nc {
        match (oc.and_then(|v| v.as_array()), nc.and_then(|v| v.as_array())) {
            (Some(o), Some(n)) if n.len() > o.len() && n[..o.len()] == o[..] => {
                for i in o.len()..n.len() {
                    paths.push(format!("columns[{i}] (added)"));
                }
            }
            _ => {
                paths.push("columns".into());
                non_breaking_candidate = false;
            }
        }
    }
    let oq = old.get("query").and_then(|v| v.as_str());
    let nq = new.get("query").and_then(|v| v.as_str());
    if oq != nq {
        match (
            oq.and_then(|q| parse(q, dialect)),
            nq.and_then(|q| parse(q, dialect)),
        ) {
            (Some(o), Some(n)) => {
                let (qpaths, appended_only) = diff_queries(&o, &n);
                paths.extend(qpaths);
                non_breaking_candidate &= appended_only;
            }
            _ => {
                paths.push("query (compared as text)".into());
                non_breaking_candidate = false;
            }
        }
    }
    let category = if non_breaking_candidate
        && !paths.is_empty()
        && paths.iter().any(|p| p.starts_with("projection"))
    {
        Category::NonBreaking
    } else {
        Category::Breaking
    };
    Verdict { category, paths }
}

fn parse(sql: &str, dialect: Dialect) -> Option<Query> {
    let d = dialect.parser();
    match Parser::parse_sql(d.as_ref(), sql).ok()?.pop()? {
        Statement::Query(q) => Some(*q),
        _ => None,
    }
}

/// The diverged paths of two queries, and whether the only difference is items appended to
/// the select list of a plain SELECT.
fn diff_queries(old: &Query, new: &Query) -> (Vec<String>, bool) {
    let mut paths = vec![];
    let s = |x: &dyn std::fmt::Display| x.to_string();
    if old.with.as_ref().map(|w| s(w)) != new.with.as_ref().map(|w| s(w)) {
        paths.push("with".into());
    }
    if old.order_by.as_ref().map(|o| s(o)) != new.order_by.as_ref().map(|o| s(o)) {
        paths.push("order_by".into());
    }
    if old.limit_clause.as_ref().map(|l| s(l)) != new.limit_clause.as_ref().map(|l| s(l)) {
        paths.push("limit".into());
    }
    match (old.body.as_ref(), new.body.as_ref()) {
        (SetExpr::Select(o), SetExpr::Select(n)) => {
            let pairs: [(&str, String, String); 7] = [
                (
                    "distinct",
                    o.distinct.as_ref().map(|d| s(d)).unwrap_or_default(),
                    n.distinct.as_ref().map(|d| s(d)).unwrap_or_default(),
                ),
                (
                    "from",
                    o.from.iter().map(|f| s(f)).collect::<Vec<_>>().join(","),
                    n.from.iter().map(|f| s(f)).collect::<Vec<_>>().join(","),
                ),
                (
                    "where",
                    o.selection.as_ref().map(|e| s(e)).unwrap_or_default(),
                    n.selection.as_ref().map(|e| s(e)).unwrap_or_default(),
                ),
                ("group_by", s(&o.group_by), s(&n.group_by)),
                (
                    "having",
                    o.having.as_ref().map(|e| s(e)).unwrap_or_default(),
                    n.having.as_ref().map(|e| s(e)).unwrap_or_default(),
                ),
                (
                    "qualify",
                    o.qualify.as_ref().map(|e| s(e)).unwrap_or_default(),
                    n.qualify.as_ref().map(|e| s(e)).unwrap_or_default(),
                ),
                (
                    "window",
                    o.named_window
                        .iter()
                        .map(|w| s(w))
                        .collect::<Vec<_>>()
                        .join(","),
                    n.named_window
                        .iter()
                        .map(|w| s(w))
                        .collect::<Vec<_>>()
                        .join(","),
                ),
            ];
            for (name, a, b) in pairs {
                if a != b {
                    paths.push(name.into());
                }
            }
            let structural = paths.is_empty();
            let mut appended_only = structural;
            let common = o.projection.len().min(n.projection.len());
            for i in 0..common {
                if o.projection[i] != n.projection[i] {
                    paths.push(format!("projection[{i}] (changed)"));
                    appended_only = false;
                }
            }
            for i in common..o.projection.len() {
                paths.push(format!("projection[{i}] (removed)"));
                appended_only = false;
            }
            for i in common..n.projection.len() {
                paths.push(format!("projection[{i}] (added)"));
            }
            // `*` grows with its sources; appending after it cannot be proven harmless
            if o.projection.iter().any(|p| {
                matches!(
                    p,
                    sqlparser::ast::SelectItem::Wildcard(_)
                        | sqlparser::ast::SelectItem::QualifiedWildcard(..)
                )
            }) {
                appended_only = false;
            }
            (
                paths,
                appended_only && n.projection.len() > o.projection.len(),
            )
        }
        (o, n) => {
            if s(o) != s(n) {
                paths.push("body".into());
            }
            (paths, false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn payload(query: &str) -> serde_json::Value {
        json!({"kind": {"name": "FULL"}, "grain": [], "target": "table", "seed_hash": null, "redact": [], "name": "a.b", "columns": null, "query": query})
    }

    fn verdict(old: &str, new: &str) -> (Category, Vec<String>) {
        let v = compare(&payload(old), &payload(new), Dialect::DuckDb);
        (v.category, v.paths)
    }

    #[test]
    fn appending_to_the_select_list_is_non_breaking() {
        assert_eq!(
            verdict("SELECT a, b FROM t", "SELECT a, b, c + 1 AS c FROM t"),
            (
                Category::NonBreaking,
                vec!["projection[2] (added)".to_string()]
            )
        );
    }

    #[test]
    fn everything_else_is_breaking_with_its_path() {
        assert_eq!(
            verdict("SELECT a FROM t", "SELECT a FROM t WHERE a > 1"),
            (Category::Breaking, vec!["where".into()])
        );
        assert_eq!(
            verdict("SELECT a, b FROM t", "SELECT b, a FROM t"),
            (
                Category::Breaking,
                vec![
                    "projection[0] (changed)".into(),
                    "projection[1] (changed)".into()
                ]
            )
        );
        assert_eq!(
            verdict("SELECT a, b FROM t", "SELECT a FROM t"),
            (Category::Breaking, vec!["projection[1] (removed)".into()])
        );
        assert_eq!(
            verdict("SELECT a FROM t", "SELECT a, b FROM t WHERE x"),
            (
                Category::Breaking,
                vec!["where".into(), "projection[1] (added)".into()]
            )
        );
        assert_eq!(
            verdict("SELECT * FROM t", "SELECT *, 1 AS x FROM t").0,
            Category::Breaking
        );
        assert_eq!(
            verdict(
                "pivot t on x using sum ( y )",
                "pivot t on x using sum ( z )"
            ),
            (Category::Breaking, vec!["query (compared as text)".into()])
        );
        let mut old = payload("SELECT a FROM t");
        let mut new = payload("SELECT a, b FROM t");
        new["kind"] = json!({"name": "VIEW", "materialized": false});
        assert_eq!(
            compare(&old, &new, Dialect::DuckDb).category,
            Category::Breaking
        );
        old["columns"] = json!([["a", "numeric"]]);
        new = payload("SELECT a, b FROM t");
        new["columns"] = json!([["a", "numeric"], ["b", "text"]]);
        let v = compare(&old, &new, Dialect::DuckDb);
        assert_eq!(
            (v.category, v.paths),
            (
                Category::NonBreaking,
                vec![
                    "columns[1] (added)".to_string(),
                    "projection[1] (added)".into()
                ]
            )
        );
    }
}
