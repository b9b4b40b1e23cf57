//! Comparing a model's output with the expected rows.
//!
//! Both sides are multisets of rows (order never matters). Rows equal on every compared column
//! cancel out; what is left is paired by a key (the model's `grain`, else the first compared
//! column, else position) so a failure reads as "this row has the wrong `stay_hours`" rather
//! than as one missing and one unexpected row.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use std::fmt;

/// A row as `column → value` pairs in the compared columns' order; `None` is SQL NULL.
///
/// Values are the engine's text rendering of the output column's type, on both sides, so
/// `2026-01-01` expected for a TIMESTAMP column reads `2026-01-01 00:00:00` like the output.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Record(pub Vec<(String, Option<String>)>);

impl Serialize for Record {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{k}: {}", show(v))?;
        }
        f.write_str("}")
    }
}

/// How a value is printed in a diff: NULL spelled out, text as the engine renders it.
fn show(v: &Option<String>) -> &str {
    v.as_deref().unwrap_or("NULL")
}

/// A whole row that is on one side only: expected and not produced, or produced and not
/// expected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffRow {
    /// The line of the expected row in its test file (expected rows written in YAML only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// The row's compared values.
    pub values: Record,
}

/// One cell that differs between an expected row and the produced row paired with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CellMismatch {
    /// The output column.
    pub column: String,
    /// What the test expects, cast to the column's type.
    pub expected: Option<String>,
    /// What the model produced.
    pub actual: Option<String>,
}

/// An expected row and a produced row with the same key that differ in some columns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RowMismatch {
    /// The line of the expected row in its test file (expected rows written in YAML only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// The key both rows share (empty when rows were paired by position).
    pub key: Record,
    /// The columns that differ.
    pub cells: Vec<CellMismatch>,
}

/// What differs between the rows a test expects and the rows the model produced; empty when
/// the test passes. Its `Display` is the readable diff `efmesh test` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct RowDiff {
    /// The columns compared, in the model's output order (with `partial`, only those the
    /// expected rows name).
    pub columns: Vec<String>,
    /// The columns leftover rows were paired by; empty when paired by position.
    pub key: Vec<String>,
    /// How many rows the test expects.
    pub expected_rows: usize,
    /// How many rows the model produced.
    pub actual_rows: usize,
    /// Expected rows the model did not produce (and that no produced row pairs with).
    pub missing: Vec<DiffRow>,
    /// Produced rows the test did not expect (and that no expected row pairs with).
    pub unexpected: Vec<DiffRow>,
    /// Expected and produced rows paired by key whose other columns differ.
    pub mismatched: Vec<RowMismatch>,
    /// The CTE of the model's query these rows are from (`outputs: ctes`); `None` for the
    /// model's output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cte: Option<String>,
    /// The test file, to print `file:line` next to expected rows.
    #[serde(skip)]
    pub file: Option<String>,
}

impl RowDiff {
    /// Whether the output matched: nothing missing, unexpected or different.
    pub fn is_empty(&self) -> bool {
        self.missing.is_empty() && self.unexpected.is_empty() && self.mismatched.is_empty()
    }

    fn at(&self, line: Option<u64>) -> String {
        match (&self.file, line) {
            (Some(f), Some(l)) => format!(" ({f}:{l})"),
            (None, Some(l)) => format!(" (line {l})"),
            _ => String::new(),
        }
    }
}

