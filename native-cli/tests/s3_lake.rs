//! The lake in an S3-compatible object store (issue 16), against a real server on loopback
//! (moto's server mode, started by `scripts/test`): apply, promotion, a new interval, restate,
//! the manifest read back, the janitor's deletions, and a secret that never leaks.

mod common;
use common::*;
use efmesh::engine::duckdb::DuckDbEngine;
use serde_json::Value;
use std::path::Path;

const SECRET: &str = "efmesh-s3-secret-77c0e1b95a";

fn config(bucket: &str) -> String {
    let endpoint = s3_endpoint();
    let host = endpoint.trim_start_matches("http://");
    format!(
        "[project]\nname = \"t\"\nstart = \"2026-01-01\"\n[engine]\nduckdb = \"efmesh.duckdb\"\nextensions = [\"httpfs\"]\n[engine.settings]\nextension_directory = \"{}\"\n[[engine.secrets]]\nname = \"lake\"\ntype = \"s3\"\nkey_id = \"efmesh-test\"\nsecret = \"${{EFMESH_TEST_S3_SECRET}}\"\nregion = \"us-east-1\"\nendpoint = \"{host}\"\nurl_style = \"path\"\nuse_ssl = false\n[lake]\npath = \"s3://{bucket}/lake\"\nsecret = \"lake\"\n",
        duckdb_extensions()
    )
}

const DAILY: &str = "MODEL (name m.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, batch_size 1), target parquet, start '2026-01-01', cron '@daily');\nSELECT t.ts, 1 AS v FROM generate_series(CAST(@start AS TIMESTAMP), CAST(@end AS TIMESTAMP) - INTERVAL 1 HOUR, INTERVAL 1 HOUR) AS t(ts)\n";

fn s3_project(bucket: &str) -> tempfile::TempDir {
    project(&[
        ("efmesh.toml", &config(bucket)),
        ("models/daily.sql", DAILY),
        (
            "models/total.sql",
            "MODEL (name m.total, kind FULL, cron '@daily');\nSELECT count(*) AS n FROM m.daily\n",
        ),
    ])
}

fn at(dir: &Path, now: &str, args: &[&str]) -> std::process::Output {
    let out = efmesh(dir)
        .env("EFMESH_NOW", now)
        .env("EFMESH_TEST_S3_SECRET", SECRET)
        .args(args)
        .output()
        .unwrap();
    for stream in [&out.stdout, &out.stderr] {
        assert!(
            !String::from_utf8_lossy(stream).contains(SECRET),
            "efmesh {args:?} printed the secret"
        );
    }
    out
}

