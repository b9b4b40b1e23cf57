//! The janitor drops each orphaned version as what it really is (a table, a view, or a parquet
//! version's view over its files) and removes a parquet version's lake folder with it, leaving
//! served versions untouched.

mod common;
use common::*;
use efmesh::engine::duckdb::DuckDbEngine;
use serde_json::Value;
use std::path::{Path, PathBuf};

const CONFIG: &str = "[project]\nname = \"t\"\nstart = \"2026-01-01\"\n[lake]\npath = \"lake\"\n";

fn days(n: u32) -> String {
    format!("MODEL (name core.days, kind FULL, target parquet, columns (d BIGINT));\nSELECT range AS d FROM range({n})")
}

fn daily_parquet(extra: &str) -> String {
    format!("MODEL (name core.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ts), target parquet, start '2026-01-01', columns (ts TIMESTAMP, tag VARCHAR));\nSELECT TIMESTAMP '2026-01-01' + to_days(range) AS ts, 'x{extra}' AS tag FROM range(5) WHERE ts >= @start AND ts < @end")
}

fn table(n: u32) -> String {
    format!("MODEL (name core.plain, kind FULL, columns (d BIGINT));\nSELECT range AS d FROM range({n})")
}

fn cli(dir: &Path, args: &[&str]) -> Value {
    let out = efmesh(dir)
        .env("EFMESH_NOW", "2026-01-05T12:00:00Z")
        .args(args)
        .assert()
        .success();
    json(&out.get_output().stdout)
}

/// The version folders (`fp=...`) of a model in the lake.
fn versions(dir: &Path, model: &str) -> Vec<PathBuf> {
    let (schema, table) = model.split_once('.').unwrap();
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir.join("lake").join(schema).join(table))
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    out.sort();
    out
}

fn count(dir: &Path, sql: &str) -> String {
    let cfg = efmesh_core::config::Config::defaults("t").engine;
    let mut e = DuckDbEngine::open(dir, "efmesh.duckdb", &cfg).unwrap();
    e.query_strings(sql).unwrap()[0].clone().unwrap_or_default()
}

fn relations(dir: &Path) -> Vec<String> {
    let cfg = efmesh_core::config::Config::defaults("t").engine;
    let mut e = DuckDbEngine::open(dir, "efmesh.duckdb", &cfg).unwrap();
    e.query_strings("SELECT table_name || ':' || table_type FROM information_schema.tables WHERE table_schema = '_efmesh' ORDER BY 1")
        .unwrap()
        .into_iter()
        .flatten()
        .collect()
}

#[test]
fn a_removed_parquet_version_loses_its_view_and_files_and_a_served_one_keeps_them() {
    let p = project(&[
        ("efmesh.toml", CONFIG),
        ("models/days.sql", &days(3)),
        ("models/daily.sql", &daily_parquet("")),
        ("models/plain.sql", &table(3)),
    ]);
    cli(p.path(), &["apply", "dev", "--yes", "--json"]);
    let old_days = versions(p.path(), "core.days");
    let old_daily = versions(p.path(), "core.daily");
    assert_eq!((old_days.len(), old_daily.len()), (1, 1));
    assert!(
        old_daily[0].read_dir().unwrap().count() > 1,
        "partitions and a manifest"
    );

    // every model changes: three orphans, two of them parquet versions (views over files)
    std::fs::write(p.path().join("models/days.sql"), days(4)).unwrap();
    std::fs::write(p.path().join("models/daily.sql"), daily_parquet("y")).unwrap();
    std::fs::write(p.path().join("models/plain.sql"), table(4)).unwrap();
    cli(p.path(), &["apply", "dev", "--yes", "--json"]);
    assert_eq!(versions(p.path(), "core.days").len(), 2);
    assert_eq!(relations(p.path()).len(), 6);

    let v = cli(p.path(), &["janitor", "--ttl", "0", "--json"]);
    let dropped = v["dropped"].as_array().unwrap();
    assert_eq!(dropped.len(), 3, "{v}");
    let with_files: Vec<&str> = dropped.iter().filter_map(|d| d["files"].as_str()).collect();
    assert_eq!(
        with_files.len(),
        2,
        "the parquet versions name their folders: {v}"
    );

    // the old versions are gone from the engine and from the lake
    let left = relations(p.path());
    assert_eq!(left.len(), 3, "{left:?}");
    assert!(
        !old_days[0].exists() && !old_daily[0].exists(),
        "old folders removed"
    );
    // the served versions are untouched and still read
    let (days_now, daily_now) = (
        versions(p.path(), "core.days"),
        versions(p.path(), "core.daily"),
    );
    assert_eq!((days_now.len(), daily_now.len()), (1, 1));
    assert!(
        days_now[0].join("manifest.json").exists() && daily_now[0].join("manifest.json").exists()
    );
    assert_eq!(
        count(p.path(), "SELECT count(*)::VARCHAR FROM dev__core.days"),
        "4"
    );
    assert_eq!(
        count(
            p.path(),
            "SELECT count(*)::VARCHAR FROM dev__core.daily WHERE tag = 'xy'"
        ),
        "4"
    );
    assert_eq!(
        count(p.path(), "SELECT count(*)::VARCHAR FROM dev__core.plain"),
        "4"
    );

    // a second run has nothing left to do
    let v = cli(p.path(), &["janitor", "--ttl", "0", "--json"]);
    assert!(v["dropped"].as_array().unwrap().is_empty(), "{v}");
}
