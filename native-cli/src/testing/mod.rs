//! Unit tests for models: fixture rows in, expected rows out, no warehouse needed.
//!
//! A test names a model, gives rows for the model's parents and the rows the model must
//! return. efmesh renders the model with every parent replaced by a CTE over those rows (typed
//! by the parent's declared columns), runs it on an in-memory DuckDB, and compares the
//! output with the expected rows as multisets. Tests are written in SQLMesh's unit-test YAML
//! format under `tests/` ([`load_tests`], `efmesh test`) or built in Rust with [`TestCase`]
//! and run by [`test_model`] from `cargo test`.
//!
//! ```
//! # let dir = tempfile::tempdir().unwrap();
//! # std::fs::create_dir_all(dir.path().join("models")).unwrap();
//! # std::fs::write(dir.path().join("efmesh.toml"), "[project]\nname = \"demo\"\n").unwrap();
//! # std::fs::write(dir.path().join("models/a.sql"), "MODEL (name s.a, kind FULL, columns (id INT, v DOUBLE));\nSELECT 1 AS id, 2.0 AS v").unwrap();
//! # std::fs::write(dir.path().join("models/b.sql"), "MODEL (name s.b, kind FULL);\nSELECT id, sum(v) AS total FROM s.a GROUP BY id").unwrap();
//! use efmesh::testing::{test_model, TestCase};
//! use serde_json::json;
//!
//! let project = efmesh::Efmesh::open(dir.path())?;
//! let case = TestCase::new("totals_per_id", "s.b")
//!     .input("s.a", [json!({"id": 1, "v": 1.5}), json!({"id": 1, "v": 2}), json!({"id": 2})])
//!     .expect([json!({"id": 1, "total": 3.5}), json!({"id": 2, "total": null})]);
//! let outcome = test_model(&project, &case)?;
//! assert!(outcome.passed(), "{outcome}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
// Test errors travel on cold paths, as core's diagnostics do; boxing them would only add noise.
#![allow(clippy::result_large_err)]

pub mod diff;
mod file;
mod fixture;
mod yaml;

pub use diff::{CellMismatch, DiffRow, Record, RowDiff, RowMismatch};

use crate::engine::{Engine, EngineError};
use crate::Efmesh;
use chrono::NaiveDateTime;
use efmesh_core::model::Kind;
use efmesh_core::model::ParseEnv;
use efmesh_core::model_sql::{render_model, RelationTarget};
use efmesh_core::project::{Project, ProjectSources};
use efmesh_core::sql::ModelQuery;
use efmesh_core::Location;
use fixture::Literal;
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The directory, relative to the project root, whose `test*.yaml` / `test*.yml` files
/// (searched recursively, as SQLMesh does) hold unit tests.
pub const TESTS_DIR: &str = "tests";

/// A span in a test file: 1-based line and column, and its length in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pos {
    pub(crate) line: u64,
    pub(crate) col: u64,
    pub(crate) len: u64,
}

/// One value of a row, and where its column was named.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Cell {
    pub(crate) column: String,
    pub(crate) value: Literal,
    pub(crate) pos: Option<Pos>,
}

/// A fixture or expected row, and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    pub(crate) cells: Vec<Cell>,
    pub(crate) pos: Option<Pos>,
}

/// The rows given for one parent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Input {
    pub(crate) name: String,
    pub(crate) rows: Vec<Row>,
    /// `query:` instead of rows: SQL whose result is the parent's rows.
    pub(crate) query: Option<String>,
    /// `columns:`: the parent's column types for this test, over its declared ones.
    pub(crate) columns: Vec<(String, String)>,
    pub(crate) pos: Option<Pos>,
}

/// What a relation of the test must hold: the model's output, or one of its CTEs.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Expected {
    /// The expected rows.
    pub(crate) rows: Vec<Row>,
    /// `query:` instead of rows: SQL whose result is the expected rows.
    pub(crate) query: Option<String>,
    /// Compare only the columns the rows (or the query) name.
    pub(crate) partial: bool,
    /// Where it was written.
    pub(crate) pos: Option<Pos>,
}

/// One unit test: a model, rows for its parents, and the rows it must return.
///
/// It exists so the same test can come from a YAML file (with positions for every error) or
/// be built in Rust, and run the same way. Build one with [`TestCase::new`] and the chained
/// setters; rows are JSON objects mapping column names to values.
#[derive(Debug, Clone, PartialEq)]
pub struct TestCase {
    pub(crate) name: String,
    pub(crate) model: String,
    pub(crate) description: Option<String>,
    pub(crate) inputs: Vec<Input>,
    /// What the model must return; `None` for a test of its CTEs only.
    pub(crate) output: Option<Expected>,
    /// What CTEs of the model's query must return, by name as written (`outputs: ctes`).
    pub(crate) ctes: Vec<(String, Expected)>,
    pub(crate) start: Option<String>,
    pub(crate) end: Option<String>,
    /// `vars: execution_time`: what `@execution_ds` & co. and the SQL clock (`CURRENT_DATE`,
    /// `now()`) read.
    pub(crate) execution_time: Option<String>,
    /// The other `vars`: the project's variables as this test sets them.
    pub(crate) variables: Vec<(String, serde_json::Value, Option<Pos>)>,
    /// The test file, project-relative (tests read from YAML only).
    pub(crate) file: Option<String>,
    /// The test's name in its file.
    pub(crate) pos: Option<Pos>,
    pub(crate) model_pos: Option<Pos>,
    pub(crate) start_pos: Option<Pos>,
    pub(crate) end_pos: Option<Pos>,
    pub(crate) execution_pos: Option<Pos>,
    /// A problem found while building the case (a row that is not an object).
    pub(crate) invalid: Option<TestProblem>,
}

impl TestCase {
    /// A test named `name` of model `model` (`schema.table`), with no inputs and no expected
    /// rows yet.
    pub fn new(name: impl Into<String>, model: impl Into<String>) -> TestCase {
        TestCase {
            name: name.into(),
            model: model.into(),
            description: None,
            inputs: vec![],
            output: Some(Expected::default()),
            ctes: vec![],
            start: None,
            end: None,
            execution_time: None,
            variables: vec![],
            file: None,
            pos: None,
            model_pos: None,
            start_pos: None,
            end_pos: None,
            execution_pos: None,
            invalid: None,
        }
    }

    fn rows(&mut self, what: &str, rows: impl IntoIterator<Item = serde_json::Value>) -> Vec<Row> {
        let mut out = vec![];
        for r in rows {
            match r {
                serde_json::Value::Object(m) => out.push(Row {
                    cells: m
                        .iter()
                        .map(|(k, v)| Cell {
                            column: k.to_ascii_lowercase(),
                            value: Literal::from_json(v),
                            pos: None,
                        })
                        .collect(),
                    pos: None,
                }),
                other => {
                    self.invalid.get_or_insert(TestProblem::Shape {
                        what: format!("a row of {what}"),
                        expected: "an object of column → value",
                        found: match other {
                            serde_json::Value::Array(_) => "an array",
                            serde_json::Value::Null => "null",
                            _ => "a scalar",
                        },
                    });
                }
            }
        }
        out
    }

    /// Rows for parent `parent` (a model the tested model reads, directly or through an
    /// EMBEDDED model). Columns a row leaves out are NULL; a parent given no rows reads as an
    /// empty table.
    pub fn input(
        mut self,
        parent: impl Into<String>,
        rows: impl IntoIterator<Item = serde_json::Value>,
    ) -> TestCase {
        let name = parent.into();
        let rows = self.rows(&format!("input `{name}`"), rows);
        self.inputs.push(Input {
            name,
            rows,
            query: None,
            columns: vec![],
            pos: None,
        });
        self
    }

    /// Rows for parent `parent` given as a query (`inputs: parent: query:` in YAML), for
    /// fixtures easier to compute than to list. Columns the query does not return are NULL.
    pub fn input_query(mut self, parent: impl Into<String>, sql: impl Into<String>) -> TestCase {
        self.inputs.push(Input {
            name: parent.into(),
            rows: vec![],
            query: Some(sql.into()),
            columns: vec![],
            pos: None,
        });
        self
    }