fn ok(dir: &Path, now: &str, args: &[&str]) -> std::process::Output {
    let out = at(dir, now, args);
    assert!(
        out.status.success(),
        "efmesh {args:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The first column of `sql`, through an engine set up as the project's (httpfs, secret).
fn query(dir: &Path, sql: &str) -> Vec<String> {
    engine(dir)
        .query_strings(sql)
        .unwrap()
        .into_iter()
        .map(Option::unwrap_or_default)
        .collect()
}

/// Run `sql` through an engine set up as the project's.
fn execute(dir: &Path, sql: &str) {
    use efmesh::engine::Engine as _;
    engine(dir).execute("test", sql).unwrap();
}

/// The project's DuckDB, set up from its `efmesh.toml` (httpfs, the secret).
fn engine(dir: &Path) -> DuckDbEngine {
    let text = std::fs::read_to_string(dir.join("efmesh.toml")).unwrap();
    let env = |n: &str| (n == "EFMESH_TEST_S3_SECRET").then(|| SECRET.to_string());
    let cfg = efmesh_core::config::Config::parse("efmesh.toml", &text, &env).unwrap();
    DuckDbEngine::open(dir, "efmesh.duckdb", &cfg.engine).unwrap()
}

/// The `fp=` folders of `m.daily` in the bucket.
fn versions(bucket: &str) -> Vec<String> {
    let mut v: Vec<String> = s3_keys(bucket, "lake/m/daily/")
        .iter()
        .filter_map(|k| k.split('/').nth(3).map(str::to_string))
        .collect();
    v.dedup();
    v
}

#[test]
fn a_lake_in_s3_applies_promotes_runs_restates_and_is_collected() {
    let bucket = s3_bucket("lake");
    let p = s3_project(&bucket);
    ok(p.path(), "2026-01-06T00:00:00Z", &["apply", "dev", "--yes"]);
    assert!(
        !p.path().join("lake").exists(),
        "nothing is written to a local lake folder"
    );
    assert_eq!(
        query(p.path(), "SELECT CAST(n AS VARCHAR) FROM dev__m.total"),
        ["120"]
    );
    assert_eq!(
        query(
            p.path(),
            "SELECT CAST(count(*) AS VARCHAR) FROM dev__m.daily"
        ),
        ["120"]
    );
    let keys = s3_keys(&bucket, "lake/");
    let fp = versions(&bucket);
    assert_eq!(fp.len(), 1, "{keys:?}");
    assert_eq!(
        keys.iter().filter(|k| k.ends_with(".parquet")).count(),
        5,
        "one file per day: {keys:?}"
    );
    // the manifest, read back from the bucket: valid, and naming only objects that exist
    let manifest_key = format!("lake/m/daily/{}/manifest.json", fp[0]);
    assert!(keys.contains(&manifest_key), "{keys:?}");
    let text = query(
        p.path(),
        &format!("SELECT content FROM read_text('s3://{bucket}/{manifest_key}')"),
    );
    let manifest: Value = serde_json::from_str(&text[0]).unwrap();
    assert_valid_manifest(&manifest);
    let files = manifest["files"].as_array().unwrap();
    let rows: u64 = files.iter().map(|f| f["rows"].as_u64().unwrap()).sum();
    assert_eq!(rows, 120);
    for f in files {
        let key = format!("lake/m/daily/{}/{}", fp[0], f["path"].as_str().unwrap());
        assert!(keys.contains(&key), "{key} is not in the bucket: {keys:?}");
    }

    // promotion uploads no data: only prod's page of the lake (`[lake.index]`)
    ok(
        p.path(),
        "2026-01-06T00:00:00Z",
        &["apply", "prod", "--yes"],
    );
    let mut with_page = keys.clone();
    with_page.insert(0, "lake/index.html".to_string());
    assert_eq!(s3_keys(&bucket, "lake/"), with_page);
    assert_eq!(
        query(p.path(), "SELECT CAST(n AS VARCHAR) FROM m.total"),
        ["120"]
    );

    // a new interval, then a restated one: whole days, never a partial file
    ok(p.path(), "2026-01-07T00:00:00Z", &["run", "dev"]);
    assert_eq!(
        query(p.path(), "SELECT CAST(n AS VARCHAR) FROM dev__m.total"),
        ["144"]
    );
    ok(
        p.path(),
        "2026-01-07T00:00:00Z",
        &[
            "restate",
            "dev",
            "--model",
            "m.daily",
            "--from",
            "2026-01-02T00:00:00Z",
            "--to",
            "2026-01-03T00:00:00Z",
        ],
    );
    assert_eq!(
        query(
            p.path(),
            "SELECT CAST(count(*) AS VARCHAR) FROM dev__m.daily"
        ),
        ["144"]
    );
    let status = serde_json::from_slice::<Value>(
        &ok(
            p.path(),
            "2026-01-07T00:00:00Z",
            &["status", "dev", "--deep", "--json"],
        )
        .stdout,
    )
    .unwrap();
    assert_eq!(status["healthy"], true, "{status}");
    assert_eq!(status["mismatches"], serde_json::json!([]), "{status}");

    // a changed model: a new version; once no environment serves the old one, the janitor
    // deletes its objects
    std::fs::write(
        p.path().join("models/daily.sql"),
        DAILY.replace("1 AS v", "2 AS v"),
    )
    .unwrap();
    for env in ["dev", "prod"] {
        ok(p.path(), "2026-01-07T00:00:00Z", &["apply", env, "--yes"]);
    }
    assert_eq!(
        versions(&bucket).len(),
        2,
        "{:?}",
        s3_keys(&bucket, "lake/")
    );
    ok(p.path(), "2026-01-07T00:00:00Z", &["janitor", "--ttl", "0"]);
    let left = versions(&bucket);
    assert_eq!(left.len(), 1, "{:?}", s3_keys(&bucket, "lake/"));
    assert_ne!(
        left[0], fp[0],
        "the old version went, the served one stayed"
    );
    assert_eq!(
        query(p.path(), "SELECT CAST(sum(v) AS VARCHAR) FROM m.daily"),
        ["288"]
    );

    // the secret is nowhere on disk: not in the database, the state, or a log
    let mut stack = vec![p.path().to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else {
                let bytes = std::fs::read(e.path()).unwrap();
                assert!(
                    !bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()),
                    "{} holds the secret",
                    e.path().display()
                );
            }
        }
    }
}

