//! SEED files: their format, the columns they hold, and how those meet the declared `columns`.
//!
//! A seed is a CSV file (SQLMesh's only kind), a JSON array of objects (`.json`), or JSON lines,
//! one object per line (`.jsonl`, `.ndjson`); the extension decides. Every value is loaded as
//! text and cast to the declared column types, so the three formats mean the same thing.
//! Pure: the caller reads the bytes.

use crate::diagnostic::Problem;
use crate::model::ColumnDef;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::collections::HashSet;
use std::fmt;

/// How a seed file is laid out, decided by its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeedFormat {
    /// Comma-separated values with a header row (any extension but the JSON ones).
    Csv,
    /// One JSON array of objects (`.json`).
    Json,
    /// One JSON object per line (`.jsonl`, `.ndjson`); blank lines are skipped.
    JsonLines,
}

impl SeedFormat {
    /// The format of the seed at `path`, by its extension (case-insensitively).
    pub fn of(path: &str) -> SeedFormat {
        let lower = path.to_ascii_lowercase();
        if lower.ends_with(".json") {
            SeedFormat::Json
        } else if lower.ends_with(".jsonl") || lower.ends_with(".ndjson") {
            SeedFormat::JsonLines
        } else {
            SeedFormat::Csv
        }
    }

    /// The format's name in messages.
    pub fn label(self) -> &'static str {
        match self {
            SeedFormat::Csv => "CSV",
            SeedFormat::Json => "JSON (an array of objects)",
            SeedFormat::JsonLines => "JSON lines (one object per line)",
        }
    }
}

/// A CSV header cell as the column's name: spaces around a plain identifier are dropped
/// (`id, name` names `name`), as SQLMesh reads a seed's header by parsing each cell as an
/// identifier; a cell that is no plain identifier (`a b`) is kept as written.
fn header_name(cell: &str) -> String {
    let t = cell.trim();
    let plain = t.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && t.chars().all(|c| c.is_alphanumeric() || c == '_');
    if plain { t } else { cell }.to_string()
}

/// The file's columns as written (a CSV header cell without the spaces around it): the CSV
/// header, or every JSON key in first-seen order.
/// An error says why the file is not of its format, or that it has no columns at all.
pub fn columns(format: SeedFormat, bytes: &[u8]) -> Result<Vec<String>, String> {
    let cols = match format {
        SeedFormat::Csv => {
            let mut rdr = csv::ReaderBuilder::new()
                .has_headers(true)
                .from_reader(bytes);
            let header = rdr.headers().map_err(|e| e.to_string())?;
            let cols: Vec<String> = header.iter().map(header_name).collect();
            if cols.iter().all(|c| c.trim().is_empty()) {
                vec![]
            } else {
                cols
            }
        }
        SeedFormat::Json => {
            let mut keys = Keys::default();
            let mut de = serde_json::Deserializer::from_slice(strip_bom(bytes));
            Rows(&mut keys)
                .deserialize(&mut de)
                .and_then(|()| de.end())
                .map_err(|e| e.to_string())?;
            keys.names
        }
        SeedFormat::JsonLines => {
            let mut keys = Keys::default();
            let text = std::str::from_utf8(strip_bom(bytes)).map_err(|e| e.to_string())?;
            for (n, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let mut de = serde_json::Deserializer::from_str(line);
                Object(&mut keys)
                    .deserialize(&mut de)
                    .and_then(|()| de.end())
                    .map_err(|e| format!("line {}: {e}", n + 1))?;
            }
            keys.names
        }
    };
    if cols.is_empty() {
        return Err(match format {
            SeedFormat::Csv => "it has no header row".into(),
            _ => "it has no keys (no objects, or only empty ones)".into(),
        });
    }
    // columns are matched by name case-insensitively, so two spellings would be one column
    let mut seen: Vec<(String, &str)> = vec![];
    for c in &cols {
        let n = normalize(c);
        if let Some((_, first)) = seen.iter().find(|(s, _)| *s == n) {
            return Err(format!(
                "columns `{first}` and `{c}` are the same column (names compare case-insensitively)"
            ));
        }
        seen.push((n, c));
    }
    Ok(cols)
}