    /// The rows the model must return, in any order (`outputs: query: rows:` in YAML).
    pub fn expect(mut self, rows: impl IntoIterator<Item = serde_json::Value>) -> TestCase {
        let rows = self.rows("the expected output", rows);
        self.output
            .get_or_insert_with(Expected::default)
            .rows
            .extend(rows);
        self
    }

    /// The rows CTE `cte` of the model's query must return (`outputs: ctes: cte: rows:`).
    pub fn expect_cte(
        mut self,
        cte: impl Into<String>,
        rows: impl IntoIterator<Item = serde_json::Value>,
    ) -> TestCase {
        let cte = cte.into();
        let rows = self.rows(&format!("CTE `{cte}`"), rows);
        self.ctes.push((
            cte,
            Expected {
                rows,
                ..Expected::default()
            },
        ));
        self
    }

    /// Compare only the columns the expected rows name (`partial: true`); by default every
    /// output column is compared and a column an expected row leaves out is expected NULL.
    /// It applies to the model's output and to every CTE expectation.
    pub fn partial(mut self, partial: bool) -> TestCase {
        if let Some(o) = &mut self.output {
            o.partial = partial;
        }
        for (_, c) in &mut self.ctes {
            c.partial = partial;
        }
        self
    }

    /// The execution time (`vars: execution_time:`): what `@execution_ds` & co. bind to, and
    /// what `CURRENT_DATE`, `CURRENT_TIMESTAMP` and `now()` return in the model.
    pub fn execution_time(mut self, at: impl Into<String>) -> TestCase {
        self.execution_time = Some(at.into());
        self
    }

    /// Set a project variable for this test only (`vars: name: value`), as `@name` and
    /// `@VAR('name')` read it.
    pub fn var(mut self, name: impl Into<String>, value: serde_json::Value) -> TestCase {
        self.variables
            .push((name.into().to_ascii_lowercase(), value, None));
        self
    }

    /// The start of the interval `@start` & co. bind to (`vars: start:`), e.g. `2026-01-01`.
    pub fn start(mut self, start: impl Into<String>) -> TestCase {
        self.start = Some(start.into());
        self
    }

    /// The exclusive end of that interval (`vars: end:`).
    pub fn end(mut self, end: impl Into<String>) -> TestCase {
        self.end = Some(end.into());
        self
    }

    /// A sentence saying what the test checks (`description:`).
    pub fn description(mut self, description: impl Into<String>) -> TestCase {
        self.description = Some(description.into());
        self
    }

    /// The test's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tested model, as written.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The project-relative file the test was read from (`None` when built in Rust).
    pub fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }

    /// The line of the test's name in its file (`None` when built in Rust).
    pub fn line(&self) -> Option<u64> {
        self.pos.map(|p| p.line)
    }

    /// A location in this test's file; the test's own name when `pos` is unknown.
    fn location(&self, pos: Option<Pos>) -> Option<Location> {
        let file = self.file.as_ref()?;
        Some(match pos.or(self.pos) {
            Some(p) => Location::new(
                file.clone(),
                (p.line, p.col),
                (p.line, p.col + p.len.max(1)),
            ),
            None => Location::file_only(file.clone()),
        })
    }

    fn error(&self, problem: TestProblem, pos: Option<Pos>) -> TestError {
        TestError {
            location: self.location(pos),
            test: Some(self.name.clone()),
            problem,
        }
    }
}

/// Everything that can be wrong with a unit test, as a typed value: the test file, its
/// references into the project, or the model's SQL failing on the fixtures.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TestProblem {
    /// A test file cannot be read.
    #[error("cannot read test file: {message}")]
    Io {
        /// The operating system's reason.
        message: String,
    },
    /// A test file is not valid YAML.
    #[error("invalid YAML: {message}")]
    YamlSyntax {
        /// The YAML parser's explanation.
        message: String,
    },
    /// A part of a test has the wrong shape, e.g. `inputs` given as a list.
    #[error("{what} must be {expected}, found {found}")]
    Shape {
        /// Which part (`test `t``, `inputs`, `a row of input `x``).
        what: String,
        /// The accepted shape.
        expected: &'static str,
        /// What was written instead.
        found: &'static str,
    },
    /// A key efmesh does not know where it is written, usually a typo.
    #[error("unknown key `{key}` in {context}")]
    UnknownKey {
        /// The key as written.
        key: String,
        /// Where it was written (`a test`, `outputs`, ...).
        context: &'static str,
        /// The keys accepted there.
        known: &'static [&'static str],
        /// The closest known key, when one is near enough to be a likely typo.
        suggestion: Option<String>,
    },
    /// A SQLMesh test feature efmesh does not implement yet.
    #[error("`{key}` is not supported by efmesh yet")]
    Unsupported {
        /// The SQLMesh key.
        key: String,
        /// What to write instead.
        instead: &'static str,
    },
    /// Two ways of giving the same rows, e.g. `query` and `rows`.
    #[error("{what} gives both `{first}` and `{second}`")]
    Conflict {
        /// Which relation (`input `x``, `the expected output`).
        what: String,
        /// The key that is used.
        first: &'static str,
        /// The key that conflicts with it.
        second: &'static str,
    },
    /// CSV rows that cannot be read.
    #[error("the CSV rows of {what} cannot be read: {message}")]
    Csv {
        /// Which relation.
        what: String,
        /// The CSV reader's explanation.
        message: String,
    },
    /// A `path:` fixture file that cannot be read.
    #[error("cannot read fixture file `{path}`: {message}")]
    FixtureFile {
        /// The path as written.
        path: String,
        /// Why.
        message: String,
    },
    /// `outputs: ctes` names a CTE the model's query does not define.
    #[error("`{model}` has no CTE `{cte}`")]
    UnknownCte {
        /// The tested model.
        model: String,
        /// The CTE as written.
        cte: String,
        /// The CTEs its query defines, in order.
        ctes: Vec<String>,
        /// The closest CTE name, when one is near enough to be a likely typo.
        suggestion: Option<String>,
    },
    /// A required key is missing, e.g. a test without `model`.
    #[error("{context} has no `{key}`")]
    MissingKey {
        /// The missing key.
        key: &'static str,
        /// Where it is missing (`test `t``).
        context: String,
    },
    /// Two tests share a name.
    #[error("test `{name}` is defined twice")]
    DuplicateTest {
        /// The repeated name.
        name: String,
        /// Where the first one is, as `file:line:column`.
        first: String,
    },
    /// A test names a model the project does not define.
    #[error("unknown model `{name}`")]
    UnknownModel {
        /// The name as written.
        name: String,
        /// The closest model name, when one is near enough to be a likely typo.
        suggestion: Option<String>,
    },
    /// The tested model has no query (SEED, EXTERNAL): there is nothing to run.
    #[error("model `{model}` is {kind} and has no query to test")]
    NoQuery {
        /// The model.
        model: String,
        /// Its kind.
        kind: &'static str,
    },
    /// An input names something the model does not read.
    #[error("`{input}` is not a parent of `{model}`")]
    NotAParent {
        /// The input as written.
        input: String,
        /// The tested model.
        model: String,
        /// The models it reads, directly or through EMBEDDED models: what inputs may name.
        parents: Vec<String>,
        /// The closest parent, when one is near enough to be a likely typo.
        suggestion: Option<String>,
    },
    /// The same parent is given rows twice.
    #[error("input `{input}` is given twice")]
    DuplicateInput {
        /// The parent.
        input: String,
    },
    /// A row names the same column twice.
    #[error("column `{column}` is given twice in one row")]
    DuplicateColumn {
        /// The repeated column.
        column: String,
    },
    /// A fixture row names a column its parent does not have.
    #[error("`{parent}` has no column `{column}`")]
    UndeclaredColumn {
        /// The parent model.
        parent: String,
        /// The column as written.
        column: String,
        /// The parent's columns.
        columns: Vec<String>,
        /// Whether those columns were inferred from its query rather than declared.
        inferred: bool,
        /// The closest column, when one is near enough to be a likely typo.
        suggestion: Option<String>,
    },
    /// An expected row names a column the model does not return.
    #[error("`{model}` does not return column `{column}`")]
    UnknownOutputColumn {
        /// The tested model.
        model: String,
        /// The column as written.
        column: String,
        /// The columns the model returns.
        returned: Vec<String>,
        /// The closest output column, when one is near enough to be a likely typo.
        suggestion: Option<String>,
    },
    /// `vars` holds something efmesh does not bind.
    #[error("unknown variable `{name}`")]
    UnknownVar {
        /// The variable as written.
        name: String,
    },
    /// `vars: start` / `end` is not an instant, or the interval is empty.
    #[error("invalid `{var}`: {message}")]
    InvalidVar {
        /// `start` or `end`.
        var: &'static str,
        /// What is wrong.
        message: String,
    },
    /// A fixture or expected value cannot be cast to its column's type.
    #[error("{value} is not a valid {sql_type} for column `{column}`: {message}")]
    BadValue {
        /// The value as written.
        value: String,
        /// The column.
        column: String,
        /// The type it was cast to.
        sql_type: String,
        /// What the engine said.
        message: String,
    },
    /// `efmesh test NAME` names no test and no model that has tests.
    #[error("no test or tested model named `{name}`")]
    NoSuchTest {
        /// The name as given.
        name: String,
        /// The closest test or model name.
        suggestion: Option<String>,
    },
    /// The model could not be rendered over the fixtures.
    #[error("cannot render `{model}`: {message}")]
    Render {
        /// The tested model.
        model: String,
        /// The renderer's message.
        message: String,
    },
    /// The engine failed running the model on the fixtures.
    #[error("running `{model}` on the fixtures failed: {message}")]
    Engine {
        /// The tested model.
        model: String,
        /// What the engine said.
        message: String,
    },
}

