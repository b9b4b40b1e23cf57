//! `target parquet` through the real binary: content-addressed files per interval, manifests,
//! the physical view over the file list, and a rewrite killed with SIGKILL.

mod common;
use common::*;
use efmesh::engine::duckdb::DuckDbEngine;
use predicates::prelude::PredicateBooleanExt;
use serde_json::Value;
use std::path::{Path, PathBuf};

const CONFIG: &str = "[project]\nname = \"t\"\nstart = \"2026-01-01\"\n\n[lake]\npath = \"lake\"\n";

fn lake_project(extra_where: &str) -> tempfile::TempDir {
    let daily = format!("MODEL (name m.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, batch_size 3), start '2026-01-01', target parquet, columns (id BIGINT, ts TIMESTAMP), audits (not_null(columns := (id))));\nSELECT id, ts FROM raw.events WHERE ts >= @start AND ts < @end{extra_where}");
    project(&[
        ("efmesh.toml", CONFIG),
        (
            "models/raw.sql",
            "MODEL (name raw.events, kind FULL, target parquet, columns (id BIGINT, ts TIMESTAMP));\nSELECT range AS id, TIMESTAMP '2026-01-01' + to_hours(range) AS ts FROM range(720)",
        ),
        ("models/daily.sql", &daily),
    ])
}

fn apply_at(dir: &Path, now: &str) {
    efmesh(dir)
        .env("EFMESH_NOW", now)
        .args(["apply", "dev", "--yes"])
        .assert()
        .success();
}

fn query(dir: &Path, sql: &str) -> String {
    let cfg = efmesh_core::config::Config::defaults("t").engine;
    let mut e = DuckDbEngine::open(dir, "efmesh.duckdb", &cfg).unwrap();
    e.query_strings(sql).unwrap()[0].clone().unwrap_or_default()
}

/// The one version folder of a model, and its manifest.
fn version(dir: &Path, model: &str) -> (PathBuf, Value) {
    let (schema, table) = model.split_once('.').unwrap();
    let base = dir.join("lake").join(schema).join(table);
    let mut versions: Vec<PathBuf> = std::fs::read_dir(&base)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(versions.len(), 1, "{versions:?}");
    let v = versions.pop().unwrap();
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(v.join("manifest.json")).unwrap()).unwrap();
    (v, m)
}

/// Every file a manifest names exists, has the stated size and rows, and is named by its
/// content; returns the total rows.
fn check_files(dir: &Path, folder: &Path, manifest: &Value) -> u64 {
    let mut total = 0;
    for f in manifest["files"].as_array().unwrap() {
        let path = folder.join(f["path"].as_str().unwrap());
        let bytes = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("the manifest names a missing file {path:?}: {e}"));
        assert_eq!(bytes.len() as u64, f["bytes"].as_u64().unwrap());
        let hash = efmesh_core::fingerprint::content_hash(&bytes);
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        assert_eq!(
            name,
            format!("data-{}.parquet", &hash[..8]),
            "content-addressed"
        );
        let rows: u64 = query(
            dir,
            &format!(
                "SELECT count(*)::VARCHAR FROM read_parquet('{}')",
                path.display()
            ),
        )
        .parse()
        .unwrap();
        assert_eq!(rows, f["rows"].as_u64().unwrap());
        total += rows;
    }
    total
}

