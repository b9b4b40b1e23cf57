//! A model's `end` closes its history, with SQLMesh's meaning (measured against sqlmesh
//! 0.236.4): a date-only `end` includes that whole day; an instant on an interval edge is
//! exclusive; an instant inside an interval keeps that interval. Plan, apply, run, restate,
//! status and the passport all stop there. `EFMESH_NOW` pins the clock.

mod common;
use common::*;
use efmesh::engine::duckdb::DuckDbEngine;
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;

/// 100 days of hourly events from 2026-01-01.
const EVENTS: (&str, &str) = (
    "models/raw.sql",
    "MODEL (name raw.events, kind FULL, columns (id BIGINT, ts TIMESTAMP));\nSELECT range AS id, TIMESTAMP '2026-01-01' + to_hours(range) AS ts FROM range(2400)",
);

/// A daily model closed at `end` (as written), in batches of 3 days.
fn daily(end: &str) -> (&'static str, String) {
    (
        "models/daily.sql",
        format!("MODEL (name m.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, batch_size 3), start '2026-01-01', end {end}, columns (id BIGINT, ts TIMESTAMP));\nSELECT id, ts FROM raw.events WHERE ts >= @start AND ts < @end"),
    )
}

const NOW: &str = "2026-03-01T10:00:00Z";

