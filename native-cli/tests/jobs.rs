//! `--jobs N`: a plan's models build in parallel in dependency order, and a failed model blocks
//! only its descendants.

mod common;
use common::*;
use std::path::Path;

/// Eight independent branches (`w.b0`..`w.b7`, each a little busy work), a child under each of
/// the first two, and a mart over every branch. `w.b1` fails while a file `FAIL` exists.
fn wide_project() -> tempfile::TempDir {
    let mut files: Vec<(String, String)> = vec![];
    for k in 0..8 {
        let fail = if k == 1 {
            " AND (CASE WHEN (SELECT count(*) FROM glob('FAIL')) > 0 THEN error('branch 1 broke') ELSE true END)"
        } else {
            ""
        };
        files.push((
            format!("models/b{k}.sql"),
            format!("MODEL (name w.b{k}, kind FULL);\nSELECT {k} AS branch, count(*) AS n FROM range(4000000) t(x) WHERE hash(x + {k}) % 3 = 0{fail}"),
        ));
    }
    for k in 0..2 {
        files.push((
            format!("models/c{k}.sql"),
            format!("MODEL (name w.c{k}, kind FULL);\nSELECT branch, n * 2 AS n2 FROM w.b{k}"),
        ));
    }
    let all: Vec<String> = (0..8)
        .map(|k| format!("SELECT branch, n FROM w.b{k}"))
        .collect();
    files.push((
        "models/mart.sql".into(),
        format!(
            "MODEL (name w.mart, kind FULL);\n{}",
            all.join("\nUNION ALL\n")
        ),
    ));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    project(&refs)
}

fn query(dir: &Path, sql: &str) -> String {
    let cfg = efmesh_core::config::Config::defaults("t").engine;
    let mut e = efmesh::engine::duckdb::DuckDbEngine::open(dir, "efmesh.duckdb", &cfg).unwrap();
    e.query_strings(sql).unwrap()[0].clone().unwrap_or_default()
}

/// (event, model) of each build log line, in order.
fn build_events(stderr: &str) -> Vec<(String, String)> {
    stderr
        .lines()
        .filter_map(|l| {
            let msg = l.split_whitespace().find_map(|f| f.strip_prefix("msg="))?;
            let model = l
                .split_whitespace()
                .find_map(|f| f.strip_prefix("model="))?;
            matches!(msg, "building" | "built").then(|| (msg.to_string(), model.to_string()))
        })
        .collect()
}

#[test]
fn jobs_build_independent_branches_at_once_and_in_dependency_order() {
    let p = wide_project();
    let out = efmesh(p.path())
        .args(["apply", "prod", "--yes", "--jobs", "4", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out.stdout);
    assert_eq!(v["built"].as_array().unwrap().len(), 11);
    let events = build_events(&String::from_utf8_lossy(&out.stderr));
    assert_eq!(events.len(), 22, "{events:?}");
    // parallel: some model started while another was still building
    let mut running = 0usize;
    let mut most = 0usize;
    for (e, _) in &events {
        if e == "building" {
            running += 1;
            most = most.max(running);
        } else {
            running -= 1;
        }
    }
    assert!(most >= 2, "no two builds overlapped: {events:?}");
    assert!(most <= 4, "more than --jobs builds at once: {events:?}");
    // dependency order: a child starts only after its parents are built
    let pos = |e: &str, m: &str| events.iter().position(|(x, y)| x == e && y == m).unwrap();
    for k in 0..8 {
        assert!(pos("built", &format!("w.b{k}")) < pos("building", "w.mart"));
    }
    assert!(pos("built", "w.b0") < pos("building", "w.c0"));
    // the same data as a one-at-a-time build
    assert_eq!(query(p.path(), "SELECT count(*)::VARCHAR FROM w.mart"), "8");
    assert_eq!(
        query(
            p.path(),
            "SELECT (n2 = 2 * (SELECT n FROM w.b0))::VARCHAR FROM w.c0"
        ),
        "true"
    );
}

#[test]
fn a_failed_model_blocks_only_its_descendants_and_the_rest_is_built() {
    let p = wide_project();
    std::fs::write(p.path().join("FAIL"), "").unwrap();
    let out = efmesh(p.path())
        .args(["apply", "prod", "--yes", "--jobs", "3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("branch 1 broke"), "{err}");
    assert!(
        err.contains("1 model(s) failed and 2 descendant(s) were not built (w.c1, w.mart)"),
        "{err}"
    );
    let built: Vec<String> = build_events(&err)
        .into_iter()
        .filter(|(e, _)| e == "built")
        .map(|(_, m)| m)
        .collect();
    assert_eq!(built.len(), 8, "7 branches and w.c0 complete: {built:?}");
    assert!(!built
        .iter()
        .any(|m| m == "w.c1" || m == "w.mart" || m == "w.b1"));
    // nothing was promoted
    let out = efmesh(p.path())
        .args(["passport", "prod"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not exist"));

    // fixed: the next apply builds only what is missing
    std::fs::remove_file(p.path().join("FAIL")).unwrap();
    let out = efmesh(p.path())
        .args(["apply", "prod", "--yes", "--jobs", "3", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut rebuilt: Vec<String> = json(&out.stdout)["built"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect();
    rebuilt.sort();
    assert_eq!(rebuilt, ["w.b1", "w.c1", "w.mart"]);
}
