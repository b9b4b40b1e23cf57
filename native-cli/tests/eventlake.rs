//! examples/eventlake: an at-least-once archive deduplicated into `core.events`, on a fixture
//! generated into a temporary copy of the example.

mod common;

#[allow(dead_code)]
#[path = "../../examples/eventlake/generate.rs"]
mod generate;

use common::{efmesh, json, repo};
use std::path::Path;

/// The last arrival day is 2026-03-07: every interval is complete and every partition settled.
const NOW: &str = "2026-03-08T06:00:00Z";

/// A copy of the example (without anything generated) with a freshly generated landing zone.
fn setup() -> (tempfile::TempDir, generate::Summary) {
    let dir = tempfile::tempdir().unwrap();
    let src = repo().join("examples/eventlake");
    copy(&src, dir.path());
    let summary = generate::write(&dir.path().join("landing")).unwrap();
    (dir, summary)
}

fn copy(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if name == "landing"
            || name == ".efmesh"
            || name.starts_with("efmesh.duckdb")
            || name.starts_with("efmesh.state")
        {
            continue;
        }
        let target = to.join(&name);
        if e.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// How many `n` in `0..EVENTS_PER_DAY` have `n % m == r`.
fn matching(m: i64, r: i64) -> i64 {
    (0..generate::EVENTS_PER_DAY).filter(|n| n % m == r).count() as i64
}

/// The fixture's numbers in closed form, from the generator's parameters alone.
struct Expected {
    raw: i64,
    events: i64,
    canonical: i64,
    residual: i64,
    same_day: i64,
}

fn expected() -> Expected {
    use generate::{DAYS, EVENTS_PER_DAY, HORIZON_DAYS, REDELIVERIES};
    let events = DAYS * EVENTS_PER_DAY;
    // a redelivery `days` later exists for every day that still has `days` days after it
    let copies = |days_filter: &dyn Fn(i64) -> bool| -> i64 {
        REDELIVERIES
            .iter()
            .filter(|r| days_filter(r.2))
            .map(|&(m, r, days, _)| matching(m, r) * (DAYS - days).max(0))
            .sum()
    };
    // beyond the horizon only one rule delivers, and nothing else arrives in its window
    let residual = copies(&|d| d > HORIZON_DAYS);
    Expected {
        raw: events + copies(&|_| true),
        events,
        canonical: events + residual,
        residual,
        same_day: copies(&|d| d == 0),
    }
}

fn db_count(db: &duckdb::Connection, sql: &str) -> i64 {
    db.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap()
}

fn apply(root: &Path) -> serde_json::Value {
    let out = efmesh(root)
        .env("EFMESH_NOW", NOW)
        .args(["apply", "dev", "--yes", "--json"])
        .assert()
        .success();
    json(&out.get_output().stdout)
}

/// The residual-duplicates warning of an apply.
fn residual_warning(applied: &serde_json::Value) -> &serde_json::Value {
    let warnings = applied["auditWarnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    let w = &warnings[0];
    assert_eq!(w["model"], "core.events");
    assert!(
        w["audit"]
            .as_str()
            .unwrap()
            .starts_with("residual_duplicates"),
        "{w}"
    );
    assert_eq!(w["blocking"], false);
    w
}

#[test]
fn the_generator_is_deterministic_and_agrees_with_its_parameters() {
    let e = expected();
    let s = generate::summarize(&generate::deliveries());
    assert_eq!(
        (
            s.raw_rows,
            s.events,
            s.canonical_rows,
            s.residual_duplicate_events,
            s.same_day_duplicates
        ),
        (
            e.raw as usize,
            e.events as usize,
            e.canonical as usize,
            e.residual as usize,
            e.same_day as usize
        )
    );
    assert!(e.residual > 0 && e.same_day > 0 && s.raw_rows > s.canonical_rows);
    assert_eq!(s.files as i64, generate::DAYS * generate::FILES_PER_DAY);
    // the same bytes on every run
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    assert_eq!(generate::write(&a.path().join("landing")).unwrap(), s);
    generate::write(&b.path().join("landing")).unwrap();
    for day in 0..generate::DAYS {
        for k in 0..generate::FILES_PER_DAY {
            let rel = format!("landing/day={}/part-{k}.parquet", generate::day_name(day));
            assert_eq!(
                std::fs::read(a.path().join(&rel)).unwrap(),
                std::fs::read(b.path().join(&rel)).unwrap(),
                "{rel}"
            );
        }
    }
    // it never overwrites
    assert!(generate::write(&a.path().join("landing"))
        .unwrap_err()
        .contains("exists already"));
}

#[test]
fn core_events_keeps_first_arrivals_and_warns_about_residual_duplicates() {
    let (dir, summary) = setup();
    let root = dir.path();
    let e = expected();

    efmesh(root).arg("check").assert().success();
    let applied = apply(root);
    assert_eq!(applied["applied"], true);
    // one batch per arrival day
    assert_eq!(
        applied["batches"].as_array().unwrap().len() as i64,
        generate::DAYS
    );
    let w = residual_warning(&applied);
    assert_eq!(w["violations"], e.residual);
    assert_eq!(w["violations"], summary.residual_duplicate_events);

    let db = duckdb::Connection::open(root.join("efmesh.duckdb")).unwrap();
    let raw =
        "read_parquet('landing/**/*.parquet', hive_partitioning = true, union_by_name = true)";
    db.execute_batch(&format!("SET file_search_path = '{}'", root.display()))
        .unwrap();
    assert_eq!(db_count(&db, &format!("SELECT count(*) FROM {raw}")), e.raw);
    assert_eq!(
        db_count(&db, "SELECT count(*) FROM dev__core.events"),
        e.canonical
    );
    assert_eq!(
        db_count(&db, "SELECT count(DISTINCT event_id) FROM dev__core.events"),
        e.events
    );
    // residual duplicates are exactly the copies that arrived beyond the horizon
    let horizon = generate::HORIZON_DAYS;
    assert_eq!(
        db_count(&db, &format!(
            "SELECT count(*) FROM (SELECT event_id FROM dev__core.events GROUP BY event_id HAVING count(*) > 1 AND date_diff('day', CAST(min(received_at) AS DATE), CAST(max(received_at) AS DATE)) > {horizon})"
        )),
        e.residual
    );
    // every event is kept at its first arrival, with that copy's columns
    assert_eq!(
        db_count(&db, &format!(
            "SELECT count(*) FROM (SELECT event_id, min(received_at) AS first FROM dev__core.events GROUP BY 1) AS c JOIN (SELECT event_id, min(received_at) AS first FROM {raw} GROUP BY 1) AS r USING (event_id) WHERE c.first <> r.first"
        )),
        0
    );
    // both schema generations are read: generation 2's column is there for its events only
    assert_eq!(
        db_count(
            &db,
            "SELECT count(DISTINCT event_id) FROM dev__core.events WHERE app_version IS NOT NULL"
        ),
        summary.generation_2_events as i64
    );
    assert!(summary.generation_2_events > 0 && (summary.generation_2_events as i64) < e.events);
    drop(db);

    // compaction: one file per day, same-day duplicates gone, nothing else changed
    let out = efmesh(root)
        .env("EFMESH_NOW", NOW)
        .args(["compact", "--json"])
        .assert()
        .success();
    let report = json(&out.get_output().stdout);
    assert_eq!(report["compacted"], generate::DAYS);
    assert_eq!(report["leftAlone"], 0);
    assert_eq!(report["duplicatesDropped"], e.same_day);
    for day in 0..generate::DAYS {
        let d = root.join(format!("landing/day={}", generate::day_name(day)));
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1, "{}", d.display());
    }
    let db = duckdb::Connection::open(root.join("efmesh.duckdb")).unwrap();
    db.execute_batch(&format!("SET file_search_path = '{}'", root.display()))
        .unwrap();
    assert_eq!(
        db_count(&db, &format!("SELECT count(*) FROM {raw}")),
        e.raw - e.same_day
    );
    drop(db);

    // recompute every day from the compacted files: the same canonical table
    efmesh(root)
        .env("EFMESH_NOW", NOW)
        .args([
            "restate",
            "dev",
            "--model",
            "core.events",
            "--from",
            "2026-03-01",
            "--to",
            "2026-03-08",
        ])
        .assert()
        .success();
    let applied = apply(root);
    assert_eq!(
        applied["batches"].as_array().unwrap().len() as i64,
        generate::DAYS
    );
    assert_eq!(residual_warning(&applied)["violations"], e.residual);
    let db = duckdb::Connection::open(root.join("efmesh.duckdb")).unwrap();
    assert_eq!(
        db_count(&db, "SELECT count(*) FROM dev__core.events"),
        e.canonical
    );
    assert_eq!(
        db_count(&db, "SELECT count(DISTINCT event_id) FROM dev__core.events"),
        e.events
    );
}

#[test]
fn the_example_holds_no_generated_data() {
    let src = repo().join("examples/eventlake");
    let ignore = std::fs::read_to_string(src.join(".gitignore")).unwrap();
    assert!(ignore.lines().any(|l| l == "/landing/"));
    let readme = std::fs::read_to_string(src.join("README.md")).unwrap();
    // the guarantee names the same horizon the generator and the model use
    assert!(readme.contains(&format!("{} days", generate::HORIZON_DAYS)));
    let model = std::fs::read_to_string(src.join("models/core/events.sql")).unwrap();
    assert!(model.contains(&format!("INTERVAL '{} days'", generate::HORIZON_DAYS)));
    assert!(model.contains(&format!(
        "CAST(@start AS DATE) - {}",
        generate::HORIZON_DAYS
    )));
}
