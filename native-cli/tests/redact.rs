//! Redacted environments: models with a `redact` policy get physics of their own there, in
//! which the redacted columns were never written; everything else keeps sharing physics.

mod common;
use common::*;
use efmesh::engine::duckdb::DuckDbEngine;
use std::path::{Path, PathBuf};

const CONFIG: &str = "[project]\nname = \"t\"\nstart = \"2026-01-01\"\n\n[lake]\npath = \"lake\"\n\n[environments.safe]\nredacted = true\n";

fn query(dir: &Path, sql: &str) -> String {
    let cfg = efmesh_core::config::Config::defaults("t").engine;
    let mut e = DuckDbEngine::open(dir, "efmesh.duckdb", &cfg).unwrap();
    e.query_strings(sql).unwrap()[0].clone().unwrap_or_default()
}

fn versions(dir: &Path, model: &str) -> Vec<PathBuf> {
    let (s, t) = model.split_once('.').unwrap();
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join("lake").join(s).join(t))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

fn parquet_columns(dir: &Path, version: &Path) -> String {
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(version.join("manifest.json")).unwrap())
            .unwrap();
    let file = version.join(m["files"][0]["path"].as_str().unwrap());
    query(
        dir,
        &format!("SELECT string_agg(name, ',' ORDER BY name) FROM parquet_schema('{}') WHERE name <> 'duckdb_schema'", file.display()),
    )
}

#[test]
fn a_redacted_environment_never_writes_the_redacted_columns() {
    let p = project(&[
        ("efmesh.toml", CONFIG),
        (
            "models/patients.sql",
            "MODEL (name raw.patients, kind FULL, target parquet, redact (ssn), columns (id BIGINT, name VARCHAR, ssn VARCHAR));\nSELECT range AS id, 'p' || range AS name, '000-00-' || range AS ssn FROM range(10)",
        ),
        (
            "models/names.sql",
            "MODEL (name mart.names, kind FULL, target parquet);\nSELECT id, name FROM raw.patients",
        ),
        (
            "models/other.sql",
            "MODEL (name raw.other, kind FULL, target parquet);\nSELECT 1 AS x",
        ),
    ]);
    let apply = |env: &str| {
        let out = efmesh(p.path())
            .env("EFMESH_NOW", "2026-01-05T00:00:00Z")
            .args(["apply", env, "--yes", "--json"])
            .assert()
            .success();
        json(&out.get_output().stdout)
    };
    apply("dev");
    let safe = apply("safe");
    // the policy's model and its reader get physics of their own; the rest is shared
    let built: Vec<&str> = safe["built"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(built, vec!["raw.patients", "mart.names"]);
    let patients = versions(p.path(), "raw.patients");
    assert_eq!(patients.len(), 2);
    assert_eq!(versions(p.path(), "mart.names").len(), 2);
    assert_eq!(versions(p.path(), "raw.other").len(), 1);
    // the parquet itself: one version has ssn, the redacted one never had it
    let mut schemas: Vec<String> = patients
        .iter()
        .map(|v| parquet_columns(p.path(), v))
        .collect();
    schemas.sort();
    assert_eq!(schemas, vec!["id,name", "id,name,ssn"]);
    let redacted: Vec<serde_json::Value> = patients
        .iter()
        .map(|v| {
            let m = serde_json::from_str::<serde_json::Value>(
                &std::fs::read_to_string(v.join("manifest.json")).unwrap(),
            )
            .unwrap();
            assert_valid_manifest(&m);
            m["redacted"].clone()
        })
        .collect();
    assert!(
        redacted.contains(&serde_json::json!(["ssn"])),
        "{redacted:?}"
    );
    assert!(redacted.contains(&serde_json::json!([])), "{redacted:?}");
    // and through the environments' views
    assert_eq!(
        query(p.path(), "SELECT string_agg(column_name, ',' ORDER BY column_name) FROM information_schema.columns WHERE table_schema = 'safe__raw' AND table_name = 'patients'"),
        "id,name"
    );
    assert_eq!(
        query(p.path(), "SELECT string_agg(column_name, ',' ORDER BY column_name) FROM information_schema.columns WHERE table_schema = 'dev__raw' AND table_name = 'patients'"),
        "id,name,ssn"
    );
    assert_eq!(
        query(p.path(), "SELECT count(*)::VARCHAR FROM safe__mart.names"),
        "10"
    );
}
