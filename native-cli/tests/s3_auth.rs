//! A wrong S3 secret against a server that checks signatures (issue 16): the suite's shared moto
//! server accepts any credentials, so this test starts its own with authentication on, makes an
//! IAM user and access key on it, and shows that the right secret applies while a wrong one fails
//! with an error that names the bucket, never the secret: not in any output, not on disk.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// A wrong secret, distinctive enough to grep for.
const WRONG: &str = "efmesh-wrong-secret-3f9b0d6c21e8";

/// How many requests moto serves before it starts checking SigV4 signatures against its IAM:
/// CreateUser, CreateAccessKey, PutUserPolicy and CreateBucket here. moto counts every request
/// that reaches an authorization check, so the count is set (and the counter zeroed) through
/// `/moto-api/reset-auth` once the server answers: how many readiness polls
/// `scripts/s3-server start` needed on a slow machine must not matter.
const NO_AUTH_REQUESTS: u32 = 4;

/// A moto server of this test's own, stopped when dropped (also when the test panics).
struct AuthServer {
    dir: tempfile::TempDir,
    endpoint: String,
}

impl AuthServer {
    fn start() -> AuthServer {
        let dir = tempfile::tempdir().unwrap();
        let out = std::process::Command::new(repo().join("scripts/s3-server"))
            .arg("start")
            .arg(dir.path())
            .output()
            .expect("scripts/s3-server runs");
        // the guard exists before any assertion, so a failed start is still stopped
        let server = AuthServer {
            endpoint: String::from_utf8_lossy(&out.stdout).trim().to_string(),
            dir,
        };
        assert!(
            out.status.success() && server.endpoint.starts_with("http://"),
            "scripts/s3-server start failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        server
    }

    fn host(&self) -> &str {
        self.endpoint
            .trim_start_matches("http://")
            .trim_end_matches('/')
    }
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        let _ = std::process::Command::new(repo().join("scripts/s3-server"))
            .arg("stop")
            .arg(self.dir.path())
            .status();
    }
}

/// One raw HTTP/1.1 request to `host` with extra header lines; its status code and body.
fn http(host: &str, method: &str, path: &str, headers: &str, body: &[u8]) -> (u16, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(host).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    s.write_all(body).unwrap();
    let mut out = vec![];
    s.read_to_end(&mut out).unwrap();
    let text = String::from_utf8_lossy(&out).to_string();
    let status = text.split(' ').nth(1).unwrap().parse().unwrap();
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    (status, body.to_string())
}

fn form_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// One IAM query-API call while requests are still unauthenticated. moto routes a request to a
/// service by the credential scope of its Authorization header, so the header names `iam`; its
/// signature is not checked yet.
fn iam(server: &AuthServer, params: &[(&str, &str)]) -> String {
    let body: Vec<String> = params
        .iter()
        .chain(&[("Version", "2010-05-08")])
        .map(|(k, v)| format!("{k}={}", form_encode(v)))
        .collect();
    let (status, text) = http(
        server.host(),
        "POST",
        "/",
        "Authorization: AWS4-HMAC-SHA256 Credential=setup/20260101/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=0\r\nContent-Type: application/x-www-form-urlencoded\r\n",
        body.join("&").as_bytes(),
    );
    assert_eq!(status, 200, "IAM {params:?}: {text}");
    text
}

fn xml_field(xml: &str, tag: &str) -> String {
    xml.split(&format!("<{tag}>"))
        .nth(1)
        .and_then(|r| r.split(&format!("</{tag}>")).next())
        .unwrap_or_else(|| panic!("no <{tag}> in {xml}"))
        .to_string()
}

/// A user allowed s3:*, its access key (id, secret), and a bucket: the last unauthenticated
/// requests. Returns (key id, secret, bucket).
fn provision(server: &AuthServer) -> (String, String, String) {
    let (status, text) = http(
        server.host(),
        "POST",
        "/moto-api/reset-auth",
        "",
        NO_AUTH_REQUESTS.to_string().as_bytes(),
    );
    assert_eq!(status, 200, "turning moto's authentication on: {text}");
    iam(server, &[("Action", "CreateUser"), ("UserName", "efmesh")]);
    let key = iam(
        server,
        &[("Action", "CreateAccessKey"), ("UserName", "efmesh")],
    );
    iam(
        server,
        &[
            ("Action", "PutUserPolicy"),
            ("UserName", "efmesh"),
            ("PolicyName", "s3-all"),
            (
                "PolicyDocument",
                r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}"#,
            ),
        ],
    );
    let bucket = "efmesh-auth-lake".to_string();
    let (status, text) = http(server.host(), "PUT", &format!("/{bucket}"), "", b"");
    assert_eq!(status, 200, "creating the bucket: {text}");
    // from here on the server checks every request: an unsigned one is refused
    let (status, text) = http(
        server.host(),
        "GET",
        &format!("/{bucket}?list-type=2"),
        "",
        b"",
    );
    assert!(
        status >= 400,
        "moto still serves unsigned requests after {NO_AUTH_REQUESTS}: {status} {text}"
    );
    (
        xml_field(&key, "AccessKeyId"),
        xml_field(&key, "SecretAccessKey"),
        bucket,
    )
}

