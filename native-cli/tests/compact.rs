//! `efmesh compact`: real parquet files written by DuckDB, merged per settled partition.

mod common;

use common::{efmesh, json, project, walk};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// efmesh's clock for every test: partitions dated 2026-03-05 or later are "today or later".
const NOW: &str = "2026-03-05T12:00:00Z";

fn model(policy: &str) -> String {
    format!(
        "MODEL (\n  name raw.events,\n  kind EXTERNAL (path 'landing/**/*.parquet', format parquet, hive_partitioning true, union_by_name true),\n  columns (event_id BIGINT, received_at TIMESTAMP, payload VARCHAR, day DATE),\n  maintenance ({policy})\n);\n"
    )
}

const POLICY: &str = "partition_key day, unique_key (event_id), order received_at, grace 10";

fn setup(policy: &str) -> tempfile::TempDir {
    let m = model(policy);
    project(&[("models/raw/events.sql", m.as_str())])
}

fn instant(s: &str) -> SystemTime {
    let t = efmesh::core::time::parse_instant(s).unwrap().and_utc();
    SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(t.timestamp() as u64)
}

fn set_mtime(path: &Path, at: &str) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(instant(at))
        .unwrap();
}

/// Write the rows of `select` to `rel` (under the project) as parquet, with mtime `at`.
fn write(db: &duckdb::Connection, root: &Path, rel: &str, select: &str, at: &str) -> PathBuf {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    db.execute_batch(&format!(
        "COPY ({select}) TO '{}' (FORMAT parquet)",
        p.display()
    ))
    .unwrap();
    set_mtime(&p, at);
    p
}

/// `n` rows of ids `from..from+n`, received one second apart from `base`, with `payload`.
fn rows(from: i64, n: i64, base: &str, payload: &str) -> String {
    format!(
        "SELECT CAST(i AS BIGINT) AS event_id, TIMESTAMP '{base}' + to_seconds(CAST(i AS BIGINT)) AS received_at, '{payload}' AS payload FROM range({from}, {}) AS r(i)",
        from + n
    )
}

/// File names in a directory, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Every file under `dir`: relative path → (bytes, mtime).
fn tree(dir: &Path) -> BTreeMap<String, (Vec<u8>, SystemTime)> {
    let mut out = BTreeMap::new();
    for e in walk(dir) {
        let meta = std::fs::metadata(&e).unwrap();
        out.insert(
            e.strip_prefix(dir).unwrap().display().to_string(),
            (std::fs::read(&e).unwrap(), meta.modified().unwrap()),
        );
    }
    out
}

fn query(db: &duckdb::Connection, sql: &str) -> Vec<String> {
    let mut stmt = db
        .prepare(&format!("SELECT CAST(x AS VARCHAR) FROM ({sql}) AS t(x)"))
        .unwrap();
    stmt.query_map([], |r| r.get::<_, Option<String>>(0))
        .unwrap()
        .map(|v| v.unwrap().unwrap_or_else(|| "NULL".into()))
        .collect()
}

fn count(db: &duckdb::Connection, glob: &Path) -> i64 {
    query(
        db,
        &format!(
            "SELECT count(*) FROM read_parquet('{}', union_by_name = true)",
            glob.display()
        ),
    )[0]
    .parse()
    .unwrap()
}

fn compact(dir: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
    let mut c = efmesh(dir);
    c.env("EFMESH_NOW", NOW).arg("compact").args(args);
    c.assert()
}

