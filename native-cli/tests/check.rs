//! `efmesh check`: the loader's promises, end to end through the real binary.

mod common;
use common::*;
use predicates::prelude::*;

#[test]
fn hospital_example_checks_clean() {
    efmesh(&repo().join("examples/hospital"))
        .arg("check")
        .assert()
        .success()
        .stdout(predicate::str::contains("ok: 11 models checked"));
}

#[test]
fn sqlmesh_project_copied_unchanged_checks_clean() {
    // tests/sqlmesh-compat is a SQLMesh project (config.yaml, models, seeds, audits) with only
    // an efmesh.toml added; check it from a subdirectory to exercise the upward search too
    let dir = repo().join("tests/sqlmesh-compat");
    let out = efmesh(&dir.join("models"))
        .args(["check", "--json"])
        .assert()
        .success();
    let v = json(&out.get_output().stdout);
    assert_eq!(v["ok"], true);
    assert_eq!(v["models"], 3);
    assert_eq!(v["errors"], 0);
}

#[test]
fn misspelled_reference_names_file_line_col_and_a_suggestion() {
    let p = project(&[
        EVENTS,
        (
            "models/m.sql",
            "MODEL (name med.moves, kind FULL);\nSELECT case_id\nFROM src.evnets",
        ),
    ]);
    let out = efmesh(p.path()).args(["check", "--json"]).assert().code(1);
    let v = json(&out.get_output().stdout);
    let d = &v["diagnostics"][0];
    assert_eq!(d["code"], "unknown-reference");
    assert_eq!(d["location"]["file"], "models/m.sql");
    assert_eq!(
        (
            d["location"]["line"].as_u64(),
            d["location"]["column"].as_u64()
        ),
        (Some(3), Some(6))
    );
    assert_eq!(d["help"], "did you mean `src.events`?");
    // the human form says the same, rustc-style
    efmesh(p.path()).arg("check").assert().code(1).stderr(
        predicate::str::contains("models/m.sql:3:6")
            .and(predicate::str::contains("did you mean `src.events`?")),
    );
}

#[test]
fn misspelled_parent_column_is_caught_before_any_sql_runs() {
    let p = project(&[
        EVENTS,
        (
            "models/m.sql",
            "MODEL (name med.moves, kind FULL);\nSELECT e.case_idd, dept\nFROM src.events AS e",
        ),
    ]);
    let out = efmesh(p.path()).args(["check", "--json"]).assert().code(1);
    let v = json(&out.get_output().stdout);
    let d = &v["diagnostics"][0];
    assert_eq!(d["code"], "unknown-column");
    assert_eq!(
        d["message"],
        "column `case_idd` does not exist in model `src.events`"
    );
    assert_eq!(
        (
            d["location"]["line"].as_u64(),
            d["location"]["column"].as_u64()
        ),
        (Some(2), Some(10))
    );
    assert_eq!(
        d["help"],
        "did you mean `case_id`? available: case_id, moved_at, dept"
    );
}

#[test]
fn renaming_a_parent_column_breaks_the_child() {
    let child = (
        "models/b.sql",
        "MODEL (name s.b, kind FULL);\nSELECT total FROM s.a",
    );
    let before = project(&[
        (
            "models/a.sql",
            "MODEL (name s.a, kind FULL);\nSELECT 1 AS total",
        ),
        child,
    ]);
    efmesh(before.path()).arg("check").assert().success();
    let after = project(&[
        (
            "models/a.sql",
            "MODEL (name s.a, kind FULL);\nSELECT 1 AS amount",
        ),
        child,
    ]);
    efmesh(after.path())
        .arg("check")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "column `total` does not exist in model `s.a`",
        ));
}

#[test]
fn dependency_cycle_prints_the_cycle() {
    let p = project(&[
        (
            "models/a.sql",
            "MODEL (name s.a, kind FULL);\nSELECT x FROM s.c",
        ),
        (
            "models/b.sql",
            "MODEL (name s.b, kind FULL);\nSELECT x FROM s.a",
        ),
        (
            "models/c.sql",
            "MODEL (name s.c, kind FULL);\nSELECT x FROM s.b",
        ),
    ]);
    efmesh(p.path())
        .arg("check")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "dependency cycle: s.a -> s.b -> s.c -> s.a",
        ));
}

#[test]
fn every_error_is_reported_in_one_run() {
    let p = project(&[
        EVENTS,
        ("models/a.sql", "MODEL (name s.a, kind FULL);\nSELECT nope FROM src.events"),
        ("models/b.sql", "MODEL (name s.b, kind FULL, colour 'red');\nSELECT 1 AS x"),
        ("models/c.sql", "MODEL (name s.c, kind FULL, audits (not_nul(columns := (x))));\nSELECT x FROM s.missing"),
        ("models/d.sql", "MODEL (name s.d, kind FULL, columns (x INT, y INT));\nSELECT 1 AS x, 2 AS z"),
    ]);
    let out = efmesh(p.path()).args(["check", "--json"]).assert().code(1);
    let v = json(&out.get_output().stdout);
    let codes: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    for c in [
        "unknown-column",
        "unknown-property",
        "unknown-audit",
        "unknown-reference",
        "missing-output-column",
        "extra-output-column",
    ] {
        assert!(codes.contains(&c), "{c} missing from {codes:?}");
    }
    assert_eq!(v["errors"], 6);
}

