//! Helpers shared by the CLI tests: throwaway projects and the real binary.
#![allow(dead_code)]

use assert_cmd::Command;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

pub const CONFIG: &str = "[project]\nname = \"t\"\nstart = \"2026-01-01\"\n";

/// A parent every small test project can read from.
pub const EVENTS: (&str, &str) = (
    "models/src/events.sql",
    "MODEL (\n  name src.events,\n  kind EXTERNAL (table raw.events),\n  columns (case_id VARCHAR, moved_at TIMESTAMP, dept VARCHAR)\n);\n",
);

/// Write a project (with a default `efmesh.toml` unless one is given) into a temp dir.
pub fn project(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    if !files.iter().any(|(p, _)| *p == "efmesh.toml") {
        std::fs::write(dir.path().join("efmesh.toml"), CONFIG).unwrap();
    }
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// The efmesh binary, without colors, run in `dir`.
pub fn efmesh(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("efmesh").unwrap();
    c.current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG");
    c
}

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Parse stdout as exactly one JSON object.
pub fn json(out: &[u8]) -> serde_json::Value {
    let text = std::str::from_utf8(out).unwrap();
    let v: serde_json::Value = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("stdout is not one JSON object ({e}):\n{text}"));
    assert_eq!(v["apiVersion"], 1, "every payload carries apiVersion 1");
    v
}

/// The JSON Schema of `manifest.json` (`manifest-schema/manifest.schema.json`), compiled once.
pub fn manifest_validator() -> &'static jsonschema::Validator {
    static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let path = repo().join("manifest-schema/manifest.schema.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let schema: serde_json::Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
        jsonschema::draft202012::new(&schema)
            .unwrap_or_else(|e| panic!("{} is not a valid schema: {e}", path.display()))
    })
}

/// Panic, listing every violation, unless `json` is a valid `manifest.json`.
pub fn assert_valid_manifest(json: &serde_json::Value) {
    let errors: Vec<String> = manifest_validator()
        .iter_errors(json)
        .map(|e| match e.instance_path().as_str() {
            "" => format!("  (top level): {e}"),
            at => format!("  {at}: {e}"),
        })
        .collect();
    assert!(
        errors.is_empty(),
        "manifest does not match manifest-schema/manifest.schema.json:\n{}\nmanifest:\n{}",
        errors.join("\n"),
        serde_json::to_string_pretty(json).unwrap_or_default()
    );
}

/// The PostgreSQL server the suite runs against: `EFMESH_TEST_PG`, a superuser URL that
/// `./scripts/test` sets after starting a throwaway cluster (`scripts/pg-cluster`). Without it a
/// PostgreSQL test fails, saying how to run it: it never passes by skipping.
pub fn pg_server() -> String {
    std::env::var("EFMESH_TEST_PG").unwrap_or_else(|_| {
        panic!("EFMESH_TEST_PG is not set: run the suite with ./scripts/test, which starts a throwaway PostgreSQL cluster, or point it at a server you may create databases on")
    })
}

/// A fresh, empty database on the test server for one test, its URL returned.
pub fn pg_database(prefix: &str) -> String {
    let server = pg_server();
    let name = format!(
        "{prefix}_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
            % 1_000_000_000
    );
    let mut c = postgres::Client::connect(&server, postgres::NoTls)
        .unwrap_or_else(|e| panic!("cannot reach the test server: {e}"));
    c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
    match server.rsplit_once('/') {
        Some((base, _)) => format!("{base}/{name}"),
        None => panic!("EFMESH_TEST_PG is not a postgres:// URL"),
    }
}

/// A DuckDB extension directory holding `httpfs` and `sqlite_scanner`, filled once by
/// `scripts/duckdb-extensions` (DuckDB's own server is unreachable here; PyPI ships the same
/// signed binaries). Projects point `[engine.settings] extension_directory` at it.
pub fn duckdb_extensions() -> String {
    static DIR: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::var("EFMESH_TEST_EXTENSIONS").unwrap_or_else(|_| {
            let home = std::env::var("HOME").unwrap_or_else(|_| "/tmp".into());
            format!("{home}/.cache/efmesh-tools/duckdb-extensions")
        });
        let out = std::process::Command::new(repo().join("scripts/duckdb-extensions"))
            .arg(&dir)
            .output()
            .expect("scripts/duckdb-extensions runs");
        assert!(
            out.status.success(),
            "the tests need DuckDB's httpfs and sqlite_scanner: scripts/duckdb-extensions {dir} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    })
    .clone()
}