#[test]
fn two_hundred_small_files_become_one_keeping_the_first_arrival_of_each_key() {
    let p = setup(POLICY);
    let root = p.path();
    let db = duckdb::Connection::open_in_memory().unwrap();
    let part = "landing/day=2026-03-01";
    // 180 files of 5 fresh events each: ids 0..900
    for i in 0..180 {
        write(
            &db,
            root,
            &format!("{part}/part-{i:03}.parquet"),
            &rows(i * 5, 5, "2026-03-01 00:00:00", "first"),
            "2026-03-02T00:00:00Z",
        );
    }
    // 19 files redeliver ids 0..95 later the same day: duplicates to drop
    for i in 180..199 {
        write(
            &db,
            root,
            &format!("{part}/part-{i:03}.parquet"),
            &rows((i - 180) * 5, 5, "2026-03-01 18:00:00", "again"),
            "2026-03-02T00:00:00Z",
        );
    }
    // the last file (by name) holds ids 95..100 received *before* the copies in part-019:
    // `order received_at` decides, not the file order
    write(
        &db,
        root,
        &format!("{part}/part-199.parquet"),
        &rows(95, 5, "2026-02-28 23:00:00", "earliest"),
        "2026-03-03T06:00:00Z",
    );
    let dir = root.join(part);
    assert_eq!(names(&dir).len(), 200);
    assert_eq!(count(&db, &dir.join("*.parquet")), 1000);

    let out = compact(root, &[]).success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        stdout.contains("compacted     raw.events  landing/day=2026-03-01  merged 200 file(s) into 1, 100 duplicate row(s) by (event_id)"),
        "{stdout}"
    );
    assert!(stdout.contains("compact: compacted 1 partition(s) (200 file(s) into 1, 100 duplicate row(s) dropped), left 0 alone"), "{stdout}");

    // one content-addressed file
    let files = names(&dir);
    assert_eq!(files.len(), 1, "{files:?}");
    let bytes = std::fs::read(dir.join(&files[0])).unwrap();
    let hash = efmesh::core::fingerprint::content_hash(&bytes);
    assert_eq!(files[0], format!("data-{}.parquet", &hash[..8]));
    // it keeps the newest mtime of the files it replaced
    assert_eq!(
        std::fs::metadata(dir.join(&files[0]))
            .unwrap()
            .modified()
            .unwrap(),
        instant("2026-03-03T06:00:00Z")
    );

    // every event once; the first arrival of each wins
    let merged = dir.join(&files[0]);
    let by_payload = query(
        &db,
        &format!("SELECT payload || '=' || count(*) FROM read_parquet('{}') GROUP BY payload ORDER BY payload", merged.display()),
    );
    assert_eq!(by_payload, ["earliest=5", "first=895"]);
    assert_eq!(count(&db, &merged), 900);
    assert_eq!(
        query(
            &db,
            &format!(
                "SELECT count(DISTINCT event_id) FROM read_parquet('{}')",
                merged.display()
            )
        ),
        ["900"]
    );
    // rows come out ordered by `order`
    assert_eq!(
        query(
            &db,
            &format!(
                "SELECT event_id FROM read_parquet('{}') LIMIT 1",
                merged.display()
            )
        ),
        ["95"]
    );
    // no hive column was written into the file: it stays in the directory name
    assert_eq!(
        query(&db, &format!("SELECT count(*) FROM (DESCRIBE SELECT * FROM read_parquet('{}', hive_partitioning = false)) WHERE column_name = 'day'", merged.display())),
        ["0"]
    );

    // a second run finds it already compact
    let again = compact(root, &[]).success();
    assert!(String::from_utf8_lossy(&again.get_output().stdout)
        .contains("already compact: one file, no duplicates"));
    assert_eq!(names(&dir), files);
}

