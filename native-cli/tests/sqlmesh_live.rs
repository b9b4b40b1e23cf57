//! Every SQLMesh fixture under `tests/sqlmesh-*`, built by SQLMesh 0.236.4 itself and by efmesh
//! at one execution time, then compared view by view and test by test with
//! `scripts/sqlmesh-compare`. The rows `sqlmesh_projects.rs` asserts were recorded from SQLMesh by
//! hand; this keeps them from drifting: a fixture changed in a way SQLMesh builds differently fails
//! here. The script installs SQLMesh with pip into a venv outside the repository on first use
//! (`EFMESH_SQLMESH_VENV`, by default `~/.cache/efmesh-sqlmesh/0.236.4`).

mod common;
use common::*;

#[test]
fn every_sqlmesh_fixture_builds_what_sqlmesh_0_236_builds() {
    let mut fixtures: Vec<_> = std::fs::read_dir(repo().join("tests"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("sqlmesh-"))
        })
        .collect();
    fixtures.sort();
    assert!(fixtures.len() >= 12, "{fixtures:?}");
    let out_dir = tempfile::tempdir().unwrap();
    let report = out_dir.path().join("report.json");
    let out = std::process::Command::new(repo().join("scripts/sqlmesh-compare"))
        .arg("--efmesh")
        .arg(env!("CARGO_BIN_EXE_efmesh"))
        .arg("--json")
        .arg(&report)
        .args(&fixtures)
        .output()
        .unwrap();
    let log = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&report).unwrap_or_else(|e| panic!("{e}: {log}"));
    let reports: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(reports.len(), fixtures.len(), "{log}");
    let (mut equal, mut tests) = (0, 0);
    for r in &reports {
        let project = r["project"].as_str().unwrap();
        assert_eq!(r["sqlmesh_built"], true, "{project}: {r}");
        assert_eq!(r["efmesh_built"], true, "{project}: {r}");
        let tables = r["tables"].as_object().unwrap();
        assert!(!tables.is_empty(), "{project}: {r}");
        for (view, verdict) in tables {
            let verdict = verdict.as_str().unwrap();
            // the same columns, the same types (SQLMesh's casts included) and the same rows
            assert_eq!(verdict, "equal", "{project}: {view}");
            equal += 1;
        }
        if let Some(t) = r.get("tests") {
            assert_eq!(t["sqlmesh_failed"], 0, "{project}: {t}");
            let ours = t["efmesh"].as_object().unwrap_or_else(|| panic!("{t}"));
            assert_eq!(
                ours.len() as u64,
                t["sqlmesh_ran"].as_u64().unwrap(),
                "{project}: {t}"
            );
            assert!(ours.values().all(|s| s == "passed"), "{project}: {t}");
            tests += ours.len();
        }
    }
    // every fixture's tables, and the YAML tests of several fixtures ran on both sides
    assert!(equal >= 60, "{equal} tables: {log}");
    assert!(tests >= 9, "{log}");
    assert!(out.status.success(), "{log}");
}