impl TestProblem {
    /// A stable, kebab-case identifier for `--json` consumers.
    pub fn code(&self) -> &'static str {
        match self {
            TestProblem::Io { .. } => "test-io",
            TestProblem::YamlSyntax { .. } => "test-yaml-syntax",
            TestProblem::Shape { .. } => "test-shape",
            TestProblem::UnknownKey { .. } => "test-unknown-key",
            TestProblem::Unsupported { .. } => "test-unsupported",
            TestProblem::MissingKey { .. } => "test-missing-key",
            TestProblem::Conflict { .. } => "test-conflict",
            TestProblem::Csv { .. } => "test-csv",
            TestProblem::FixtureFile { .. } => "test-fixture-file",
            TestProblem::UnknownCte { .. } => "test-unknown-cte",
            TestProblem::DuplicateTest { .. } => "test-duplicate",
            TestProblem::UnknownModel { .. } => "test-unknown-model",
            TestProblem::NoQuery { .. } => "test-no-query",
            TestProblem::NotAParent { .. } => "test-not-a-parent",
            TestProblem::DuplicateInput { .. } => "test-duplicate-input",
            TestProblem::DuplicateColumn { .. } => "test-duplicate-column",
            TestProblem::UndeclaredColumn { .. } => "test-undeclared-column",
            TestProblem::UnknownOutputColumn { .. } => "test-unknown-output-column",
            TestProblem::UnknownVar { .. } => "test-unknown-var",
            TestProblem::InvalidVar { .. } => "test-invalid-var",
            TestProblem::BadValue { .. } => "test-bad-value",
            TestProblem::NoSuchTest { .. } => "test-not-found",
            TestProblem::Render { .. } => "test-render",
            TestProblem::Engine { .. } => "test-engine",
        }
    }

    /// What to do about it.
    pub fn help(&self) -> Option<String> {
        let maybe = |s: &Option<String>| {
            s.as_ref()
                .map(|s| format!("did you mean `{s}`? "))
                .unwrap_or_default()
        };
        match self {
            TestProblem::YamlSyntax { .. } => Some("tests use SQLMesh's format: `name: {model: schema.table, inputs: {...}, outputs: {query: {rows: [...]}}}`".into()),
            TestProblem::Shape { .. } => Some("see `efmesh test --help` or the manual (docs/src/unit-tests.md) for the test format".into()),
            TestProblem::UnknownKey { known, suggestion, .. } => Some(format!("{}known keys: {}", maybe(suggestion), known.join(", "))),
            TestProblem::Unsupported { instead, .. } => Some(instead.to_string()),
            TestProblem::MissingKey { key, .. } => Some(format!("add `{key}:` to the test")),
            TestProblem::DuplicateTest { first, .. } => Some(format!("first defined at {first}; test names are unique across tests/")),
            TestProblem::UnknownModel { suggestion, .. } => Some(format!("{}`efmesh graph` lists every model", maybe(suggestion))),
            TestProblem::NoQuery { .. } => Some("test the models that read it, giving its rows as their input".into()),
            TestProblem::NotAParent { parents, suggestion, .. } if parents.is_empty() => Some(format!("{}the model reads no other model, so it takes no inputs", maybe(suggestion))),
            TestProblem::NotAParent { parents, suggestion, .. } => Some(format!("{}inputs may name: {}", maybe(suggestion), parents.join(", "))),
            TestProblem::DuplicateInput { .. } | TestProblem::DuplicateColumn { .. } => Some("remove one of them".into()),
            TestProblem::UndeclaredColumn { columns, inferred: false, suggestion, .. } => Some(format!("{}its declared columns: {}; fix the name, or add the column to the parent's `columns`", maybe(suggestion), columns.join(", "))),
            TestProblem::UndeclaredColumn { columns, inferred: true, suggestion, .. } => Some(format!("{}its columns (inferred from its query): {}; fix the name, or declare `columns` in the parent's MODEL block", maybe(suggestion), columns.join(", "))),
            TestProblem::UnknownOutputColumn { returned, suggestion, .. } => Some(format!("{}the model returns: {}", maybe(suggestion), returned.join(", "))),
            TestProblem::UnknownVar { .. } => Some("time macros follow `start`, `end` (the interval @start_ds & co. refer to) and `execution_time` (@execution_ds & co.); set those instead".into()),
            TestProblem::InvalidVar { .. } => Some("write a UTC date or timestamp, e.g. 2026-01-01 or 2026-01-01T10:00:00Z; `end` is after `start`".into()),
            TestProblem::Conflict { first, second, .. } => Some(format!("keep `{first}` or `{second}`, not both")),
            TestProblem::Csv { .. } => Some("write a header line, then one line per row, every line with the header's number of fields".into()),
            TestProblem::FixtureFile { .. } => Some("`path` is relative to the project root and names a YAML file of rows, or a CSV file with `format: csv`".into()),
            TestProblem::UnknownCte { ctes, suggestion, .. } if ctes.is_empty() => Some(format!("{}the model's query has no WITH clause", maybe(suggestion))),
            TestProblem::UnknownCte { ctes, suggestion, .. } => Some(format!("{}its CTEs: {}", maybe(suggestion), ctes.join(", "))),
            TestProblem::BadValue { .. } => Some("write the value as the column's type reads it from text (e.g. `2026-01-01 08:00:00` for a TIMESTAMP)".into()),
            TestProblem::NoSuchTest { suggestion, .. } => Some(format!("{}pass test names, or model names to run all of a model's tests", maybe(suggestion))),
            TestProblem::Engine { .. } => Some("check the fixture values against the parents' column types; `efmesh render` shows the model's SQL".into()),
            _ => None,
        }
    }
}

/// A [`TestProblem`] pinned to where it was written, the way `efmesh check` reports project
/// problems: `file:line:column`, a stable code and advice.
#[derive(Debug, Clone, PartialEq)]
pub struct TestError {
    /// What went wrong.
    pub problem: TestProblem,
    /// Where in which test file; `None` for tests built in Rust.
    pub location: Option<Location>,
    /// The test it belongs to, when it belongs to one.
    pub test: Option<String>,
}

impl TestError {
    fn file(file: &str, problem: TestProblem, line: u64, col: u64, len: u64) -> TestError {
        TestError {
            problem,
            location: Some(if line == 0 {
                Location::file_only(file)
            } else {
                Location::new(file, (line, col), (line, col + len.max(1)))
            }),
            test: None,
        }
    }
}

impl fmt::Display for TestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(l) = &self.location {
            write!(f, "{l}: ")?;
        }
        write!(f, "error[{}]: {}", self.problem.code(), self.problem)?;
        if let (Some(t), None) = (&self.test, &self.location) {
            write!(f, " (in test `{t}`)")?;
        }
        if let Some(h) = self.problem.help() {
            write!(f, " (help: {h})")?;
        }
        Ok(())
    }
}

