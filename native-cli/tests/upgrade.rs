//! Upgrading efmesh across a `FINGERPRINT_VERSION` change keeps what was built: versions
//! recorded by the previous algorithm are recognised by recomputing their fingerprints the old
//! way, so an unchanged project plans as metadata-only and rebuilds nothing.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

const RAW: (&str, &str) = (
    "models/raw.sql",
    "MODEL (name s.raw, kind FULL, columns (id BIGINT, ts TIMESTAMP));\nSELECT range AS id, TIMESTAMP '2026-01-01' + to_hours(range) AS ts FROM range(240)",
);
const DAILY: (&str, &str) = (
    "models/daily.sql",
    "MODEL (name s.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, batch_size 2), start '2026-01-01', columns (id BIGINT, ts TIMESTAMP));\nSELECT id, ts FROM s.raw WHERE ts >= @start AND ts < @end",
);
const NOW: &str = "2026-01-08T00:00:00Z";

fn apply(dir: &Path) -> Value {
    json(
        &efmesh(dir)
            .env("EFMESH_NOW", NOW)
            .args(["apply", "dev", "--yes", "--json"])
            .assert()
            .success()
            .get_output()
            .stdout,
    )
}

/// Rewrite the state as the previous algorithm (version 1) recorded it: every snapshot and
/// pointer carries its version-1 fingerprint; the physics stays where it is.
fn downgrade_state_to_v1(dir: &Path) {
    let ef = efmesh::Efmesh::open(dir).unwrap();
    let p = ef.project();
    let v1 = p.legacy(1).unwrap();
    let c = rusqlite::Connection::open(dir.join("efmesh.state.sqlite")).unwrap();
    for ((new, old), def) in p
        .fingerprints
        .iter()
        .zip(&v1.fingerprints)
        .zip(&v1.definition_hashes)
    {
        assert_ne!(new, old, "the algorithms differ");
        c.execute(
            "UPDATE snapshots SET fingerprint = ?2, definition_hash = ?3, fingerprint_version = 1 WHERE fingerprint = ?1",
            [new, old, def],
        )
        .unwrap();
        c.execute(
            "UPDATE environments SET fingerprint = ?2 WHERE fingerprint = ?1",
            [new, old],
        )
        .unwrap();
    }
    let _ = std::fs::remove_dir_all(dir.join(".efmesh"));
}

#[test]
fn an_unchanged_project_built_by_the_previous_algorithm_rebuilds_nothing() {
    let p = project(&[RAW, DAILY]);
    let first = apply(p.path());
    assert_eq!(first["built"].as_array().unwrap().len(), 2);
    downgrade_state_to_v1(p.path());

    let v = apply(p.path());
    let actions = v["plan"]["actions"].as_array().unwrap();
    assert_eq!(actions.len(), 2, "{v}");
    for a in actions {
        assert_eq!(a["category"], "metadata-only", "{a}");
        assert!(
            a["explain"][0].as_str().unwrap().contains(
                "fingerprint version changed from 1 to 2; the definition is the one built"
            ),
            "{a}"
        );
    }
    assert!(v["built"].as_array().unwrap().is_empty(), "{v}");
    assert!(
        v["batches"].as_array().unwrap().is_empty(),
        "the ledger carried over: {v}"
    );

    // the environment serves the same rows, and the next plan has nothing to do
    let out = efmesh(p.path())
        .env("EFMESH_NOW", NOW)
        .args(["plan", "dev", "--json"])
        .assert()
        .success();
    assert_eq!(json(&out.get_output().stdout)["hasChanges"], false);
    let cfg = efmesh_core::config::Config::defaults("t").engine;
    let mut e =
        efmesh::engine::duckdb::DuckDbEngine::open(p.path(), "efmesh.duckdb", &cfg).unwrap();
    assert_eq!(
        e.query_strings("SELECT count(*)::VARCHAR FROM dev__s.daily")
            .unwrap()[0]
            .as_deref(),
        Some("168")
    );
}

#[test]
fn a_model_changed_across_the_upgrade_is_breaking_and_its_child_indirect() {
    let p = project(&[RAW, DAILY]);
    apply(p.path());
    downgrade_state_to_v1(p.path());
    std::fs::write(
        p.path().join(RAW.0),
        RAW.1.replace("range(240)", "range(200)"),
    )
    .unwrap();
    let v = apply(p.path());
    let cat = |m: &str| {
        v["plan"]["actions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["model"] == m)
            .map(|a| a["category"].as_str().unwrap().to_string())
    };
    assert_eq!(cat("s.raw").as_deref(), Some("breaking"));
    assert_eq!(
        cat("s.daily").as_deref(),
        Some("indirect"),
        "its own definition is unchanged; its parent changed under it"
    );
    assert_eq!(v["built"].as_array().unwrap().len(), 2, "{v}");
}
