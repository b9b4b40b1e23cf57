//! The test-file format: SQLMesh's unit-test YAML read into [`TestCase`]s, every part
//! remembering where it was written.
//!
//! ```yaml
//! test_moves_window:              # the test's name
//!   model: med.moves
//!   description: optional text
//!   vars: {start: 2026-01-01, end: 2026-01-02}
//!   inputs:
//!     raw.movements:
//!       rows:                     # or the list of rows directly
//!         - {move_id: 1, patient_id: 7, moved_at: 2026-01-01 08:00:00}
//!   outputs:
//!     query:
//!       partial: true             # compare only the columns the rows name
//!       rows:                     # or the list of rows directly
//!         - {move_id: 1}
//! ```

use super::fixture::Literal;
use super::yaml::{self, Node, Value};
use super::{Cell, Expected, Input, Pos, Row, TestCase, TestError, TestProblem};
use std::path::Path;

const TEST_KEYS: &[&str] = &[
    "model",
    "description",
    "inputs",
    "outputs",
    "vars",
    "schema",
];
const INPUT_KEYS: &[&str] = &["rows", "format", "csv_settings", "path", "query", "columns"];
const OUTPUT_KEYS: &[&str] = &["query", "ctes", "partial"];
const QUERY_KEYS: &[&str] = &["rows", "partial", "format", "csv_settings", "path", "query"];
/// The `csv_settings` (pandas `read_csv` arguments in SQLMesh) efmesh honours.
const CSV_KEYS: &[&str] = &[
    "sep",
    "delimiter",
    "quotechar",
    "escapechar",
    "skipinitialspace",
];

/// SQLMesh keys efmesh reads but does not implement, with what to do instead.
fn unsupported(key: &str) -> Option<&'static str> {
    Some(match key {
        "gateway" => "remove it: efmesh tests run on a fresh in-memory DuckDB",
        _ => return None,
    })
}

/// Rows as an input or an expected relation gives them.
#[derive(Default)]
struct Data {
    rows: Vec<Row>,
    query: Option<String>,
    partial: Option<bool>,
    columns: Vec<(String, String)>,
}

/// `csv_settings` as efmesh reads them.
#[derive(Debug, Clone)]
struct CsvSettings {
    delimiter: u8,
    quote: u8,
    escape: Option<u8>,
    skip_initial_space: bool,
}

impl Default for CsvSettings {
    fn default() -> CsvSettings {
        CsvSettings {
            delimiter: b',',
            quote: b'"',
            escape: None,
            skip_initial_space: false,
        }
    }
}

/// Collects the problems of one file.
struct Reader<'a> {
    file: &'a str,
    /// The project root, which `path:` keys are relative to (`None`: they cannot be read).
    root: Option<&'a Path>,
    errors: Vec<TestError>,
}

fn pos(n: &Node) -> Pos {
    let len = n.as_str().map(|s| s.chars().count() as u64).unwrap_or(1);
    Pos {
        line: n.line,
        col: n.col,
        len: len.max(1),
    }
}

