//! The DuckLake target (issue 16): `target ducklake` versions are tables in a DuckLake catalog
//! (SQLite here) attached as `efmesh_ducklake`, environments are views over them. Apply,
//! promotion without recomputation, a new interval, forward-only ALTER, DuckLake time travel
//! over an efmesh version, and the janitor dropping a version and its files.

mod common;
use common::*;
use efmesh::engine::duckdb::DuckDbEngine;
use serde_json::Value;
use std::path::Path;

fn config() -> String {
    format!(
        "[project]\nname = \"t\"\nstart = \"2026-01-01\"\n[engine]\nduckdb = \"efmesh.duckdb\"\nextensions = [\"ducklake\", \"sqlite_scanner\"]\n[engine.settings]\nextension_directory = \"{}\"\n[ducklake]\ncatalog = \"meta.sqlite\"\ndata_path = \"lake-data\"\n",
        duckdb_extensions()
    )
}

fn daily(select_extra: &str, columns_extra: &str) -> String {
    format!("MODEL (name m.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ts), target ducklake, start '2026-01-01', cron '@daily', columns (ts TIMESTAMP, v INTEGER{columns_extra}));\nSELECT t.ts, 1 AS v{select_extra} FROM generate_series(CAST(@start AS TIMESTAMP), CAST(@end AS TIMESTAMP) - INTERVAL 1 HOUR, INTERVAL 1 HOUR) AS t(ts), range(100) AS r(i)\n")
}

/// A copy of m.daily, big enough that DuckLake writes files rather than inlining rows.
const TOTAL: &str =
    "MODEL (name m.total, kind FULL, target ducklake, cron '@daily');\nSELECT ts, v FROM m.daily\n";
const REPORT: &str =
    "MODEL (name m.report, kind FULL, cron '@daily');\nSELECT count(*) AS n FROM m.total\n";

fn at(dir: &Path, now: &str, args: &[&str]) -> Value {
    let out = efmesh(dir)
        .env("EFMESH_NOW", now)
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "efmesh {args:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    json(&out.stdout)
}

fn query(dir: &Path, sql: &str) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("efmesh.toml")).unwrap();
    let cfg = efmesh_core::config::Config::parse("efmesh.toml", &text, &|_| None).unwrap();
    DuckDbEngine::open(dir, "efmesh.duckdb", &cfg.engine)
        .unwrap()
        .query_strings(sql)
        .unwrap()
        .into_iter()
        .map(Option::unwrap_or_default)
        .collect()
}

fn one(dir: &Path, sql: &str) -> String {
    query(dir, sql).remove(0)
}

/// The `_efmesh` tables of each catalog, as `catalog:table`.
fn physical(dir: &Path) -> Vec<String> {
    query(
        dir,
        "SELECT table_catalog || ':' || table_name FROM information_schema.tables WHERE table_schema = '_efmesh' ORDER BY 1",
    )
}

fn data_files(dir: &Path) -> usize {
    walkdir::WalkDir::new(dir.join("lake-data"))
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "parquet"))
        .count()
}