fn auth_project(server: &AuthServer, key_id: &str, bucket: &str) -> tempfile::TempDir {
    let config = format!(
        "[project]\nname = \"t\"\nstart = \"2026-01-01\"\n[engine]\nduckdb = \"efmesh.duckdb\"\nextensions = [\"httpfs\"]\n[engine.settings]\nextension_directory = \"{}\"\n[[engine.secrets]]\nname = \"lake\"\ntype = \"s3\"\nkey_id = \"{key_id}\"\nsecret = \"${{EFMESH_TEST_S3_SECRET}}\"\nregion = \"us-east-1\"\nendpoint = \"{}\"\nurl_style = \"path\"\nuse_ssl = false\n[lake]\npath = \"s3://{bucket}/lake\"\nsecret = \"lake\"\n",
        duckdb_extensions(),
        server.host()
    );
    project(&[
        ("efmesh.toml", &config),
        (
            "models/total.sql",
            "MODEL (name m.total, kind FULL, target parquet, cron '@daily');\nSELECT 42 AS n\n",
        ),
    ])
}

/// Run efmesh with `secret` in the environment; panics if any output holds `secret`.
fn run(dir: &Path, secret: &str, args: &[&str]) -> std::process::Output {
    let out = efmesh(dir)
        .env("EFMESH_NOW", "2026-01-06T00:00:00Z")
        .env("EFMESH_TEST_S3_SECRET", secret)
        .args(args)
        .output()
        .unwrap();
    for (name, stream) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(stream);
        assert!(
            !text.contains(secret),
            "efmesh {args:?} printed the secret on {name}:\n{text}"
        );
    }
    out
}

/// Panics if any file under `dir` holds `secret`.
fn assert_not_on_disk(dir: &Path, secret: &str) {
    let mut stack = vec![dir.to_path_buf()];
    let mut files = 0;
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else {
                files += 1;
                let bytes = std::fs::read(e.path()).unwrap();
                assert!(
                    !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                    "{} holds the secret",
                    e.path().display()
                );
            }
        }
    }
    assert!(files > 1, "the walk saw the project's files");
}

fn text(out: &std::process::Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_wrong_s3_secret_fails_naming_the_bucket_and_is_never_printed_or_stored() {
    let server = AuthServer::start();
    let (key_id, secret, bucket) = provision(&server);

    // the right secret: the server accepts efmesh's signed requests
    let good = auth_project(&server, &key_id, &bucket);
    let out = run(good.path(), &secret, &["apply", "dev", "--yes"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_not_on_disk(good.path(), &secret);

    // a wrong secret, same key id: refused by the server, and the error says where, not what
    let bad = auth_project(&server, &key_id, &bucket);
    let out = run(
        bad.path(),
        WRONG,
        &["--log-level", "trace", "apply", "dev", "--yes"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_ne!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        stderr.contains(&format!("s3://{bucket}/lake/m/total/")),
        "the error names the object: {}",
        text(&out)
    );
    assert!(
        stderr.contains("SignatureDoesNotMatch"),
        "the server refused the signature (auth is on): {}",
        text(&out)
    );
    // the refused upload's local scratch copy is gone with it
    let left: Vec<_> = walkdir::WalkDir::new(bad.path().join(".efmesh/lake-scratch"))
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().display().to_string())
        .collect();
    assert!(left.is_empty(), "{left:?}");
    for args in [
        &["--log-level", "trace", "plan", "dev", "--json"][..],
        &["--log-level", "trace", "status", "dev", "--json"],
        &["--log-level", "trace", "run", "dev"],
    ] {
        run(bad.path(), WRONG, args);
    }
    let plan = run(bad.path(), WRONG, &["plan", "dev", "--json"]);
    assert!(plan.status.success(), "{}", text(&plan));
    let plan: Value = serde_json::from_slice(&plan.stdout).unwrap();
    assert_eq!(plan["hasChanges"], true, "dev was never promoted: {plan}");
    assert_not_on_disk(bad.path(), WRONG);
}