#[test]
fn a_file_landing_mid_run_survives() {
    let p = setup(POLICY);
    let root = p.path();
    let db = duckdb::Connection::open_in_memory().unwrap();
    let dir = root.join("landing/day=2026-03-01");
    for i in 0..10 {
        write(
            &db,
            root,
            &format!("landing/day=2026-03-01/part-{i}.parquet"),
            &rows(i * 3, 3, "2026-03-01 01:00:00", "early"),
            "2026-03-02T00:00:00Z",
        );
    }
    let listed = names(&dir);
    let project = efmesh::Efmesh::open(root).unwrap();
    let opts = efmesh::CompactOptions {
        now: Some(efmesh::core::time::parse_instant(NOW).unwrap().and_utc()),
        ..Default::default()
    };
    let mut calls = 0;
    let late = dir.join("part-late.parquet");
    let report = project
        .compact_with_hook(&opts, &mut |d: &Path| {
            calls += 1;
            // a writer lands a file after the listing, before the deletions; one of its rows
            // repeats a merged key
            db.execute_batch(&format!(
                "COPY ({}) TO '{}' (FORMAT parquet)",
                rows(29, 4, "2026-03-01 23:00:00", "late"),
                d.join("part-late.parquet").display()
            ))
            .unwrap();
        })
        .unwrap();
    assert_eq!(calls, 1);
    let r = &report.partitions[0];
    assert_eq!(
        (r.files_before, r.files_after, r.rows_before, r.rows_after),
        (10, 1, Some(30), Some(30))
    );
    let now_there = names(&dir);
    assert_eq!(now_there.len(), 2, "{now_there:?}");
    assert!(now_there.contains(&"part-late.parquet".to_string()));
    assert!(
        listed.iter().all(|f| !now_there.contains(f)),
        "every listed file was deleted"
    );
    assert_eq!(count(&db, &late), 4);
    assert_eq!(count(&db, &dir.join("*.parquet")), 34);

    // the next run (once the late file has rested) merges it too, deduplicating the repeat
    set_mtime(&late, "2026-03-02T01:00:00Z");
    let report = project.compact(&opts).unwrap();
    let r = &report.partitions[0];
    assert_eq!(
        (r.files_before, r.rows_before, r.rows_after),
        (2, Some(34), Some(33))
    );
    assert_eq!(names(&dir).len(), 1);
}

