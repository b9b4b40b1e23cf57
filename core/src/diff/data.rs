//! `diff --data`: how the rows of one model differ between two environments. The statement
//! is built here from the two relations, their columns and the model's key; the caller runs it
//! and hands the one row back to [`KeyedStats::from_row`].
//!
//! Rows are matched on the key (the model's grain, else its kind's unique key). A row whose key
//! has a NULL part cannot be matched and is counted apart, never reported as only-in. With a
//! sample, both sides keep the keys whose [`SqlDialect::sample_bucket`] of the key's text is
//! below the same threshold, so a key present on both sides is kept on both or on neither.

use crate::quote;
use crate::sql::dialect::SqlDialect;
use serde::Serialize;
use std::collections::BTreeMap;

/// How two relations' columns differ, by name (case-insensitively, as engines fold them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SchemaDrift {
    /// Columns (name, type) only A has.
    pub only_in_a: Vec<(String, String)>,
    /// Columns (name, type) only B has.
    pub only_in_b: Vec<(String, String)>,
    /// Columns both have with different types: (name, type in A, type in B).
    pub type_changed: Vec<(String, String, String)>,
}

impl SchemaDrift {
    /// Compare two column lists as `describe` returns them.
    pub fn between(a: &[(String, String)], b: &[(String, String)]) -> SchemaDrift {
        let bmap: BTreeMap<String, &(String, String)> =
            b.iter().map(|c| (c.0.to_lowercase(), c)).collect();
        let amap: BTreeMap<String, &(String, String)> =
            a.iter().map(|c| (c.0.to_lowercase(), c)).collect();
        let mut drift = SchemaDrift::default();
        for (name, ty) in a {
            match bmap.get(&name.to_lowercase()) {
                None => drift.only_in_a.push((name.clone(), ty.clone())),
                Some((_, bty)) if !bty.eq_ignore_ascii_case(ty) => {
                    drift
                        .type_changed
                        .push((name.clone(), ty.clone(), bty.clone()))
                }
                Some(_) => {}
            }
        }
        for (name, ty) in b {
            if !amap.contains_key(&name.to_lowercase()) {
                drift.only_in_b.push((name.clone(), ty.clone()));
            }
        }
        drift
    }

    /// Whether the two schemas are the same.
    pub fn is_empty(&self) -> bool {
        self.only_in_a.is_empty() && self.only_in_b.is_empty() && self.type_changed.is_empty()
    }
}

/// What the keyed comparison needs to know about the two sides.
#[derive(Debug, Clone)]
pub struct KeyedInput<'a> {
    /// A's relation, already quoted (`quote::relation`).
    pub relation_a: &'a str,
    /// B's relation, already quoted.
    pub relation_b: &'a str,
    /// A's columns (name, type).
    pub columns_a: &'a [(String, String)],
    /// B's columns (name, type).
    pub columns_b: &'a [(String, String)],
    /// The key columns, as the model names them.
    pub key: &'a [String],
    /// Keep only this share of keys (percent, `0 < p <= 100`); `None` compares every key.
    pub sample_percent: Option<f64>,
}

/// The keyed comparison's statement and the columns its mismatch counts are for.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyedQuery {
    /// One SELECT returning one row (see [`KeyedStats::from_row`]).
    pub sql: String,
    /// The non-key columns both sides have, in the order of the statement's mismatch counts.
    pub compared: Vec<String>,
}

/// Why a keyed comparison cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyedError {
    /// The model declares no key.
    #[error("the model has no key (declare `grain` in its MODEL block to compare rows)")]
    NoKey,
    /// A key column is missing on one side.
    #[error("key column `{column}` is not in {side}")]
    KeyMissing {
        /// The column.
        column: String,
        /// `A` or `B` (the environment's name is added by the caller).
        side: &'static str,
    },
    /// The sample share is outside `(0, 100]`.
    #[error("--sample must be a percentage above 0 and at most 100, not {0}")]
    BadSample(String),
}

/// Buckets below this threshold are kept for a `percent` sample (of 10,000 buckets).
pub fn sample_threshold(percent: f64) -> Result<u32, KeyedError> {
    if !(percent > 0.0 && percent <= 100.0) {
        return Err(KeyedError::BadSample(percent.to_string()));
    }
    Ok(((percent * 100.0).round() as u32).max(1))
}

fn find<'c>(columns: &'c [(String, String)], name: &str) -> Option<&'c (String, String)> {
    columns.iter().find(|c| c.0.eq_ignore_ascii_case(name))
}

/// A column of A and the same-named column of B, each as (name, type).
type ColumnPair<'a> = (&'a (String, String), &'a (String, String));

