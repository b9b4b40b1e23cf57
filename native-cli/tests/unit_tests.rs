//! `efmesh test`: SQLMesh-format unit tests, through the real binary and the Rust API.

mod common;
use common::*;
use efmesh::testing::{test_model, TestCase, TestProblem};
use predicates::prelude::*;
use serde_json::json;
use std::path::Path;
use tempfile::TempDir;

/// A copy of the hospital example (models, seeds, audits, tests, config) in a temp dir, plus
/// `extra` files, so tests can add broken test files without touching the example.
fn hospital(extra: &[(&str, &str)]) -> TempDir {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let name = e.file_name();
            let n = name.to_string_lossy();
            if n.starts_with('.') || n.starts_with("efmesh.duckdb") || n.starts_with("efmesh.state")
            {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                copy(&e.path(), &to.join(&name));
            } else {
                std::fs::copy(e.path(), to.join(&name)).unwrap();
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    copy(&repo().join("examples/hospital"), dir.path());
    for (path, text) in extra {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// A test of `mart.stays` whose expectations are wrong in three ways: one cell (line 11), one
/// row that is not produced (line 12), and so one produced row that is not expected.
const BROKEN: &str = "\
test_stays_broken:
  model: mart.stays
  inputs:
    med.moves_enriched:
      rows:
        - {move_id: 1, patient_id: 1, age_band: adult, dept_code: ER, dept_name: Emergency, moved_at: 2026-01-01 08:00:00}
        - {move_id: 2, patient_id: 1, age_band: adult, dept_code: ICU, dept_name: Intensive Care, moved_at: 2026-01-02 10:30:00}
  outputs:
    query:
      rows:
        - {stay_id: 1-1, patient_id: 1, stay_seq: 1, dept_code: ER, dept_name: Emergency, age_band: adult, entered_at: 2026-01-01 08:00:00, left_at: 2026-01-02 10:30:00, stay_hours: 26.0, is_current: false}
        - {stay_id: 1-3, patient_id: 1, stay_seq: 2, dept_code: ICU}
";

#[test]
fn hospital_unit_tests_pass() {
    efmesh(&repo().join("examples/hospital"))
        .arg("test")
        .assert()
        .success()
        .stdout(
            predicate::str::contains("PASS test_moves_keeps_the_half_open_interval\n")
                .and(predicate::str::contains(
                    "PASS test_moves_enriched_joins_departments_and_age_bands\n",
                ))
                .and(predicate::str::contains(
                    "PASS test_department_load_counts_stays_per_department\n",
                ))
                .and(predicate::str::contains("FAIL").not())
                .and(predicate::str::is_match(r"\n\d+ passed, 0 failed\n$").unwrap()),
        );
}

#[test]
fn a_wrong_expectation_prints_a_row_level_diff() {
    let p = hospital(&[("tests/test_broken.yaml", BROKEN)]);
    let out = efmesh(p.path()).arg("test").assert().code(1);
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let expected = "\
FAIL test_stays_broken (tests/test_broken.yaml:1)
    2 row(s) expected, 2 produced; compared: stay_id, patient_id, stay_seq, dept_code, dept_name, age_band, entered_at, left_at, stay_hours, is_current
    row stay_id = 1-1 (tests/test_broken.yaml:11) differs:
      stay_hours  expected 26.0, got 26.5
    missing (expected, not produced):
      {stay_id: 1-3, patient_id: 1, stay_seq: 2, dept_code: ICU, dept_name: NULL, age_band: NULL, entered_at: NULL, left_at: NULL, stay_hours: NULL, is_current: NULL} (tests/test_broken.yaml:12)
    unexpected (produced, not expected):
      {stay_id: 1-2, patient_id: 1, stay_seq: 2, dept_code: ICU, dept_name: Intensive Care, age_band: adult, entered_at: 2026-01-02 10:30:00, left_at: NULL, stay_hours: 0.0, is_current: true}
";
    assert!(stdout.contains(expected), "{stdout}");
    // the other tests still pass, and the summary counts the failure
    assert!(
        stdout.contains("PASS test_moves_weekly_batch\n"),
        "{stdout}"
    );
    assert!(stdout.ends_with("passed, 1 failed\n"), "{stdout}");
}

#[test]
fn undeclared_fixture_column_is_an_error_at_its_line() {
    let bad = "\
test_moves_typo:
  model: med.moves
  inputs:
    raw.movements:
      rows:
        - move_id: 1
          moved_on: 2026-01-01
  outputs:
    query:
      rows: []
";
    let p = hospital(&[("tests/test_bad.yaml", bad)]);
    efmesh(p.path())
        .arg("test")
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(
            predicate::str::contains(
                "error[test-undeclared-column]: `raw.movements` has no column `moved_on`",
            )
            .and(predicate::str::contains("tests/test_bad.yaml:7:11"))
            .and(predicate::str::contains("did you mean `moved_at`?"))
            .and(predicate::str::contains(
                "add the column to the parent's `columns`",
            ))
            .and(predicate::str::contains("no test was run")),
        );
    let out = efmesh(p.path()).args(["test", "--json"]).assert().code(2);
    let v = json(&out.get_output().stdout);
    assert_eq!(v["ok"], false);
    assert_eq!(v["tests"], json!([]));
    let d = &v["diagnostics"][0];
    assert_eq!(d["code"], "test-undeclared-column");
    assert_eq!(d["test"], "test_moves_typo");
    assert_eq!(
        (
            &d["location"]["file"],
            &d["location"]["line"],
            &d["location"]["column"]
        ),
        (&json!("tests/test_bad.yaml"), &json!(7), &json!(11))
    );
}

#[test]
fn every_mistake_in_the_test_files_is_reported_at_file_line() {
    let bad = "\
test_unknown_model:
  model: med.movez
  outputs: {query: []}
test_not_a_parent:
  model: med.moves
  inputs:
    raw.patients: []
  outputs:
    query: []
test_bad_var:
  model: med.moves
  vars: {start: yesterday}
  outputs:
    query: []
";
    let p = hospital(&[
        ("tests/test_bad.yaml", bad),
        ("tests/test_z_syntax.yml", "test_x:\n  model: [med.moves\n"),
    ]);
    let out = efmesh(p.path()).args(["test", "--json"]).assert().code(2);
    let v = json(&out.get_output().stdout);
    let got: Vec<(String, String, u64)> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["location"]["file"].as_str().unwrap().to_string(),
                d["location"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let want = [
        ("test-unknown-model", "tests/test_bad.yaml", 2),
        ("test-not-a-parent", "tests/test_bad.yaml", 7),
        ("test-invalid-var", "tests/test_bad.yaml", 12),
        ("test-yaml-syntax", "tests/test_z_syntax.yml", 3),
    ];
    assert_eq!(
        got,
        want.map(|(c, f, l)| (c.to_string(), f.to_string(), l)),
        "{v:#}"
    );
    let helps: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["help"].as_str().unwrap_or_default())
        .collect();
    assert!(helps[0].contains("did you mean `med.moves`?"), "{helps:?}");
    assert!(
        helps[1].contains("inputs may name: raw.movements"),
        "{helps:?}"
    );
}

#[test]
fn names_select_tests_or_every_test_of_a_model() {
    let hospital = repo().join("examples/hospital");
    efmesh(&hospital)
        .args(["test", "med.moves"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("PASS test_moves_weekly_batch")
                .and(predicate::str::contains(
                    "PASS test_moves_keeps_the_half_open_interval",
                ))
                .and(predicate::str::contains("mart").not())
                .and(predicate::str::ends_with("2 passed, 0 failed\n")),
        );
    efmesh(&hospital)
        .args(["test", "test_moves_weekly_batch"])
        .assert()
        .success()
        .stdout("PASS test_moves_weekly_batch\n1 passed, 0 failed\n");
    efmesh(&hospital)
        .args(["test", "test_moves_weekly_bach"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no test or tested model named `test_moves_weekly_bach`",
        ))
        .stderr(predicate::str::contains(
            "did you mean `test_moves_weekly_batch`?",
        ));
}

#[test]
fn a_value_that_does_not_fit_its_column_is_an_error_at_its_line() {
    let bad = "\
test_bad_value:
  model: med.moves
  vars: {start: 2026-01-01}
  inputs:
    raw.movements:
      - {move_id: 1, patient_id: seven, moved_at: 2026-01-01 08:00:00}
  outputs:
    query: []
";
    let p = hospital(&[("tests/test_bad.yaml", bad)]);
    let out = efmesh(p.path())
        .args(["test", "test_bad_value"])
        .assert()
        .code(2);
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(stdout.starts_with("ERROR test_bad_value (tests/test_bad.yaml:1)\n    tests/test_bad.yaml:6:22: 'seven' is not a valid BIGINT for column `patient_id`"), "{stdout}");
    assert!(
        stdout.ends_with("0 passed, 0 failed, 1 errors\n"),
        "{stdout}"
    );
}

#[test]
fn external_parents_read_fixtures_not_their_source() {
    // raw.events does not exist anywhere: the test must read the fixture rows instead
    let p = project(&[
        EVENTS,
        (
            "models/m.sql",
            "MODEL (name med.per_dept, kind FULL);\nSELECT dept, count(*) AS n, min(moved_at) AS first_at\nFROM src.events GROUP BY dept",
        ),
        (
            "tests/test_t.yaml",
            "t:\n  model: med.per_dept\n  inputs:\n    src.events:\n      - {case_id: a, moved_at: 2026-01-01 10:00, dept: ER}\n      - {case_id: b, moved_at: 2026-01-01 09:00, dept: ER}\n      - {case_id: c, dept: ICU}\n  outputs:\n    query:\n      - {dept: ER, n: 2, first_at: 2026-01-01 09:00:00}\n      - {dept: ICU, n: 1}\n",
        ),
    ]);
    efmesh(p.path())
        .arg("test")
        .assert()
        .success()
        .stdout("PASS t\n1 passed, 0 failed\n");
}

#[test]
fn parents_with_inferred_columns_take_untyped_fixtures() {
    let p = project(&[
        ("models/a.sql", "MODEL (name s.a, kind FULL);\nSELECT 1 AS id, 'x' AS label"),
        (
            "models/b.sql",
            "MODEL (name s.b, kind FULL);\nSELECT upper(label) AS label, id * 10 AS id10 FROM s.a",
        ),
        (
            "tests/test_t.yaml",
            "ok:\n  model: s.b\n  inputs:\n    s.a: [{id: 2, label: q}, {id: 3}]\n  outputs:\n    query: [{label: Q, id10: 20}, {id10: 30}]\ntypo:\n  model: s.b\n  inputs:\n    s.a: [{idd: 2}]\n  outputs:\n    query: []\n",
        ),
    ]);
    efmesh(p.path())
        .args(["test", "typo"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("tests/test_t.yaml:10:12").and(predicate::str::contains(
                "its columns (inferred from its query): id, label",
            )),
        );
    efmesh(p.path())
        .args(["test", "ok"])
        .assert()
        .success()
        .stdout("PASS ok\n1 passed, 0 failed\n");
}

#[test]
fn the_rust_api_runs_a_test_from_cargo_test() {
    let project = efmesh::Efmesh::open(repo().join("examples/hospital")).unwrap();
    let moves = || {
        TestCase::new("moves_api", "med.moves")
            .start("2026-01-02")
            .end("2026-01-03")
            .input(
                "raw.movements",
                [
                    json!({"move_id": 1, "patient_id": 1, "dept_code": "ER", "moved_at": "2026-01-01 23:00:00"}),
                    json!({"move_id": 2, "patient_id": 1, "dept_code": "ICU", "moved_at": "2026-01-02 01:00:00"}),
                ],
            )
    };
    let ok = test_model(
        &project,
        &moves().expect([json!({"move_id": 2, "patient_id": 1, "dept_code": "ICU", "moved_at": "2026-01-02 01:00", "moved_on": "2026-01-02"})]),
    )
    .unwrap();
    assert!(ok.passed(), "{ok}");
    assert_eq!(ok.to_string(), "PASS moves_api\n");

    let failed = test_model(
        &project,
        &moves().partial(true).expect([json!({"move_id": 1})]),
    )
    .unwrap();
    assert!(!failed.passed());
    assert_eq!(failed.diff.columns, ["move_id"]);
    assert_eq!(
        failed.diff.missing[0].values.0,
        [("move_id".to_string(), Some("1".to_string()))]
    );
    assert_eq!(
        failed.to_string(),
        "\
FAIL moves_api (model med.moves)
    1 row(s) expected, 1 produced; compared: move_id
    missing (expected, not produced):
      {move_id: 1}
    unexpected (produced, not expected):
      {move_id: 2}
"
    );

    let err = test_model(
        &project,
        &TestCase::new("wrong_parent", "med.moves")
            .input("raw.patients", [json!({"patient_id": 1})]),
    )
    .unwrap_err();
    assert!(
        matches!(err.problem, TestProblem::NotAParent { .. }),
        "{err}"
    );
    assert_eq!(err.problem.code(), "test-not-a-parent");
    assert!(err.location.is_none());
}

#[test]
fn test_json_shape_is_frozen() {
    let tests = "\
passes:
  model: med.moves
  vars: {start: 2026-01-02, end: 2026-01-03}
  inputs:
    raw.movements:
      - {move_id: 2, patient_id: 1, dept_code: ICU, moved_at: 2026-01-02 00:00:00}
  outputs:
    query:
      partial: true
      rows:
        - {move_id: 2, moved_on: 2026-01-02}
fails:
  model: mart.daily_admissions
  inputs:
    mart.stays:
      - {patient_id: 1, stay_seq: 1, age_band: senior, entered_at: 2026-01-01 08:00:00}
      - {patient_id: 2, stay_seq: 1, age_band: adult, entered_at: 2026-01-02 08:00:00}
  outputs:
    query:
      - {admitted_on: 2026-01-01, admissions: 1, seniors: 0, via_critical_care: 0}
      - {admitted_on: 2026-01-03, admissions: 1, seniors: 0, via_critical_care: 0}
";
    // the hospital's models with only these tests
    let h = hospital(&[]);
    std::fs::remove_dir_all(h.path().join("tests")).unwrap();
    std::fs::create_dir_all(h.path().join("tests")).unwrap();
    std::fs::write(h.path().join("tests/test_shape.yaml"), tests).unwrap();
    let out = efmesh(h.path()).args(["test", "--json"]).assert().code(1);
    let v = json(&out.get_output().stdout);
    for t in v["tests"].as_array().unwrap() {
        assert!(t["durationMs"].as_f64().unwrap() >= 0.0);
    }
    insta::assert_json_snapshot!("test_json", v, { ".tests[].durationMs" => "[duration]" });
}

#[test]
fn a_model_failing_on_its_fixtures_is_an_error_not_a_failure() {
    let p = project(&[
        ("models/a.sql", "MODEL (name s.a, kind FULL, columns (label VARCHAR));\nSELECT 'x' AS label"),
        ("models/b.sql", "MODEL (name s.b, kind FULL);\nSELECT CAST(label AS INTEGER) AS n FROM s.a"),
        (
            "tests/test_t.yaml",
            "t:\n  model: s.b\n  inputs:\n    s.a: [{label: seven}]\n  outputs:\n    query: [{n: 7}]\n",
        ),
    ]);
    let out = efmesh(p.path()).args(["test", "--json"]).assert().code(2);
    let v = json(&out.get_output().stdout);
    let t = &v["tests"][0];
    assert_eq!(t["status"], "error");
    assert_eq!(t["error"]["code"], "test-engine");
    let message = t["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("running `s.b` on the fixtures failed: Conversion Error"),
        "{message}"
    );
    // DuckDB's echo of the SQL (the fixture CTEs) is left out
    assert!(!message.contains("__efmesh_fixture"), "{message}");
    assert_eq!(t["error"]["location"]["line"], 1);
    assert_eq!(
        (v["passed"].as_u64(), v["errors"].as_u64()),
        (Some(0), Some(1))
    );
}

#[test]
fn a_project_without_tests_says_so() {
    // YAML files whose names do not start with `test` are fixtures, as in SQLMesh
    let p = project(&[EVENTS, ("tests/fixtures/rows.yaml", "rows: [{id: 1}]\n")]);
    efmesh(p.path())
        .arg("test")
        .assert()
        .success()
        .stdout("no tests found in tests/ (test*.yaml, test*.yml)\n0 passed, 0 failed\n");
}