/// For each data record in order, the 1-based line of the file it starts on, so "row 3" can
/// also be shown as "line 4". `None` for a JSON array, whose records have no lines of their own.
pub fn record_lines(format: SeedFormat, bytes: &[u8]) -> Option<Vec<u64>> {
    match format {
        SeedFormat::Csv => {
            let mut rdr = csv_records(bytes);
            let mut lines = vec![];
            let mut record = csv::ByteRecord::new();
            while let Ok(true) = rdr.read_byte_record(&mut record) {
                // a line of whitespace alone is no record (see [`records`])
                if record.len() == 1 && record[0].iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                if let Some(p) = record.position() {
                    // the position is where the reader started, before any blank lines it skipped
                    let mut line = p.line();
                    let mut at = p.byte() as usize;
                    while let Some(b @ (b'\n' | b'\r')) = bytes.get(at) {
                        line += u64::from(*b == b'\n');
                        at += 1;
                    }
                    lines.push(line);
                }
            }
            Some(lines)
        }
        SeedFormat::JsonLines => Some(
            bytes
                .split(|&b| b == b'\n')
                .enumerate()
                .filter(|(_, l)| !l.iter().all(u8::is_ascii_whitespace))
                .map(|(n, _)| n as u64 + 1)
                .collect(),
        ),
        SeedFormat::Json => None,
    }
}

/// Every record of the file as text, one value per file column (in [`columns`]' order), for
/// an engine that cannot read files itself and is handed the rows instead (PostgreSQL's
/// `COPY FROM STDIN`). The values mean what DuckDB's readers make of the file: an empty CSV
/// field and a JSON `null` or missing key are NULL, a JSON string is its text, and any other
/// JSON value is its JSON text. Blank lines, and lines of whitespace alone, are no records; a
/// row of another length than the header is an error that names it.
pub fn records(
    format: SeedFormat,
    bytes: &[u8],
    file_columns: &[String],
) -> Result<Vec<Vec<Option<String>>>, String> {
    match format {
        SeedFormat::Csv => {
            let mut rdr = csv_records(bytes);
            let mut out = vec![];
            for (n, record) in rdr.records().enumerate() {
                let record = record.map_err(|e| format!("row {}: {e}", n + 1))?;
                // a line of whitespace alone is blank, as pandas reads it for SQLMesh
                if record.len() == 1 && record[0].trim().is_empty() {
                    continue;
                }
                if record.len() != file_columns.len() {
                    return Err(format!(
                        "row {} has {} value(s), and the header names {} column(s)",
                        n + 1,
                        record.len(),
                        file_columns.len()
                    ));
                }
                out.push(
                    record
                        .iter()
                        .map(|v| (!v.is_empty()).then(|| v.to_string()))
                        .collect(),
                );
            }
            Ok(out)
        }
        SeedFormat::Json => {
            let rows: Vec<serde_json::Map<String, serde_json::Value>> =
                serde_json::from_slice(strip_bom(bytes)).map_err(|e| e.to_string())?;
            Ok(rows.iter().map(|r| json_record(r, file_columns)).collect())
        }
        SeedFormat::JsonLines => {
            let text = std::str::from_utf8(strip_bom(bytes)).map_err(|e| e.to_string())?;
            let mut out = vec![];
            for (n, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let row: serde_json::Map<String, serde_json::Value> =
                    serde_json::from_str(line).map_err(|e| format!("line {}: {e}", n + 1))?;
                out.push(json_record(&row, file_columns));
            }
            Ok(out)
        }
    }
}

fn json_record(
    row: &serde_json::Map<String, serde_json::Value>,
    file_columns: &[String],
) -> Vec<Option<String>> {
    file_columns
        .iter()
        .map(|c| match row.get(c) {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(other) => Some(other.to_string()),
        })
        .collect()
}

/// A CSV reader over a seed's bytes: a header row, and rows that may differ in length (each
/// caller says what a ragged row means).
fn csv_records(bytes: &[u8]) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(bytes)
}