/// Build the keyed comparison of A and B.
pub fn keyed_query(d: &dyn SqlDialect, input: &KeyedInput<'_>) -> Result<KeyedQuery, KeyedError> {
    if input.key.is_empty() {
        return Err(KeyedError::NoKey);
    }
    let mut key = vec![];
    for k in input.key {
        let a = find(input.columns_a, k).ok_or(KeyedError::KeyMissing {
            column: k.clone(),
            side: "A",
        })?;
        let b = find(input.columns_b, k).ok_or(KeyedError::KeyMissing {
            column: k.clone(),
            side: "B",
        })?;
        key.push((a, b));
    }
    let is_key = |name: &str| input.key.iter().any(|k| k.eq_ignore_ascii_case(name));
    let compared: Vec<ColumnPair> = input
        .columns_a
        .iter()
        .filter(|c| !is_key(&c.0))
        .filter_map(|a| find(input.columns_b, &a.0).map(|b| (a, b)))
        .collect();
    // the same text on both sides when types differ, so `1` and `'1'` still match
    let side = |alias: &str, col: &(String, String), other: &(String, String)| {
        let e = format!("{alias}.{}", quote::ident(&col.0));
        if col.1.eq_ignore_ascii_case(&other.1) {
            e
        } else {
            d.text(&e)
        }
    };
    let threshold = input.sample_percent.map(sample_threshold).transpose()?;
    let filtered = |relation: &str, marker: &str, names: &[&String]| {
        let quoted: Vec<String> = names.iter().map(|n| quote::ident(n)).collect();
        let not_null = quoted
            .iter()
            .map(|q| format!("{q} IS NOT NULL"))
            .collect::<Vec<_>>()
            .join(" AND ");
        let sample = threshold
            .map(|t| {
                let texts: Vec<String> = quoted.iter().map(|q| d.text(q)).collect();
                format!(" AND {} < {t}", d.sample_bucket(&texts))
            })
            .unwrap_or_default();
        (
            format!("SELECT *, TRUE AS {marker} FROM {relation} WHERE ({not_null}){sample}"),
            format!("SELECT count(*) FROM {relation} WHERE NOT ({not_null})"),
            format!(
                "SELECT count(*) FROM (SELECT 1 AS one FROM {relation} WHERE ({not_null}){sample} GROUP BY {} HAVING count(*) > 1) AS d",
                quoted.join(", ")
            ),
        )
    };
    let names_a: Vec<&String> = key.iter().map(|(a, _)| &a.0).collect();
    let names_b: Vec<&String> = key.iter().map(|(_, b)| &b.0).collect();
    let (a_rows, a_nulls, a_dups) = filtered(input.relation_a, "efmesh_in_a__", &names_a);
    let (b_rows, b_nulls, b_dups) = filtered(input.relation_b, "efmesh_in_b__", &names_b);
    let on = key
        .iter()
        .map(|(a, b)| format!("{} = {}", side("a", a, b), side("b", b, a)))
        .collect::<Vec<_>>()
        .join(" AND ");
    let mismatches = compared
        .iter()
        .enumerate()
        .map(|(i, (a, b))| {
            format!(
                "count(CASE WHEN efmesh_in_a__ AND efmesh_in_b__ AND {} IS DISTINCT FROM {} THEN 1 END) AS m{i}",
                side("a", a, b),
                side("b", b, a)
            )
        })
        .collect::<Vec<_>>();
    let mut select = vec![
        "(SELECT count(*) FROM a) AS sampled_a".to_string(),
        "(SELECT count(*) FROM b) AS sampled_b".to_string(),
        format!("({a_nulls}) AS null_keys_a"),
        format!("({b_nulls}) AS null_keys_b"),
        format!("({a_dups}) AS duplicate_keys_a"),
        format!("({b_dups}) AS duplicate_keys_b"),
        "count(CASE WHEN efmesh_in_a__ AND efmesh_in_b__ THEN 1 END) AS matched".to_string(),
        "count(CASE WHEN efmesh_in_a__ AND efmesh_in_b__ IS NULL THEN 1 END) AS only_a".to_string(),
        "count(CASE WHEN efmesh_in_a__ IS NULL AND efmesh_in_b__ THEN 1 END) AS only_b".to_string(),
    ];
    select.extend(mismatches);
    let sql = format!(
        "WITH a AS ({a_rows}), b AS ({b_rows}) SELECT {} FROM a FULL OUTER JOIN b ON {on}",
        select.join(", ")
    );
    Ok(KeyedQuery {
        sql,
        compared: compared.iter().map(|(a, _)| a.0.clone()).collect(),
    })
}

/// What the keyed comparison found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyedStats {
    /// Rows of A taken into the comparison (all rows with a whole key, or the sampled ones).
    pub compared_a: u64,
    /// Rows of B taken into the comparison.
    pub compared_b: u64,
    /// Rows of A whose key has a NULL part: they cannot be matched and are not compared.
    pub null_keys_a: u64,
    /// Rows of B whose key has a NULL part.
    pub null_keys_b: u64,
    /// Keys that occur more than once in A (matches then count row pairs).
    pub duplicate_keys_a: u64,
    /// Keys that occur more than once in B.
    pub duplicate_keys_b: u64,
    /// Row pairs whose keys match.
    pub matched: u64,
    /// Rows of A whose key B does not have.
    pub only_in_a: u64,
    /// Rows of B whose key A does not have.
    pub only_in_b: u64,
    /// Per compared column: matched pairs whose values differ, and that share of `matched`.
    pub mismatches: Vec<ColumnMismatch>,
}

