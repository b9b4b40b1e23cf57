//! Engine initialisation declared in `efmesh.toml` (issue 16): extensions, settings,
//! `[[engine.secrets]]` and `[attach.NAME]`, against a real DuckDB with real extensions. A
//! secret's value must never reach an output, a log, the state store or the database file.

mod common;
use common::*;
use std::path::Path;

const SECRET: &str = "efmesh-secret-3f9c1a7e42d8";

fn config(extra: &str) -> String {
    format!(
        "[project]\nname = \"t\"\nstart = \"2026-01-01\"\n[engine]\nduckdb = \"efmesh.duckdb\"\nextensions = [\"httpfs\", \"sqlite_scanner\"]\n[engine.settings]\nextension_directory = \"{}\"\n{extra}",
        duckdb_extensions()
    )
}

const S3_SECRET: &str = "[[engine.secrets]]\nname = \"lake_s3\"\ntype = \"s3\"\nkey_id = \"efmesh-test\"\nsecret = \"${EFMESH_TEST_SECRET}\"\nendpoint = \"127.0.0.1:1\"\nurl_style = \"path\"\nuse_ssl = false\n";

fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    efmesh(dir)
        .env("EFMESH_TEST_SECRET", SECRET)
        .env("EFMESH_NOW", "2026-01-02T00:00:00Z")
        .args(args)
        .output()
        .unwrap()
}

/// Every file under `dir`, read as bytes, that contains `needle`.
fn files_containing(dir: &Path, needle: &str) -> Vec<String> {
    let mut hits = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if std::fs::read(&p)
                .unwrap()
                .windows(needle.len())
                .any(|w| w == needle.as_bytes())
            {
                hits.push(p.display().to_string());
            }
        }
    }
    hits
}

fn query(dir: &Path, sql: &str) -> Vec<Option<String>> {
    let cfg = efmesh_core::config::Config::defaults("t").engine;
    efmesh::engine::duckdb::DuckDbEngine::open(dir, "efmesh.duckdb", &cfg)
        .unwrap()
        .query_strings(sql)
        .unwrap()
}

