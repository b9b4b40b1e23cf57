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

/// `efmesh ARGS` in `dir` with the clock (`EFMESH_NOW`) at `now`: for what falls due with time.
pub fn efmesh_at(dir: &Path, now: &str, args: &[&str]) -> std::process::Output {
    efmesh(dir)
        .env("EFMESH_NOW", now)
        .args(args)
        .output()
        .unwrap()
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
    let name = unique_name(prefix, '_');
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

/// The S3-compatible server the suite runs against: `EFMESH_TEST_S3`, an endpoint URL
/// (`http://127.0.0.1:PORT`) that `./scripts/test` sets after starting one
/// (`scripts/s3-server`, moto's server mode). Without it an S3 test fails saying so.
pub fn s3_endpoint() -> String {
    std::env::var("EFMESH_TEST_S3").unwrap_or_else(|_| {
        panic!("EFMESH_TEST_S3 is not set: run the suite with ./scripts/test, which starts a throwaway S3-compatible server, or `scripts/s3-server start DIR` and export its endpoint")
    })
}

/// One raw HTTP/1.1 request to the S3 test server (path-style, unsigned: the test server
/// accepts any credentials); its status code and body.
pub fn s3_http(method: &str, path: &str, body: &[u8]) -> (u16, Vec<u8>) {
    use std::io::{Read, Write};
    let endpoint = s3_endpoint();
    let host = endpoint.trim_start_matches("http://").trim_end_matches('/');
    let mut s = std::net::TcpStream::connect(host).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    s.write_all(body).unwrap();
    let mut out = vec![];
    s.read_to_end(&mut out).unwrap();
    let head_end = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&out[..head_end]).to_string();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let mut body = out[head_end + 4..].to_vec();
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        let mut plain = vec![];
        let mut rest = &body[..];
        while let Some(nl) = rest.windows(2).position(|w| w == b"\r\n") {
            let n = usize::from_str_radix(String::from_utf8_lossy(&rest[..nl]).trim(), 16).unwrap();
            if n == 0 {
                break;
            }
            plain.extend_from_slice(&rest[nl + 2..nl + 2 + n]);
            rest = &rest[nl + 2 + n + 2..];
        }
        body = plain;
    }
    (status, body)
}

/// A fresh, empty bucket on the S3 test server, its name returned.
pub fn s3_bucket(prefix: &str) -> String {
    let name = unique_name(prefix, '-');
    let (status, body) = s3_http("PUT", &format!("/{name}"), b"");
    assert_eq!(
        status,
        200,
        "creating bucket {name}: {}",
        String::from_utf8_lossy(&body)
    );
    name
}

/// Every key in `bucket` under `prefix`, sorted (ListObjectsV2, one page is enough here).
pub fn s3_keys(bucket: &str, prefix: &str) -> Vec<String> {
    let (status, body) = s3_http(
        "GET",
        &format!("/{bucket}?list-type=2&prefix={prefix}&max-keys=1000"),
        b"",
    );
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let text = String::from_utf8_lossy(&body);
    let mut keys: Vec<String> = text
        .split("<Key>")
        .skip(1)
        .map(|k| k.split("</Key>").next().unwrap().to_string())
        .collect();
    keys.sort();
    keys
}

/// `prefix`, this process, the clock and a counter joined by `sep`: a name no other test picks.
pub fn unique_name(prefix: &str, sep: char) -> String {
    // tests run on threads of one process, and two may read the same clock tick: a counter
    // keeps their names apart (the clock keeps reruns in the same process id apart)
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
        % 1_000_000_000;
    format!("{prefix}{sep}{}{sep}{nanos}{sep}{n}", std::process::id())
}

/// Every file under `dir`, recursively.
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A fresh copy of `examples/<name>` without anything a local run left in it (lake, state,
/// database), for tests that change or build it.
pub fn copy_example(name: &str) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = repo().join("examples").join(name);
    for entry in walk(&src) {
        let rel = entry.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .to_string();
        if ["lake", ".efmesh"].contains(&first.as_str())
            || first.starts_with("efmesh.duckdb")
            || first.starts_with("efmesh.state")
        {
            continue;
        }
        let to = dir.path().join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&entry, to).unwrap();
    }
    dir
}