impl Reader<'_> {
    fn error(&mut self, test: Option<&str>, problem: TestProblem, at: &Node) {
        let p = pos(at);
        let mut e = TestError::file(self.file, problem, p.line, p.col, p.len);
        e.test = test.map(str::to_string);
        self.errors.push(e);
    }

    fn shape(&mut self, test: &str, what: String, expected: &'static str, at: &Node) {
        self.error(
            Some(test),
            TestProblem::Shape {
                what,
                expected,
                found: at.describe(),
            },
            at,
        );
    }

    /// Report keys of `map` outside `known` (naming unsupported SQLMesh ones as such).
    fn check_keys(
        &mut self,
        test: &str,
        map: &[(Node, Node)],
        known: &'static [&'static str],
        context: &'static str,
    ) {
        for (k, _) in map {
            let key = k.as_str().unwrap_or_default();
            if known.contains(&key) {
                continue;
            }
            let problem = match unsupported(key) {
                Some(instead) => TestProblem::Unsupported {
                    key: key.to_string(),
                    instead,
                },
                None => TestProblem::UnknownKey {
                    key: key.to_string(),
                    context,
                    known,
                    suggestion: efmesh_core::suggest::closest(key, known.iter().copied()),
                },
            };
            self.error(Some(test), problem, k);
        }
    }

    /// A scalar's text, or a shape error.
    fn text(&mut self, test: &str, what: &str, n: &Node) -> Option<String> {
        match n.as_str() {
            Some(s) if !n.is_null() => Some(s.to_string()),
            _ => {
                self.shape(test, format!("`{what}`"), "a scalar", n);
                None
            }
        }
    }

    /// `rows:` — a sequence of mappings (null: no rows).
    fn rows(&mut self, test: &str, what: &str, n: &Node) -> Vec<Row> {
        if n.is_null() {
            return vec![];
        }
        let Value::Seq(items) = &n.value else {
            self.shape(test, format!("the rows of {what}"), "a list of rows", n);
            return vec![];
        };
        let mut rows = vec![];
        for item in items {
            let Some(entries) = item.as_map() else {
                self.shape(
                    test,
                    format!("a row of {what}"),
                    "a mapping of column: value",
                    item,
                );
                continue;
            };
            let mut cells: Vec<Cell> = vec![];
            for (k, v) in entries {
                let Some(column) = self.text(test, "column name", k) else {
                    continue;
                };
                let column = column.to_ascii_lowercase();
                if cells.iter().any(|c| c.column == column) {
                    self.error(Some(test), TestProblem::DuplicateColumn { column }, k);
                    continue;
                }
                cells.push(Cell {
                    column,
                    value: Literal::from_node(v),
                    pos: Some(pos(k)),
                });
            }
            rows.push(Row {
                cells,
                pos: Some(pos(item)),
            });
        }
        rows
    }

    /// An input or expected relation: the rows directly, or a mapping with `rows` (YAML, or
    /// CSV text under `format: csv`), `path` (a file of either, relative to the project),
    /// `query` (SQL returning the rows), `partial` and, for inputs, `columns`.
    fn data(
        &mut self,
        test: &str,
        what: &str,
        n: &Node,
        known: &'static [&'static str],
        context: &'static str,
    ) -> Data {
        let Value::Map(entries) = &n.value else {
            return Data {
                rows: self.rows(test, what, n),
                ..Data::default()
            };
        };
        self.check_keys(test, entries, known, context);
        let get = |key: &str| {
            entries
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, v)| v)
        };
        let mut data = Data::default();
        let csv = match get("format") {
            None => false,
            Some(f) => match f.as_str().map(str::to_ascii_lowercase).as_deref() {
                Some("csv") => true,
                Some("yaml") => false,
                _ => {
                    self.shape(test, "`format`".into(), "`yaml` or `csv`", f);
                    false
                }
            },
        };
        let settings = get("csv_settings").and_then(|c| self.csv_settings(test, c));
        if let Some(q) = get("query") {
            data.query = self.text(test, "query", q);
            for other in ["rows", "path"] {
                if let Some(o) = get(other) {
                    self.error(
                        Some(test),
                        TestProblem::Conflict {
                            what: what.to_string(),
                            first: "query",
                            second: other,
                        },
                        o,
                    );
                }
            }
        } else if let Some(p) = get("path") {
            if get("rows").is_some() {
                self.error(
                    Some(test),
                    TestProblem::Conflict {
                        what: what.to_string(),
                        first: "path",
                        second: "rows",
                    },
                    p,
                );
            }
            data.rows = self.fixture_file(test, what, p, csv.then_some(&settings));
        } else if let Some(r) = get("rows") {
            data.rows = if csv {
                match r.as_str().filter(|_| !r.is_null()) {
                    Some(text) => {
                        // the header is on the scalar's first line (a block scalar's
                        // starts on the line after its `|`, where its node does)
                        let first = r.line;
                        self.csv_rows(test, what, text, settings.as_ref(), Some((r, first)))
                    }
                    None => {
                        self.shape(test, format!("the rows of {what}"), "CSV text", r);
                        vec![]
                    }
                }
            } else {
                self.rows(test, what, r)
            };
        }
        if let Some(p) = get("partial") {
            match p.scalar() {
                Some(yaml::Scalar::Bool(b)) => data.partial = Some(b),
                _ => self.shape(test, "`partial`".into(), "true or false", p),
            }
        }
        if let Some(c) = get("columns") {
            match c.as_map() {
                Some(cols) => {
                    for (k, v) in cols {
                        if let (Some(name), Some(ty)) = (
                            self.text(test, "column name", k),
                            self.text(test, "column type", v),
                        ) {
                            data.columns.push((name.to_ascii_lowercase(), ty));
                        }
                    }
                }
                None => self.shape(test, "`columns`".into(), "a mapping of column: type", c),
            }
        }
        data
    }

    /// `csv_settings`: the delimiter, quote and escape characters.
    fn csv_settings(&mut self, test: &str, n: &Node) -> Option<CsvSettings> {
        let Some(entries) = n.as_map() else {
            self.shape(test, "`csv_settings`".into(), "a mapping", n);
            return None;
        };
        self.check_keys(test, entries, CSV_KEYS, "`csv_settings`");
        let mut s = CsvSettings::default();
        for (k, v) in entries {
            let key = k.as_str().unwrap_or_default();
            if key == "skipinitialspace" {
                match v.scalar() {
                    Some(yaml::Scalar::Bool(b)) => s.skip_initial_space = b,
                    _ => self.shape(test, "`skipinitialspace`".into(), "true or false", v),
                }
                continue;
            }
            let byte = match v.as_str().map(str::as_bytes) {
                Some([b]) if b.is_ascii() => *b,
                _ => {
                    self.shape(test, format!("`{key}`"), "one ASCII character", v);
                    continue;
                }
            };
            match key {
                "sep" | "delimiter" => s.delimiter = byte,
                "quotechar" => s.quote = byte,
                "escapechar" => s.escape = Some(byte),
                _ => {}
            }
        }
        Some(s)
    }

    /// Rows of CSV text: a header, then one row per record. Cells are read as pandas reads
    /// them (SQLMesh's CSV fixtures go through `read_csv`): empty and `NA`-like cells are
    /// NULL, numbers and `True`/`False` are typed, the rest is text.
    fn csv_rows(
        &mut self,
        test: &str,
        what: &str,
        text: &str,
        settings: Option<&CsvSettings>,
        at: Option<(&Node, u64)>,
    ) -> Vec<Row> {
        let s = settings.cloned().unwrap_or_default();
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(s.delimiter)
            .quote(s.quote)
            .escape(s.escape)
            .from_reader(text.as_bytes());
        let trim = |f: &str| -> String {
            if s.skip_initial_space {
                f.trim_start_matches(' ').to_string()
            } else {
                f.to_string()
            }
        };
        let bad = |r: &mut Self, message: String| {
            let problem = TestProblem::Csv {
                what: what.to_string(),
                message,
            };
            match at {
                Some((n, _)) => r.error(Some(test), problem, n),
                None => r.errors.push(TestError {
                    problem,
                    location: Some(efmesh_core::Location::file_only(r.file)),
                    test: Some(test.to_string()),
                }),
            }
        };
        let header: Vec<String> = match reader.headers() {
            Ok(h) => h.iter().map(|c| trim(c).to_ascii_lowercase()).collect(),
            Err(e) => {
                bad(self, e.to_string());
                return vec![];
            }
        };
        let mut rows = vec![];
        for (k, record) in reader.records().enumerate() {
            let record = match record {
                Ok(r) => r,
                Err(e) => {
                    bad(self, e.to_string());
                    return rows;
                }
            };
            let pos = at.map(|(n, first)| Pos {
                line: first + 1 + k as u64,
                col: n.col,
                len: 1,
            });
            rows.push(Row {
                cells: header
                    .iter()
                    .zip(record.iter())
                    .map(|(c, v)| Cell {
                        column: c.clone(),
                        value: Literal::from_csv(&trim(v)),
                        pos,
                    })
                    .collect(),
                pos,
            });
        }
        rows
    }

    /// `path:` — the rows of a YAML or CSV file, relative to the project root.
    fn fixture_file(
        &mut self,
        test: &str,
        what: &str,
        p: &Node,
        csv: Option<&Option<CsvSettings>>,
    ) -> Vec<Row> {
        let Some(rel) = self.text(test, "path", p) else {
            return vec![];
        };
        let Some(root) = self.root else {
            self.error(
                Some(test),
                TestProblem::FixtureFile {
                    path: rel,
                    message: "fixture files are read only from a project's tests".into(),
                },
                p,
            );
            return vec![];
        };
        let text = match crate::workspace::read::read_text(&root.join(&rel)) {
            Ok(t) => t,
            Err(e) => {
                self.error(
                    Some(test),
                    TestProblem::FixtureFile {
                        path: rel,
                        message: e.to_string(),
                    },
                    p,
                );
                return vec![];
            }
        };
        let mut rows = match csv {
            Some(settings) => self.csv_rows(test, what, &text, settings.as_ref(), None),
            None => match yaml::parse(&text) {
                Ok(Some(n)) => {
                    let rows = match n.as_map() {
                        Some(m) => m
                            .iter()
                            .find(|(k, _)| k.as_str() == Some("rows"))
                            .map(|(_, v)| v.clone()),
                        None => Some(n),
                    };
                    match rows {
                        Some(r) => self.rows(test, what, &r),
                        None => vec![],
                    }
                }
                Ok(None) => vec![],
                Err(e) => {
                    self.error(
                        Some(test),
                        TestProblem::FixtureFile {
                            path: rel,
                            message: format!("line {}: {}", e.line, e.message),
                        },
                        p,
                    );
                    vec![]
                }
            },
        };
        // positions inside another file would point into this one: report at `path:`
        for r in &mut rows {
            r.pos = Some(pos(p));
            for c in &mut r.cells {
                c.pos = Some(pos(p));
            }
        }
        rows
    }

    /// An expected relation (the model's output or a CTE).
    fn expected(&mut self, test: &str, what: &str, n: &Node, partial: bool) -> Expected {
        let d = self.data(test, what, n, QUERY_KEYS, "an expected output");
        Expected {
            rows: d.rows,
            query: d.query,
            partial: d.partial.unwrap_or(partial),
            pos: Some(pos(n)),
        }
    }

    fn test(&mut self, name_node: &Node, body: &Node) -> Option<TestCase> {
        let name = self.text("", "test name", name_node)?;
        let Some(entries) = body.as_map() else {
            self.shape(
                &name,
                format!("test `{name}`"),
                "a mapping with `model`, `inputs` and `outputs`",
                body,
            );
            return None;
        };
        self.check_keys(&name, entries, TEST_KEYS, "a test");
        let get = |key: &str| entries.iter().find(|(k, _)| k.as_str() == Some(key));
        let mut case = TestCase::new(name.clone(), String::new());
        case.file = Some(self.file.to_string());
        case.pos = Some(pos(name_node));
        match get("model") {
            Some((_, v)) => {
                case.model = self.text(&name, "model", v)?;
                case.model_pos = Some(pos(v));
            }
            None => {
                self.error(
                    Some(&name),
                    TestProblem::MissingKey {
                        key: "model",
                        context: format!("test `{name}`"),
                    },
                    name_node,
                );
                return None;
            }
        }
        if let Some((_, v)) = get("description") {
            case.description = v.as_str().map(str::to_string);
        }
        if let Some((_, v)) = get("vars") {
            match v.as_map() {
                Some(vars) => {
                    for (k, val) in vars {
                        match k.as_str().unwrap_or_default() {
                            "start" => {
                                case.start = self.text(&name, "start", val);
                                case.start_pos = Some(pos(val));
                            }
                            "end" => {
                                case.end = self.text(&name, "end", val);
                                case.end_pos = Some(pos(val));
                            }
                            "execution_time" => {
                                case.execution_time = self.text(&name, "execution_time", val);
                                case.execution_pos = Some(pos(val));
                            }
                            other => {
                                let var = other.to_ascii_lowercase();
                                if efmesh_core::time::TIME_MACROS.contains(&var.as_str())
                                    || var == "latest"
                                {
                                    // a time macro follows start, end and execution_time
                                    self.error(
                                        Some(&name),
                                        TestProblem::UnknownVar {
                                            name: other.to_string(),
                                        },
                                        k,
                                    );
                                } else if val.as_map().is_some() {
                                    self.shape(
                                        &name,
                                        format!("variable `{other}`"),
                                        "a scalar or a list",
                                        val,
                                    );
                                } else {
                                    case.variables.push((var, val.to_json(), Some(pos(k))));
                                }
                            }
                        }
                    }
                }
                None if v.is_null() => {}
                None => self.shape(&name, "`vars`".into(), "a mapping", v),
            }
        }
        if let Some((_, v)) = get("inputs") {
            match v.as_map() {
                Some(inputs) => {
                    for (k, block) in inputs {
                        let Some(parent) = self.text(&name, "input name", k) else {
                            continue;
                        };
                        let what = format!("input `{parent}`");
                        let d = self.data(&name, &what, block, INPUT_KEYS, "an input");
                        case.inputs.push(Input {
                            name: parent,
                            rows: d.rows,
                            query: d.query,
                            columns: d.columns,
                            pos: Some(pos(k)),
                        });
                    }
                }
                None if v.is_null() => {}
                None => self.shape(&name, "`inputs`".into(), "a mapping of parent: rows", v),
            }
        }
        match get("outputs") {
            None => self.error(
                Some(&name),
                TestProblem::MissingKey {
                    key: "outputs",
                    context: format!("test `{name}`"),
                },
                name_node,
            ),
            Some((k, v)) => match v.as_map() {
                None => self.shape(
                    &name,
                    "`outputs`".into(),
                    "a mapping with `query` or `ctes`",
                    v,
                ),
                Some(outputs) => {
                    self.check_keys(&name, outputs, OUTPUT_KEYS, "`outputs`");
                    let get = |key: &str| outputs.iter().find(|(k, _)| k.as_str() == Some(key));
                    let mut partial = false;
                    if let Some((_, p)) = get("partial") {
                        match p.scalar() {
                            Some(yaml::Scalar::Bool(b)) => partial = b,
                            _ => self.shape(&name, "`partial`".into(), "true or false", p),
                        }
                    }
                    case.output = get("query")
                        .map(|(_, q)| self.expected(&name, "the expected output", q, partial));
                    if let Some((_, c)) = get("ctes") {
                        match c.as_map() {
                            Some(ctes) => {
                                for (cte, body) in ctes {
                                    let Some(cte_name) = self.text(&name, "CTE name", cte) else {
                                        continue;
                                    };
                                    let what = format!("CTE `{cte_name}`");
                                    let mut e = self.expected(&name, &what, body, partial);
                                    e.pos = Some(pos(cte));
                                    case.ctes.push((cte_name, e));
                                }
                            }
                            None => {
                                self.shape(&name, "`ctes`".into(), "a mapping of CTE name: rows", c)
                            }
                        }
                    }
                    if case.output.is_none() && case.ctes.is_empty() {
                        self.error(
                            Some(&name),
                            TestProblem::MissingKey {
                                key: "query",
                                context: "`outputs`".into(),
                            },
                            k,
                        );
                    }
                }
            },
        }
        Some(case)
    }
}