/// One column's differences among matched rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ColumnMismatch {
    /// The column.
    pub column: String,
    /// Matched pairs whose values differ (NULL against a value counts; NULL against NULL
    /// does not).
    pub mismatched: u64,
    /// `mismatched / matched` (0 when nothing matched).
    pub rate: f64,
}

impl KeyedStats {
    /// Read the one row [`keyed_query`]'s statement returns (values as text). `None` when the
    /// row does not have the expected shape.
    pub fn from_row(row: &[Option<String>], compared: &[String]) -> Option<KeyedStats> {
        let n = |i: usize| -> Option<u64> { row.get(i)?.as_deref()?.parse().ok() };
        if row.len() != 9 + compared.len() {
            return None;
        }
        let matched = n(6)?;
        let mismatches = compared
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let m = n(9 + i)?;
                Some(ColumnMismatch {
                    column: c.clone(),
                    mismatched: m,
                    rate: if matched == 0 {
                        0.0
                    } else {
                        m as f64 / matched as f64
                    },
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(KeyedStats {
            compared_a: n(0)?,
            compared_b: n(1)?,
            null_keys_a: n(2)?,
            null_keys_b: n(3)?,
            duplicate_keys_a: n(4)?,
            duplicate_keys_b: n(5)?,
            matched,
            only_in_a: n(7)?,
            only_in_b: n(8)?,
            mismatches,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::dialect::DuckDb;

    fn cols(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn drift_names_added_removed_and_retyped_columns() {
        let a = cols(&[("id", "INTEGER"), ("old", "VARCHAR"), ("v", "INTEGER")]);
        let b = cols(&[("ID", "INTEGER"), ("v", "BIGINT"), ("new", "DATE")]);
        let d = SchemaDrift::between(&a, &b);
        assert_eq!(d.only_in_a, cols(&[("old", "VARCHAR")]));
        assert_eq!(d.only_in_b, cols(&[("new", "DATE")]));
        assert_eq!(
            d.type_changed,
            vec![("v".into(), "INTEGER".into(), "BIGINT".into())]
        );
        assert!(SchemaDrift::between(&a, &a).is_empty());
    }

    #[test]
    fn the_statement_compares_shared_columns_and_casts_retyped_ones_to_text() {
        let a = cols(&[("id", "INTEGER"), ("v", "INTEGER"), ("old", "VARCHAR")]);
        let b = cols(&[("id", "VARCHAR"), ("v", "INTEGER")]);
        let key = vec!["id".to_string()];
        let q = keyed_query(
            &DuckDb,
            &KeyedInput {
                relation_a: "s.a",
                relation_b: "s.b",
                columns_a: &a,
                columns_b: &b,
                key: &key,
                sample_percent: Some(25.0),
            },
        )
        .unwrap();
        assert_eq!(q.compared, vec!["v".to_string()]);
        assert!(q
            .sql
            .contains(r#"CAST(a."id" AS VARCHAR) = CAST(b."id" AS VARCHAR)"#));
        assert!(q.sql.contains(r#"a."v" IS DISTINCT FROM b."v""#));
        assert!(q.sql.contains("% 10000) < 2500"), "{}", q.sql);
    }

    #[test]
    fn bad_keys_and_samples_are_refused() {
        let a = cols(&[("id", "INTEGER")]);
        let input = |key: &'static [String], s| KeyedInput {
            relation_a: "a",
            relation_b: "b",
            columns_a: &[],
            columns_b: &[],
            key,
            sample_percent: s,
        };
        assert_eq!(
            keyed_query(&DuckDb, &input(&[], None)),
            Err(KeyedError::NoKey)
        );
        let key = vec!["id".to_string()];
        let mut i = input(&[], None);
        i.key = &key;
        i.columns_a = &a;
        assert_eq!(
            keyed_query(&DuckDb, &i),
            Err(KeyedError::KeyMissing {
                column: "id".into(),
                side: "B"
            })
        );
        assert!(sample_threshold(0.0).is_err());
        assert!(sample_threshold(101.0).is_err());
        assert!(sample_threshold(f64::NAN).is_err());
        assert_eq!(sample_threshold(0.001).unwrap(), 1);
        assert_eq!(sample_threshold(100.0).unwrap(), 10000);
    }

    #[test]
    fn a_row_reads_back_as_stats() {
        let row: Vec<Option<String>> = ["10", "9", "1", "0", "0", "2", "8", "2", "1", "4"]
            .iter()
            .map(|s| Some(s.to_string()))
            .collect();
        let s = KeyedStats::from_row(&row, &["v".into()]).unwrap();
        assert_eq!((s.matched, s.only_in_a, s.only_in_b), (8, 2, 1));
        assert_eq!(s.mismatches[0].rate, 0.5);
        assert!(KeyedStats::from_row(&row[..9], &["v".into()]).is_none());
    }
}