#[test]
fn config_mistakes_name_the_line() {
    let p = project(&[(
        "efmesh.toml",
        "[project]\nname = \"t\"\n\n[engine]\nduckdb = \"x.duckdb\"\nthreds = 4\n",
    )]);
    let out = efmesh(p.path()).args(["check", "--json"]).assert().code(1);
    let v = json(&out.get_output().stdout);
    assert_eq!(v["diagnostics"][0]["code"], "config-syntax");
    assert_eq!(v["diagnostics"][0]["location"]["line"], 6);
    assert!(v["diagnostics"][0]["message"]
        .as_str()
        .unwrap()
        .contains("threds"));

    let p = project(&[("efmesh.toml", "[project]\nname = \"t\"\n[state]\npostgres = \"postgres://u:${EFMESH_TEST_UNSET_PW}@h/db\"\n")]);
    efmesh(p.path())
        .env_remove("EFMESH_TEST_UNSET_PW")
        .arg("check")
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains("environment variable `EFMESH_TEST_UNSET_PW` is not set")
                .and(predicate::str::contains("efmesh.toml:4")),
        );
}

#[test]
fn warnings_do_not_fail_the_check() {
    let p = project(&[(
        "models/a.sql",
        "MODEL (name s.a, kind FULL, storage_format parquet);\nSELECT 1 AS x",
    )]);
    let out = efmesh(p.path())
        .args(["check", "--json"])
        .assert()
        .success();
    let v = json(&out.get_output().stdout);
    let codes: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, vec!["columns-unchecked", "ignored-property"]);
}

#[test]
fn seeds_and_external_models_yaml_are_sources() {
    let p = project(&[
        ("external_models.yaml", "- name: raw.moves\n  columns:\n    case_id: text\n    ward: text\n"),
        ("seeds/depts.csv", "dept,label\nicu,Intensive care\n"),
        ("models/depts.sql", "MODEL (name ref.depts, kind SEED (path '../seeds/depts.csv'));"),
        ("models/m.sql", "MODEL (name s.m, kind FULL);\nSELECT m.case_id, d.label FROM raw.moves m JOIN ref.depts d ON m.ward = d.dept"),
    ]);
    efmesh(p.path()).arg("check").assert().success();
    // a seed column typo is caught through the CSV header
    std::fs::write(
        p.path().join("models/m.sql"),
        "MODEL (name s.m, kind FULL);\nSELECT d.lable FROM ref.depts d",
    )
    .unwrap();
    efmesh(p.path())
        .arg("check")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("did you mean `label`?"));
    // a missing seed file is an error naming the path
    std::fs::remove_file(p.path().join("seeds/depts.csv")).unwrap();
    efmesh(p.path())
        .arg("check")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "seed file `seeds/depts.csv` cannot be read",
        ));
}

#[test]
fn no_project_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = efmesh(dir.path())
        .args(["check", "--json"])
        .assert()
        .code(1);
    let v = json(&out.get_output().stdout);
    assert_eq!(v["error"]["code"], "no-project");
    assert!(v["error"]["help"].as_str().unwrap().contains("-C"));
    efmesh(dir.path())
        .arg("check")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("could not find `efmesh.toml`"));
}

#[test]
fn diagnostic_rendering_is_frozen() {
    let p = project(&[
        EVENTS,
        (
            "models/m.sql",
            "MODEL (name med.moves, kind FULL);\nSELECT e.case_idd, dept\nFROM src.events AS e",
        ),
    ]);
    let out = efmesh(p.path()).arg("check").assert().code(1);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    insta::assert_snapshot!("unknown_column_diagnostic", stderr);
    let out = efmesh(p.path()).args(["check", "--json"]).assert().code(1);
    insta::assert_json_snapshot!("check_json_with_error", json(&out.get_output().stdout));
}

#[test]
fn a_broken_model_does_not_cascade_into_its_children() {
    let p = project(&[
        (
            "models/a.sql",
            "MODEL (name s.a, kind FULL, grain (x), colour 'red');\nSELECT 1 AS x",
        ),
        (
            "models/b.sql",
            "MODEL (name s.b, kind FULL);\nSELECT x FROM s.a",
        ),
        (
            "models/c.sql",
            "MODEL (name s.c, kind INCREMENTAL_BY_TIME_RANGE (batch_size 1));\nSELECT x FROM s.b",
        ),
        (
            "models/d.sql",
            "MODEL (name s.d, kind VIEW);\nSELECT x FROM s.c",
        ),
    ]);
    let out = efmesh(p.path()).args(["check", "--json"]).assert().code(1);
    let v = json(&out.get_output().stdout);
    let errors: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        errors,
        vec!["unknown-property", "missing-kind-parameter"],
        "only the root causes"
    );
}
