//! `efmesh query <env> "SQL"`: model names mean that environment's views; only one SELECT runs.

mod common;
use common::*;
use predicates::prelude::*;

const SOURCE: &str = "MODEL (name raw.numbers, kind FULL);\nSELECT range AS n FROM range(10)";
const MART: &str = "MODEL (name mart.evens, kind FULL);\nSELECT n FROM raw.numbers WHERE n % 2 = 0";
const MART_CHANGED: &str =
    "MODEL (name mart.evens, kind FULL);\nSELECT n FROM raw.numbers WHERE n % 2 = 0 AND n > 4";

fn applied() -> tempfile::TempDir {
    let p = project(&[("models/numbers.sql", SOURCE), ("models/evens.sql", MART)]);
    efmesh(p.path())
        .args(["apply", "prod", "--yes"])
        .assert()
        .success();
    std::fs::write(p.path().join("models/evens.sql"), MART_CHANGED).unwrap();
    efmesh(p.path())
        .args(["apply", "dev", "--yes"])
        .assert()
        .success();
    p
}

fn count(dir: &std::path::Path, env: &str) -> String {
    let out = efmesh(dir)
        .args([
            "query",
            env,
            "SELECT count(*) AS c FROM mart.evens",
            "--format",
            "json",
        ])
        .assert()
        .success();
    let v = json(&out.get_output().stdout);
    assert_eq!(v["env"], env);
    assert_eq!(v["columns"], serde_json::json!(["c"]));
    v["rows"][0]["c"].as_str().unwrap().to_string()
}

#[test]
fn a_model_name_reads_the_environments_own_view() {
    let p = applied();
    // prod serves the first version (0,2,4,6,8), dev the changed one (6,8)
    assert_eq!(count(p.path(), "prod"), "5");
    assert_eq!(count(p.path(), "dev"), "2");
    // `--json`, as every command spells it, is `--format json`
    let out = efmesh(p.path())
        .args([
            "query",
            "dev",
            "SELECT count(*) AS c FROM mart.evens",
            "--json",
        ])
        .assert()
        .success();
    assert_eq!(json(&out.get_output().stdout)["rows"][0]["c"], "2");
}

#[test]
fn csv_and_table_formats_print_every_row_and_null() {
    let p = applied();
    efmesh(p.path())
        .args([
            "query",
            "dev",
            "SELECT n, CASE WHEN n = 6 THEN NULL ELSE 'x,y' END AS s FROM mart.evens ORDER BY n",
            "--format",
            "csv",
        ])
        .assert()
        .success()
        .stdout("n,s\n6,\n8,\"x,y\"\n");
    efmesh(p.path())
        .args([
            "query",
            "dev",
            "SELECT n, CASE WHEN n = 6 THEN NULL ELSE 'x' END AS s FROM mart.evens ORDER BY n",
        ])
        .assert()
        .success()
        .stdout("n  s\n-  ----\n6  NULL\n8  x\n(2 rows)\n");
}

#[test]
fn a_model_the_environment_does_not_serve_is_named() {
    let p = applied();
    std::fs::write(
        p.path().join("models/new.sql"),
        "MODEL (name mart.fresh, kind FULL);\nSELECT 1 AS one",
    )
    .unwrap();
    efmesh(p.path())
        .args(["query", "prod", "SELECT * FROM mart.fresh"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "`prod` does not serve `mart.fresh`",
        ));
    efmesh(p.path())
        .args(["query", "staging", "SELECT * FROM mart.evens"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "environment `staging` does not exist",
        ));
}

#[test]
fn only_one_select_runs_and_nothing_is_changed() {
    let p = applied();
    for sql in [
        "DROP VIEW mart.evens",
        "SELECT 1; DROP VIEW mart.evens",
        "CREATE TABLE t AS SELECT 1",
    ] {
        efmesh(p.path())
            .args(["query", "prod", sql])
            .assert()
            .code(1)
            .stderr(predicate::str::contains("one SELECT"));
    }
    assert_eq!(count(p.path(), "prod"), "5", "the view is still there");
}