impl std::error::Error for TestError {}

impl Serialize for TestError {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("TestError", 6)?;
        st.serialize_field("severity", "error")?;
        st.serialize_field("code", self.problem.code())?;
        st.serialize_field("message", &self.problem.to_string())?;
        st.serialize_field("location", &self.location)?;
        st.serialize_field("help", &self.problem.help())?;
        st.serialize_field("test", &self.test)?;
        st.end()
    }
}

/// The outcome of one test that ran: the rows matched, or how they differ.
#[derive(Debug, Clone, PartialEq)]
pub struct TestOutcome {
    /// The test's name.
    pub name: String,
    /// The tested model.
    pub model: String,
    /// The test file (`None` for tests built in Rust).
    pub file: Option<String>,
    /// The line of the test's name in its file.
    pub line: Option<u64>,
    /// What differs in the model's output; empty when it matched (or is not checked).
    pub diff: RowDiff,
    /// What differs in each CTE the test checks, in the order written.
    pub ctes: Vec<RowDiff>,
    /// How long rendering, running and comparing took.
    pub duration: Duration,
}

impl TestOutcome {
    /// Whether the model returned exactly the expected rows.
    pub fn passed(&self) -> bool {
        self.diff.is_empty() && self.ctes.iter().all(RowDiff::is_empty)
    }

    /// Every comparison that failed: the output's, then the CTEs'.
    fn failures(&self) -> impl Iterator<Item = &RowDiff> {
        std::iter::once(&self.diff)
            .chain(&self.ctes)
            .filter(|d| !d.is_empty())
    }
}

impl fmt::Display for TestOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.passed() {
            return writeln!(f, "PASS {}", self.name);
        }
        write!(f, "FAIL {}", self.name)?;
        match (&self.file, self.line) {
            (Some(file), Some(line)) => writeln!(f, " ({file}:{line})")?,
            (Some(file), None) => writeln!(f, " ({file})")?,
            _ => writeln!(f, " (model {})", self.model)?,
        }
        for d in self.failures() {
            for line in d.to_string().lines() {
                writeln!(f, "    {line}")?;
            }
        }
        Ok(())
    }
}

/// Whether a test passed, failed (the rows differ) or could not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TestStatus {
    /// The model returned exactly the expected rows.
    Passed,
    /// The model ran and its rows differ from the expected ones.
    Failed,
    /// The test could not run: the model's SQL failed on the fixtures, or an expected column
    /// does not exist.
    Error,
}

/// One test's result in a run of many: what `efmesh test` prints and `--json` serializes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TestReport {
    /// The test's name.
    pub name: String,
    /// The tested model.
    pub model: String,
    /// The test file, project-relative.
    pub file: Option<String>,
    /// The line of the test's name in its file.
    pub line: Option<u64>,
    /// Passed, failed or error.
    pub status: TestStatus,
    /// Wall time of the test in milliseconds.
    pub duration_ms: f64,
    /// What differs in the model's output, when the test failed there.
    pub diff: Option<RowDiff>,
    /// What differs in CTEs the test checks (`outputs: ctes`), each naming its CTE.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cte_diffs: Vec<RowDiff>,
    /// Why it could not run, when its status is `error`.
    pub error: Option<TestError>,
}

/// Every test of a project, read from its test files.
#[derive(Debug, Clone, Default)]
pub struct TestSuite {
    /// The tests that were read, in file order, then in order within each file.
    pub cases: Vec<TestCase>,
    /// Problems that kept parts of the files from being read (syntax, shapes, duplicates).
    pub errors: Vec<TestError>,
    /// The text of every test file, by project-relative path, to show errors in context.
    pub files: BTreeMap<String, String>,
}

/// Read every test file under `root/tests/` (`test*.yaml`, `test*.yml`, recursively, in path
/// order).
///
/// Malformed parts of a file are reported in [`TestSuite::errors`] with their position; the
/// tests that could be read are returned anyway, so every problem can be shown at once.
pub fn load_tests(root: &Path) -> Result<TestSuite, crate::Error> {
    let mut suite = TestSuite::default();
    let dir = root.join(TESTS_DIR);
    if !dir.is_dir() {
        return Ok(suite);
    }
    let mut paths = vec![];
    for entry in walkdir::WalkDir::new(&dir).follow_links(true) {
        let entry = entry.map_err(|e| crate::Error::Io {
            path: e.path().map(Path::to_path_buf).unwrap_or(dir.clone()),
            message: e.to_string(),
        })?;
        // SQLMesh's rule, `test*.yaml` / `test*.yml`: fixture files (`path:`) may sit beside them
        let is_test = entry.file_name().to_str().is_some_and(|n| {
            n.starts_with("test") && (n.ends_with(".yaml") || n.ends_with(".yml"))
        });
        if entry.file_type().is_file() && is_test {
            paths.push(entry.into_path());
        }
    }
    paths.sort();
    let mut first: HashMap<String, String> = HashMap::new();
    for path in paths {
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        let text = match crate::workspace::read::read_text(&path) {
            Ok(t) => t,
            Err(e) => {
                suite.errors.push(TestError::file(
                    &rel,
                    TestProblem::Io {
                        message: e.to_string(),
                    },
                    0,
                    0,
                    0,
                ));
                continue;
            }
        };
        let (cases, errors) = file::read(Some(root), &rel, &text);
        suite.errors.extend(errors);
        for case in cases {
            let here = case
                .location(None)
                .map(|l| l.to_string())
                .unwrap_or_default();
            if let Some(prev) = first.get(&case.name) {
                suite.errors.push(case.error(
                    TestProblem::DuplicateTest {
                        name: case.name.clone(),
                        first: prev.clone(),
                    },
                    None,
                ));
                continue;
            }
            first.insert(case.name.clone(), here);
            suite.cases.push(case);
        }
        suite.files.insert(rel, text);
    }
    Ok(suite)
}

/// The tests `names` select: a name is a test's name, or a model's name to select every test
/// of that model. No names select every test. A name matching nothing is an error.
pub fn select<'a>(cases: &'a [TestCase], names: &[String]) -> Result<Vec<&'a TestCase>, TestError> {
    if names.is_empty() {
        return Ok(cases.iter().collect());
    }
    let norm = |s: &str| s.trim().to_ascii_lowercase();
    for n in names {
        let hit = cases
            .iter()
            .any(|c| c.name == *n || norm(&c.model) == norm(n));
        if !hit {
            let candidates: BTreeSet<&str> = cases
                .iter()
                .flat_map(|c| [c.name.as_str(), c.model.as_str()])
                .collect();
            return Err(TestError {
                problem: TestProblem::NoSuchTest {
                    name: n.clone(),
                    suggestion: efmesh_core::suggest::closest(n, candidates),
                },
                location: None,
                test: None,
            });
        }
    }
    Ok(cases
        .iter()
        .filter(|c| {
            names
                .iter()
                .any(|n| c.name == *n || norm(&c.model) == norm(n))
        })
        .collect())
}

/// A test checked against the project and rendered, ready to run.
struct Prepared<'a> {
    case: &'a TestCase,
    model: usize,
    /// The parents' fixtures, each a CTE of every query the test runs.
    fixtures: Vec<Fixture>,
    /// The model's rendered query over the fixtures (clock frozen at `execution_time`).
    query: String,
    /// The CTEs the test checks: the expectation and the CTE's query.
    ctes: Vec<(&'a str, &'a Expected, String)>,
    /// Every typed fixture value, to find the culprit when the engine refuses the SQL.
    values: Vec<TypedValue>,
}

/// A parent's fixture: rows as SQL, or a query whose columns are fitted to the parent's once
/// the engine says what it returns.
enum Fixture {
    /// `name AS (sql)`.
    Rows { name: String, sql: String },
    /// `inputs: parent: query:`; `columns` are the parent's (empty when unknown).
    Query {
        name: String,
        sql: String,
        columns: Columns,
    },
}

/// A fixture value with the type it is cast to and where it was written.
struct TypedValue {
    value: Literal,
    column: String,
    sql_type: String,
    pos: Option<Pos>,
}