#[test]
fn parquet_versions_publish_files_per_interval_and_a_manifest() {
    let p = lake_project("");
    apply_at(p.path(), "2026-01-06T00:00:00Z");
    let (folder, m) = version(p.path(), "m.daily");
    assert!(folder.to_string_lossy().contains("lake/m/daily/fp="));
    assert_eq!(m["manifestVersion"], 1);
    assert_eq!(m["kind"], "INCREMENTAL_BY_TIME_RANGE");
    let files = m["files"].as_array().unwrap();
    assert_eq!(files.len(), 5, "one partition per interval");
    assert!(files[0]["path"]
        .as_str()
        .unwrap()
        .starts_with("interval=20260101T000000Z/data-"));
    assert_eq!(files[0]["interval"]["start"], "2026-01-01T00:00:00Z");
    assert_eq!(check_files(p.path(), &folder, &m), 120);
    assert_eq!(
        m["schema"],
        serde_json::json!([{"name": "id", "type": "BIGINT", "family": "numeric"}, {"name": "ts", "type": "TIMESTAMP", "family": "temporal"}])
    );
    assert_eq!(
        m["intervals"],
        serde_json::json!([{"start": "2026-01-01T00:00:00Z", "end": "2026-01-06T00:00:00Z"}])
    );
    assert_eq!(m["freshness"]["contiguousThrough"], "2026-01-06T00:00:00Z");
    assert_eq!(m["effective"]["completeThrough"], "2026-01-06T00:00:00Z");
    assert_eq!(m["effective"]["limitedBy"], "m.daily");
    assert_valid_manifest(&m);
    // the parquet holds exactly the model's columns (no partition columns)
    let f = folder.join(files[0]["path"].as_str().unwrap());
    assert_eq!(
        query(
            p.path(),
            &format!(
                "SELECT string_agg(column_name, ',') FROM (DESCRIBE SELECT * FROM read_parquet('{}', hive_partitioning = false))",
                f.display()
            )
        ),
        "id,ts"
    );
    // the environment reads the lake through the physical view
    assert_eq!(
        query(p.path(), "SELECT count(*)::VARCHAR FROM dev__m.daily"),
        "120"
    );
    let (raw_folder, raw) = version(p.path(), "raw.events");
    assert_eq!(raw["files"].as_array().unwrap().len(), 1);
    assert!(raw["files"][0]["interval"].is_null());
    assert_eq!(check_files(p.path(), &raw_folder, &raw), 720);
    assert_valid_manifest(&raw);

    // a second run adds one interval, and the manifest lists it
    apply_at(p.path(), "2026-01-07T00:00:00Z");
    let (_, m) = version(p.path(), "m.daily");
    assert_eq!(m["files"].as_array().unwrap().len(), 6);
    assert_eq!(m["files"][5]["interval"]["start"], "2026-01-06T00:00:00Z");
    assert_eq!(m["intervals"][0]["end"], "2026-01-07T00:00:00Z");
    assert_eq!(check_files(p.path(), &folder, &m), 144);
    assert_valid_manifest(&m);
}

#[test]
fn a_parquet_model_over_days_as_text_publishes_each_day_in_its_partition() {
    // undeclared columns: the type of `dk` comes from the engine; one partition per day, each
    // holding the day's 24 rows, found by comparing text with text ('20260101')
    let p = project(&[
        ("efmesh.toml", CONFIG),
        (
            "models/raw.sql",
            "MODEL (name raw.events, kind FULL, columns (id BIGINT, ts TIMESTAMP));\nSELECT range AS id, TIMESTAMP '2026-01-01' + to_hours(range) AS ts FROM range(720)",
        ),
        (
            "models/days.sql",
            "MODEL (name m.days, kind INCREMENTAL_BY_TIME_RANGE (time_column (dk, '%Y%m%d'), batch_size 2), start '2026-01-01', target parquet);\nSELECT id, strftime(ts, '%Y%m%d') AS dk FROM raw.events",
        ),
    ]);
    apply_at(p.path(), "2026-01-06T00:00:00Z");
    let (folder, m) = version(p.path(), "m.days");
    let files = m["files"].as_array().unwrap();
    assert_eq!(files.len(), 5, "one partition per day: {m}");
    for (k, f) in files.iter().enumerate() {
        assert_eq!(f["rows"], 24, "{f}");
        let path = folder.join(f["path"].as_str().unwrap());
        assert_eq!(
            query(
                p.path(),
                &format!(
                    "SELECT string_agg(DISTINCT dk, ',') FROM read_parquet('{}')",
                    path.display()
                )
            ),
            format!("2026010{}", k + 1)
        );
    }
    assert_eq!(
        query(p.path(), "SELECT count(*)::VARCHAR FROM dev__m.days"),
        "120"
    );
}

