//! Data quality through the real binary on real DuckDB: the schema contract, blocking and
//! warning audits, audit scopes, continuity gates and `efmesh audit`.

mod common;
use common::*;
use efmesh::engine::duckdb::DuckDbEngine;
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;

const NOW: &str = "2026-01-11T00:00:00Z";

/// Ten days of hourly events; `id` is whatever expression the test needs.
fn events(id: &str, filter: &str) -> (&'static str, String) {
    (
        "models/raw.sql",
        format!("MODEL (name raw.events, kind FULL);\nSELECT {id} AS id, TIMESTAMP '2026-01-01' + to_hours(range) AS ts FROM range(240){filter}"),
    )
}

/// A daily time-range model over the events, with these audits.
fn daily(audits: &str) -> (&'static str, String) {
    (
        "models/daily.sql",
        format!("MODEL (name m.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, batch_size 1), start '2026-01-01', columns (id BIGINT, ts TIMESTAMP), audits ({audits}));\nSELECT id, ts FROM raw.events WHERE ts >= @start AND ts < @end"),
    )
}

fn write(dir: &Path, (path, text): (&str, String)) {
    std::fs::write(dir.join(path), text).unwrap();
}

fn setup(files: &[(&str, String)]) -> tempfile::TempDir {
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
    project(&refs)
}

fn apply(dir: &Path) -> assert_cmd::assert::Assert {
    efmesh(dir)
        .env("EFMESH_NOW", NOW)
        .args(["apply", "dev", "--yes"])
        .assert()
}

fn query(dir: &Path, sql: &str) -> Vec<Option<String>> {
    let cfg = efmesh_core::config::Config::defaults("t").engine;
    let mut e = DuckDbEngine::open(dir, "efmesh.duckdb", &cfg).unwrap();
    e.query_strings(sql).unwrap()
}