/// A model name as written in a test: quotes dropped, lower-cased.
fn normalize(name: &str) -> String {
    name.trim().replace('"', "").to_ascii_lowercase()
}

/// The models a test of model `i` may give rows for: its parents, and through EMBEDDED
/// parents (which are inlined) their parents too.
fn fixture_parents(project: &Project, i: usize) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    let mut todo: Vec<usize> = project.dag.parents(i).to_vec();
    while let Some(p) = todo.pop() {
        if out.insert(p) && matches!(project.models[p].kind, Kind::Embedded) {
            todo.extend(project.dag.parents(p));
        }
    }
    out
}

/// Columns of a relation as (name, SQL type when known).
type Columns = Vec<(String, Option<String>)>;

/// A parent's columns, declared with types, else inferred names (then `true`), else `None`.
fn parent_columns(project: &Project, p: usize) -> Option<(Columns, bool)> {
    if let Some(cols) = &project.models[p].columns {
        return Some((
            cols.iter()
                .map(|c| (c.name.clone(), Some(c.sql_type.clone())))
                .collect(),
            false,
        ));
    }
    project.columns[p].as_ref().map(|cols| {
        (
            cols.iter()
                .map(|c| (c.to_ascii_lowercase(), None))
                .collect(),
            true,
        )
    })
}

/// Parse a `vars` instant.
fn instant(
    case: &TestCase,
    var: &'static str,
    value: &Option<String>,
    pos: Option<Pos>,
) -> Result<Option<NaiveDateTime>, TestError> {
    value
        .as_deref()
        .map(|v| {
            efmesh_core::time::parse_instant(v)
                .map_err(|message| case.error(TestProblem::InvalidVar { var, message }, pos))
        })
        .transpose()
}

/// The project's files, read again for tests that set variables (`vars: name: value`): the
/// tested model's file is parsed anew with them, as SQLMesh renders a test's model with its
/// variables. Read at most once per run, and only when such a test runs.
struct Sources<'p> {
    root: &'p Path,
    read: OnceLock<Result<(ProjectSources, ParseEnv), String>>,
}