/// Compare the file's columns with the declared ones, by name and case-insensitively (order
/// does not matter: seeds load by name). Every declared column the file lacks, and every file
/// column not declared, is a problem naming the file and the column.
pub fn check_columns(path: &str, file_columns: &[String], declared: &[ColumnDef]) -> Vec<Problem> {
    let found: Vec<String> = file_columns.iter().map(|c| normalize(c)).collect();
    let names: Vec<String> = declared.iter().map(|c| c.name.clone()).collect();
    let mut problems = vec![];
    for c in declared {
        if !found.contains(&c.name) {
            problems.push(Problem::SeedColumnMissing {
                path: path.into(),
                column: c.name.clone(),
                found: file_columns.to_vec(),
            });
        }
    }
    for (c, n) in file_columns.iter().zip(&found) {
        if !names.contains(n) {
            problems.push(Problem::SeedColumnExtra {
                path: path.into(),
                column: c.clone(),
                declared: names.clone(),
            });
        }
    }
    problems
}

/// The file column (as written) that holds declared column `name`.
pub fn file_column<'a>(file_columns: &'a [String], name: &str) -> Option<&'a str> {
    file_columns
        .iter()
        .find(|c| normalize(c) == name)
        .map(String::as_str)
}

/// The cells pandas' `read_csv` reads as missing by default, and so SQLMesh loads as NULL in a
/// CSV seed, whatever the column's type (`NULL`, `None`, `NA`, `nan`, an empty cell, ...).
pub const PANDAS_NA: &[&str] = &[
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
];

/// The column types SQLMesh gives a CSV seed without `columns`: pandas infers a dtype for each
/// column, and SQLMesh maps it. Whole numbers without a missing cell are `BIGINT`; numbers
/// (whole ones with a missing cell too, and a column with nothing but missing cells) are
/// `DOUBLE`; `True`/`False` in any of pandas' three spellings are `BOOLEAN`; everything else,
/// dates included, is `VARCHAR`. One `(column as written, type)` per file column.
pub fn pandas_types(bytes: &[u8]) -> Result<Vec<(String, &'static str)>, String> {
    let names = columns(SeedFormat::Csv, bytes)?;
    let mut rdr = csv_records(strip_bom(bytes));
    // what every non-missing cell so far could be: (int, float, bool), and whether one is missing
    let mut could = vec![(true, true, true, false); names.len()];
    for (n, record) in rdr.records().enumerate() {
        let record = record.map_err(|e| format!("row {}: {e}", n + 1))?;
        for (c, v) in record.iter().enumerate().take(names.len()) {
            let (int, float, boolean, missing) = &mut could[c];
            if PANDAS_NA.contains(&v) {
                *missing = true;
                continue;
            }
            *int &= v.parse::<i64>().is_ok();
            *float &= is_pandas_float(v);
            *boolean &= ["True", "TRUE", "true", "False", "FALSE", "false"].contains(&v);
        }
    }
    Ok(names
        .into_iter()
        .zip(could)
        .map(|(name, (int, float, boolean, missing))| {
            let ty = match (int, float, boolean, missing) {
                (true, _, true, _) => "DOUBLE", // nothing but missing cells
                (true, _, _, false) => "BIGINT",
                (true, _, _, true) | (_, true, _, _) => "DOUBLE",
                (_, _, true, false) => "BOOLEAN",
                _ => "VARCHAR",
            };
            (name, ty)
        })
        .collect())
}

/// Whether pandas reads `v` as a float: a decimal number, or an infinity.
fn is_pandas_float(v: &str) -> bool {
    let body = v.trim_start_matches(['+', '-']);
    let infinity = ["inf", "infinity"]
        .iter()
        .any(|i| body.eq_ignore_ascii_case(i));
    infinity
        || (body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
            && v.parse::<f64>().is_ok())
}

/// How a file's column name compares with a declared (lower-cased) one.
pub fn normalize(column: &str) -> String {
    column.trim().to_ascii_lowercase()
}

fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// Keys collected in first-seen order.
#[derive(Default)]
struct Keys {
    names: Vec<String>,
    seen: HashSet<String>,
}

/// A JSON array whose every element is an object; collects the keys.
struct Rows<'a>(&'a mut Keys);

impl<'de> DeserializeSeed<'de> for Rows<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Rows<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON array of objects")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Object(&mut *self.0))?.is_some() {}
        Ok(())
    }
}

/// One JSON object; collects its keys.
struct Object<'a>(&'a mut Keys);

impl<'de> DeserializeSeed<'de> for Object<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Object<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(k) = map.next_key::<String>()? {
            map.next_value::<IgnoredAny>()?;
            if self.0.seen.insert(k.clone()) {
                self.0.names.push(k);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::TypeFamily;

    fn col(name: &str) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            sql_type: "INTEGER".into(),
            family: TypeFamily::Numeric,
        }
    }

    /// Each expected type is the one SQLMesh 0.236.4 gave the same file's table.
    #[test]
    fn csv_columns_are_typed_as_pandas_types_them() {
        let csv = b"id,name,score,ratio,active,flag,joined,note,maybe_int,empty\n\
            1,Ann,10,0.5,True,true,2024-01-04,NULL,1,\n\
            2,None,20,1,False,FALSE,2024-02-05,None,,NA\n\
            3,Cy,,2.25,True,True,2024-03-06,N/A,3,\n\
            4,NA,40,nan,False,false,2024-04-07,x,4,\n";
        let types: Vec<String> = pandas_types(csv)
            .unwrap()
            .into_iter()
            .map(|(n, t)| format!("{n} {t}"))
            .collect();
        assert_eq!(
            types,
            [
                "id BIGINT",
                "name VARCHAR",
                "score DOUBLE",
                "ratio DOUBLE",
                "active BOOLEAN",
                "flag BOOLEAN",
                "joined VARCHAR",
                "note VARCHAR",
                "maybe_int DOUBLE",
                "empty DOUBLE"
            ]
        );
        assert!(!is_pandas_float("1.2.3x"));
        assert!(is_pandas_float("-inf") && is_pandas_float("1e5"));
    }

    #[test]
    fn the_extension_decides_the_format() {
        assert_eq!(SeedFormat::of("seeds/a.csv"), SeedFormat::Csv);
        assert_eq!(SeedFormat::of("seeds/a.tsv"), SeedFormat::Csv);
        assert_eq!(SeedFormat::of("seeds/a.JSON"), SeedFormat::Json);
        assert_eq!(SeedFormat::of("seeds/a.jsonl"), SeedFormat::JsonLines);
        assert_eq!(SeedFormat::of("seeds/a.ndjson"), SeedFormat::JsonLines);
    }

    #[test]
    fn json_keys_come_in_first_seen_order_across_rows() {
        let a = br#"[{"b": 1, "A": {"x": [1]}}, {"c": null, "b": 2}]"#;
        assert_eq!(columns(SeedFormat::Json, a).unwrap(), ["b", "A", "c"]);
        let l = b"{\"k\": 1}\n\n{\"v\": \"x\", \"k\": 2}\n";
        assert_eq!(columns(SeedFormat::JsonLines, l).unwrap(), ["k", "v"]);
        assert_eq!(record_lines(SeedFormat::JsonLines, l).unwrap(), [1, 3]);
    }

    #[test]
    fn malformed_json_says_where() {
        let e = columns(SeedFormat::Json, br#"[{"a": 1}, 2]"#).unwrap_err();
        assert!(e.contains("expected a JSON object"), "{e}");
        let e = columns(SeedFormat::Json, br#"{"a": 1}"#).unwrap_err();
        assert!(e.contains("expected a JSON array of objects"), "{e}");
        let e = columns(SeedFormat::JsonLines, b"{\"a\": 1}\n{\"a\": \n").unwrap_err();
        assert!(e.starts_with("line 2:"), "{e}");
        assert!(columns(SeedFormat::Json, b"[]").is_err());
        let e = columns(SeedFormat::Json, br#"[{"Rate": 1}, {"rate": 2}]"#).unwrap_err();
        assert!(
            e.starts_with("columns `Rate` and `rate` are the same column"),
            "{e}"
        );
        assert!(columns(SeedFormat::Csv, b"a,A\n1,2\n").is_err());
        assert!(columns(SeedFormat::Csv, b"").is_err());
    }

    #[test]
    fn csv_records_know_their_lines() {
        let csv = b"a,b\n1,\"two\nlines\"\n3,4\n";
        assert_eq!(columns(SeedFormat::Csv, csv).unwrap(), ["a", "b"]);
        assert_eq!(record_lines(SeedFormat::Csv, csv).unwrap(), [2, 4]);
        // blank lines are no records (DuckDB skips them too)
        let blank = b"a,b\n1,2\n\nx,4\n";
        assert_eq!(record_lines(SeedFormat::Csv, blank).unwrap(), [2, 4]);
        let crlf = b"a,b\r\n1,2\r\n\r\nx,4\r\n";
        assert_eq!(record_lines(SeedFormat::Csv, crlf).unwrap(), [2, 4]);
        // a byte-order mark is not part of the first column's name
        let bom = b"\xEF\xBB\xBFa,b\n1,2\n";
        assert_eq!(columns(SeedFormat::Csv, bom).unwrap(), ["a", "b"]);
        let bom = b"\xEF\xBB\xBF[{\"a\": 1}]";
        assert_eq!(columns(SeedFormat::Json, bom).unwrap(), ["a"]);
    }

    #[test]
    fn records_are_text_with_nulls_where_duckdb_reads_them() {
        let cols = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let csv = b"a,b\n1,\"two\nlines\"\n\n,4\n";
        let r = records(SeedFormat::Csv, csv, &cols(&["a", "b"])).unwrap();
        assert_eq!(
            r,
            [
                vec![Some("1".into()), Some("two\nlines".into())],
                vec![None, Some("4".into())]
            ]
        );
        // a line of whitespace alone is blank (an editor's indentation left at the end)
        let r = records(SeedFormat::Csv, b"a,b\n  1,2\n  \n", &cols(&["a", "b"])).unwrap();
        assert_eq!(r, [vec![Some("  1".into()), Some("2".into())]]);
        let e = records(SeedFormat::Csv, b"a,b\n1\n", &cols(&["a", "b"])).unwrap_err();
        assert_eq!(e, "row 1 has 1 value(s), and the header names 2 column(s)");
        let json = br#"[{"b": 1.5, "a": "x"}, {"a": null, "b": {"k": [1]}}, {}]"#;
        let r = records(SeedFormat::Json, json, &cols(&["a", "b"])).unwrap();
        assert_eq!(
            r,
            [
                vec![Some("x".into()), Some("1.5".into())],
                vec![None, Some(r#"{"k":[1]}"#.into())],
                vec![None, None]
            ]
        );
        let lines = b"{\"a\": true}\n\n{\"a\": \"y\"}\n";
        let r = records(SeedFormat::JsonLines, lines, &cols(&["a"])).unwrap();
        assert_eq!(r, [vec![Some("true".into())], vec![Some("y".into())]]);
        let e = records(SeedFormat::JsonLines, b"{}\n{\n", &cols(&["a"])).unwrap_err();
        assert!(e.starts_with("line 2:"), "{e}");
    }

    #[test]
    fn columns_must_match_by_name_in_any_case() {
        let file = vec!["ID".to_string(), "extra".to_string()];
        let p = check_columns("seeds/a.csv", &file, &[col("id"), col("n")]);
        let codes: Vec<&str> = p.iter().map(Problem::code).collect();
        assert_eq!(codes, ["seed-column-missing", "seed-column-extra"]);
        assert_eq!(
            p[0].to_string(),
            "seed file `seeds/a.csv` has no column `n`, which `columns` declares"
        );
        assert_eq!(
            p[1].to_string(),
            "seed file `seeds/a.csv` has column `extra`, which `columns` does not declare"
        );
        assert_eq!(file_column(&file, "id"), Some("ID"));
    }
}
