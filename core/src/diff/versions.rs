//! Which models two environments serve differently, classified the way a plan would classify
//! the change from the first to the second.

use crate::plan::categorize::{self, Category};
use crate::plan::{Pointer, StoredSnapshot};
use crate::sql::Dialect;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// One model whose served version differs between environment A and environment B.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionDiff {
    /// The model.
    pub model: String,
    /// The change from A to B: `added` (only B serves it), `removed` (only A), `breaking`,
    /// `non-breaking`, `indirect` (a parent changed), `metadata-only`, or `unchanged` (listed
    /// only when asked for by name).
    pub category: &'static str,
    /// The version A serves.
    pub version_a: Option<String>,
    /// The version B serves.
    pub version_b: Option<String>,
    /// Both versions read the same physical data (a forward-only or indirect non-breaking
    /// change, or the same version), so their rows are the same rows.
    pub shares_data: bool,
    /// Where the two definitions diverge (`where`, `projection[2] (added)`, ...).
    pub paths: Vec<String>,
}

/// Compare the pointers of A and B. `snapshots` holds the stored snapshots of every version
/// either serves (a version missing from it is compared as breaking, with a path saying so).
/// `include` names models to list even when unchanged. The result is in model-name order.
pub fn compare_environments(
    a: &BTreeMap<String, Pointer>,
    b: &BTreeMap<String, Pointer>,
    snapshots: &HashMap<String, StoredSnapshot>,
    dialect: Dialect,
    include: &BTreeSet<String>,
) -> Vec<VersionDiff> {
    let names: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let mut out = vec![];
    for name in names {
        let (pa, pb) = (a.get(name), b.get(name));
        let (category, paths) = match (pa, pb) {
            (None, Some(_)) => (Category::Added, vec![]),
            (Some(_), None) => (Category::Removed, vec![]),
            (Some(x), Some(y)) if x.fingerprint == y.fingerprint => {
                if x.metadata_hash != y.metadata_hash {
                    (Category::MetadataOnly, vec![])
                } else {
                    (Category::Unchanged, vec![])
                }
            }
            (Some(x), Some(y)) => {
                match (snapshots.get(&x.fingerprint), snapshots.get(&y.fingerprint)) {
                    (Some(sx), Some(sy)) if sx.definition_hash == sy.definition_hash => {
                        (Category::Indirect, vec![])
                    }
                    (Some(sx), Some(sy)) => {
                        let v = categorize::compare(&sx.payload, &sy.payload, dialect);
                        (v.category, v.paths)
                    }
                    _ => (
                        Category::Breaking,
                        vec!["(a version's definition is not in the state store)".into()],
                    ),
                }
            }
            (None, None) => continue,
        };
        if category == Category::Unchanged && !include.contains(name) {
            continue;
        }
        out.push(VersionDiff {
            model: name.clone(),
            category: category.label(),
            version_a: pa.map(|p| p.fingerprint.clone()),
            version_b: pb.map(|p| p.fingerprint.clone()),
            shares_data: matches!((pa, pb), (Some(x), Some(y)) if x.physical_fingerprint == y.physical_fingerprint),
            paths,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ptr(fp: &str, meta: &str, phys: &str) -> Pointer {
        Pointer {
            fingerprint: fp.into(),
            metadata_hash: meta.into(),
            physical_fingerprint: phys.into(),
        }
    }

    fn snap(fp: &str, def: &str, query: &str) -> (String, StoredSnapshot) {
        (
            fp.into(),
            StoredSnapshot {
                fingerprint: fp.into(),
                name: "m".into(),
                physical_fingerprint: fp.into(),
                definition_hash: def.into(),
                fingerprint_version: 2,
                payload: json!({"kind": "FULL", "query": query}),
            },
        )
    }

    #[test]
    fn each_kind_of_difference_is_classified_as_a_plan_would() {
        let a: BTreeMap<_, _> = [
            ("gone", ptr("g1", "m", "g1")),
            ("same", ptr("s1", "m", "s1")),
            ("meta", ptr("t1", "m", "t1")),
            ("indirect", ptr("i1", "m", "i1")),
            ("changed", ptr("c1", "m", "c1")),
            ("widened", ptr("w1", "m", "w1")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let b: BTreeMap<_, _> = [
            ("new", ptr("n1", "m", "n1")),
            ("same", ptr("s1", "m", "s1")),
            ("meta", ptr("t1", "m2", "t1")),
            ("indirect", ptr("i2", "m", "i1")),
            ("changed", ptr("c2", "m", "c2")),
            ("widened", ptr("w2", "m", "w2")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let snapshots: HashMap<_, _> = [
            snap("i1", "d", "SELECT 1 AS x"),
            snap("i2", "d", "SELECT 1 AS x"),
            snap("c1", "e", "SELECT x FROM t WHERE x > 1"),
            snap("c2", "f", "SELECT x FROM t WHERE x > 2"),
            snap("w1", "g", "SELECT x FROM t"),
            snap("w2", "h", "SELECT x, x + 1 AS y FROM t"),
        ]
        .into_iter()
        .collect();
        let d = compare_environments(&a, &b, &snapshots, Dialect::DuckDb, &BTreeSet::new());
        let got: Vec<(&str, &str, bool)> = d
            .iter()
            .map(|v| (v.model.as_str(), v.category, v.shares_data))
            .collect();
        assert_eq!(
            got,
            vec![
                ("changed", "breaking", false),
                ("gone", "removed", false),
                ("indirect", "indirect", true),
                ("meta", "metadata-only", true),
                ("new", "added", false),
                ("widened", "non-breaking", false),
            ]
        );
        assert_eq!(d[0].paths, vec!["where".to_string()]);
        let named: BTreeSet<String> = ["same".to_string()].into();
        let d = compare_environments(&a, &b, &snapshots, Dialect::DuckDb, &named);
        assert!(d
            .iter()
            .any(|v| v.model == "same" && v.category == "unchanged"));
    }

    #[test]
    fn a_version_missing_from_the_store_is_breaking_and_says_why() {
        let a: BTreeMap<_, _> = [("m".to_string(), ptr("x1", "m", "x1"))].into();
        let b: BTreeMap<_, _> = [("m".to_string(), ptr("x2", "m", "x2"))].into();
        let d = compare_environments(&a, &b, &HashMap::new(), Dialect::DuckDb, &BTreeSet::new());
        assert_eq!(d[0].category, "breaking");
        assert!(d[0].paths[0].contains("not in the state store"));
    }
}