#[test]
fn a_rewrite_killed_at_any_step_is_repaired_without_duplicates() {
    for marker in ["renamed into place", "view repointed", "manifest written"] {
        // slow batches so the kill lands inside the rewrite
        let p = lake_project(
            " AND (SELECT count(*) FROM range(2000000) t(x) WHERE hash(x) % 5 = 1) > 0",
        );
        apply_at(p.path(), "2026-01-10T00:00:00Z");
        efmesh(p.path())
            .args([
                "restate",
                "dev",
                "--model",
                "m.daily",
                "--from",
                "2026-01-01",
                "--to",
                "2026-01-10",
            ])
            .assert()
            .success();
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("efmesh"))
            .env("EFMESH_LOCK_TTL_SECONDS", "2")
            .current_dir(p.path())
            .env("EFMESH_NOW", "2026-01-10T00:00:00Z")
            .env("NO_COLOR", "1")
            .args(["apply", "dev", "--yes", "--log-level", "debug"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines =
            std::io::BufRead::lines(std::io::BufReader::new(child.stderr.take().unwrap()));
        // the second batch's rewrite, so some partitions are already replaced
        let mut seen = 0;
        for line in lines.by_ref() {
            if line.unwrap().contains(marker) {
                seen += 1;
                if seen == 2 {
                    break;
                }
            }
        }
        child.kill().unwrap();
        // the killed holder's lock lapses after its ttl (2 s here); the next apply may take it
        std::thread::sleep(std::time::Duration::from_millis(2300));
        child.wait().unwrap();
        // whatever the kill interrupted, the manifest names only files that exist
        let (folder, m) = version(p.path(), "m.daily");
        let rows = check_files(p.path(), &folder, &m);
        assert!(rows <= 216, "{marker}: {rows}");
        // the next run repairs it: every interval once, no duplicate rows, no stray files
        apply_at(p.path(), "2026-01-10T00:00:00Z");
        let (folder, m) = version(p.path(), "m.daily");
        assert_eq!(check_files(p.path(), &folder, &m), 216, "{marker}");
        assert_eq!(
            query(
                p.path(),
                "SELECT (count(*) - count(DISTINCT id))::VARCHAR FROM dev__m.daily"
            ),
            "0",
            "{marker}"
        );
        assert_eq!(
            query(p.path(), "SELECT count(*)::VARCHAR FROM dev__m.daily"),
            "216"
        );
        let on_disk = walkdir::WalkDir::new(&folder)
            .into_iter()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_file() && e.file_name() != "manifest.json")
            .count();
        assert_eq!(on_disk, m["files"].as_array().unwrap().len(), "{marker}");
        assert_valid_manifest(&m);
    }
}

#[test]
fn parquet_targets_refuse_kinds_they_cannot_hold_at_check() {
    // refused by `check` at the `target` it names, so no apply ever starts on it
    let p = project(&[
        ("efmesh.toml", CONFIG),
        (
            "models/v.sql",
            "MODEL (name m.v, kind VIEW, target parquet);\nSELECT 1 AS x",
        ),
    ]);
    efmesh(p.path()).arg("check").assert().code(1).stderr(
        predicates::str::contains("a VIEW model cannot have `target parquet`")
            .and(predicates::str::contains("models/v.sql:1:36")),
    );
    let p = project(&[(
        "models/f.sql",
        "MODEL (name m.f, kind FULL, target parquet);\nSELECT 1 AS x",
    )]);
    efmesh(p.path()).arg("check").assert().code(1).stderr(
        predicates::str::contains("has no `[lake] path`")
            .and(predicates::str::contains("models/f.sql:1:36")),
    );
}

/// Copy an example into a temp dir (without any local state).
fn example(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = repo().join("examples").join(name);
    for e in walkdir::WalkDir::new(&src)
        .into_iter()
        .filter_map(|e| e.ok())
    {
        let rel = e.path().strip_prefix(&src).unwrap();
        let s = rel.to_string_lossy();
        if s.starts_with("lake")
            || s.starts_with(".efmesh")
            || s.starts_with("efmesh.") && !s.ends_with(".toml")
        {
            continue;
        }
        let to = dir.path().join(rel);
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&to).unwrap();
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
    dir
}

