//! `efmesh graph` and `efmesh render` through the real binary.

mod common;
use common::*;
use predicates::prelude::*;

#[test]
fn graph_json_lists_models_in_topological_order() {
    let out = efmesh(&repo().join("examples/hospital"))
        .args(["graph", "--json"])
        .assert()
        .success();
    let v = json(&out.get_output().stdout);
    let models = v["models"].as_array().unwrap();
    let pos = |n: &str| models.iter().position(|m| m["name"] == n).unwrap();
    for m in models {
        for dep in m["deps"].as_array().unwrap() {
            assert!(
                pos(dep.as_str().unwrap()) < pos(m["name"].as_str().unwrap()),
                "{dep} after {}",
                m["name"]
            );
        }
        let fp = m["fingerprint"].as_str().unwrap();
        assert!(fp.len() == 32 && fp.chars().all(|c| c.is_ascii_hexdigit()));
    }
    insta::assert_json_snapshot!("graph_json_shape", v, { ".models[].fingerprint" => "[fingerprint]" });
}

#[test]
fn render_rewrites_references_to_the_environment_and_binds_macros() {
    let out = efmesh(&repo().join("examples/hospital"))
        .args([
            "render",
            "med.moves",
            "--env",
            "dev",
            "--start",
            "2026-02-01",
            "--end",
            "2026-02-08",
            "--json",
        ])
        .assert()
        .success();
    let v = json(&out.get_output().stdout);
    let sql = v["sql"].as_str().unwrap();
    assert!(sql.contains("FROM dev__raw.movements AS m"), "{sql}");
    assert!(
        sql.contains("'2026-02-01 00:00:00.000000'")
            && sql.contains("'2026-02-08 00:00:00.000000'"),
        "{sql}"
    );
    assert_eq!(
        (v["env"].as_str(), v["start"].as_str(), v["end"].as_str()),
        (
            Some("dev"),
            Some("2026-02-01T00:00:00Z"),
            Some("2026-02-08T00:00:00Z")
        )
    );

    // prod uses plain names; EMBEDDED parents are inlined
    let p = project(&[
        EVENTS,
        ("models/h.sql", "MODEL (name s.helper, kind EMBEDDED);\nSELECT case_id FROM src.events"),
        ("models/m.sql", "MODEL (name s.m, kind FULL);\nSELECT h.case_id FROM s.helper h WHERE @start_ds <= '2026-12-31'"),
    ]);
    let out = efmesh(p.path())
        .args(["render", "s.m", "--json"])
        .assert()
        .success();
    assert_eq!(
        json(&out.get_output().stdout)["sql"],
        "SELECT h.case_id FROM (SELECT case_id FROM raw.events) h WHERE '2026-01-01' <= '2026-12-31'"
    );
    // people get the same SQL laid out over lines
    efmesh(p.path())
        .args(["render", "s.m"])
        .assert()
        .success()
        .stdout(predicate::str::contains("SELECT\n  h.case_id\nFROM"));
}

#[test]
fn render_errors_are_clear() {
    let hospital = repo().join("examples/hospital");
    efmesh(&hospital)
        .args(["render", "med.move"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("did you mean `med.moves`?"));
    efmesh(&hospital)
        .args(["render", "med.moves", "--env", "Dev!"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not a valid environment name"));
    efmesh(&hospital)
        .args(["render", "med.moves", "--start", "tomorrow"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("--start"));
    let out = efmesh(&hospital)
        .args(["render", "ref.departments", "--json"])
        .assert()
        .code(1);
    assert_eq!(json(&out.get_output().stdout)["error"]["code"], "render");
}

#[test]
fn json_stdout_stays_clean_with_debug_logs() {
    let out = efmesh(&repo().join("examples/hospital"))
        .args(["--log-level", "debug", "graph", "--json"])
        .assert()
        .success();
    json(&out.get_output().stdout);
}