impl fmt::Display for RowDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(c) = &self.cte {
            write!(f, "CTE `{c}`: ")?;
        }
        if self.is_empty() {
            return writeln!(f, "{} row(s) as expected", self.actual_rows);
        }
        writeln!(
            f,
            "{} row(s) expected, {} produced; compared: {}",
            self.expected_rows,
            self.actual_rows,
            self.columns.join(", ")
        )?;
        for m in &self.mismatched {
            if m.key.0.is_empty() {
                writeln!(f, "row differs{}:", self.at(m.line))?;
            } else {
                let key: Vec<String> = m
                    .key
                    .0
                    .iter()
                    .map(|(k, v)| format!("{k} = {}", show(v)))
                    .collect();
                writeln!(f, "row {}{} differs:", key.join(", "), self.at(m.line))?;
            }
            let width = m.cells.iter().map(|c| c.column.len()).max().unwrap_or(0);
            for c in &m.cells {
                writeln!(
                    f,
                    "  {:width$}  expected {}, got {}",
                    c.column,
                    show(&c.expected),
                    show(&c.actual)
                )?;
            }
        }
        if !self.missing.is_empty() {
            writeln!(f, "missing (expected, not produced):")?;
            for r in &self.missing {
                writeln!(f, "  {}{}", r.values, self.at(r.line))?;
            }
        }
        if !self.unexpected.is_empty() {
            writeln!(f, "unexpected (produced, not expected):")?;
            for r in &self.unexpected {
                writeln!(f, "  {}", r.values)?;
            }
        }
        Ok(())
    }
}

/// Values of one row, aligned with the compared columns.
pub(crate) type Values = Vec<Option<String>>;

/// How cells of the compared columns are compared.
pub(crate) struct Comparison {
    /// The compared columns.
    pub(crate) columns: Vec<String>,
    /// Per column: whether it is a floating-point type, compared with a tolerance.
    pub(crate) float: Vec<bool>,
    /// Indexes (into `columns`) of the key leftover rows are paired by; empty: by position.
    pub(crate) key: Vec<usize>,
}

/// Relative and absolute tolerances for floating-point cells, as pandas' `assert_frame_equal`
/// (which SQLMesh's tests use) applies them: `|actual - expected| <= ATOL + RTOL * |expected|`.
const RTOL: f64 = 1e-5;
const ATOL: f64 = 1e-8;

fn cell_eq(expected: &Option<String>, actual: &Option<String>, float: bool) -> bool {
    match (expected, actual) {
        (None, None) => true,
        (Some(e), Some(a)) if e == a => true,
        (Some(e), Some(a)) if float => match (e.parse::<f64>(), a.parse::<f64>()) {
            (Ok(e), Ok(a)) if e.is_finite() && a.is_finite() => {
                (a - e).abs() <= ATOL + RTOL * e.abs()
            }
            _ => false,
        },
        _ => false,
    }
}

impl Comparison {
    fn row_eq(&self, e: &Values, a: &Values, cols: impl Iterator<Item = usize>) -> bool {
        cols.into_iter()
            .all(|c| cell_eq(&e[c], &a[c], self.float[c]))
    }

    fn record(&self, v: &Values, cols: &[usize]) -> Record {
        Record(
            cols.iter()
                .map(|&c| (self.columns[c].clone(), v[c].clone()))
                .collect(),
        )
    }

