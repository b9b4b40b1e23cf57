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
use super::{Cell, Input, Pos, Row, TestCase, TestError, TestProblem};

const TEST_KEYS: &[&str] = &["model", "description", "inputs", "outputs", "vars"];
const INPUT_KEYS: &[&str] = &["rows"];
const OUTPUT_KEYS: &[&str] = &["query"];
const QUERY_KEYS: &[&str] = &["rows", "partial"];

/// SQLMesh keys efmesh reads but does not implement, with what to do instead.
fn unsupported(key: &str) -> Option<&'static str> {
    Some(match key {
        "ctes" => "efmesh compares the model's output only; test a CTE's logic through `query`",
        "format" | "csv" => "write the rows as YAML under `rows:`",
        "query" => "write the input's rows as YAML under `rows:`",
        "columns" => "efmesh types fixture columns by the parent's declared `columns`; declare them in its MODEL block",
        "schema" | "gateway" => "remove it: efmesh tests run on a fresh in-memory DuckDB",
        _ => return None,
    })
}

/// Collects the problems of one file.
struct Reader<'a> {
    file: &'a str,
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

    /// An input or output block: `{rows: [...], ...}` or the rows directly. Returns the rows
    /// and the mapping's other entries.
    fn block<'n>(
        &mut self,
        test: &str,
        what: &str,
        n: &'n Node,
        known: &'static [&'static str],
        context: &'static str,
    ) -> (Vec<Row>, &'n [(Node, Node)]) {
        match &n.value {
            Value::Map(entries) => {
                self.check_keys(test, entries, known, context);
                let rows = entries
                    .iter()
                    .find(|(k, _)| k.as_str() == Some("rows"))
                    .map(|(_, v)| self.rows(test, what, v))
                    .unwrap_or_default();
                (rows, entries)
            }
            _ => (self.rows(test, what, n), &[]),
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
                            other => self.error(
                                Some(&name),
                                TestProblem::UnknownVar {
                                    name: other.to_string(),
                                },
                                k,
                            ),
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
                        let (rows, _) = self.block(&name, &what, block, INPUT_KEYS, "an input");
                        case.inputs.push(Input {
                            name: parent,
                            rows,
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
                None => self.shape(&name, "`outputs`".into(), "a mapping with `query`", v),
                Some(outputs) => {
                    self.check_keys(&name, outputs, OUTPUT_KEYS, "`outputs`");
                    match outputs.iter().find(|(k, _)| k.as_str() == Some("query")) {
                        None => self.error(
                            Some(&name),
                            TestProblem::MissingKey {
                                key: "query",
                                context: "`outputs`".into(),
                            },
                            k,
                        ),
                        Some((_, q)) => {
                            let (rows, entries) =
                                self.block(&name, "the expected output", q, QUERY_KEYS, "`query`");
                            case.expected = rows;
                            if let Some((_, p)) =
                                entries.iter().find(|(k, _)| k.as_str() == Some("partial"))
                            {
                                match p.scalar() {
                                    Some(yaml::Scalar::Bool(b)) => case.partial = b,
                                    _ => self.shape(&name, "`partial`".into(), "true or false", p),
                                }
                            }
                        }
                    }
                }
            },
        }
        Some(case)
    }
}

/// Read one test file (`file` is its project-relative path): the tests it defines, and every
/// problem found, each at its line and column. A test with a problem is left out.
pub(crate) fn read(file: &str, text: &str) -> (Vec<TestCase>, Vec<TestError>) {
    let mut r = Reader {
        file,
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
        let (cases, errors) = read("tests/t.yaml", text);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(cases.len(), 2);
        let t1 = &cases[0];
        assert_eq!(
            (t1.name(), t1.model(), t1.line()),
            ("t1", "med.moves", Some(1))
        );
        assert_eq!(t1.start.as_deref(), Some("2026-01-01"));
        assert!(t1.partial);
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
        assert_eq!(t1.expected[0].pos.unwrap().line, 16);
        assert_eq!(cases[1].expected[0].cells[0].value, Literal::Null);
    }

    #[test]
    fn problems_point_at_their_key() {
        let text = "\
t1:
  model: a.b
  inputz: {}
  outputs:
    ctes: {}
    query:
      rows:
        - {a: 1, a: 2}
t2:
  inputs: {}
";
        let (cases, errors) = read("tests/t.yaml", text);
        assert!(cases.is_empty());
        let got: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        assert!(got[0].starts_with("tests/t.yaml:3:3: error[test-unknown-key]: unknown key `inputz` in a test (help: did you mean `inputs`?"), "{got:#?}");
        assert!(
            got[1].starts_with("tests/t.yaml:5:5: error[test-unsupported]"),
            "{got:#?}"
        );
        assert!(
            got[2].starts_with("tests/t.yaml:8:18: error[test-duplicate-column]"),
            "{got:#?}"
        );
        assert!(
            got[3]
                .starts_with("tests/t.yaml:9:1: error[test-missing-key]: test `t2` has no `model`"),
            "{got:#?}"
        );
        let (_, errors) = read("tests/t.yaml", "t1: [1, 2\n");
        assert_eq!(errors[0].problem.code(), "test-yaml-syntax");
    }
}