fn done_versions(dir: &Path) -> i64 {
    let c = rusqlite::Connection::open(dir.join("efmesh.state.sqlite")).unwrap();
    c.query_row(
        "SELECT count(DISTINCT physical_fingerprint) FROM intervals WHERE status = 'done'",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn a_contract_mismatch_stops_the_build_before_any_write() {
    let p = setup(&[
        events("range", ""),
        (
            "models/wide.sql",
            "MODEL (name m.wide, kind FULL, columns (id BIGINT, ts VARCHAR));\nSELECT * FROM raw.events".into(),
        ),
    ]);
    apply(p.path())
        .code(1)
        .stderr(predicate::str::contains(
            "`m.wide` (models/wide.sql) does not return the columns it declares",
        ))
        .stderr(predicate::str::contains(
            "ts: declared VARCHAR (text), query returns TIMESTAMP (temporal)",
        ))
        .stderr(predicate::str::contains("nothing was written"));
    // no physics for it, no view, nothing recorded as built
    assert_eq!(
        query(p.path(), "SELECT count(*)::VARCHAR FROM information_schema.tables WHERE table_name LIKE 'm__wide%' OR table_schema = 'dev__m'"),
        vec![Some("0".into())]
    );
    let c = rusqlite::Connection::open(p.path().join("efmesh.state.sqlite")).unwrap();
    let built: i64 = c
        .query_row(
            "SELECT count(*) FROM physics WHERE model = 'm.wide'",
            [],
            |r| r.get(0),
        )
        .unwrap_or(0);
    assert_eq!(built, 0);
}

#[test]
fn a_blocking_not_null_failure_leaves_views_unswapped_and_intervals_not_done() {
    let p = setup(&[
        events("CASE WHEN range % 50 = 7 THEN NULL ELSE range END", ""),
        daily("unique_values(columns := (id))"),
    ]);
    apply(p.path()).success();
    let served = query(p.path(), "SELECT count(*)::VARCHAR FROM dev__m.daily");
    assert_eq!(done_versions(p.path()), 1);

    // a new version adds the blocking audit (and a column, so it rebuilds)
    write(
        p.path(),
        (
            "models/daily.sql",
            "MODEL (name m.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, batch_size 1), start '2026-01-01', columns (id BIGINT, ts TIMESTAMP, hour_of_day BIGINT), audits (not_null(columns := (id))));\nSELECT id, ts, hour(ts) AS hour_of_day FROM raw.events WHERE ts >= @start AND ts < @end".into(),
        ),
    );
    apply(p.path())
        .code(1)
        .stderr(predicate::str::contains("1 blocking audit(s) failed; `dev` was not changed"))
        .stderr(predicate::str::contains(
            "m.daily: not_null(columns := (id)) FAILED: 1 violation over batch [2026-01-01T00:00:00Z, 2026-01-02T00:00:00Z)",
        ))
        .stderr(predicate::str::contains("id=NULL ts=2026-01-01 07:00:00"));
    // the view still serves the old version, and the new version has no done interval
    assert_eq!(
        query(p.path(), "SELECT count(*)::VARCHAR FROM dev__m.daily"),
        served
    );
    assert_eq!(
        query(p.path(), "SELECT count(*)::VARCHAR FROM information_schema.columns WHERE table_schema = 'dev__m' AND column_name = 'hour_of_day'"),
        vec![Some("0".into())]
    );
    assert_eq!(done_versions(p.path()), 1);
}

#[test]
fn a_warning_audit_lets_the_apply_succeed_and_is_logged() {
    let p = setup(&[
        events("CASE WHEN range % 50 = 7 THEN NULL ELSE range END", ""),
        daily("not_null(columns := (id), blocking := false)"),
    ]);
    apply(p.path())
        .success()
        .stdout(predicate::str::contains(
            "warning: audit m.daily: not_null(columns := (id)) warning: 1 violation over batch",
        ))
        .stdout(predicate::str::contains(
            "ran 11 audit(s), 6 with non-blocking violations",
        ))
        .stderr(predicate::str::contains(
            "audit found violations (non-blocking)",
        ));
    assert_eq!(done_versions(p.path()), 1);
    assert_eq!(
        query(
            p.path(),
            "SELECT count(*)::VARCHAR FROM dev__m.daily WHERE id IS NULL"
        ),
        vec![Some("5".into())]
    );
    // --json counts them
    write(
        p.path(),
        events("range", " WHERE range % 50 <> 7 OR range > 60"),
    );
    let out = efmesh(p.path())
        .env("EFMESH_NOW", NOW)
        .args(["apply", "dev", "--yes", "--json"])
        .assert()
        .success();
    let v = json(&out.get_output().stdout);
    assert!(v["auditsRun"].as_u64().unwrap() >= 10, "{v}");
    assert_eq!(v["auditWarnings"].as_array().unwrap().len(), 0, "{v}");
}

#[test]
fn per_interval_audits_hold_per_batch_are_skipped_by_efmesh_audit_and_fail_declared_whole() {
    // ids repeat every day: unique within each daily batch, not across the table
    let per_interval = || {
        setup(&[
            events("range % 24", ""),
            daily("unique_values(columns := (id), scope := 'per_interval')"),
        ])
    };
    let p = per_interval();
    apply(p.path()).success();
    efmesh(p.path())
        .env("EFMESH_NOW", NOW)
        .args(["audit", "dev"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "m.daily: unique_values(columns := (id)) skipped",
        ))
        .stdout(predicate::str::contains("1 skipped"));
    let out = efmesh(p.path())
        .args(["audit", "dev", "--json"])
        .assert()
        .success();
    let v: Value = json(&out.get_output().stdout);
    assert_eq!(v["results"][0]["status"], "skipped");
    assert_eq!(v["results"][0]["scope"], "per_interval");
    assert_eq!(v["skipped"], 1);
    assert_eq!(v["passed"], 0);

    // the same audit declared whole fails before promotion
    let p = setup(&[
        events("range % 24", ""),
        daily("unique_values(columns := (id), scope := 'whole')"),
    ]);
    apply(p.path())
        .code(1)
        .stderr(predicate::str::contains(
            "m.daily: unique_values(columns := (id)) FAILED: 24 violations over whole",
        ))
        .stderr(predicate::str::contains("column=id value=0 occurrences=10"))
        .stderr(predicate::str::contains("... and 19 more"));
    assert_eq!(
        query(
            p.path(),
            "SELECT count(*)::VARCHAR FROM information_schema.tables WHERE table_schema = 'dev__m'"
        ),
        vec![Some("0".into())],
        "nothing promoted"
    );
    assert_eq!(
        done_versions(p.path()),
        0,
        "intervals wait for the whole audit"
    );
    // and `efmesh audit` catches degradation after the fact: unscoped runs there too
    let p = per_interval();
    apply(p.path()).success();
    write(
        p.path(),
        daily("unique_values(columns := (id), scope := 'per_interval'), unique_values(columns := (id), blocking := false)"),
    );
    efmesh(p.path())
        .args(["audit", "dev", "--model", "m.daily"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "warning: 24 violations over whole",
        ));
    // a typo, a model the environment does not serve, an environment that does not exist
    efmesh(p.path())
        .args(["audit", "dev", "--model", "m.dialy"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("unknown model `m.dialy`"))
        .stderr(predicate::str::contains("did you mean `m.daily`?"));
    write(
        p.path(),
        (
            "models/extra.sql",
            "MODEL (name m.extra, kind VIEW, audits (not_null(columns := (id))));\nSELECT id FROM raw.events".into(),
        ),
    );
    efmesh(p.path())
        .args(["audit", "dev", "--model", "m.extra"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("`dev` does not serve `m.extra`"));
    efmesh(p.path())
        .args(["audit", "qa"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("environment `qa` does not exist"))
        .stderr(predicate::str::contains("efmesh apply qa"));
}

#[test]
fn continuity_gates_print_the_boundaries_of_the_hole() {
    // days 3, 6 and 8 are missing; the data also starts late and ends early (not gaps)
    let p = setup(&[
        events(
            "range",
            " WHERE range >= 24 AND range < 216 AND NOT (range // 24 IN (2, 5, 7))",
        ),
        (
            "models/gated.sql",
            "MODEL (name m.gated, kind FULL, audits (assert_no_gaps(column := ts, unit := 'day'), assert_contiguous(column := day_no)));\nSELECT ts, date_diff('day', DATE '1970-01-01', ts) AS day_no FROM raw.events".into(),
        ),
    ]);
    apply(p.path())
        .code(1)
        .stderr(predicate::str::contains("2 blocking audit(s) failed"))
        .stderr(predicate::str::contains(
            "assert_no_gaps(column := ts, unit := 'day') FAILED: 3 violations over whole\n      covered through 2026-01-02, resumes at 2026-01-04 (and 2 further gaps)",
        ))
        .stderr(predicate::str::contains(
            "covered through 20455, resumes at 20457 (and 2 further gaps)",
        ));
    // without the holes, a late start and an early end pass
    write(
        p.path(),
        events("range", " WHERE range >= 24 AND range < 216"),
    );
    apply(p.path()).success();
}

#[test]
fn audit_calls_are_checked_before_anything_runs() {
    let p = setup(&[
        events("range", ""),
        daily("not_null(colums := (id)), unique_values(columns := (id), scope := 'daily'), assert_no_gaps(column := ts, unit := 'fortnight')"),
        (
            "audits/positive.sql",
            "AUDIT (name positive); SELECT * FROM @this_model WHERE id < @floor".into(),
        ),
        (
            "models/other.sql",
            "MODEL (name m.other, kind VIEW, audits (positive));\nSELECT id FROM raw.events".into(),
        ),
    ]);
    efmesh(p.path())
        .args(["check"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "audit `not_null` has no argument `colums`",
        ))
        .stderr(predicate::str::contains("did you mean `columns`?"))
        .stderr(predicate::str::contains(
            "audit `unique_values`: `scope := 'daily'` is not valid",
        ))
        .stderr(predicate::str::contains("use 'per_interval' or 'whole'"))
        .stderr(predicate::str::contains(
            "audit `assert_no_gaps`: `unit := 'fortnight'` is not valid",
        ))
        .stderr(predicate::str::contains(
            "audit `positive` needs argument `floor`",
        ))
        .stderr(predicate::str::contains("models/daily.sql:1:"));
}

#[test]
fn named_audits_take_arguments_and_defaults() {
    let p = setup(&[
        events("range", ""),
        (
            "audits/at_least.sql",
            "AUDIT (name at_least, defaults (floor := 0), blocking false);\nSELECT * FROM @this_model WHERE id < @floor".into(),
        ),
        (
            "models/v.sql",
            "MODEL (name m.v, kind FULL, audits (at_least, at_least(floor := 10, blocking := true)));\nSELECT id FROM raw.events".into(),
        ),
    ]);
    apply(p.path())
        .code(1)
        .stderr(predicate::str::contains(
            "m.v: at_least(floor := 10) FAILED: 10 violations over whole",
        ))
        .stderr(predicate::str::contains("1 blocking audit(s) failed"));
}

#[test]
fn audit_json_shape_is_frozen() {
    let p = setup(&[
        events("range % 24", ""),
        daily("not_null(columns := (id)), unique_values(columns := (id), scope := 'per_interval'), number_of_rows(threshold := 1000, blocking := false), accepted_values(column := id, is_in := (0, 1, 2), scope := 'whole', blocking := false)"),
    ]);
    apply(p.path()).success();
    // degrade the data after the fact: a blocking audit now fails
    let cfg = efmesh_core::config::Config::defaults("t").engine;
    let mut e = DuckDbEngine::open(p.path(), "efmesh.duckdb", &cfg).unwrap();
    let table = e
        .query_strings(
            "SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'm__daily__%'",
        )
        .unwrap()[0]
        .clone()
        .unwrap();
    efmesh::engine::Engine::execute(
        &mut e,
        "test setup",
        &format!("UPDATE _efmesh.{table} SET id = NULL WHERE ts = TIMESTAMP '2026-01-02 03:00:00'"),
    )
    .unwrap();
    drop(e);
    let out = efmesh(p.path())
        .env("EFMESH_NOW", NOW)
        .args(["audit", "dev", "--json"])
        .assert()
        .code(1);
    insta::assert_json_snapshot!("audit_json", json(&out.get_output().stdout));
}

#[test]
fn upsert_batches_are_audited_as_staged_and_roll_back_whole() {
    let p = setup(&[
        events("range", ""),
        (
            "models/latest.sql",
            "MODEL (name m.latest, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key id), start '2026-01-01', columns (id BIGINT, ts TIMESTAMP), audits (forall(criteria := (id < 200), scope := 'per_interval')));\nSELECT id, ts FROM raw.events".into(),
        ),
    ]);
    apply(p.path()).code(1).stderr(predicate::str::contains(
        "m.latest: forall(criteria := (id < 200)) FAILED: 40 violations over batch",
    ));
    // the failed upsert left no rows behind in the new physics
    assert_eq!(
        query(p.path(), "SELECT count(*)::VARCHAR FROM information_schema.tables WHERE table_name LIKE 'm__latest__%'"),
        vec![Some("1".into())]
    );
    let table = query(
        p.path(),
        "SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'm__latest__%'",
    )[0]
    .clone()
    .unwrap();
    assert_eq!(
        query(
            p.path(),
            &format!("SELECT count(*)::VARCHAR FROM _efmesh.{table}")
        ),
        vec![Some("0".into())]
    );
    assert_eq!(done_versions(p.path()), 0);
}