#[test]
fn ducklake_versions_apply_promote_run_evolve_time_travel_and_are_collected() {
    let p = project(&[
        ("efmesh.toml", &config()),
        ("models/daily.sql", &daily("", "")),
        ("models/total.sql", TOTAL),
        ("models/report.sql", REPORT),
    ]);
    at(p.path(), "2026-01-06T00:00:00Z", &["check"]);
    at(p.path(), "2026-01-06T00:00:00Z", &["apply", "dev", "--yes"]);
    assert_eq!(
        one(
            p.path(),
            "SELECT CAST(count(*) AS VARCHAR) FROM dev__m.total"
        ),
        "12000"
    );
    assert_eq!(
        one(p.path(), "SELECT CAST(n AS VARCHAR) FROM dev__m.report"),
        "12000"
    );
    let tables = physical(p.path());
    let kinds: Vec<&str> = tables
        .iter()
        .map(|t| t.rsplit_once("__").unwrap().0)
        .collect();
    assert_eq!(
        kinds,
        [
            "efmesh:m__report",
            "efmesh_ducklake:m__daily",
            "efmesh_ducklake:m__total"
        ],
        "the ducklake versions live in the catalog, the table one in the database"
    );
    assert!(p.path().join("meta.sqlite").exists());
    assert!(
        data_files(p.path()) >= 2,
        "DuckLake wrote its data under data_path"
    );
    let snapshots = || {
        one(
            p.path(),
            "SELECT CAST(count(*) AS VARCHAR) FROM efmesh_ducklake.snapshots()",
        )
    };
    let before_promotion = snapshots();

    // promotion is views only: no DuckLake snapshot, nothing recomputed
    let v = at(
        p.path(),
        "2026-01-06T00:00:00Z",
        &["apply", "prod", "--yes"],
    );
    assert!(v["built"].as_array().unwrap().is_empty(), "{v}");
    assert_eq!(snapshots(), before_promotion);
    assert_eq!(
        one(p.path(), "SELECT CAST(n AS VARCHAR) FROM m.report"),
        "12000"
    );

    // a new interval: DELETE + INSERT of one day in a catalog transaction
    let daily_table = tables[1].split(':').nth(1).unwrap().to_string();
    let version_before_run: String = one(
        p.path(),
        "SELECT CAST(max(snapshot_id) AS VARCHAR) FROM efmesh_ducklake.snapshots()",
    );
    at(p.path(), "2026-01-07T00:00:00Z", &["run", "dev"]);
    assert_eq!(
        one(p.path(), "SELECT CAST(n AS VARCHAR) FROM dev__m.report"),
        "14400"
    );
    // DuckLake time travel reads the efmesh version as it was before the run
    assert_eq!(
        one(
            p.path(),
            &format!("SELECT CAST(count(*) AS VARCHAR) FROM efmesh_ducklake._efmesh.{daily_table} AT (VERSION => {version_before_run})")
        ),
        "12000"
    );

    // forward-only: the column is added with ALTER in the catalog, no row recomputed
    std::fs::write(
        p.path().join("models/daily.sql"),
        daily(", 2 AS w", ", w INTEGER"),
    )
    .unwrap();
    let v = at(
        p.path(),
        "2026-01-07T00:00:00Z",
        &["apply", "dev", "--yes", "--forward-only", "m.daily"],
    );
    assert!(v["batches"].as_array().unwrap().is_empty(), "{v}");
    assert_eq!(
        one(
            p.path(),
            "SELECT CAST(count(w) AS VARCHAR) FROM dev__m.daily"
        ),
        "0"
    );
    at(p.path(), "2026-01-08T00:00:00Z", &["run", "dev"]);
    assert_eq!(
        one(
            p.path(),
            "SELECT CAST(count(w) AS VARCHAR) FROM dev__m.daily"
        ),
        "2400"
    );
    assert_eq!(
        physical(p.path())
            .iter()
            .filter(|t| t.contains("m__daily__"))
            .count(),
        1,
        "forward-only kept the one version"
    );

    // a breaking change to m.total: a new version; once prod moves on, the janitor drops the
    // old table from the catalog and DuckLake deletes its files
    std::fs::write(
        p.path().join("models/total.sql"),
        TOTAL.replace("ts, v", "ts, v + 0 AS v"),
    )
    .unwrap();
    for env in ["dev", "prod"] {
        at(p.path(), "2026-01-08T00:00:00Z", &["apply", env, "--yes"]);
    }
    let totals = || {
        physical(p.path())
            .into_iter()
            .filter(|t| t.contains("m__total__"))
            .collect::<Vec<_>>()
    };
    assert_eq!(totals().len(), 2);
    let files_before = data_files(p.path());
    let j = at(p.path(), "2026-01-08T00:00:00Z", &["janitor", "--ttl", "0"]);
    let dropped: Vec<&str> = j["dropped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["table"].as_str().unwrap())
        .collect();
    assert!(
        dropped
            .iter()
            .any(|t| t.starts_with("efmesh_ducklake._efmesh.m__total__")),
        "{j}"
    );
    assert_eq!(totals().len(), 1, "{:?}", physical(p.path()));
    assert!(
        data_files(p.path()) < files_before,
        "the dropped version's files were deleted"
    );
    assert_eq!(
        one(p.path(), "SELECT CAST(count(*) AS VARCHAR) FROM m.total"),
        "16800"
    );
    assert_eq!(
        one(p.path(), "SELECT CAST(n AS VARCHAR) FROM m.report"),
        "16800"
    );
}

#[test]
fn check_refuses_a_ducklake_target_without_its_catalog_or_extensions() {
    let p = project(&[
        ("efmesh.toml", "[project]\nname = \"t\"\n"),
        (
            "models/total.sql",
            "MODEL (name m.total, kind FULL, target ducklake);\nSELECT 1 AS n\n",
        ),
    ]);
    let out = efmesh(p.path()).args(["check", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out.stdout);
    assert_eq!(v["diagnostics"][0]["code"], "target-needs-ducklake", "{v}");
    let p = project(&[
        ("efmesh.toml", "[project]\nname = \"t\"\n[engine]\nduckdb = \"x.duckdb\"\n[ducklake]\ncatalog = \"meta.sqlite\"\n"),
        ("models/total.sql", "MODEL (name m.total, kind FULL, target ducklake);\nSELECT 1 AS n\n"),
    ]);
    let out = efmesh(p.path()).args(["check", "--json"]).output().unwrap();
    let v = json(&out.stdout);
    let text = v["diagnostics"].to_string();
    assert!(
        text.contains("ducklake") && text.contains("sqlite_scanner") && text.contains("\"line\":6"),
        "{v}"
    );
}

/// A DuckLake catalog on the PostgreSQL test server with its data in the S3 test server's
/// bucket: the team-shared layout. Apply, promotion and a run; the catalog URL's password and
/// the S3 secret never reach an output or a file.
#[test]
fn a_ducklake_on_a_postgresql_catalog_with_data_in_s3() {
    let catalog = pg_database("ducklake_catalog");
    let password = catalog
        .split_once("://")
        .and_then(|(_, r)| r.split_once('@'))
        .and_then(|(userinfo, _)| userinfo.split_once(':'))
        .map(|(_, pw)| pw.to_string())
        .expect("the test server's URL carries a password");
    let bucket = s3_bucket("ducklake");
    let endpoint = s3_endpoint();
    let cfg = format!(
        "[project]\nname = \"t\"\nstart = \"2026-01-01\"\n[engine]\nduckdb = \"efmesh.duckdb\"\nextensions = [\"ducklake\", \"postgres_scanner\", \"httpfs\"]\n[engine.settings]\nextension_directory = \"{}\"\n[[engine.secrets]]\nname = \"data\"\ntype = \"s3\"\nkey_id = \"efmesh-test\"\nsecret = \"${{S3_SECRET}}\"\nregion = \"us-east-1\"\nendpoint = \"{}\"\nurl_style = \"path\"\nuse_ssl = false\n[ducklake]\ncatalog = \"${{CATALOG_URL}}\"\ndata_path = \"s3://{bucket}/dl/\"\n",
        duckdb_extensions(),
        endpoint.trim_start_matches("http://")
    );
    let p = project(&[
        ("efmesh.toml", &cfg),
        ("models/daily.sql", &daily("", "")),
        ("models/total.sql", TOTAL),
        ("models/report.sql", REPORT),
    ]);
    let run = |now: &str, args: &[&str]| {
        let out = efmesh(p.path())
            .env("EFMESH_NOW", now)
            .env("S3_SECRET", "ducklake-s3-secret-91f2")
            .env("CATALOG_URL", &catalog)
            .args(args)
            .output()
            .unwrap();
        for stream in [&out.stdout, &out.stderr] {
            let text = String::from_utf8_lossy(stream);
            assert!(
                !text.contains(&password) && !text.contains("ducklake-s3-secret-91f2"),
                "efmesh {args:?} printed a secret: {text}"
            );
        }
        assert!(
            out.status.success(),
            "efmesh {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(
        "2026-01-06T00:00:00Z",
        &["--log-level", "trace", "apply", "dev", "--yes"],
    );
    run("2026-01-06T00:00:00Z", &["apply", "prod", "--yes"]);
    run("2026-01-07T00:00:00Z", &["run", "prod"]);
    let q = |sql: &str| {
        let text = std::fs::read_to_string(p.path().join("efmesh.toml")).unwrap();
        let env = |n: &str| match n {
            "S3_SECRET" => Some("ducklake-s3-secret-91f2".to_string()),
            "CATALOG_URL" => Some(catalog.clone()),
            _ => None,
        };
        let cfg = efmesh_core::config::Config::parse("efmesh.toml", &text, &env).unwrap();
        DuckDbEngine::open(p.path(), "efmesh.duckdb", &cfg.engine)
            .unwrap()
            .query_strings(sql)
            .unwrap()
            .remove(0)
            .unwrap_or_default()
    };
    assert_eq!(q("SELECT CAST(n AS VARCHAR) FROM m.report"), "14400");
    // dev's views read the same versions prod's run extended: one physics, two environments
    assert_eq!(q("SELECT CAST(n AS VARCHAR) FROM dev__m.report"), "14400");
    // the catalog is PostgreSQL's, the data files are in the bucket
    let tables = pg_col_count(
        &catalog,
        "SELECT count(*) FROM information_schema.tables WHERE table_name LIKE 'ducklake_%'",
    );
    assert!(
        tables > 5,
        "DuckLake's catalog tables are in PostgreSQL: {tables}"
    );
    assert!(
        s3_keys(&bucket, "dl/")
            .iter()
            .any(|k| k.ends_with(".parquet")),
        "{:?}",
        s3_keys(&bucket, "dl/")
    );
    for e in walkdir::WalkDir::new(p.path())
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
    {
        let bytes = std::fs::read(e.path()).unwrap();
        assert!(
            !bytes
                .windows(password.len())
                .any(|w| w == password.as_bytes()),
            "{} holds the catalog's password",
            e.path().display()
        );
    }
}

fn pg_col_count(url: &str, sql: &str) -> i64 {
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    c.query_one(sql, &[]).unwrap().get(0)
}
