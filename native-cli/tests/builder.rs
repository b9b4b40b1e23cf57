//! Models defined in code: checked, planned and applied like model files, next to a project's
//! files or without any.

mod common;
use common::*;
use efmesh::{ApplyOptions, Efmesh, Error, ModelDef};

#[test]
fn code_models_sit_next_to_the_files_and_read_them() {
    let p = project(&[EVENTS]);
    let ef = Efmesh::builder(p.path())
        .model(
            ModelDef::full("mart.depts")
                .columns([("dept", "VARCHAR"), ("n", "BIGINT")])
                .sql("SELECT dept, count(*) AS n FROM src.events GROUP BY dept")
                .property("owner", "ops"),
        )
        .open()
        .unwrap();
    let names: Vec<&str> = ef
        .project()
        .models
        .iter()
        .map(|m| m.name.as_str())
        .collect();
    assert!(
        names.contains(&"src.events") && names.contains(&"mart.depts"),
        "{names:?}"
    );
    // the same definition written as a file has the same fingerprint
    let file = ModelDef::full("mart.depts")
        .columns([("dept", "VARCHAR"), ("n", "BIGINT")])
        .sql("SELECT dept, count(*) AS n FROM src.events GROUP BY dept")
        .to_model_file();
    let q = project(&[EVENTS, ("models/depts.sql", &file)]);
    let from_file = Efmesh::open(q.path()).unwrap();
    let fp =
        |e: &Efmesh| e.project().fingerprints[e.project().index_of("mart.depts").unwrap()].clone();
    assert_eq!(fp(&ef), fp(&from_file));
}

#[test]
fn a_project_only_in_code_plans_and_applies() {
    let dir = tempfile::tempdir().unwrap();
    let ef = Efmesh::builder(dir.path())
        .model(
            ModelDef::incremental_by_time_range("s.days", "ts")
                .property("start", "'2026-01-01'")
                .sql("SELECT TIMESTAMP '2026-01-01' + to_days(range) AS ts FROM range(5) WHERE ts >= @start AND ts < @end"),
        )
        .open()
        .unwrap();
    let plan = ef.plan("dev").unwrap();
    let out = ef.apply(&plan, ApplyOptions::default()).unwrap();
    assert_eq!(out.built, ["s.days"]);
    assert!(!out.batches.is_empty());
    assert!(
        dir.path().join("efmesh.duckdb").exists(),
        "its files live in the root"
    );
}

#[test]
fn a_bad_definition_is_a_diagnostic_that_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let err = Efmesh::builder(dir.path())
        .model(ModelDef::new("s.a", "FULLL").sql("SELECT 1 AS x"))
        .open()
        .unwrap_err();
    let Error::Invalid(f) = err else {
        panic!("expected diagnostics, got {err}")
    };
    let d = &f.diagnostics[0];
    assert_eq!(d.problem.code(), "unknown-kind");
    assert_eq!(d.location.as_ref().unwrap().file, "<code>/s.a.sql");
    assert!(
        d.problem.help().unwrap().contains("FULL"),
        "{:?}",
        d.problem.help()
    );
}