/// Read one test file (`file` is its project-relative path): the tests it defines, and every
/// problem found, each at its line and column. A test with a problem is left out.
pub(crate) fn read(root: Option<&Path>, file: &str, text: &str) -> (Vec<TestCase>, Vec<TestError>) {
    let mut r = Reader {
        file,
        root,
        errors: vec![],
    };
    let root = match yaml::parse(text) {
        Ok(Some(root)) => root,
        Ok(None) => return (vec![], vec![]),
        Err(e) => {
            r.errors.push(TestError::file(
                file,
                TestProblem::YamlSyntax { message: e.message },
                e.line,
                e.col,
                1,
            ));
            return (vec![], r.errors);
        }
    };
    let Some(entries) = root.as_map() else {
        if !root.is_null() {
            r.shape(
                "",
                "a test file".into(),
                "a mapping of test name: test",
                &root,
            );
        }
        return (vec![], r.errors);
    };
    let mut cases = vec![];
    for (k, v) in entries {
        let before = r.errors.len();
        if let Some(case) = r.test(k, v) {
            if r.errors.len() == before {
                cases.push(case);
            }
        }
    }
    // errors of a test are attributed to it; file-level ones carry no test
    for e in &mut r.errors {
        if e.test.as_deref() == Some("") {
            e.test = None;
        }
    }
    (cases, r.errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_sqlmesh_tests_with_positions() {
        let text = "\
t1:
  model: med.moves
  vars:
    start: 2026-01-01
  inputs:
    raw.movements:
      rows:
        - move_id: 1
          moved_at: 2026-01-01 08:00:00
    raw.other:
      - {id: 2}
  outputs:
    query:
      partial: true
      rows:
        - move_id: 1
t2:
  model: a.b
  outputs:
    query:
      - x: null
";
        let (cases, errors) = read(None, "tests/test_t.yaml", text);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(cases.len(), 2);
        let t1 = &cases[0];
        assert_eq!(
            (t1.name(), t1.model(), t1.line()),
            ("t1", "med.moves", Some(1))
        );
        assert_eq!(t1.start.as_deref(), Some("2026-01-01"));
        assert!(t1.output.as_ref().unwrap().partial);
        assert_eq!(t1.inputs[0].rows[0].cells[1].column, "moved_at");
        assert_eq!(t1.inputs[0].rows[0].cells[1].pos.unwrap().line, 9);
        assert_eq!(
            t1.inputs[0].rows[0].cells[1].value,
            Literal::Text("2026-01-01 08:00:00".into())
        );
        assert_eq!(
            t1.inputs[1].rows[0].cells[0].value,
            Literal::Number("2".into())
        );
        assert_eq!(t1.output.as_ref().unwrap().rows[0].pos.unwrap().line, 16);
        assert_eq!(
            cases[1].output.as_ref().unwrap().rows[0].cells[0].value,
            Literal::Null
        );
    }

    #[test]
    fn problems_point_at_their_key() {
        let text = "\
t1:
  model: a.b
  inputz: {}
  gateway: local
  outputs:
    query:
      rows:
        - {a: 1, a: 2}
t2:
  inputs: {}
";
        let (cases, errors) = read(None, "tests/test_t.yaml", text);
        assert!(cases.is_empty());
        let got: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        assert!(got[0].starts_with("tests/test_t.yaml:3:3: error[test-unknown-key]: unknown key `inputz` in a test (help: did you mean `inputs`?"), "{got:#?}");
        assert!(
            got[1].starts_with("tests/test_t.yaml:4:3: error[test-unsupported]"),
            "{got:#?}"
        );
        assert!(
            got[2].starts_with("tests/test_t.yaml:8:18: error[test-duplicate-column]"),
            "{got:#?}"
        );
        assert!(
            got[3].starts_with(
                "tests/test_t.yaml:9:1: error[test-missing-key]: test `t2` has no `model`"
            ),
            "{got:#?}"
        );
        let (_, errors) = read(None, "tests/test_t.yaml", "t1: [1, 2\n");
        assert_eq!(errors[0].problem.code(), "test-yaml-syntax");
    }

    #[test]
    fn csv_rows_queries_ctes_and_variables() {
        let text = "\
t1:
  model: a.b
  vars:
    execution_time: 2024-01-02 03:00:00
    Region: eu
    ids: [1, 2]
  inputs:
    s.csv:
      format: csv
      csv_settings: {sep: ';'}
      rows: |
        id;name;score;ok
        1;x;1.5;True
        2;;NA;false
    s.q:
      query: SELECT 1 AS id
      columns: {id: BIGINT}
  outputs:
    partial: true
    ctes:
      first:
        - {id: 1}
      second:
        query: SELECT 2 AS id
";
        let (cases, errors) = read(None, "tests/test_t.yaml", text);
        assert!(errors.is_empty(), "{errors:?}");
        let t = &cases[0];
        assert_eq!(t.execution_time.as_deref(), Some("2024-01-02 03:00:00"));
        let vars: Vec<&str> = t.variables.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_eq!(vars, ["region", "ids"]);
        assert_eq!(t.variables[1].1, serde_json::json!([1, 2]));
        let csv = &t.inputs[0].rows;
        assert_eq!(csv.len(), 2);
        let values: Vec<&Literal> = csv[1].cells.iter().map(|c| &c.value).collect();
        assert_eq!(
            values,
            [
                &Literal::Number("2".into()),
                &Literal::Null,
                &Literal::Null,
                &Literal::Bool(false)
            ]
        );
        assert_eq!(csv[0].cells[3].value, Literal::Bool(true));
        // the header is on line 12, the first record on 13
        assert_eq!(csv[0].pos.unwrap().line, 13);
        assert_eq!(t.inputs[1].query.as_deref(), Some("SELECT 1 AS id"));
        assert_eq!(
            t.inputs[1].columns,
            [("id".to_string(), "BIGINT".to_string())]
        );
        assert!(t.output.is_none(), "a test of CTEs only compares no output");
        assert_eq!(t.ctes.len(), 2);
        assert!(t.ctes.iter().all(|(_, e)| e.partial));
        assert_eq!(t.ctes[1].1.query.as_deref(), Some("SELECT 2 AS id"));
    }

    #[test]
    fn conflicting_and_unknown_data_keys_are_errors() {
        let text = "\
t1:
  model: a.b
  vars:
    start_ds: 2024-01-01
  inputs:
    s.x:
      query: SELECT 1
      rows: [{id: 1}]
    s.y:
      format: parquet
      rows: []
    s.z:
      format: csv
      csv_settings: {sepp: ';'}
      rows: 'id'
  outputs:
    query:
      path: fixtures/out.yaml
";
        let (_, errors) = read(None, "tests/test_t.yaml", text);
        let got: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        let codes: Vec<&str> = errors.iter().map(|e| e.problem.code()).collect();
        assert_eq!(
            codes,
            [
                "test-unknown-var",
                "test-conflict",
                "test-shape",
                "test-unknown-key",
                "test-fixture-file"
            ],
            "{got:#?}"
        );
        assert!(got[1].starts_with("tests/test_t.yaml:8:13:"), "{got:#?}");
        assert!(got[3].contains("did you mean `sep`"), "{got:#?}");
    }
}
