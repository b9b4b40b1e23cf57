//! The schema contract: a model's declared `columns` against what its query really returns.
//!
//! The static check (`efmesh check`) proves what it can from the SQL alone; this comparison
//! runs against the engine's own description of the query just before a build, so a
//! contract is enforced even where inference cannot see (`SELECT *` from a file, a macro, a
//! function whose return type only the engine knows). Names compare strictly; types compare by
//! [`TypeFamily`], because `INT` and `BIGINT` answer the same questions and engines spell
//! types differently.

use crate::types::TypeFamily;
use serde::Serialize;

/// One way the query disagrees with the declaration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum ColumnDifference {
    /// Declared, but the query does not return it.
    Missing {
        /// The column.
        column: String,
        /// Its declared type.
        declared: String,
    },
    /// Returned, but not declared.
    Extra {
        /// The column.
        column: String,
        /// The type the query returns.
        returns: String,
    },
    /// Both have it, in different type families.
    Type {
        /// The column.
        column: String,
        /// Its declared type.
        declared: String,
        /// The type the query returns.
        returns: String,
    },
}

impl std::fmt::Display for ColumnDifference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ColumnDifference::Missing { column, declared } => {
                write!(f, "{column}: declared {declared}, query does not return it")
            }
            ColumnDifference::Extra { column, returns } => {
                write!(f, "{column}: not declared, query returns {returns}")
            }
            ColumnDifference::Type {
                column,
                declared,
                returns,
            } => write!(
                f,
                "{column}: declared {declared} ({}), query returns {returns} ({})",
                TypeFamily::of(declared),
                TypeFamily::of(returns)
            ),
        }
    }
}

/// Compare declared `(name, type)` columns with the `(name, type)` columns a query returns.
/// Names compare case-insensitively; columns in `managed` (those efmesh adds itself, such as
/// SCD validity columns) are ignored on both sides. Differences come in declaration order,
/// then extras in query order.
pub fn compare(
    declared: &[(String, String)],
    returned: &[(String, String)],
    managed: &[&str],
) -> Vec<ColumnDifference> {
    let skip = |n: &str| managed.iter().any(|m| m.eq_ignore_ascii_case(n));
    let find = |cols: &[(String, String)], n: &str| {
        cols.iter()
            .find(|(c, _)| c.eq_ignore_ascii_case(n))
            .map(|(_, t)| t.clone())
    };
    let mut out = vec![];
    for (name, ty) in declared.iter().filter(|(n, _)| !skip(n)) {
        match find(returned, name) {
            None => out.push(ColumnDifference::Missing {
                column: name.clone(),
                declared: ty.clone(),
            }),
            Some(r) if !TypeFamily::of(ty).accepts(TypeFamily::of(&r)) => {
                out.push(ColumnDifference::Type {
                    column: name.clone(),
                    declared: ty.clone(),
                    returns: r,
                })
            }
            Some(_) => {}
        }
    }
    for (name, ty) in returned.iter().filter(|(n, _)| !skip(n)) {
        if find(declared, name).is_none() {
            out.push(ColumnDifference::Extra {
                column: name.clone(),
                returns: ty.clone(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn names_compare_strictly_and_types_by_family() {
        let declared = cols(&[
            ("id", "INT"),
            ("name", "TEXT"),
            ("at", "TIMESTAMP"),
            ("gone", "INT"),
        ]);
        let returned = cols(&[
            ("ID", "BIGINT"),
            ("name", "INTEGER"),
            ("at", "TIMESTAMP WITH TIME ZONE"),
            ("new", "VARCHAR"),
            ("valid_to", "TIMESTAMP"),
        ]);
        let d = compare(&declared, &returned, &["valid_to"]);
        let text: Vec<String> = d.iter().map(|d| d.to_string()).collect();
        assert_eq!(
            text,
            vec![
                "name: declared TEXT (text), query returns INTEGER (numeric)",
                "gone: declared INT, query does not return it",
                "new: not declared, query returns VARCHAR",
            ]
        );
        assert!(compare(
            &cols(&[("id", "INT"), ("at", "DATE")]),
            &cols(&[("Id", "HUGEINT"), ("at", "TIMESTAMP")]),
            &[]
        )
        .is_empty());
    }
}