#[test]
fn the_hospital_example_publishes_a_parquet_mart_and_seed_with_manifests_and_passport() {
    let p = example("hospital");
    apply_at(p.path(), "2026-02-01T00:00:00Z");
    for model in ["med.moves", "mart.daily_admissions", "ref.departments"] {
        let (folder, m) = version(p.path(), model);
        assert_valid_manifest(&m);
        let rows = check_files(p.path(), &folder, &m);
        assert_eq!(
            rows.to_string(),
            query(
                p.path(),
                &format!("SELECT count(*)::VARCHAR FROM dev__{model}")
            ),
            "{model}: the view reads exactly the published files"
        );
    }
    let (_, moves) = version(p.path(), "med.moves");
    assert_eq!(moves["intervals"][0]["end"], "2026-02-01T00:00:00Z");
    assert_eq!(
        moves["freshness"]["contiguousThrough"],
        "2026-02-01T00:00:00Z"
    );
    let (_, seed) = version(p.path(), "ref.departments");
    assert_eq!(seed["kind"], "SEED");
    assert!(seed["schema"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["name"] == "bed_capacity" && c["family"] == "numeric"));
    // the mart reads the moves: its passport is the moves' coverage, and says so
    let (_, mart) = version(p.path(), "mart.daily_admissions");
    assert_eq!(mart["effective"]["completeThrough"], "2026-02-01T00:00:00Z");
    assert_eq!(mart["effective"]["limitedBy"], "med.moves");
    let out = efmesh(p.path())
        .args(["passport", "dev", "--json"])
        .assert()
        .success();
    let v = json(&out.get_output().stdout);
    let stays = v["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["model"] == "mart.stays")
        .unwrap()
        .clone();
    assert_eq!(stays["answerable"], "sampled");
    assert_eq!(stays["effective"]["limitedBy"], "med.moves");

    // a second run adds one interval, and the manifest lists it
    apply_at(p.path(), "2026-02-02T00:00:00Z");
    let (folder, moves) = version(p.path(), "med.moves");
    assert_eq!(moves["intervals"][0]["end"], "2026-02-02T00:00:00Z");
    assert!(moves["files"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["interval"]["start"] == "2026-02-01T00:00:00Z"));
    check_files(p.path(), &folder, &moves);
    assert_valid_manifest(&moves);
    // the mart was not rebuilt (FULL models rebuild on definition changes), but its manifest's
    // effective passport follows the moves it reads
    let (_, mart) = version(p.path(), "mart.daily_admissions");
    assert_eq!(mart["effective"]["completeThrough"], "2026-02-02T00:00:00Z");
    assert_valid_manifest(&mart);
}

/// `efmesh render <model> --json`'s SQL.
fn rendered_sql(dir: &Path, model: &str) -> String {
    let out = efmesh(dir)
        .args(["render", model, "--json"])
        .assert()
        .success();
    json(&out.get_output().stdout)["sql"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn external_file_sources_fingerprint_their_definition_never_their_content() {
    let p = project(&[
        (
            "models/src.sql",
            "MODEL (name raw.visits, kind EXTERNAL (path 'data/*.csv', format csv), columns (id BIGINT, ward VARCHAR));\n",
        ),
        (
            "models/count.sql",
            "MODEL (name mart.visits, kind FULL);\nSELECT count(*) AS n FROM raw.visits",
        ),
        ("data/a.csv", "id,ward\n1,A\n2,B\n"),
    ]);
    let sql = rendered_sql(p.path(), "mart.visits");
    assert!(sql.contains("read_csv('data/*.csv')"), "{sql}");
    assert!(
        !sql.contains("union_by_name") && !sql.contains("hive_partitioning"),
        "{sql}"
    );
    apply_at(p.path(), "2026-01-02T00:00:00Z");
    assert_eq!(
        query(p.path(), "SELECT n::VARCHAR FROM dev__mart.visits"),
        "2"
    );
    // a new file under the glob is content, not definition: nothing to plan
    std::fs::write(p.path().join("data/b.csv"), "id,ward\n3,C\n").unwrap();
    let out = efmesh(p.path())
        .env("EFMESH_NOW", "2026-01-02T00:00:00Z")
        .args(["plan", "dev", "--json"])
        .assert()
        .success();
    let plan = json(&out.get_output().stdout);
    assert!(
        plan["actions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["category"] == "unchanged"),
        "{plan}"
    );
    // options are rendered only when set
    std::fs::write(
        p.path().join("models/src.sql"),
        "MODEL (name raw.visits, kind EXTERNAL (path 'data/*.csv', format csv, union_by_name true, hive_partitioning true), columns (id BIGINT, ward VARCHAR));\n",
    )
    .unwrap();
    let sql = rendered_sql(p.path(), "mart.visits");
    assert!(
        sql.contains("read_csv('data/*.csv', union_by_name = true, hive_partitioning = true)"),
        "{sql}"
    );
}

#[test]
fn a_failed_batch_is_published_in_the_manifest() {
    // the engine raises for 2026-01-04: the apply fails there, after three published days
    let p = lake_project(
        " AND (CASE WHEN ts >= TIMESTAMP '2026-01-04' AND ts < TIMESTAMP '2026-01-05' THEN error('feed outage') ELSE true END)",
    );
    efmesh(p.path())
        .env("EFMESH_NOW", "2026-01-08T00:00:00Z")
        .args(["apply", "dev", "--yes"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("feed outage"));
    let (folder, m) = version(p.path(), "m.daily");
    assert_valid_manifest(&m);
    assert_eq!(
        m["freshness"]["failedIntervals"],
        serde_json::json!([{"start": "2026-01-04T00:00:00Z", "end": "2026-01-07T00:00:00Z"}]),
        "readers of the lake learn of the failed batch (3 days)"
    );
    // the first batch is published but, with whole-table audits still to run, never marked
    // done: the manifest claims no coverage rather than coverage nobody audited
    assert_eq!(m["freshness"]["contiguousThrough"], Value::Null);
    assert_eq!(m["intervals"], serde_json::json!([]));
    assert_eq!(
        check_files(p.path(), &folder, &m),
        72,
        "the first batch's rows, nothing of the failed one"
    );
}