#[test]
fn partitions_dated_today_or_later_are_never_touched() {
    let p = setup(POLICY);
    let root = p.path();
    let db = duckdb::Connection::open_in_memory().unwrap();
    for day in ["2026-03-04", "2026-03-05", "2026-03-06"] {
        for i in 0..3 {
            write(
                &db,
                root,
                &format!("landing/day={day}/part-{i}.parquet"),
                &rows(i * 2, 2, "2026-03-04 00:00:00", "x"),
                "2026-03-01T00:00:00Z",
            );
        }
    }
    let today = tree(&root.join("landing/day=2026-03-05"));
    let tomorrow = tree(&root.join("landing/day=2026-03-06"));
    let out = compact(root, &["--json"]).success();
    let v = json(&out.get_output().stdout);
    let parts = v["partitions"].as_array().unwrap();
    let summary: Vec<(String, String, String)> = parts
        .iter()
        .map(|p| {
            (
                p["path"].as_str().unwrap().into(),
                p["action"].as_str().unwrap().into(),
                p["reasonCode"].as_str().unwrap_or("-").into(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "landing/day=2026-03-04".to_string(),
                "compacted".to_string(),
                "-".to_string()
            ),
            (
                "landing/day=2026-03-05".into(),
                "left alone".into(),
                "today-or-later".into()
            ),
            (
                "landing/day=2026-03-06".into(),
                "left alone".into(),
                "today-or-later".into()
            ),
        ]
    );
    assert_eq!(
        parts[1]["reason"],
        "dated 2026-03-05, today or later (today is 2026-03-05 UTC)"
    );
    assert_eq!(names(&root.join("landing/day=2026-03-04")).len(), 1);
    assert_eq!(
        tree(&root.join("landing/day=2026-03-05")),
        today,
        "not a byte or an mtime changed"
    );
    assert_eq!(tree(&root.join("landing/day=2026-03-06")), tomorrow);
}

#[test]
fn the_grace_period_waits_for_the_newest_file_to_rest() {
    let p = setup(POLICY);
    let root = p.path();
    let db = duckdb::Connection::open_in_memory().unwrap();
    // 03-02: settled for hours; 03-03: its newest file landed 5 minutes before NOW
    for (day, newest) in [
        ("2026-03-02", "2026-03-05T10:00:00Z"),
        ("2026-03-03", "2026-03-05T11:55:00Z"),
    ] {
        write(
            &db,
            root,
            &format!("landing/day={day}/a.parquet"),
            &rows(0, 2, "2026-03-02 00:00:00", "x"),
            "2026-03-04T00:00:00Z",
        );
        write(
            &db,
            root,
            &format!("landing/day={day}/b.parquet"),
            &rows(2, 2, "2026-03-02 00:00:00", "x"),
            newest,
        );
    }
    let out = compact(root, &["--json"]).success();
    let v = json(&out.get_output().stdout);
    assert_eq!(v["partitions"][0]["action"], "compacted");
    assert_eq!(v["partitions"][1]["action"], "left alone");
    assert_eq!(v["partitions"][1]["reasonCode"], "within-grace");
    assert_eq!(
        v["partitions"][1]["reason"],
        "newest file is 5 min old, within the grace period of 10 min"
    );
    assert_eq!(
        v["partitions"][1]["rowsBefore"],
        serde_json::Value::Null,
        "an unsettled partition is not read"
    );
    assert_eq!(
        names(&root.join("landing/day=2026-03-03")),
        ["a.parquet", "b.parquet"]
    );
    // --grace overrides the policy
    let out = compact(root, &["--json", "--grace", "3"]).success();
    let v = json(&out.get_output().stdout);
    assert_eq!(v["partitions"][1]["action"], "compacted");
    assert_eq!(names(&root.join("landing/day=2026-03-03")).len(), 1);
}

#[test]
fn union_by_name_keeps_columns_the_policy_does_not_name() {
    let p = setup(POLICY);
    let root = p.path();
    let db = duckdb::Connection::open_in_memory().unwrap();
    let at = "2026-03-02T00:00:00Z";
    // generation 1
    write(
        &db,
        root,
        "landing/day=2026-03-01/gen1.parquet",
        &rows(0, 3, "2026-03-01 00:00:00", "g1"),
        at,
    );
    // generation 2: other column order, two more columns, one id repeated later
    write(
        &db,
        root,
        "landing/day=2026-03-01/gen2.parquet",
        "SELECT 'v2' AS app_version, TIMESTAMP '2026-03-01 05:00:00' + to_seconds(CAST(i AS BIGINT)) AS received_at, CAST(i AS BIGINT) AS event_id, 'g2' AS payload, i * 10 AS score FROM range(2, 5) AS r(i)",
        at,
    );
    compact(root, &[]).success();
    let dir = root.join("landing/day=2026-03-01");
    let files = names(&dir);
    assert_eq!(files.len(), 1);
    let f = dir.join(&files[0]);
    let cols = query(&db, &format!("SELECT column_name FROM (DESCRIBE SELECT * FROM read_parquet('{}', hive_partitioning = false)) ORDER BY column_name", f.display()));
    assert_eq!(
        cols,
        ["app_version", "event_id", "payload", "received_at", "score"]
    );
    let got = query(
        &db,
        &format!("SELECT event_id || ':' || payload || ':' || coalesce(app_version, 'NULL') || ':' || coalesce(CAST(score AS VARCHAR), 'NULL') FROM read_parquet('{}') ORDER BY event_id", f.display()),
    );
    assert_eq!(
        got,
        [
            "0:g1:NULL:NULL",
            "1:g1:NULL:NULL",
            "2:g1:NULL:NULL",
            "3:g2:v2:30",
            "4:g2:v2:40"
        ]
    );
}

#[test]
fn without_a_unique_key_files_are_merged_without_deduplication() {
    let p = setup("partition_key day, grace 0");
    let root = p.path();
    let db = duckdb::Connection::open_in_memory().unwrap();
    write(
        &db,
        root,
        "landing/day=2026-03-01/a.parquet",
        &rows(0, 3, "2026-03-01 00:00:00", "a"),
        "2026-03-02T00:00:00Z",
    );
    write(
        &db,
        root,
        "landing/day=2026-03-01/b.parquet",
        &rows(0, 3, "2026-03-01 00:00:00", "b"),
        "2026-03-02T00:00:00Z",
    );
    let out = compact(root, &["--json"]).success();
    let v = json(&out.get_output().stdout);
    assert_eq!(v["partitions"][0]["rowsAfter"], 6);
    let dir = root.join("landing/day=2026-03-01");
    // file order is kept: a's rows, then b's
    let f = dir.join(&names(&dir)[0]);
    assert_eq!(
        query(
            &db,
            &format!(
                "SELECT string_agg(payload, '') FROM read_parquet('{}')",
                f.display()
            )
        ),
        ["aaabbb"]
    );
}

#[test]
fn dry_run_changes_nothing_and_says_what_would_happen() {
    let p = setup(POLICY);
    let root = p.path();
    let db = duckdb::Connection::open_in_memory().unwrap();
    for i in 0..4 {
        write(
            &db,
            root,
            &format!("landing/day=2026-03-01/p{i}.parquet"),
            &rows(i, 2, "2026-03-01 00:00:00", "x"),
            "2026-03-02T00:00:00Z",
        );
    }
    let before = tree(&root.join("landing"));
    let out = compact(root, &["--dry-run"]).success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(stdout.contains("would compact raw.events  landing/day=2026-03-01  would merge 4 file(s) into 1, 3 duplicate row(s) by (event_id)"), "{stdout}");
    assert!(stdout.contains("nothing was changed (dry run)"), "{stdout}");
    let out = compact(root, &["--dry-run", "--json"]).success();
    let v = json(&out.get_output().stdout);
    assert_eq!(v["dryRun"], true);
    assert_eq!(v["partitions"][0]["action"], "would compact");
    assert_eq!(
        (
            v["partitions"][0]["rowsBefore"].as_u64(),
            v["partitions"][0]["rowsAfter"].as_u64()
        ),
        (Some(8), Some(5))
    );
    assert_eq!(
        tree(&root.join("landing")),
        before,
        "no file was written, renamed, deleted or touched"
    );
}

#[test]
fn compact_json_shape() {
    let p = setup(POLICY);
    let root = p.path();
    let db = duckdb::Connection::open_in_memory().unwrap();
    let old = "2026-03-02T00:00:00Z";
    // compacted, with duplicates
    write(
        &db,
        root,
        "landing/day=2026-03-01/a.parquet",
        &rows(0, 3, "2026-03-01 00:00:00", "x"),
        old,
    );
    write(
        &db,
        root,
        "landing/day=2026-03-01/b.parquet",
        &rows(2, 3, "2026-03-01 00:00:00", "x"),
        old,
    );
    // already compact
    write(
        &db,
        root,
        "landing/day=2026-03-02/data.parquet",
        &rows(0, 4, "2026-03-02 00:00:00", "x"),
        old,
    );
    // within grace
    write(
        &db,
        root,
        "landing/day=2026-03-03/a.parquet",
        &rows(0, 1, "2026-03-03 00:00:00", "x"),
        "2026-03-05T11:58:00Z",
    );
    write(
        &db,
        root,
        "landing/day=2026-03-03/b.parquet",
        &rows(1, 1, "2026-03-03 00:00:00", "x"),
        old,
    );
    // today
    write(
        &db,
        root,
        "landing/day=2026-03-05/a.parquet",
        &rows(0, 1, "2026-03-05 00:00:00", "x"),
        old,
    );
    write(
        &db,
        root,
        "landing/day=2026-03-05/b.parquet",
        &rows(1, 1, "2026-03-05 00:00:00", "x"),
        old,
    );
    // a partition value that is not a date, and files outside any `day=` directory
    write(
        &db,
        root,
        "landing/day=latest/a.parquet",
        &rows(0, 1, "2026-03-01 00:00:00", "x"),
        old,
    );
    write(
        &db,
        root,
        "landing/misc/a.parquet",
        &rows(0, 1, "2026-03-01 00:00:00", "x"),
        old,
    );
    // not matched by the glob: never listed
    std::fs::write(root.join("landing/day=2026-03-01/_SUCCESS"), "").unwrap();
    let out = compact(root, &["--json"]).success();
    let v = json(&out.get_output().stdout);
    insta::assert_json_snapshot!("compact_json", v, {
        ".partitions[].file" => insta::dynamic_redaction(|v, _| {
            if v.as_str().is_some() { "[data-<sha256:8>.parquet]".into() } else { v }
        })
    });
    assert!(root.join("landing/day=2026-03-01/_SUCCESS").exists());
}

#[test]
fn errors_name_the_object_and_say_what_to_do() {
    let m = model(POLICY);
    let p = project(&[
        ("models/raw/events.sql", m.as_str()),
        ("models/raw/users.sql", "MODEL (name raw.users, kind EXTERNAL (path 'users/*.parquet'), columns (id BIGINT));\n"),
    ]);
    let root = p.path();
    // unknown model, with a suggestion
    let out = compact(root, &["--model", "raw.event"]).code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("unknown model `raw.event`")
            && stderr.contains("did you mean `raw.events`?"),
        "{stderr}"
    );
    // a model without a policy
    let out = compact(root, &["--model", "raw.users", "--json"]).code(1);
    let v = json(&out.get_output().stdout);
    assert_eq!(v["error"]["code"], "no-maintenance");
    assert_eq!(
        v["error"]["message"],
        "`raw.users` has no `maintenance` policy, so it cannot be compacted"
    );
    assert!(v["error"]["help"]
        .as_str()
        .unwrap()
        .contains("maintenance (partition_key day"));
    // an unreadable file: the partition is left as it was
    let db = duckdb::Connection::open_in_memory().unwrap();
    write(
        &db,
        root,
        "landing/day=2026-03-01/a.parquet",
        &rows(0, 2, "2026-03-01 00:00:00", "x"),
        "2026-03-02T00:00:00Z",
    );
    let bad = root.join("landing/day=2026-03-01/b.parquet");
    std::fs::write(&bad, "not parquet").unwrap();
    set_mtime(&bad, "2026-03-02T00:00:00Z");
    let before = tree(&root.join("landing"));
    let out = compact(root, &[]).code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("compacting `raw.events` partition `landing/day=2026-03-01` failed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("b.parquet"),
        "the engine's message names the file: {stderr}"
    );
    assert!(
        stderr.contains("help: the partition's files were not deleted"),
        "{stderr}"
    );
    assert_eq!(tree(&root.join("landing")), before);
    // no policy anywhere
    let p = project(&[(
        "models/raw/users.sql",
        "MODEL (name raw.users, kind EXTERNAL (path 'users/*.parquet'), columns (id BIGINT));\n",
    )]);
    let out = compact(p.path(), &[]).code(1);
    assert!(String::from_utf8_lossy(&out.get_output().stderr)
        .contains("no model declares a `maintenance` policy"));
}