#[test]
fn an_unreachable_bucket_is_an_error_naming_it_and_changes_nothing() {
    let p = s3_project("no-such-bucket-efmesh");
    let out = at(p.path(), "2026-01-06T00:00:00Z", &["apply", "dev", "--yes"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("no-such-bucket-efmesh"), "{stderr}");
    let plan = serde_json::from_slice::<Value>(
        &ok(p.path(), "2026-01-06T00:00:00Z", &["plan", "dev", "--json"]).stdout,
    )
    .unwrap();
    assert_eq!(plan["hasChanges"], true, "dev was never promoted: {plan}");
}

#[test]
fn an_external_model_reads_s3_and_compact_says_it_cannot_rewrite_it() {
    let bucket = s3_bucket("landing");
    let p = project(&[
        ("efmesh.toml", &config(&bucket)),
        (
            "models/events.sql",
            &format!("MODEL (\n  name raw.events,\n  kind EXTERNAL (path 's3://{bucket}/landing/*.parquet', format parquet),\n  columns (id BIGINT, day DATE),\n  maintenance (partition_key day, unique_key (id), order id)\n);\n"),
        ),
        (
            "models/n.sql",
            "MODEL (name m.n, kind FULL);\nSELECT count(*) AS n FROM raw.events\n",
        ),
    ]);
    // land a file through the engine itself (httpfs, the declared secret)
    execute(
        p.path(),
        &format!("COPY (SELECT range AS id, DATE '2026-01-01' AS day FROM range(7)) TO 's3://{bucket}/landing/a.parquet'"),
    );
    ok(p.path(), "2026-01-06T00:00:00Z", &["apply", "dev", "--yes"]);
    assert_eq!(
        query(p.path(), "SELECT CAST(n AS VARCHAR) FROM dev__m.n"),
        ["7"]
    );
    let out = at(p.path(), "2026-01-06T00:00:00Z", &["compact", "--json"]);
    assert_ne!(out.status.code(), Some(0));
    let v = json(&out.stdout);
    assert!(
        v.to_string()
            .contains("compaction rewrites local files only"),
        "{v}"
    );
    let stderr =
        String::from_utf8_lossy(&at(p.path(), "2026-01-06T00:00:00Z", &["compact"]).stderr)
            .to_string();
    assert!(stderr.contains("is not a local path"), "{stderr}");
    assert_eq!(
        s3_keys(&bucket, "landing/"),
        ["landing/a.parquet"],
        "nothing was rewritten"
    );
}

/// Kill efmesh at several moments of a backfill into S3: every manifest the bucket holds
/// names only objects that exist, readers see whole days only, and a rerun completes.
#[test]
fn a_backfill_killed_mid_upload_never_shows_readers_a_partial_version() {
    let bucket = s3_bucket("killed");
    let p = s3_project(&bucket);
    std::fs::write(
        p.path().join("models/daily.sql"),
        DAILY.replace(
            "SELECT t.ts, 1 AS v FROM",
            "SELECT t.ts, 1 AS v, repeat(md5(CAST(t.ts AS VARCHAR)), 2000) AS pad FROM",
        ),
    )
    .unwrap();
    let now = "2026-03-01T00:00:00Z";
    for delay_ms in [150u64, 400, 800, 1300] {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("efmesh"))
            .current_dir(p.path())
            .env("EFMESH_NOW", now)
            .env("EFMESH_TEST_S3_SECRET", SECRET)
            .env("NO_COLOR", "1")
            .args(["apply", "dev", "--yes"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        let keys = s3_keys(&bucket, "lake/");
        for m in keys.iter().filter(|k| k.ends_with("manifest.json")) {
            let text = query(
                p.path(),
                &format!("SELECT content FROM read_text('s3://{bucket}/{m}')"),
            );
            let manifest: Value = serde_json::from_str(&text[0]).unwrap();
            let dir = m.trim_end_matches("manifest.json");
            for f in manifest["files"].as_array().unwrap() {
                let key = format!("{dir}{}", f["path"].as_str().unwrap());
                assert!(
                    keys.contains(&key),
                    "after {delay_ms} ms: {m} names missing {key}"
                );
                assert_eq!(f["rows"].as_u64().unwrap() % 24, 0, "whole days only");
            }
        }
    }
    ok(p.path(), now, &["apply", "dev", "--yes"]);
    assert_eq!(
        query(
            p.path(),
            "SELECT CAST(count(*) AS VARCHAR) FROM dev__m.daily"
        ),
        [(59 * 24).to_string()]
    );
    assert_eq!(
        query(p.path(), "SELECT CAST(n AS VARCHAR) FROM dev__m.total"),
        [(59 * 24).to_string()]
    );
}

/// An object store that cannot be reached stops a plan with an error naming it: it is never
/// taken for lost physics, which would void the ledger and rebuild every version.
#[test]
fn an_unreachable_object_store_stops_the_plan_and_voids_nothing() {
    let bucket = s3_bucket("outage");
    let p = s3_project(&bucket);
    ok(p.path(), "2026-01-06T00:00:00Z", &["apply", "dev", "--yes"]);
    let good = std::fs::read_to_string(p.path().join("efmesh.toml")).unwrap();
    let host = s3_endpoint().trim_start_matches("http://").to_string();
    std::fs::write(
        p.path().join("efmesh.toml"),
        good.replace(&host, "127.0.0.1:1"),
    )
    .unwrap();
    for args in [&["plan", "dev", "--json"][..], &["run", "dev", "--json"]] {
        let out = at(p.path(), "2026-01-06T00:00:00Z", args);
        assert_ne!(out.status.code(), Some(0), "{args:?}");
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(
            text.contains("object-store") || text.contains("object store"),
            "{args:?}: {text}"
        );
    }
    std::fs::write(p.path().join("efmesh.toml"), good).unwrap();
    let plan: Value = serde_json::from_slice(
        &ok(p.path(), "2026-01-06T00:00:00Z", &["plan", "dev", "--json"]).stdout,
    )
    .unwrap();
    assert_eq!(plan["hasChanges"], false, "nothing was voided: {plan}");
    assert_eq!(
        query(p.path(), "SELECT CAST(n AS VARCHAR) FROM dev__m.total"),
        ["120"]
    );
}
