//! Unattended operation end to end: `efmesh run` ticks under the environment lock (two
//! concurrent ticks, a holder killed with SIGKILL), ticks blocked by unapplied changes, the runs
//! journal, and `efmesh status --check`.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

/// A daily feed whose batches do some busy work (so ticks overlap), and which fails while a
/// file named `FAIL` exists in the project folder.
fn feed_project() -> tempfile::TempDir {
    project(&[(
        "models/feed.sql",
        "MODEL (name raw.feed, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, batch_size 1), start '2026-01-01', cron '@daily', columns (id BIGINT, ts TIMESTAMP));
SELECT id, ts FROM (SELECT range AS id, TIMESTAMP '2026-01-01' + to_hours(range) AS ts FROM range(2000)) AS s
WHERE ts >= @start AND ts < @end
  AND (SELECT count(*) FROM range(3000000) t(x) WHERE hash(x) % 7 = 1) > 0
  AND (CASE WHEN (SELECT count(*) FROM glob('FAIL')) > 0 THEN error('injected failure') ELSE true END)",
    )])
}

fn apply_at(dir: &Path, now: &str) {
    efmesh(dir)
        .env("EFMESH_NOW", now)
        .args(["apply", "prod", "--yes"])
        .assert()
        .success();
}

/// `efmesh run prod --json` as a child process, not waited for.
fn spawn_run(dir: &Path, now: &str, ttl: &str) -> std::process::Child {
    StdCommand::new(assert_cmd::cargo::cargo_bin("efmesh"))
        .current_dir(dir)
        .env("EFMESH_NOW", now)
        .env("EFMESH_LOCK_TTL_SECONDS", ttl)
        .env("NO_COLOR", "1")
        .args(["run", "prod", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Block until a spawned tick logs its first batch (it holds the lock then). Its logs keep
/// being drained: a closed pipe would end the tick early and free the lock.
fn wait_until_computing(child: &mut std::process::Child) {
    let stderr = child.stderr.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    for line in lines.by_ref() {
        if line.unwrap().contains("backfilling") {
            break;
        }
    }
    std::thread::spawn(move || lines.for_each(drop));
}

fn run_json(dir: &Path, now: &str) -> (i32, Value) {
    let out = efmesh(dir)
        .env("EFMESH_NOW", now)
        .args(["run", "prod", "--json"])
        .output()
        .unwrap();
    (out.status.code().unwrap(), json(&out.stdout))
}

fn status(dir: &Path, now: &str, check: bool) -> (i32, Value) {
    let mut args = vec!["status", "prod", "--json"];
    if check {
        args.push("--check");
    }
    let out = efmesh(dir)
        .env("EFMESH_NOW", now)
        .args(&args)
        .output()
        .unwrap();
    (out.status.code().unwrap(), json(&out.stdout))
}

#[test]
fn two_concurrent_ticks_exactly_one_computes_the_other_reports_the_lock() {
    let p = feed_project();
    apply_at(p.path(), "2026-01-02T00:00:00Z");
    let a = spawn_run(p.path(), "2026-01-22T00:00:00Z", "120");
    let b = spawn_run(p.path(), "2026-01-22T00:00:00Z", "120");
    let outs: Vec<(i32, Value)> = [a, b]
        .into_iter()
        .map(|c| {
            let o = c.wait_with_output().unwrap();
            (o.status.code().unwrap(), json(&o.stdout))
        })
        .collect();
    let ok: Vec<_> = outs.iter().filter(|(_, v)| v["outcome"] == "ok").collect();
    let held: Vec<_> = outs
        .iter()
        .filter(|(_, v)| v["outcome"] == "lock-held")
        .collect();
    assert_eq!((ok.len(), held.len()), (1, 1), "{outs:#?}");
    assert_eq!(ok[0].0, 0);
    let batches = ok[0].1["processed"][0]["batches"].as_array().unwrap().len();
    assert_eq!(batches, 20, "2026-01-02 .. 2026-01-22, one batch per day");
    let (code, v) = held[0];
    assert_eq!(*code, 3, "lock held exits 3");
    assert!(
        v["lock"]["holder"].as_str().unwrap().contains(" pid "),
        "{v}"
    );
    assert!(v["lock"]["acquiredAt"].is_string());
    assert_eq!(v["processed"], serde_json::json!([]));
    // both ticks are in the journal
    let (_, s) = status(p.path(), "2026-01-22T00:00:00Z", false);
    let outcomes: Vec<&str> = s["recentRuns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes.len(), 2);
    assert!(
        outcomes.contains(&"ok") && outcomes.contains(&"lock-held"),
        "{outcomes:?}"
    );
    assert_eq!(s["lag"][0]["missingIntervals"], 0);
}

#[test]
fn a_holder_killed_with_sigkill_on_this_host_is_reclaimed_at_once() {
    let p = feed_project();
    apply_at(p.path(), "2026-01-02T00:00:00Z");
    // a long lease: only the dead pid can explain an immediate takeover
    let mut child = spawn_run(p.path(), "2026-01-20T00:00:00Z", "600");
    // once it is computing it holds the lock; then SIGKILL it
    wait_until_computing(&mut child);
    child.kill().unwrap(); // SIGKILL: no destructor runs, the lock stays in the store
    child.wait().unwrap();

    let out = efmesh(p.path())
        .env("EFMESH_NOW", "2026-01-20T00:00:00Z")
        .env("EFMESH_LOG_FORMAT", "logfmt")
        .args(["run", "prod", "--json"])
        .output()
        .unwrap();
    let v = json(&out.stdout);
    assert_eq!(
        (out.status.code(), v["outcome"].as_str()),
        (Some(0), Some("ok")),
        "{v}"
    );
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(
        log.contains("reclaimed the environment lock")
            && log.contains(&format!("pid {}", child.id())),
        "says whose lock it reclaimed: {log}"
    );
    let (_, s) = status(p.path(), "2026-01-20T00:00:00Z", true);
    assert_eq!(
        s["lag"][0]["missingIntervals"], 0,
        "the backfill resumed: {s}"
    );
    assert_eq!(s["lock"], Value::Null, "released after the tick");
}

#[test]
fn a_holder_on_another_host_keeps_the_lock_until_its_lease_expires() {
    let p = feed_project();
    apply_at(p.path(), "2026-01-02T00:00:00Z");
    let mut child = spawn_run(p.path(), "2026-01-20T00:00:00Z", "3");
    wait_until_computing(&mut child);
    child.kill().unwrap();
    child.wait().unwrap();
    // as if the killed holder had run on another machine sharing the state
    let elsewhere = "ci@another-host pid 4242";
    rusqlite::Connection::open(p.path().join("efmesh.state.sqlite"))
        .unwrap()
        .execute("UPDATE locks SET holder = ?1", [elsewhere])
        .unwrap();
    let killed_at = Instant::now();

    let (code, v) = run_json(p.path(), "2026-01-20T00:00:00Z");
    assert_eq!((code, v["outcome"].as_str()), (3, Some("lock-held")), "{v}");
    assert_eq!(v["lock"]["holder"], elsewhere, "names the holder: {v}");
    // the human form says who and since when
    let out = efmesh(p.path())
        .env("EFMESH_NOW", "2026-01-20T00:00:00Z")
        .args(["run", "prod"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(elsewhere) && err.contains("since"), "{err}");

    // after the ttl the lock is reclaimed and the backfill resumes where it died
    std::thread::sleep(
        Duration::from_secs(3).saturating_sub(killed_at.elapsed()) + Duration::from_millis(500),
    );
    let (code, v) = run_json(p.path(), "2026-01-20T00:00:00Z");
    assert_eq!((code, v["outcome"].as_str()), (0, Some("ok")), "{v}");
    let (_, s) = status(p.path(), "2026-01-20T00:00:00Z", true);
    assert_eq!(s["lag"][0]["missingIntervals"], 0, "{s}");
    assert_eq!(s["lag"][0]["completeThrough"], "2026-01-20T00:00:00Z");
    assert_eq!(s["lock"], Value::Null, "released after the tick");
}

#[test]
fn a_tick_blocked_by_an_unapplied_change_exits_2_and_is_journaled() {
    let p = feed_project();
    apply_at(p.path(), "2026-01-02T00:00:00Z");
    let path = p.path().join("models/feed.sql");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("range(2000)", "range(2001)")).unwrap();
    let (code, v) = run_json(p.path(), "2026-01-05T00:00:00Z");
    assert_eq!(code, 2, "{v}");
    assert_eq!(v["outcome"], "awaiting-human");
    assert_eq!(
        v["blockedBy"],
        serde_json::json!([{"model": "raw.feed", "category": "breaking"}])
    );
    assert_eq!(v["processed"], serde_json::json!([]), "nothing computed");
    let (code, s) = status(p.path(), "2026-01-05T00:00:00Z", true);
    assert_eq!(code, 0, "awaiting a human is healthy: {s}");
    assert_eq!(s["recentRuns"][0]["outcome"], "awaiting-human");
    assert_eq!(
        s["recentRuns"][0]["detail"]["blockedBy"][0]["model"], "raw.feed",
        "structured all the way down"
    );
    assert_eq!(s["lag"][0]["missingIntervals"], 3);
    assert_eq!(s["lag"][0]["completeThrough"], "2026-01-02T00:00:00Z");
}

#[test]
fn status_check_fails_only_for_failed_intervals_or_an_erroring_last_tick() {
    let p = feed_project();
    // never applied: healthy, and says so
    let (code, s) = status(p.path(), "2026-01-02T00:00:00Z", true);
    assert_eq!(
        (code, &s["exists"], &s["healthy"]),
        (0, &Value::Bool(false), &Value::Bool(true))
    );

    apply_at(p.path(), "2026-01-02T00:00:00Z");
    std::fs::write(p.path().join("FAIL"), "").unwrap();
    let (code, v) = run_json(p.path(), "2026-01-04T00:00:00Z");
    assert_eq!((code, v["outcome"].as_str()), (1, Some("error")), "{v}");
    assert_eq!(v["error"]["model"], "raw.feed");
    assert_eq!(
        v["error"]["interval"],
        "[2026-01-02T00:00:00Z, 2026-01-03T00:00:00Z)"
    );
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("injected failure"));

    let (code, s) = status(p.path(), "2026-01-04T00:00:00Z", true);
    assert_eq!(code, 1, "unhealthy: {s}");
    assert_eq!(s["healthy"], false);
    assert_eq!(
        s["failedIntervals"],
        serde_json::json!([{"model": "raw.feed", "start": "2026-01-02T00:00:00Z", "end": "2026-01-03T00:00:00Z"}])
    );
    assert_eq!(s["problems"].as_array().unwrap().len(), 2, "{s}");
    // without --check the same report exits 0
    assert_eq!(status(p.path(), "2026-01-04T00:00:00Z", false).0, 0);
    let human = efmesh(p.path())
        .env("EFMESH_NOW", "2026-01-04T00:00:00Z")
        .args(["status", "prod", "--check"])
        .output()
        .unwrap();
    assert_eq!(human.status.code(), Some(1));
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains("UNHEALTHY") && text.contains("failed: raw.feed [2026-01-02T00:00:00Z"),
        "{text}"
    );

    // the cause goes away: the next tick recomputes the failed interval and health returns
    std::fs::remove_file(p.path().join("FAIL")).unwrap();
    let (code, v) = run_json(p.path(), "2026-01-04T00:00:00Z");
    assert_eq!((code, v["outcome"].as_str()), (0, Some("ok")), "{v}");
    assert_eq!(
        v["processed"][0]["batches"][0]["start"],
        "2026-01-02T00:00:00Z"
    );
    let (code, s) = status(p.path(), "2026-01-04T00:00:00Z", true);
    assert_eq!((code, &s["healthy"]), (0, &Value::Bool(true)), "{s}");
    assert_eq!(s["failedIntervals"], serde_json::json!([]));
}

#[test]
fn apply_and_restate_share_the_lock() {
    let p = feed_project();
    apply_at(p.path(), "2026-01-02T00:00:00Z");
    // a long backfill (two months of days), so it still holds the lock while we knock
    let mut child = spawn_run(p.path(), "2026-03-01T00:00:00Z", "120");
    wait_until_computing(&mut child);
    let out = efmesh(p.path())
        .env("EFMESH_NOW", "2026-03-01T00:00:00Z")
        .args(["apply", "prod", "--yes"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("is locked by"));
    let out = efmesh(p.path())
        .args([
            "restate",
            "prod",
            "--model",
            "raw.feed",
            "--from",
            "2026-01-01",
            "--to",
            "2026-01-02",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Every sample of a textfile: (name, labels, value), parsed with a Prometheus text-format parser.
fn samples(path: &Path) -> Vec<(String, std::collections::BTreeMap<String, String>, f64)> {
    let text = std::fs::read_to_string(path).unwrap();
    // promtool, where Debian's prometheus package is installed, is the reference checker
    if let Ok(out) = StdCommand::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::fs::File::open(path).unwrap())
        .output()
    {
        assert!(
            out.status.success(),
            "promtool rejects the textfile:\n{}\n{text}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).unwrap();
    for s in &scrape.samples {
        assert!(
            scrape.docs.contains_key(&s.metric) || s.metric.ends_with("_total"),
            "{} has HELP",
            s.metric
        );
    }
    scrape
        .samples
        .into_iter()
        .map(|s| {
            let v = match s.value {
                prometheus_parse::Value::Counter(v)
                | prometheus_parse::Value::Gauge(v)
                | prometheus_parse::Value::Untyped(v) => v,
                other => panic!("unexpected {other:?}"),
            };
            let labels = s
                .labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            (s.metric, labels, v)
        })
        .collect()
}

fn value(
    all: &[(String, std::collections::BTreeMap<String, String>, f64)],
    name: &str,
    labels: &[(&str, &str)],
) -> Option<f64> {
    all.iter()
        .find(|(n, l, _)| {
            n == name
                && labels
                    .iter()
                    .all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|(_, _, v)| *v)
}

#[test]
fn metrics_textfiles_are_written_for_every_outcome_from_the_executor_s_registry() {
    let p = project(&[(
        "models/feed.sql",
        "MODEL (name raw.feed, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, batch_size 2), start '2026-01-01', cron '@daily', columns (id BIGINT, ts TIMESTAMP), audits (not_null(columns := (id))));
SELECT range AS id, TIMESTAMP '2026-01-01' + to_hours(range) AS ts FROM range(2000) WHERE ts >= @start AND ts < @end",
    )]);
    let prom = p.path().join("metrics/efmesh.prom");
    std::fs::create_dir_all(prom.parent().unwrap()).unwrap();
    let prom_arg = prom.to_str().unwrap();
    efmesh(p.path())
        .env("EFMESH_NOW", "2026-01-06T00:00:00Z")
        .args(["apply", "prod", "--yes", "--metrics", prom_arg])
        .assert()
        .success();
    let m = samples(&prom);
    let me = [("model", "raw.feed"), ("env", "prod")];
    assert_eq!(
        value(&m, "efmesh_intervals_done_total", &me),
        Some(5.0),
        "five days: {m:?}"
    );
    assert_eq!(value(&m, "efmesh_snapshots_built_total", &me), Some(1.0));
    // one per-batch audit for each of 3 batches, and the whole-table one
    assert_eq!(
        value(
            &m,
            "efmesh_audits_total",
            &[("model", "raw.feed"), ("env", "prod"), ("result", "passed")]
        ),
        Some(4.0)
    );
    assert!(value(&m, "efmesh_model_build_duration_seconds", &me).unwrap() > 0.0);
    assert!(
        value(
            &m,
            "efmesh_command_duration_seconds",
            &[("command", "apply"), ("env", "prod")]
        )
        .unwrap()
            > 0.0
    );
    assert_eq!(
        value(
            &m,
            "efmesh_planned_models",
            &[("env", "prod"), ("category", "added")]
        ),
        Some(1.0)
    );
    let ok_at = value(
        &m,
        "efmesh_last_run_timestamp_seconds",
        &[("command", "apply"), ("outcome", "ok")],
    )
    .unwrap();
    assert!(ok_at > 1.7e9);
    assert!(
        !p.path().join("metrics").read_dir().unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains("tmp")),
        "no temp file left"
    );

    // a tick with nothing due writes the file too
    efmesh(p.path())
        .env("EFMESH_NOW", "2026-01-06T00:00:00Z")
        .args(["run", "prod", "--metrics", prom_arg])
        .assert()
        .success();
    let m = samples(&prom);
    assert_eq!(
        value(&m, "efmesh_intervals_done_total", &me),
        None,
        "nothing done in this process"
    );
    assert!(value(
        &m,
        "efmesh_last_run_timestamp_seconds",
        &[("command", "run"), ("outcome", "ok")]
    )
    .is_some());

    // a tick that exits 2 writes it, and the last success of each command is kept
    let path = p.path().join("models/feed.sql");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("range(2000)", "range(2001)")).unwrap();
    efmesh(p.path())
        .env("EFMESH_NOW", "2026-01-07T00:00:00Z")
        .args(["run", "prod", "--metrics", prom_arg])
        .assert()
        .code(2);
    let m = samples(&prom);
    assert!(value(
        &m,
        "efmesh_last_run_timestamp_seconds",
        &[("command", "run"), ("outcome", "awaiting-human")]
    )
    .is_some());
    assert_eq!(
        value(
            &m,
            "efmesh_last_run_timestamp_seconds",
            &[("command", "apply"), ("outcome", "ok")]
        ),
        Some(ok_at)
    );
    assert_eq!(
        value(
            &m,
            "efmesh_planned_models",
            &[("env", "prod"), ("category", "breaking")]
        ),
        Some(1.0)
    );

    // an unwritable path is a warning, not a failure
    let out = efmesh(p.path())
        .env("EFMESH_NOW", "2026-01-07T00:00:00Z")
        .args(["run", "prod", "--metrics", "/nonexistent-dir/efmesh.prom"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "the tick's own outcome");
    assert!(String::from_utf8_lossy(&out.stderr).contains("metrics not written"));
}

#[test]
fn a_tick_refreshes_a_full_model_when_its_cron_comes_round() {
    let p = project(&[
        (
            "models/feed.sql",
            "MODEL (name raw.feed, kind INCREMENTAL_BY_TIME_RANGE (time_column ts), start '2026-01-01', cron '@daily', columns (id BIGINT, ts TIMESTAMP));
SELECT range AS id, TIMESTAMP '2026-01-01' + to_hours(range) AS ts FROM range(2000) WHERE ts >= @start AND ts < @end",
        ),
        (
            "models/total.sql",
            "MODEL (name mart.total, kind FULL, cron '@daily');\nSELECT count(*) AS n FROM raw.feed",
        ),
        (
            "models/weekly.sql",
            "MODEL (name mart.weekly, kind FULL, cron '0 0 * * 1');\nSELECT count(*) AS n FROM raw.feed",
        ),
    ]);
    let total = |dir: &Path, t: &str| {
        let cfg = efmesh_core::config::Config::defaults("t").engine;
        let mut e = efmesh::engine::duckdb::DuckDbEngine::open(dir, "efmesh.duckdb", &cfg).unwrap();
        e.query_strings(&format!("SELECT n::VARCHAR FROM {t}"))
            .unwrap()[0]
            .clone()
            .unwrap()
    };
    // Friday 2026-01-02: one day of the feed
    apply_at(p.path(), "2026-01-02T00:00:00Z");
    assert_eq!(total(p.path(), "mart.total"), "24");
    // later the same day: nothing is due, the FULL models are not rebuilt
    let (code, v) = run_json(p.path(), "2026-01-02T12:00:00Z");
    assert_eq!((code, &v["built"]), (0, &serde_json::json!([])), "{v}");
    // Sunday: two more days of the feed, and the daily mart's cron came round; the weekly
    // one (Mondays) did not
    let (code, v) = run_json(p.path(), "2026-01-04T01:00:00Z");
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["built"], serde_json::json!(["mart.total"]), "{v}");
    assert_eq!(total(p.path(), "mart.total"), "72");
    assert_eq!(total(p.path(), "mart.weekly"), "24");
    // Monday: the weekly one too
    let (_, v) = run_json(p.path(), "2026-01-05T00:30:00Z");
    let mut built: Vec<&str> = v["built"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    built.sort();
    assert_eq!(built, ["mart.total", "mart.weekly"], "{v}");
    assert_eq!(total(p.path(), "mart.weekly"), "96");
}