#[test]
fn a_policy_is_checked_where_it_is_written() {
    let p = project(&[(
        "models/m.sql",
        "MODEL (\n  name m.full,\n  kind FULL,\n  maintenance (partition_key day, unique_kye (id))\n);\nSELECT 1 AS id",
    )]);
    let out = efmesh(p.path()).arg("check").assert().code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("unknown property `maintenance unique_kye`"),
        "{stderr}"
    );
    assert!(stderr.contains("models/m.sql:4:35"), "{stderr}");
    assert!(stderr.contains("did you mean `unique_key`?"), "{stderr}");
    let p = project(&[(
        "models/m.sql",
        "MODEL (\n  name m.full,\n  kind FULL,\n  maintenance (partition_key day)\n);\nSELECT 1 AS id",
    )]);
    let out = efmesh(p.path()).arg("check").assert().code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("error[maintenance-unsupported]: `maintenance` needs an EXTERNAL model reading parquet files, not a FULL model"), "{stderr}");
    assert!(stderr.contains("models/m.sql:4:15"), "{stderr}");
}

#[test]
fn a_glob_that_would_match_temporary_files_is_refused() {
    let m = model(POLICY).replace("landing/**/*.parquet", "landing/**/*");
    let p = project(&[("models/raw/events.sql", m.as_str())]);
    let out = compact(p.path(), &[]).code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("would also match compaction's temporary files"),
        "{stderr}"
    );
    assert!(stderr.contains("end the glob with `*.parquet`"), "{stderr}");
}