impl<'p> Sources<'p> {
    fn new(root: &'p Path) -> Sources<'p> {
        Sources {
            root,
            read: OnceLock::new(),
        }
    }

    /// Model `i`'s query parsed with `case`'s variables; `None` when the test sets none.
    fn query_with(
        &self,
        project: &Project,
        i: usize,
        case: &TestCase,
    ) -> Result<Option<ModelQuery>, TestError> {
        let Some((_, _, first)) = case.variables.first() else {
            return Ok(None);
        };
        let m = &project.models[i];
        let fail = |message: String| {
            case.error(
                TestProblem::Render {
                    model: m.name.clone(),
                    message,
                },
                *first,
            )
        };
        let loaded =
            self.read
                .get_or_init(|| match crate::workspace::read::read_sources(self.root) {
                    Ok(Ok((_, sources, _))) => {
                        let (env, _) = efmesh_core::project::macros::parse_env(&sources);
                        Ok((sources, env))
                    }
                    Ok(Err((diagnostics, _))) => Err(diagnostics
                        .first()
                        .map(|d| d.to_string())
                        .unwrap_or_else(|| "the project's config does not load".into())),
                    Err(e) => Err(e.to_string()),
                });
        let (sources, env) = loaded.as_ref().map_err(|e| fail(e.clone()))?;
        let Some(src) = sources.models.iter().find(|s| s.path == m.file) else {
            return Err(fail(format!(
                "its file `{}` is not among the project's model files, so it cannot be parsed with the test's variables",
                m.file
            )));
        };
        let mut env = env.clone();
        for (name, value, _) in &case.variables {
            env.macros.variables.insert(
                name.clone(),
                efmesh_core::project::macros::value_of_json(value),
            );
        }
        let (model, diagnostics) = efmesh_core::model::parse_model_file(
            &src.path,
            &src.text,
            project.config.dialect(),
            &env,
        );
        if let Some(d) = diagnostics.iter().find(|d| d.is_error()) {
            return Err(fail(format!("with the test's variables: {d}")));
        }
        Ok(model.and_then(|m| m.query))
    }
}

/// Check a test against the project and render its SQL; every problem found is returned.
fn prepare<'a>(
    project: &Project,
    sources: &Sources,
    case: &'a TestCase,
) -> Result<Prepared<'a>, Vec<TestError>> {
    let mut errors = vec![];
    if let Some(p) = &case.invalid {
        errors.push(case.error(p.clone(), None));
    }
    let Some(i) = project.index_of(&normalize(&case.model)) else {
        errors.push(case.error(
            TestProblem::UnknownModel {
                name: case.model.clone(),
                suggestion: efmesh_core::suggest::closest(
                    &case.model,
                    project.models.iter().map(|m| m.name.as_str()),
                ),
            },
            case.model_pos,
        ));
        return Err(errors);
    };
    let m = &project.models[i];
    if m.query.is_none() {
        errors.push(case.error(
            TestProblem::NoQuery {
                model: m.name.clone(),
                kind: m.kind.name(),
            },
            case.model_pos,
        ));
        return Err(errors);
    }
    let allowed = fixture_parents(project, i);
    let allowed_names = || -> Vec<String> {
        let mut v: Vec<String> = allowed
            .iter()
            .map(|&p| project.models[p].name.clone())
            .collect();
        v.sort();
        v
    };
    // parent index → (columns, rows as literals in column order)
    let mut given: BTreeMap<usize, &Input> = BTreeMap::new();
    for input in &case.inputs {
        let p = project
            .index_of(&normalize(&input.name))
            .filter(|p| allowed.contains(p));
        let Some(p) = p else {
            let parents = allowed_names();
            errors.push(case.error(
                TestProblem::NotAParent {
                    input: input.name.clone(),
                    model: m.name.clone(),
                    suggestion: efmesh_core::suggest::closest(
                        &input.name,
                        parents.iter().map(String::as_str),
                    ),
                    parents,
                },
                input.pos,
            ));
            continue;
        };
        if given.insert(p, input).is_some() {
            errors.push(case.error(
                TestProblem::DuplicateInput {
                    input: input.name.clone(),
                },
                input.pos,
            ));
        }
    }
    let mut map = HashMap::new();
    let mut fixtures = vec![];
    let mut values = vec![];
    for &p in &allowed {
        let parent = &project.models[p];
        let input = given.get(&p);
        if input.is_none() && matches!(parent.kind, Kind::Embedded) {
            continue; // inlined, reading its own parents' fixtures
        }
        let rows: &[Row] = input.map(|i| i.rows.as_slice()).unwrap_or_default();
        let mut known = parent_columns(project, p);
        // `columns:` in the test types the parent's columns (and adds any it lacks)
        if let Some(typed) = input.map(|i| &i.columns).filter(|c| !c.is_empty()) {
            let (cols, _) = known.get_or_insert_with(|| (vec![], false));
            for (c, ty) in typed {
                match cols.iter_mut().find(|(n, _)| n == c) {
                    Some(col) => col.1 = Some(ty.clone()),
                    None => cols.push((c.clone(), Some(ty.clone()))),
                }
            }
        }
        let columns: Columns = match known {
            Some((cols, inferred)) => {
                for cell in rows.iter().flat_map(|r| &r.cells) {
                    if !cols.iter().any(|(c, _)| *c == cell.column) {
                        let names: Vec<String> = cols.iter().map(|(c, _)| c.clone()).collect();
                        errors.push(case.error(
                            TestProblem::UndeclaredColumn {
                                parent: parent.name.clone(),
                                column: cell.column.clone(),
                                suggestion: efmesh_core::suggest::closest(
                                    &cell.column,
                                    names.iter().map(String::as_str),
                                ),
                                columns: names,
                                inferred,
                            },
                            cell.pos,
                        ));
                    }
                }
                cols
            }
            None => {
                // nobody knows the parent's columns: the rows define them, untyped
                let mut cols: Columns = vec![];
                for cell in rows.iter().flat_map(|r| &r.cells) {
                    if !cols.iter().any(|(c, _)| *c == cell.column) {
                        cols.push((cell.column.clone(), None));
                    }
                }
                cols
            }
        };
        let name = format!("__efmesh_fixture_{}", fixtures.len());
        map.insert(parent.name.clone(), name.clone());
        if let Some(sql) = input.and_then(|i| i.query.clone()) {
            fixtures.push(Fixture::Query { name, sql, columns });
            continue;
        }
        let literals: Vec<Vec<Literal>> = rows
            .iter()
            .map(|r| {
                columns
                    .iter()
                    .map(|(c, ty)| {
                        let cell = r.cells.iter().find(|x| x.column == *c);
                        if let (Some(cell), Some(ty)) = (cell, ty) {
                            values.push(TypedValue {
                                value: cell.value.clone(),
                                column: c.clone(),
                                sql_type: ty.clone(),
                                pos: cell.pos,
                            });
                        }
                        cell.map(|x| x.value.clone()).unwrap_or(Literal::Null)
                    })
                    .collect()
            })
            .collect();
        fixtures.push(Fixture::Rows {
            sql: fixture::relation(&columns, &literals),
            name,
        });
    }
    let start = instant(case, "start", &case.start, case.start_pos);
    let end = instant(case, "end", &case.end, case.end_pos);
    let execution = instant(
        case,
        "execution_time",
        &case.execution_time,
        case.execution_pos,
    );
    let sqlmesh = project.config.is_sqlmesh();
    let (start, end, execution) = match (start, end, execution) {
        (Ok(s), Ok(e), Ok(x)) => {
            let start = s
                .or_else(|| {
                    // SQLMesh renders a test without `start` at the epoch; an efmesh project
                    // starts where the model's history does
                    if sqlmesh {
                        Some(chrono::DateTime::UNIX_EPOCH.naive_utc())
                    } else {
                        project.history_start(i)
                    }
                })
                .unwrap_or_else(|| {
                    crate::util::clock::now()
                        .date_naive()
                        .and_hms_opt(0, 0, 0)
                        .expect("midnight exists")
                });
            // SQLMesh reads a date-only `end` as its whole day (`end: 2024-01-01` with the same
            // `start` is that day); a timestamp `end` is exclusive, as in efmesh
            let date_only = case
                .end
                .as_deref()
                .is_some_and(efmesh_core::time::is_date_only);
            let e = match e {
                Some(e) if sqlmesh && date_only => Some(e + chrono::Duration::days(1)),
                e => e,
            };
            let end = e.unwrap_or_else(|| {
                if sqlmesh && s.is_none() {
                    // SQLMesh's default interval is the epoch's whole day
                    start + chrono::Duration::days(1)
                } else {
                    start + m.interval_unit().step()
                }
            });
            if end <= start {
                errors.push(case.error(
                    TestProblem::InvalidVar {
                        var: "end",
                        message: format!("{end} is not after start ({start})"),
                    },
                    case.end_pos.or(case.start_pos),
                ));
            }
            (start, end, x)
        }
        (s, e, x) => {
            errors.extend(s.err());
            errors.extend(e.err());
            errors.extend(x.err());
            return Err(errors);
        }
    };
    let reparsed = match sources.query_with(project, i, case) {
        Ok(q) => q,
        Err(e) => {
            errors.push(e);
            return Err(errors);
        }
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    let times = efmesh_core::time::MacroTimes {
        start,
        end,
        // SQLMesh renders a test without `execution_time` at the epoch; an efmesh project's
        // runs at the current time
        execution: execution.unwrap_or_else(|| {
            if sqlmesh {
                chrono::DateTime::UNIX_EPOCH.naive_utc()
            } else {
                crate::util::clock::now().naive_utc()
            }
        }),
    };
    let target = RelationTarget::Fixtures(map);
    let rendered = match &reparsed {
        Some(q) => efmesh_core::model_sql::render_query(project, q, &target, &times, false),
        None => render_model(project, i, &target, &times, false),
    };
    let render_error = |message: String| {
        vec![case.error(
            TestProblem::Render {
                model: m.name.clone(),
                message,
            },
            case.model_pos,
        )]
    };
    let mut query = rendered.map_err(|e| render_error(e.to_string()))?;
    let mut ctes = vec![];
    if execution.is_some() || !case.ctes.is_empty() {
        let t =
            efmesh_core::sql::unit_test::test_queries(&query, project.config.dialect(), execution)
                .map_err(render_error)?;
        query = t.query;
        let names: Vec<String> = t.ctes.iter().map(|(n, _)| n.clone()).collect();
        for (cte, expected) in &case.ctes {
            match t.ctes.iter().find(|(n, _)| *n == normalize(cte)) {
                Some((_, sql)) => ctes.push((cte.as_str(), expected, sql.clone())),
                None => errors.push(case.error(
                    TestProblem::UnknownCte {
                        model: m.name.clone(),
                        cte: cte.clone(),
                        suggestion: efmesh_core::suggest::closest(
                            &normalize(cte),
                            names.iter().map(String::as_str),
                        ),
                        ctes: names.clone(),
                    },
                    expected.pos,
                )),
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Prepared {
        case,
        model: i,
        fixtures,
        query,
        ctes,
        values,
    })
}

/// Whether an output type is floating-point, compared with a tolerance.
fn is_float(sql_type: &str) -> bool {
    matches!(
        sql_type.trim().to_ascii_uppercase().as_str(),
        "FLOAT" | "DOUBLE" | "REAL" | "FLOAT4" | "FLOAT8"
    )
}

/// The first value the engine cannot cast to its type, as a [`TestProblem::BadValue`].
fn find_bad_value<'v>(
    engine: &mut dyn Engine,
    values: impl IntoIterator<Item = &'v TypedValue>,
) -> Option<(TestProblem, Option<Pos>)> {
    for v in values {
        let sql = format!("SELECT {}", v.value.typed(Some(&v.sql_type)));
        if let Err(e) = engine.query("checking a test value", &sql, Some(1)) {
            let message = match e {
                EngineError::Statement { message, .. } => message,
                other => other.to_string(),
            };
            return Some((
                TestProblem::BadValue {
                    value: v.value.shown(),
                    column: v.column.clone(),
                    sql_type: v.sql_type.clone(),
                    message: message.lines().next().unwrap_or_default().to_string(),
                },
                v.pos,
            ));
        }
    }
    None
}

/// Run a prepared test on `engine` (an in-memory DuckDB, opened here when `None`) and compare
/// the model's rows, and each checked CTE's, with the expected ones.
///
/// Tests create nothing in the database (fixtures are CTEs of the one query), so one database
/// can serve many tests in turn without any of them seeing another's data; opening one per
/// test would spend most of a test's time building DuckDB's catalog.
fn execute(
    project: &Project,
    scratch: &dyn crate::engine::EngineFactory,
    engine: &mut Option<Box<dyn Engine + Send>>,
    p: &Prepared,
) -> Result<(RowDiff, Vec<RowDiff>), TestError> {
    let case = p.case;
    let m = &project.models[p.model];
    let engine = match engine {
        Some(e) => e,
        None => engine.insert(scratch.open().map_err(|e| engine_error(case, &m.name, e))?),
    };
    let mut with = vec![];
    for f in &p.fixtures {
        match f {
            Fixture::Rows { name, sql } => with.push(format!("{name} AS ({sql})")),
            Fixture::Query { name, sql, columns } => {
                let returned: Vec<String> = engine
                    .describe(sql)
                    .map_err(|e| engine_error(case, &m.name, e))?
                    .into_iter()
                    .map(|(n, _)| n)
                    .collect();
                with.push(format!(
                    "{name} AS ({})",
                    fixture::fitted(sql, &returned, columns)
                ));
            }
        }
    }
    let with = if with.is_empty() {
        String::new()
    } else {
        format!("WITH {} ", with.join(", "))
    };
    let mut run = Run {
        engine: engine.as_mut(),
        case,
        model: m,
        values: &p.values,
    };
    let output = match &case.output {
        Some(e) => run.compare(
            &format!("{with}SELECT * FROM ({}) AS __efmesh_model_output", p.query),
            e,
            None,
        )?,
        None => RowDiff::default(),
    };
    let mut ctes = vec![];
    for (name, e, sql) in &p.ctes {
        let mut d = run.compare(
            &format!("{with}SELECT * FROM ({sql}) AS __efmesh_cte"),
            e,
            Some(name),
        )?;
        d.cte = Some(name.to_string());
        ctes.push(d);
    }
    Ok((output, ctes))
}

/// A test's failure in the engine as a [`TestError`].
fn engine_error(case: &TestCase, model: &str, e: EngineError) -> TestError {
    let message = match e {
        // DuckDB quotes the failing SQL after `LINE n:`: the fixture CTEs, too long to help
        EngineError::Statement { message, .. } => match message.split_once("\nLINE ") {
            Some((head, _)) => head.trim_end().to_string(),
            None => message,
        },
        other => other.to_string(),
    };
    case.error(
        TestProblem::Engine {
            model: model.to_string(),
            message,
        },
        None,
    )
}

/// One test's queries on its engine.
struct Run<'e> {
    engine: &'e mut (dyn Engine + Send),
    case: &'e TestCase,
    model: &'e efmesh_core::model::Model,
    values: &'e [TypedValue],
}