#[test]
fn a_declared_secret_is_created_for_every_command_and_never_printed_or_stored() {
    let p = project(&[
        ("efmesh.toml", &config(S3_SECRET)),
        (
            "models/secrets.sql",
            "MODEL (name s.secrets, kind FULL);\nSELECT name, type, CAST(secret_string LIKE '%redacted%' AS VARCHAR) AS shown_redacted FROM duckdb_secrets()",
        ),
    ]);
    let mut outputs = vec![];
    for args in [
        &["check", "--json"][..],
        &["plan", "dev", "--json"],
        &["--log-level", "trace", "apply", "dev", "--yes"],
        &["--log-level", "trace", "run", "dev", "--json"],
        &["status", "dev", "--json", "--deep"],
        &["audit", "dev", "--json"],
    ] {
        let out = run(p.path(), args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        outputs.push((args.join(" "), out.stdout, out.stderr));
    }
    // the model ran in a session that had the secret, by its name and type
    assert_eq!(
        query(
            p.path(),
            "SELECT name || ' ' || type || ' ' || shown_redacted FROM dev__s.secrets"
        ),
        [Some("lake_s3 s3 true".to_string())]
    );
    for (args, stdout, stderr) in &outputs {
        for (what, bytes) in [("stdout", stdout), ("stderr", stderr)] {
            assert!(
                !String::from_utf8_lossy(bytes).contains(SECRET),
                "`efmesh {args}` printed the secret on {what}"
            );
        }
    }
    // the secret is temporary: not in the DuckDB file, not in the state, not in any log
    assert_eq!(files_containing(p.path(), SECRET), Vec::<String>::new());
}

#[test]
fn a_secret_the_engine_refuses_is_named_without_its_value() {
    let bad = S3_SECRET.replace(
        "use_ssl = false\n",
        "use_ssl = false\nno_such_option = \"${EFMESH_TEST_SECRET}\"\n",
    );
    let p = project(&[
        ("efmesh.toml", &config(&bad)),
        (
            "models/one.sql",
            "MODEL (name s.one, kind FULL);\nSELECT 1 AS v",
        ),
    ]);
    let out = run(p.path(), &["--log-level", "trace", "apply", "dev", "--yes"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("engine secret `lake_s3`"), "{stderr}");
    assert!(!stderr.contains(SECRET), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(SECRET));
    assert_eq!(files_containing(p.path(), SECRET), Vec::<String>::new());
}

#[test]
fn external_models_read_attached_duckdb_and_sqlite_databases() {
    let p = project(&[
        (
            "efmesh.toml",
            &config("[attach.shop]\nurl = \"shop.duckdb\"\noptions = { read_only = true }\n[attach.legacy]\nurl = \"data/legacy.sqlite\"\noptions = { type = \"sqlite\" }\n"),
        ),
        (
            "models/items.sql",
            "MODEL (name src.items, kind EXTERNAL (table shop.sales.items), columns (id BIGINT, price DOUBLE));\n",
        ),
        (
            "models/owners.sql",
            "MODEL (name src.owners, kind EXTERNAL (table legacy.main.owners), columns (item_id BIGINT, owner VARCHAR));\n",
        ),
        (
            "models/report.sql",
            "MODEL (name mart.report, kind FULL);\nSELECT o.owner, sum(i.price) AS total FROM src.items AS i JOIN src.owners AS o ON o.item_id = i.id GROUP BY o.owner ORDER BY o.owner",
        ),
    ]);
    {
        let shop = duckdb::Connection::open(p.path().join("shop.duckdb")).unwrap();
        shop.execute_batch(
            "CREATE SCHEMA sales; CREATE TABLE sales.items AS SELECT range AS id, range * 2.5 AS price FROM range(1, 5)",
        )
        .unwrap();
        std::fs::create_dir_all(p.path().join("data")).unwrap();
        let legacy = rusqlite::Connection::open(p.path().join("data/legacy.sqlite")).unwrap();
        legacy
            .execute_batch("CREATE TABLE owners (item_id INTEGER, owner TEXT); INSERT INTO owners VALUES (1, 'ann'), (2, 'bob'), (3, 'ann'), (4, 'bob');")
            .unwrap();
    }
    let out = run(p.path(), &["apply", "dev", "--yes"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        query(
            p.path(),
            "SELECT owner || '=' || CAST(total AS VARCHAR) FROM dev__mart.report ORDER BY owner"
        ),
        [Some("ann=10.0".to_string()), Some("bob=15.0".to_string())]
    );
    // the attached file is read-only to efmesh, and a missing one is named
    std::fs::remove_file(p.path().join("shop.duckdb")).unwrap();
    let out = run(p.path(), &["apply", "dev", "--yes"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr.contains("attached database `shop`"), "{stderr}");
    assert!(stderr.contains("shop.duckdb"), "{stderr}");
}

#[test]
fn check_refuses_a_bad_secret_or_attach_at_its_line() {
    let p = project(&[
        (
            "efmesh.toml",
            &config("[[engine.secrets]]\nkey_id = \"x\"\n[attach.main]\nurl = \"a.duckdb\"\n[attach.other]\nurl = \"b.duckdb\"\nsecret = \"nope\"\n"),
        ),
        ("models/one.sql", "MODEL (name s.one, kind FULL);\nSELECT 1 AS v"),
    ]);
    let out = efmesh(p.path()).args(["check", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out.stdout);
    let got: Vec<(String, u64)> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["message"].as_str().unwrap().to_string(),
                d["location"]["line"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    let has = |needle: &str, line: u64| {
        assert!(
            got.iter().any(|(m, l)| m.contains(needle) && *l == line),
            "{needle} at line {line}: {got:?}"
        )
    };
    has("needs its `type`", 9);
    has("`main` cannot name an attached database", 11);
    has("no `[[engine.secrets]]` is named `nope`", 15);
}