    /// Compare `expected` rows (with their line in the test file) with `actual` rows.
    pub(crate) fn compare(&self, expected: &[(Values, Option<u64>)], actual: &[Values]) -> RowDiff {
        let all: Vec<usize> = (0..self.columns.len()).collect();
        let mut used = vec![false; actual.len()];
        let mut left: Vec<usize> = vec![];
        // rows equal on every column cancel out
        for (i, (e, _)) in expected.iter().enumerate() {
            match (0..actual.len())
                .find(|&j| !used[j] && self.row_eq(e, &actual[j], all.iter().copied()))
            {
                Some(j) => used[j] = true,
                None => left.push(i),
            }
        }
        let mut diff = RowDiff {
            columns: self.columns.clone(),
            key: self.key.iter().map(|&c| self.columns[c].clone()).collect(),
            expected_rows: expected.len(),
            actual_rows: actual.len(),
            ..RowDiff::default()
        };
        // what is left pairs by key (by position when there is none)
        for i in left {
            let (e, line) = &expected[i];
            let pair = (0..actual.len()).find(|&j| {
                !used[j]
                    && (self.key.is_empty() || self.row_eq(e, &actual[j], self.key.iter().copied()))
            });
            match pair {
                Some(j) => {
                    used[j] = true;
                    let a = &actual[j];
                    diff.mismatched.push(RowMismatch {
                        line: *line,
                        key: self.record(e, &self.key),
                        cells: all
                            .iter()
                            .filter(|&&c| !cell_eq(&e[c], &a[c], self.float[c]))
                            .map(|&c| CellMismatch {
                                column: self.columns[c].clone(),
                                expected: e[c].clone(),
                                actual: a[c].clone(),
                            })
                            .collect(),
                    });
                }
                None => diff.missing.push(DiffRow {
                    line: *line,
                    values: self.record(e, &all),
                }),
            }
        }
        for (j, a) in actual.iter().enumerate() {
            if !used[j] {
                diff.unexpected.push(DiffRow {
                    line: None,
                    values: self.record(a, &all),
                });
            }
        }
        diff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(vals: &[Option<&str>]) -> Values {
        vals.iter().map(|v| v.map(str::to_string)).collect()
    }

    fn cmp(key: Vec<usize>) -> Comparison {
        Comparison {
            columns: vec!["id".into(), "x".into(), "f".into()],
            float: vec![false, false, true],
            key,
        }
    }

    #[test]
    fn equal_multisets_in_any_order_pass() {
        let e = vec![
            (v(&[Some("1"), Some("a"), Some("0.5")]), Some(3)),
            (v(&[Some("2"), None, Some("1.0")]), Some(5)),
        ];
        let a = vec![
            v(&[Some("2"), None, Some("1.0000000001")]),
            v(&[Some("1"), Some("a"), Some("0.5")]),
        ];
        assert!(cmp(vec![0]).compare(&e, &a).is_empty());
    }

    #[test]
    fn leftovers_pair_by_key_and_the_rest_is_missing_or_unexpected() {
        let e = vec![
            (v(&[Some("1"), Some("a"), Some("0.5")]), Some(3)),
            (v(&[Some("2"), Some("b"), Some("1.0")]), Some(5)),
            (v(&[Some("2"), Some("b"), Some("1.0")]), Some(7)),
        ];
        let a = vec![
            v(&[Some("1"), Some("z"), Some("0.5")]),
            v(&[Some("2"), Some("b"), Some("1.0")]),
            v(&[Some("3"), None, None]),
        ];
        let mut d = cmp(vec![0]).compare(&e, &a);
        assert_eq!(d.mismatched.len(), 1);
        assert_eq!(d.mismatched[0].line, Some(3));
        assert_eq!(
            d.mismatched[0].cells,
            vec![CellMismatch {
                column: "x".into(),
                expected: Some("a".into()),
                actual: Some("z".into())
            }]
        );
        assert_eq!(d.missing.len(), 1);
        assert_eq!(d.missing[0].line, Some(7));
        assert_eq!(d.unexpected.len(), 1);
        d.file = Some("tests/test_t.yaml".into());
        let text = d.to_string();
        assert!(
            text.contains("row id = 1 (tests/test_t.yaml:3) differs:"),
            "{text}"
        );
        assert!(text.contains("x  expected a, got z"), "{text}");
        assert!(
            text.contains("{id: 2, x: b, f: 1.0} (tests/test_t.yaml:7)"),
            "{text}"
        );
        assert!(text.contains("{id: 3, x: NULL, f: NULL}"), "{text}");
    }

    #[test]
    fn without_a_key_rows_pair_by_position() {
        let e = vec![(v(&[Some("1"), Some("a"), None]), None)];
        let a = vec![v(&[Some("9"), Some("a"), None])];
        let d = cmp(vec![]).compare(&e, &a);
        assert_eq!(d.mismatched.len(), 1);
        assert_eq!(d.mismatched[0].cells[0].column, "id");
        assert!(d.to_string().contains("row differs:"));
    }

    #[test]
    fn floats_compare_with_a_tolerance_and_text_exactly() {
        assert!(cell_eq(
            &Some("0.333333".into()),
            &Some("0.3333333333333333".into()),
            true
        ));
        assert!(!cell_eq(
            &Some("0.33".into()),
            &Some("0.3333333333333333".into()),
            true
        ));
        assert!(!cell_eq(
            &Some("0.333333".into()),
            &Some("0.3333333333333333".into()),
            false
        ));
        assert!(!cell_eq(&None, &Some("0".into()), true));
    }
}