impl Run<'_> {
    /// The engine's error, or the fixture value it could not cast when there is one.
    fn failed(&mut self, e: EngineError, values: &[TypedValue]) -> TestError {
        match find_bad_value(self.engine, values) {
            Some((problem, pos)) => self.case.error(problem, pos),
            None => engine_error(self.case, &self.model.name, e),
        }
    }

    /// Run `sql` (the model's output or a CTE's, over the fixtures) and compare its rows with
    /// `e`'s.
    fn compare(
        &mut self,
        sql: &str,
        e: &Expected,
        cte: Option<&str>,
    ) -> Result<RowDiff, TestError> {
        let case = self.case;
        let m = self.model;
        let relation = match cte {
            Some(c) => format!("{} (CTE `{c}`)", m.name),
            None => m.name.clone(),
        };
        let context = format!("testing {relation}");
        let ran = self
            .engine
            .describe(sql)
            .and_then(|cols| Ok((cols, self.engine.query(&context, sql, None)?)));
        let (described, actual) = match ran {
            Ok(r) => r,
            Err(err) => return Err(self.failed(err, self.values)),
        };
        let output: Vec<String> = described.iter().map(|(n, _)| n.clone()).collect();
        let find = |c: &str| {
            output
                .iter()
                .position(|o| o == c)
                .or_else(|| output.iter().position(|o| o.eq_ignore_ascii_case(c)))
        };
        // the columns the expectation names: its rows' keys, or its query's columns
        let named_columns: Vec<(String, Option<Pos>)> = match &e.query {
            Some(q) => self
                .engine
                .describe(q)
                .map_err(|err| engine_error(case, &relation, err))?
                .into_iter()
                .map(|(n, _)| (n, e.pos))
                .collect(),
            None => e
                .rows
                .iter()
                .flat_map(|r| &r.cells)
                .map(|c| (c.column.clone(), c.pos))
                .collect(),
        };
        // which output columns are compared, and every expected key resolved to one
        let mut named = BTreeSet::new();
        for (column, pos) in &named_columns {
            match find(column) {
                Some(k) => {
                    named.insert(k);
                }
                None => {
                    return Err(case.error(
                        TestProblem::UnknownOutputColumn {
                            model: relation,
                            column: column.clone(),
                            suggestion: efmesh_core::suggest::closest(
                                column,
                                output.iter().map(String::as_str),
                            ),
                            returned: output.clone(),
                        },
                        *pos,
                    ))
                }
            }
        }
        // `partial` with no column named (expecting no rows) compares whole rows
        let compared: Vec<usize> = if e.partial && !named.is_empty() {
            named.into_iter().collect()
        } else {
            (0..output.len()).collect()
        };
        let columns: Columns = compared
            .iter()
            .map(|&k| (described[k].0.clone(), Some(described[k].1.clone())))
            .collect();
        let expected: Vec<(Vec<Option<String>>, Option<u64>)> = match &e.query {
            Some(q) => {
                let returned: Vec<String> = named_columns.iter().map(|(n, _)| n.clone()).collect();
                let sql = fixture::fitted(q, &returned, &columns);
                let rows = self
                    .engine
                    .query("reading the expected rows", &sql, None)
                    .map_err(|err| engine_error(case, &relation, err))?
                    .rows;
                // the query's own columns come after the compared ones: drop them
                rows.into_iter()
                    .map(|mut r| {
                        r.truncate(columns.len());
                        (r, e.pos.map(|p| p.line))
                    })
                    .collect()
            }
            None => {
                let literals: Vec<Vec<Literal>> = e
                    .rows
                    .iter()
                    .map(|r| {
                        compared
                            .iter()
                            .map(|&k| {
                                r.cells
                                    .iter()
                                    .find(|c| find(&c.column) == Some(k))
                                    .map(|c| c.value.clone())
                                    .unwrap_or(Literal::Null)
                            })
                            .collect()
                    })
                    .collect();
                let values: Vec<Vec<Option<String>>> = if literals.is_empty() || columns.is_empty()
                {
                    vec![vec![]; literals.len()]
                } else {
                    let sql = fixture::relation(&columns, &literals);
                    match self.engine.query("reading the expected rows", &sql, None) {
                        Ok(rows) => rows.rows,
                        Err(err) => {
                            let typed: Vec<TypedValue> = e
                                .rows
                                .iter()
                                .flat_map(|r| &r.cells)
                                .filter_map(|c| {
                                    let k = find(&c.column)?;
                                    Some(TypedValue {
                                        value: c.value.clone(),
                                        column: described[k].0.clone(),
                                        sql_type: described[k].1.clone(),
                                        pos: c.pos,
                                    })
                                })
                                .collect();
                            return Err(self.failed(err, &typed));
                        }
                    }
                };
                values
                    .into_iter()
                    .zip(&e.rows)
                    .map(|(v, r)| (v, r.pos.map(|p| p.line)))
                    .collect()
            }
        };
        let actual: Vec<Vec<Option<String>>> = actual
            .rows
            .into_iter()
            .map(|r| compared.iter().map(|&k| r[k].clone()).collect())
            .collect();
        let names: Vec<String> = columns.iter().map(|(n, _)| n.clone()).collect();
        // the model's grain pairs its rows; a CTE's rows pair by their first column
        let grain: Option<Vec<usize>> = (cte.is_none() && !m.grain.is_empty())
            .then(|| {
                m.grain
                    .iter()
                    .map(|g| names.iter().position(|n| n.eq_ignore_ascii_case(g)))
                    .collect()
            })
            .flatten();
        let key = grain.unwrap_or_else(|| if names.is_empty() { vec![] } else { vec![0] });
        let comparison = diff::Comparison {
            float: columns
                .iter()
                .map(|(_, t)| t.as_deref().is_some_and(is_float))
                .collect(),
            columns: names,
            key,
        };
        let mut d = comparison.compare(&expected, &actual);
        d.file = case.file.clone();
        Ok(d)
    }
}

/// Run one test: render model `case.model` over the fixture rows, run it on a fresh in-memory
/// DuckDB, and compare its output with the expected rows.
///
/// `Ok` means the test ran (check [`TestOutcome::passed`]; its `Display` is the diff). `Err`
/// means it could not run: the test names something the project lacks, a value does not fit
/// its column, or the model's SQL failed on the fixtures.
pub fn test_model(project: &Efmesh, case: &TestCase) -> Result<TestOutcome, TestError> {
    run_case(project, &Sources::new(project.root()), &mut None, case)
}

/// [`test_model`] on a given engine (`None`: open a fresh one and leave it there).
fn run_case(
    project: &Efmesh,
    sources: &Sources,
    engine: &mut Option<Box<dyn Engine + Send>>,
    case: &TestCase,
) -> Result<TestOutcome, TestError> {
    let started = Instant::now();
    let prepared = prepare(project.project(), sources, case).map_err(|mut e| e.remove(0))?;
    let (diff, ctes) = execute(
        project.project(),
        project.backends().scratch.as_ref(),
        engine,
        &prepared,
    )?;
    Ok(TestOutcome {
        name: case.name.clone(),
        model: project.project().models[prepared.model].name.clone(),
        file: case.file.clone(),
        line: case.line(),
        diff,
        ctes,
        duration: started.elapsed(),
    })
}