fn cli(dir: &Path, now: &str, args: &[&str]) -> (i32, Value) {
    let out = efmesh(dir)
        .env("EFMESH_NOW", now)
        .args(args)
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    assert!(
        !out.stdout.is_empty(),
        "{args:?} printed nothing: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (code, json(&out.stdout))
}

fn query(dir: &Path, sql: &str) -> String {
    let cfg = efmesh_core::config::Config::defaults("t").engine;
    let mut e = DuckDbEngine::open(dir, "efmesh.duckdb", &cfg).unwrap();
    e.query_strings(sql).unwrap()[0].clone().unwrap_or_default()
}

fn batches_of(plan: &Value, model: &str) -> Vec<(String, String)> {
    plan["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["model"] == model)
        .unwrap_or_else(|| panic!("{model} in {plan}"))["batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["start"].as_str().unwrap().to_string(),
                b["end"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_date_only_end_closes_plan_apply_run_status_passport_and_restate_after_that_day() {
    let d = daily("'2026-01-10'");
    let p = project(&[EVENTS, (d.0, &d.1)]);
    let (code, plan) = cli(p.path(), NOW, &["plan", "dev", "--json"]);
    assert_eq!(code, 0);
    let b = batches_of(&plan, "m.daily");
    assert_eq!(b.len(), 4, "10 days in batches of 3: {b:?}");
    assert_eq!(b[0].0, "2026-01-01T00:00:00");
    assert_eq!(
        b[3],
        ("2026-01-10T00:00:00".into(), "2026-01-11T00:00:00".into()),
        "the whole of 2026-01-10 is in, nothing after it"
    );

    let (code, _) = cli(p.path(), NOW, &["apply", "dev", "--yes", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(
        query(
            p.path(),
            "SELECT count(*)::VARCHAR || ' ' || max(ts)::VARCHAR FROM dev__m.daily"
        ),
        "240 2026-01-10 23:00:00"
    );

    // later ticks find nothing due: the history is closed
    let (code, run) = cli(p.path(), "2026-03-05T10:00:00Z", &["run", "dev", "--json"]);
    assert_eq!((code, run["outcome"].as_str()), (0, Some("ok")), "{run}");
    assert!(run["processed"].as_array().unwrap().is_empty(), "{run}");

    // status: due and complete through the end, no lag however late it gets
    let (code, status) = cli(
        p.path(),
        "2026-06-01T00:00:00Z",
        &["status", "dev", "--json"],
    );
    assert_eq!(code, 0);
    let lag = &status["lag"][0];
    assert_eq!(lag["model"], "m.daily");
    assert_eq!(lag["dueThrough"], "2026-01-11T00:00:00Z");
    assert_eq!(lag["completeThrough"], "2026-01-11T00:00:00Z");
    assert_eq!(lag["historyEnd"], "2026-01-11T00:00:00Z");
    assert_eq!(
        (lag["lagSeconds"].as_i64(), lag["missingIntervals"].as_i64()),
        (Some(0), Some(0))
    );

    // the passport claims coverage through the end, and says where the history ends
    let (code, passport) = cli(p.path(), NOW, &["passport", "dev", "--json"]);
    assert_eq!(code, 0);
    let daily = passport["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["model"] == "m.daily")
        .unwrap()
        .clone();
    assert_eq!(
        daily["freshness"]["contiguousThrough"],
        "2026-01-11T00:00:00Z"
    );
    assert_eq!(daily["freshness"]["historyEnd"], "2026-01-11T00:00:00Z");
    assert_eq!(
        daily["effective"]["completeThrough"],
        "2026-01-11T00:00:00Z"
    );

    // a restatement clears only what lies inside the history ...
    let (code, r) = cli(
        p.path(),
        NOW,
        &[
            "restate",
            "dev",
            "--model",
            "m.daily",
            "--from",
            "2026-01-09",
            "--to",
            "2026-01-20",
            "--json",
        ],
    );
    assert_eq!(code, 0, "{r}");
    assert_eq!(
        (
            r["restated"][0]["start"].as_str(),
            r["restated"][0]["end"].as_str()
        ),
        (Some("2026-01-09T00:00:00Z"), Some("2026-01-11T00:00:00Z"))
    );
    let (_, plan) = cli(p.path(), NOW, &["plan", "dev", "--json"]);
    assert_eq!(
        batches_of(&plan, "m.daily"),
        vec![("2026-01-09T00:00:00".into(), "2026-01-11T00:00:00".into())]
    );
    // ... and a range wholly after it is refused with the history's bounds
    efmesh(p.path())
        .env("EFMESH_NOW", NOW)
        .args([
            "restate",
            "dev",
            "--model",
            "m.daily",
            "--from",
            "2026-02-01",
            "--to",
            "2026-02-02",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "lies outside `m.daily`'s history [2026-01-01T00:00:00Z, 2026-01-11T00:00:00Z)",
        ));
}

#[test]
fn an_instant_end_is_exclusive_on_an_edge_and_keeps_the_interval_it_falls_in() {
    let hourly = |end: &str| {
        format!("MODEL (name m.hourly, kind INCREMENTAL_BY_TIME_RANGE (time_column ts), interval_unit hour, start '2026-01-01', end '{end}', columns (id BIGINT, ts TIMESTAMP));\nSELECT id, ts FROM raw.events WHERE ts >= @start AND ts < @end")
    };
    for (end, last) in [
        ("2026-01-02 05:30:00", "2026-01-02T06:00:00"),
        ("2026-01-02 05:00:00", "2026-01-02T05:00:00"),
        ("2026-01-02", "2026-01-03T00:00:00"),
    ] {
        let text = hourly(end);
        let p = project(&[EVENTS, ("models/hourly.sql", &text)]);
        let (code, plan) = cli(p.path(), NOW, &["plan", "dev", "--json"]);
        assert_eq!(code, 0);
        let b = batches_of(&plan, "m.hourly");
        assert_eq!(
            b.last().map(|b| b.1.as_str()),
            Some(last),
            "end '{end}': {b:?}"
        );
    }
}

#[test]
fn an_end_in_the_future_is_bounded_by_now_and_a_full_model_renders_up_to_its_end() {
    let d = daily("'2099-01-01'");
    let full = (
        "models/full.sql",
        "MODEL (name m.until_end, kind FULL, start '2026-01-01', end '2026-01-05', columns (n BIGINT));\nSELECT count(*) AS n FROM raw.events WHERE ts >= @start AND ts < @end",
    );
    let p = project(&[EVENTS, (d.0, &d.1), full]);
    let (_, plan) = cli(p.path(), "2026-01-20T10:00:00Z", &["plan", "dev", "--json"]);
    assert_eq!(
        batches_of(&plan, "m.daily").last().unwrap().1,
        "2026-01-20T00:00:00",
        "only complete intervals before now"
    );
    cli(
        p.path(),
        "2026-01-20T10:00:00Z",
        &["apply", "dev", "--yes", "--json"],
    );
    // [start, end): five whole days of hours
    assert_eq!(
        query(p.path(), "SELECT n::VARCHAR FROM dev__m.until_end"),
        "120"
    );
}

#[test]
fn an_end_before_start_is_refused_at_check_where_it_is_written() {
    let p = project(&[(
        "models/a.sql",
        "MODEL (\n  name m.a,\n  kind FULL,\n  start '2026-01-10',\n  end '2026-01-01'\n);\nSELECT 1 AS x",
    )]);
    efmesh(p.path()).arg("check").assert().code(1).stderr(
        predicate::str::contains(
            "error[end-before-start]: `end` (2026-01-01) is before `start` (2026-01-10)",
        )
        .and(predicate::str::contains("models/a.sql:5:7")),
    );
}

#[test]
fn adding_an_end_to_a_backfilled_model_rebuilds_nothing_and_narrows_what_it_claims() {
    let open = (
        "models/daily.sql",
        "MODEL (name m.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ts), start '2026-01-01', columns (id BIGINT, ts TIMESTAMP));\nSELECT id, ts FROM raw.events WHERE ts >= @start AND ts < @end".to_string(),
    );
    let p = project(&[EVENTS, (open.0, &open.1)]);
    cli(p.path(), NOW, &["apply", "dev", "--yes", "--json"]);
    let d = daily("'2026-01-10'");
    std::fs::write(p.path().join(d.0), &d.1).unwrap();
    let (code, v) = cli(p.path(), NOW, &["apply", "dev", "--yes", "--json"]);
    assert_eq!(code, 0, "{v}");
    let a = v["plan"]["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["model"] == "m.daily")
        .unwrap()
        .clone();
    assert_eq!(a["category"], "metadata-only", "{a}");
    assert!(
        v["built"].as_array().unwrap().is_empty() && v["batches"].as_array().unwrap().is_empty()
    );
    let (_, status) = cli(p.path(), NOW, &["status", "dev", "--json"]);
    assert_eq!(status["lag"][0]["completeThrough"], "2026-01-11T00:00:00Z");
    assert_eq!(status["lag"][0]["lagSeconds"], 0);
}
