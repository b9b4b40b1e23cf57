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

/// A project whose DuckLake catalog and data live somewhere (`vars` fill its `${VAR}`s and are
/// secrets: none may appear in an output), with what the scenario needs to look at them.
struct Lake {
    dir: tempfile::TempDir,
    vars: Vec<(String, String)>,
    /// The bucket holding the data files, when `data_path` is `s3://`.
    bucket: Option<String>,
}

impl Lake {
    fn new(config: &str, vars: Vec<(String, String)>, bucket: Option<String>) -> Lake {
        let dir = project(&[
            ("efmesh.toml", config),
            ("models/daily.sql", &daily("", "")),
            ("models/total.sql", TOTAL),
            ("models/report.sql", REPORT),
        ]);
        Lake { dir, vars, bucket }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn at(&self, now: &str, args: &[&str]) -> Value {
        let mut c = efmesh(self.path());
        c.env("EFMESH_NOW", now).args(args).arg("--json");
        for (k, v) in &self.vars {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        for stream in [&out.stdout, &out.stderr] {
            let text = String::from_utf8_lossy(stream);
            for (k, v) in &self.vars {
                assert!(
                    !text.contains(v.as_str()),
                    "efmesh {args:?} printed ${{{k}}}: {text}"
                );
            }
        }
        assert!(
            out.status.success(),
            "efmesh {args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        json(&out.stdout)
    }

    fn query(&self, sql: &str) -> Vec<String> {
        let text = std::fs::read_to_string(self.path().join("efmesh.toml")).unwrap();
        let env = |n: &str| {
            self.vars
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.clone())
        };
        let cfg = efmesh_core::config::Config::parse("efmesh.toml", &text, &env).unwrap();
        DuckDbEngine::open(self.path(), "efmesh.duckdb", &cfg.engine)
            .unwrap()
            .query_strings(sql)
            .unwrap()
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect()
    }

    fn one(&self, sql: &str) -> String {
        self.query(sql).remove(0)
    }

    /// The `_efmesh` tables of each catalog, as `catalog:table`.
    fn physical(&self) -> Vec<String> {
        self.query(
            "SELECT table_catalog || ':' || table_name FROM information_schema.tables WHERE table_schema = '_efmesh' ORDER BY 1",
        )
    }

    /// DuckLake's parquet files, in the data folder or the bucket.
    fn data_files(&self) -> usize {
        match &self.bucket {
            Some(b) => s3_keys(b, "dl/")
                .iter()
                .filter(|k| k.ends_with(".parquet"))
                .count(),
            None => walkdir::WalkDir::new(self.path().join("lake-data"))
                .into_iter()
                .flatten()
                .filter(|e| {
                    e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "parquet")
                })
                .count(),
        }
    }
}

#[test]
fn ducklake_versions_apply_promote_run_evolve_time_travel_and_are_collected() {
    let l = Lake::new(&config(), vec![], None);
    scenario(&l);
    assert!(l.path().join("meta.sqlite").exists());
}

/// Apply, promotion without a snapshot, a run, time travel, forward-only, a breaking change
/// and the janitor, on whatever catalog and data path `l` has.
fn scenario(l: &Lake) {
    l.at("2026-01-06T00:00:00Z", &["check"]);
    l.at("2026-01-06T00:00:00Z", &["apply", "dev", "--yes"]);
    assert_eq!(
        l.one("SELECT CAST(count(*) AS VARCHAR) FROM dev__m.total"),
        "12000"
    );
    assert_eq!(
        l.one("SELECT CAST(n AS VARCHAR) FROM dev__m.report"),
        "12000"
    );
    let tables = l.physical();
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
    assert!(
        l.data_files() >= 2,
        "DuckLake wrote its data under data_path"
    );
    let snapshots = || l.one("SELECT CAST(count(*) AS VARCHAR) FROM efmesh_ducklake.snapshots()");
    let before_promotion = snapshots();

    // promotion is views only: no DuckLake snapshot, nothing recomputed
    let v = l.at("2026-01-06T00:00:00Z", &["apply", "prod", "--yes"]);
    assert!(v["built"].as_array().unwrap().is_empty(), "{v}");
    assert_eq!(snapshots(), before_promotion);
    assert_eq!(l.one("SELECT CAST(n AS VARCHAR) FROM m.report"), "12000");

    // a new interval: DELETE + INSERT of one day in a catalog transaction
    let daily_table = tables[1].split(':').nth(1).unwrap().to_string();
    let version_before_run: String =
        l.one("SELECT CAST(max(snapshot_id) AS VARCHAR) FROM efmesh_ducklake.snapshots()");
    l.at("2026-01-07T00:00:00Z", &["run", "dev"]);
    assert_eq!(
        l.one("SELECT CAST(n AS VARCHAR) FROM dev__m.report"),
        "14400"
    );
    // DuckLake time travel reads the efmesh version as it was before the run
    assert_eq!(
        l.one(&format!("SELECT CAST(count(*) AS VARCHAR) FROM efmesh_ducklake._efmesh.{daily_table} AT (VERSION => {version_before_run})")
        ),
        "12000"
    );

    // forward-only: the column is added with ALTER in the catalog, no row recomputed
    std::fs::write(
        l.path().join("models/daily.sql"),
        daily(", 2 AS w", ", w INTEGER"),
    )
    .unwrap();
    let v = l.at(
        "2026-01-07T00:00:00Z",
        &["apply", "dev", "--yes", "--forward-only", "m.daily"],
    );
    assert!(v["batches"].as_array().unwrap().is_empty(), "{v}");
    assert_eq!(
        l.one("SELECT CAST(count(w) AS VARCHAR) FROM dev__m.daily"),
        "0"
    );
    l.at("2026-01-08T00:00:00Z", &["run", "dev"]);
    assert_eq!(
        l.one("SELECT CAST(count(w) AS VARCHAR) FROM dev__m.daily"),
        "2400"
    );
    assert_eq!(
        l.physical()
            .iter()
            .filter(|t| t.contains("m__daily__"))
            .count(),
        1,
        "forward-only kept the one version"
    );

    // a breaking change to m.total: a new version; once prod moves on, the janitor drops the
    // old table from the catalog and DuckLake deletes its files
    std::fs::write(
        l.path().join("models/total.sql"),
        TOTAL.replace("ts, v", "ts, v + 0 AS v"),
    )
    .unwrap();
    for env in ["dev", "prod"] {
        l.at("2026-01-08T00:00:00Z", &["apply", env, "--yes"]);
    }
    let totals = || {
        l.physical()
            .into_iter()
            .filter(|t| t.contains("m__total__"))
            .collect::<Vec<_>>()
    };
    assert_eq!(totals().len(), 2);
    let files_before = l.data_files();
    let j = l.at("2026-01-08T00:00:00Z", &["janitor", "--ttl", "0"]);
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
    assert_eq!(totals().len(), 1, "{:?}", l.physical());
    assert!(
        l.data_files() < files_before,
        "the dropped version's files were deleted"
    );
    assert_eq!(
        l.one("SELECT CAST(count(*) AS VARCHAR) FROM m.total"),
        "16800"
    );
    assert_eq!(l.one("SELECT CAST(n AS VARCHAR) FROM m.report"), "16800");
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
/// bucket, the team-shared layout, through the same scenario; the catalog URL's password and
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
    let l = Lake::new(
        &cfg,
        vec![
            ("S3_SECRET".into(), "ducklake-s3-secret-91f2".into()),
            ("CATALOG_URL".into(), catalog.clone()),
        ],
        Some(bucket.clone()),
    );
    l.at("2026-01-06T00:00:00Z", &["--log-level", "trace", "check"]);
    scenario(&l);
    // the catalog is PostgreSQL's, the data files are in the bucket
    let tables = pg_col_count(
        &catalog,
        "SELECT count(*) FROM information_schema.tables WHERE table_name LIKE 'ducklake_%'",
    );
    assert!(
        tables > 5,
        "DuckLake's catalog tables are in PostgreSQL: {tables}"
    );
    assert!(!l.path().join("lake-data").exists(), "no local data folder");
    for e in walkdir::WalkDir::new(l.path())
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