/// Check every test against the project without running any: what `efmesh test` reports
/// before it runs, so all mistakes in the test files show at once.
pub fn check_tests(project: &Efmesh, cases: &[&TestCase]) -> Vec<TestError> {
    let sources = Sources::new(project.root());
    cases
        .iter()
        .filter_map(|c| prepare(project.project(), &sources, c).err())
        .flatten()
        .collect()
}

/// Run tests on every core and report each, in the order given. Each worker thread runs its
/// tests one after another on its own in-memory DuckDB (see `execute` for why sharing it is
/// safe). Tests that do not check against the project are reported as errors.
pub fn run_tests(project: &Efmesh, cases: &[&TestCase]) -> Vec<TestReport> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(cases.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let sources = &Sources::new(project.root());
    let mut reports: Vec<(usize, TestReport)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut done = vec![];
                    let mut engine = None;
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(case) = cases.get(k) else { break };
                        done.push((k, report(project, sources, &mut engine, case)));
                    }
                    done
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a test thread panicked"))
            .collect()
    });
    reports.sort_by_key(|(k, _)| *k);
    reports.into_iter().map(|(_, r)| r).collect()
}

/// Run one test and turn its outcome into a report.
fn report(
    project: &Efmesh,
    sources: &Sources,
    engine: &mut Option<Box<dyn Engine + Send>>,
    case: &TestCase,
) -> TestReport {
    let started = Instant::now();
    let result = run_case(project, sources, engine, case);
    let mut r = TestReport {
        name: case.name.clone(),
        model: project
            .project()
            .model(&normalize(&case.model))
            .map(|m| m.name.clone())
            .unwrap_or_else(|| case.model.clone()),
        file: case.file.clone(),
        line: case.line(),
        status: TestStatus::Passed,
        duration_ms: 0.0,
        diff: None,
        cte_diffs: vec![],
        error: None,
    };
    match result {
        Ok(o) if o.passed() => {}
        Ok(o) => {
            r.status = TestStatus::Failed;
            r.diff = (!o.diff.is_empty()).then_some(o.diff);
            r.cte_diffs = o.ctes.into_iter().filter(|d| !d.is_empty()).collect();
        }
        Err(e) => {
            r.status = TestStatus::Error;
            r.error = Some(e);
        }
    }
    r.duration_ms = (started.elapsed().as_secs_f64() * 1e6).round() / 1e3;
    r
}

/// Print test errors to stderr rustc-style, with the lines of the test files they point at.
pub fn print_errors(errors: &[TestError], files: &BTreeMap<String, String>, color: bool) {
    use codespan_reporting::diagnostic::{Diagnostic, Label};
    use codespan_reporting::files::SimpleFiles;
    use codespan_reporting::term::{self, termcolor};
    let mut db = SimpleFiles::new();
    let ids: HashMap<&str, usize> = files
        .iter()
        .map(|(name, text)| (name.as_str(), db.add(name.clone(), text.clone())))
        .collect();
    let writer = termcolor::StandardStream::stderr(if color {
        termcolor::ColorChoice::Auto
    } else {
        termcolor::ColorChoice::Never
    });
    let config = term::Config::default();
    for e in errors {
        let mut d = Diagnostic::error()
            .with_message(e.problem.to_string())
            .with_code(e.problem.code());
        let mut notes = vec![];
        match &e.location {
            Some(l) if l.has_position() && ids.contains_key(l.file.as_str()) => {
                let text = &files[&l.file];
                let start = crate::cli::report::offset(text, l.line, l.column);
                let end = crate::cli::report::offset(text, l.end_line, l.end_column).max(start);
                d = d.with_labels(vec![Label::primary(ids[l.file.as_str()], start..end)]);
            }
            Some(l) => notes.push(format!("in {l}")),
            None => {}
        }
        if let (Some(t), None) = (&e.test, &e.location) {
            notes.push(format!("in test `{t}`"));
        }
        if let Some(h) = e.problem.help() {
            notes.push(format!("help: {h}"));
        }
        let _ = term::emit_to_write_style(&mut writer.lock(), &config, &db, &d.with_notes(notes));
    }
}

/// Exit codes of `efmesh test`, for its `--help`.
pub const EXIT_CODES: &str = "\
Exit codes:
  0  every test passed
  1  some test failed (the model ran and returned other rows)
  2  the tests could not run: errors in the test files, a model's SQL failing on its fixtures,
     or a project that does not load";

/// A whole `efmesh test` run: every selected test's report, or the problems in the test
/// files that kept any from running. Serialized, it is `efmesh test --json`'s body; its
/// `Display` is the text output.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TestRun {
    /// Whether every test passed and the test files had no errors.
    pub ok: bool,
    /// How many tests passed.
    pub passed: usize,
    /// How many tests ran and returned other rows.
    pub failed: usize,
    /// How many tests could not run (status `error`).
    pub errors: usize,
    /// Each selected test, in file order.
    pub tests: Vec<TestReport>,
    /// Errors in the test files; when there are any, no test was run.
    pub diagnostics: Vec<TestError>,
    /// The text of every test file, to show diagnostics in context.
    #[serde(skip)]
    pub files: BTreeMap<String, String>,
}

impl TestRun {
    /// 0 when every test passed, 1 when some failed, 2 when some could not run (see
    /// [`EXIT_CODES`]).
    pub fn exit_code(&self) -> u8 {
        if !self.diagnostics.is_empty() || self.errors > 0 {
            2
        } else if self.failed > 0 {
            1
        } else {
            0
        }
    }
}

impl fmt::Display for TestRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.tests.is_empty() && self.diagnostics.is_empty() {
            writeln!(f, "no tests found in {TESTS_DIR}/ (test*.yaml, test*.yml)")?;
        }
        for t in &self.tests {
            let at = match (&t.file, t.line) {
                (Some(file), Some(line)) => format!(" ({file}:{line})"),
                _ => String::new(),
            };
            match t.status {
                TestStatus::Passed => writeln!(f, "PASS {}", t.name)?,
                TestStatus::Failed => {
                    writeln!(f, "FAIL {}{at}", t.name)?;
                    for d in t.diff.iter().chain(&t.cte_diffs) {
                        for line in d.to_string().lines() {
                            writeln!(f, "    {line}")?;
                        }
                    }
                }
                TestStatus::Error => {
                    writeln!(f, "ERROR {}{at}", t.name)?;
                    if let Some(e) = &t.error {
                        match &e.location {
                            Some(l) => writeln!(f, "    {l}: {}", e.problem)?,
                            None => writeln!(f, "    {}", e.problem)?,
                        }
                        if let Some(h) = e.problem.help() {
                            writeln!(f, "    help: {h}")?;
                        }
                    }
                }
            }
        }
        write!(f, "{} passed, {} failed", self.passed, self.failed)?;
        if self.errors > 0 {
            write!(f, ", {} errors", self.errors)?;
        }
        writeln!(f)
    }
}

/// Load the project's tests, select them by `names` (see [`select`]), check them, and run
/// them when the test files have no errors: what `efmesh test` does.
pub fn run_project(project: &Efmesh, names: &[String]) -> Result<TestRun, crate::Error> {
    let suite = load_tests(project.root())?;
    let mut run = TestRun {
        files: suite.files,
        diagnostics: suite.errors,
        ..TestRun::default()
    };
    let selected = match select(&suite.cases, names) {
        Ok(s) => s,
        Err(e) => {
            run.diagnostics.push(e);
            vec![]
        }
    };
    run.diagnostics.extend(check_tests(project, &selected));
    // in reading order: by file, then position (errors without a location last)
    run.diagnostics.sort_by_cached_key(|e| match &e.location {
        Some(l) => (false, l.file.clone(), l.line, l.column),
        None => (true, String::new(), 0, 0),
    });
    if run.diagnostics.is_empty() {
        run.tests = run_tests(project, &selected);
    }
    let count = |s: TestStatus| run.tests.iter().filter(|t| t.status == s).count();
    run.passed = count(TestStatus::Passed);
    run.failed = count(TestStatus::Failed);
    run.errors = count(TestStatus::Error);
    run.ok = run.diagnostics.is_empty() && run.passed == run.tests.len();
    Ok(run)
}
