//! What a red-team pass broke (issue 20), one test per finding: hostile names and arguments
//! never reach SQL, efmesh's own namespaces cannot be claimed by a model, and bad input ends
//! in a clear error rather than a panic or a runaway.

mod common;
use common::*;
use efmesh::engine::duckdb::DuckDbEngine;
use efmesh::engine::Engine as _;
use serde_json::Value;
use std::path::Path;

/// `efmesh check --json` on a project: exit code and every error as `(code, file:line, message)`.
fn check_errors(dir: &Path) -> (i32, Vec<(String, String, String)>) {
    let out = efmesh(dir).args(["check", "--json"]).output().unwrap();
    let v = json(&out.stdout);
    let errors = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d: &Value| {
            (
                d["code"].as_str().unwrap().to_string(),
                format!(
                    "{}:{}",
                    d["location"]["file"].as_str().unwrap_or(""),
                    d["location"]["line"]
                ),
                d["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (out.status.code().unwrap(), errors)
}

/// Every table in the project's DuckDB file, as `schema.table`; empty when there is no file.
fn duckdb_tables(dir: &Path) -> Vec<String> {
    if !dir.join("efmesh.duckdb").exists() {
        return vec![];
    }
    let cfg = efmesh_core::config::Config::defaults("t").engine;
    let mut e = DuckDbEngine::open(dir, "efmesh.duckdb", &cfg).unwrap();
    e.query_strings(
        "SELECT table_schema || '.' || table_name FROM information_schema.tables ORDER BY 1",
    )
    .unwrap()
    .into_iter()
    .flatten()
    .collect()
}

// 3. SQL injection through model names and audit arguments

#[test]
fn a_model_name_carrying_sql_is_refused_and_nothing_runs() {
    let p = project(&[(
        "models/x.sql",
        "MODEL (name \"raw\".\"x as select 1; create table pwned as select 42 as v; create table y\", kind FULL);\nSELECT 1 AS v\n",
    )]);
    let (code, e) = check_errors(p.path());
    assert_eq!(code, 1);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(
        (e[0].0.as_str(), e[0].1.as_str()),
        ("invalid-name", "models/x.sql:1")
    );
    assert!(e[0].2.contains("is not a plain identifier"), "{e:?}");
    efmesh(p.path())
        .args(["apply", "dev", "--yes"])
        .assert()
        .code(1);
    let tables = duckdb_tables(p.path());
    assert!(
        !tables.iter().any(|t| t.contains("pwned")),
        "the name ran as SQL: {tables:?}"
    );
}

#[test]
fn audit_arguments_reach_sql_only_as_columns_values_and_numbers() {
    let cases = [
        (
            "not_null(columns := (v, 'x; CREATE TABLE pwned AS SELECT 1'))",
            "is not a column name",
        ),
        ("not_null(columns := ())", "not a list of column names"),
        (
            "unique_values(columns := (v, 1))",
            "`1` is not a column name",
        ),
        (
            "number_of_rows(threshold := 1 UNION SELECT 2)",
            "not a whole number",
        ),
        (
            "accepted_values(column := (v, w), is_in := (1))",
            "more than one column",
        ),
    ];
    for (call, says) in cases {
        let p = project(&[(
            "models/x.sql",
            &format!("MODEL (\n  name m.x,\n  kind FULL,\n  audits ({call})\n);\nSELECT 1 AS v\n"),
        )]);
        let (code, e) = check_errors(p.path());
        assert_eq!(code, 1, "{call}");
        assert_eq!(e.len(), 1, "{call}: {e:?}");
        assert_eq!(e[0].0, "bad-audit-argument", "{call}: {e:?}");
        assert!(e[0].2.contains(says), "{call}: {e:?}");
    }
    // well-formed arguments (an upper-case column too) still audit
    let p = project(&[(
        "models/x.sql",
        "MODEL (\n  name m.x,\n  kind FULL,\n  audits (not_null(columns := (V, w)), number_of_rows(threshold := 2))\n);\nSELECT 1 AS v, 'a' AS w\n",
    )]);
    let out = efmesh(p.path())
        .args(["apply", "dev", "--yes", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "one row is below the threshold of 2"
    );
    let v = json(&out.stdout);
    assert_eq!(v["error"]["code"], "audit-failed", "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("number_of_rows"), "{message}");
    assert!(!message.contains("not_null"), "not_null passed: {message}");
}

// 4. namespace collisions

#[test]
fn names_in_efmesh_namespaces_are_refused() {
    for (name, says) in [
        ("dev__med.moves", "names environments' schemas"),
        ("_efmesh.med__moves__01234567", "efmesh's own"),
        ("efmesh_state.environments", "efmesh's own"),
    ] {
        let p = project(&[(
            "models/x.sql",
            &format!("MODEL (name {name}, kind FULL);\nSELECT 1 AS v\n"),
        )]);
        let (code, e) = check_errors(p.path());
        assert_eq!(code, 1, "{name}");
        assert_eq!(e[0].0, "invalid-name", "{name}: {e:?}");
        assert!(e[0].2.contains(says), "{name}: {e:?}");
    }
    // external_models.yaml names are held to the same rule
    let p = project(&[(
        "external_models.yaml",
        "- name: dev__raw.events\n  columns:\n    id: INT\n",
    )]);
    let (code, e) = check_errors(p.path());
    assert_eq!(code, 1);
    assert_eq!(e[0].0, "invalid-name", "{e:?}");
    // and an EXTERNAL table's name is a relation, not SQL
    let p = project(&[(
        "models/x.sql",
        "MODEL (name raw.x, kind EXTERNAL (table 'raw.t; DROP TABLE y'), columns (v INT));\n",
    )]);
    let (code, e) = check_errors(p.path());
    assert_eq!(code, 1);
    assert_eq!(e[0].0, "invalid-value", "{e:?}");
}

// 5. --metrics on a device path

#[test]
fn metrics_refuse_a_path_that_is_not_a_regular_file_before_anything_runs() {
    let p = project(&[(
        "models/a.sql",
        "MODEL (name m.a, kind FULL);\nSELECT 1 AS x\n",
    )]);
    for path in ["/dev/null", "/dev/full"] {
        let out = efmesh(p.path())
            .args(["apply", "dev", "--yes", "--json", "--metrics", path])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{path}");
        let v = json(&out.stdout);
        let message = v["error"]["message"].as_str().unwrap();
        assert!(message.contains("is not a regular file"), "{message}");
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::metadata(path)
            .unwrap()
            .file_type()
            .is_char_device());
    }
    assert!(
        duckdb_tables(p.path()).is_empty(),
        "the apply never started"
    );
    // a regular file still receives the metrics
    let prom = p.path().join("efmesh.prom");
    efmesh(p.path())
        .args(["apply", "dev", "--yes", "--metrics"])
        .arg(&prom)
        .assert()
        .success();
    assert!(std::fs::read_to_string(&prom).unwrap().contains("efmesh_"));
}

// 6. panics and runaways

fn time_range(params: &str) -> String {
    format!("MODEL (name m.a, kind INCREMENTAL_BY_TIME_RANGE (time_column ts{params}), start '2026-01-01');\nSELECT CAST(now() AS TIMESTAMP) AS ts\n")
}

#[test]
fn counts_that_would_overflow_are_refused_at_their_line() {
    for (params, property) in [
        (", batch_size 95000000", "batch_size"),
        (", batch_size 4294967295", "batch_size"),
        (", lookback 100000000", "lookback"),
        (", lookback 4294967295", "lookback"),
        (", batch_concurrency 100000", "batch_concurrency"),
    ] {
        let p = project(&[("models/a.sql", &time_range(params))]);
        let (code, e) = check_errors(p.path());
        assert_eq!(code, 1, "{params}");
        assert_eq!(e[0].0, "invalid-value", "{params}: {e:?}");
        assert_eq!(e[0].1, "models/a.sql:1", "{params}: {e:?}");
        assert!(e[0].2.contains(&format!("`{property}`")), "{params}: {e:?}");
    }
    // the janitor's ttl is a number of days a calendar can hold
    let p = project(&[("models/a.sql", &time_range(""))]);
    let out = efmesh(p.path())
        .args(["janitor", "--ttl", "1e10"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not a number of days from 0 to 36500"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_history_too_fine_and_too_long_is_refused_not_printed() {
    let p = project(&[(
        "models/a.sql",
        "MODEL (name m.a, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, batch_size 1), cron '* * * * *', start '1900-01-01');\nSELECT CAST(now() AS TIMESTAMP) AS ts\n",
    )]);
    let out = efmesh(p.path())
        .env("EFMESH_NOW", "2026-01-01T00:00:00Z")
        .args(["plan", "dev", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.len() < 10_000, "{} bytes", out.stdout.len());
    let v = json(&out.stdout);
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`m.a` would compute 66270240 batches"),
        "{message}"
    );
    assert!(v["error"]["help"].as_str().unwrap().contains("batch_size"));
}

#[test]
fn a_closed_pipe_or_a_full_disk_on_stdout_is_no_panic() {
    let p = project(&[("models/a.sql", &time_range(""))]);
    // the reader is gone before efmesh writes a byte
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("efmesh"))
        .current_dir(p.path())
        .args(["plan", "dev", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("efmesh"))
        .current_dir(p.path())
        .env("NO_COLOR", "1")
        .arg("check")
        .stdout(full)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot write to standard output"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_seed_that_is_a_device_is_refused_without_reading_it() {
    let p = project(&[(
        "models/s.sql",
        "MODEL (name s.zero, kind SEED (path '/dev/zero'));\n",
    )]);
    let (code, e) = check_errors(p.path());
    assert_eq!(code, 1);
    assert!(
        e.iter().any(|(_, _, m)| m.contains("not a regular file")),
        "{e:?}"
    );
}

#[test]
fn deep_nesting_and_alias_bombs_end_in_a_diagnostic() {
    let deep = format!(
        "MODEL (name m.a, kind FULL, tags {}a{});\nSELECT 1 AS x\n",
        "(".repeat(20_000),
        ")".repeat(20_000)
    );
    let p = project(&[("models/a.sql", &deep)]);
    let (code, e) = check_errors(p.path());
    assert_eq!(code, 1);
    assert_eq!(e[0].0, "block-syntax", "{e:?}");
    assert!(e[0].2.contains("at most 64 levels"), "{e:?}");

    // a billion laughs in a unit test: ten levels of ten aliases each
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..9 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        bomb.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    bomb.push_str("test_bomb:\n  model: m.a\n  outputs:\n    query:\n      rows: *a8\n");
    let p = project(&[
        (
            "models/a.sql",
            "MODEL (name m.a, kind FULL);\nSELECT 1 AS x\n",
        ),
        ("tests/test_bomb.yaml", &bomb),
        (
            "tests/test_deep.yaml",
            &format!(
                "t:\n  model: m.a\n  outputs:\n    query: {}1{}\n",
                "[".repeat(20_000),
                "]".repeat(20_000)
            ),
        ),
    ]);
    let out = efmesh(p.path()).arg("test").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("more than 1000000 values"), "{err}");
    assert!(
        err.contains("tests/test_deep.yaml") && err.contains("recursion limit"),
        "{err}"
    );
}

// 7. what check used to accept

#[test]
fn check_refuses_what_would_fail_or_mislead_later() {
    for (model, code, says) in [
        (
            "MODEL (name m.a, kind FULL);\nSELECT * FROM m.a\n",
            "self-reference",
            "`m.a` reads itself",
        ),
        (
            "MODEL (name m.a, kind FULL, cron 'every tuesday');\nSELECT 1 AS x\n",
            "invalid-value",
            "2 field(s)",
        ),
        (
            "MODEL (name m.a, kind FULL, cron '0 0 30 2 *');\nSELECT 1 AS x\n",
            "invalid-value",
            "matches no date",
        ),
        (
            "MODEL (name m.a, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key ()));\nSELECT 1 AS x\n",
            "invalid-value",
            "at least one column",
        ),
        (
            "MODEL (name m.a, kind SCD_TYPE_2 (unique_key x), columns (x INT, y INT));\nSELECT 1 AS x, 2 AS y\n",
            "key-column-missing",
            "updated_at",
        ),
        (
            "MODEL (name m.a, kind FULL, columns (x FROBNICATE));\nSELECT 1 AS x\n",
            "invalid-value",
            "`FROBNICATE` is not a type",
        ),
    ] {
        let p = project(&[("models/a.sql", model)]);
        let (code_, e) = check_errors(p.path());
        assert_eq!(code_, 1, "{model}");
        assert!(
            e.iter().any(|(c, _, m)| c == code && m.contains(says)),
            "{model}: {e:?}"
        );
    }
    // a self-reading incremental model is SQLMesh's pattern and still checks
    let p = project(&[(
        "models/a.sql",
        "MODEL (name m.a, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key x), columns (x INT));\nSELECT x FROM m.a UNION ALL SELECT 1 AS x\n",
    )]);
    let (code, e) = check_errors(p.path());
    assert_eq!(code, 0, "{e:?}");
}

#[test]
fn init_never_overwrites_a_file_it_did_not_write() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".gitignore"), "mine\n").unwrap();
    let out = efmesh(dir.path()).args(["init", "."]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`.gitignore`") && err.contains("nothing was written"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".gitignore")).unwrap(),
        "mine\n"
    );
    assert!(!dir.path().join("efmesh.toml").exists());
}

#[test]
fn engine_settings_resolve_environment_variables() {
    let p = project(&[
        (
            "efmesh.toml",
            "[project]\nname = \"t\"\n[engine]\nduckdb = \"efmesh.duckdb\"\n[engine.settings]\ntemp_directory = \"${EFMESH_TEST_SCRATCH}/spill\"\n",
        ),
        ("models/a.sql", "MODEL (name m.a, kind FULL);\nSELECT current_setting('temp_directory') AS t\n"),
    ]);
    efmesh(p.path())
        .env("EFMESH_TEST_SCRATCH", "/tmp/efmesh-scratch")
        .args(["apply", "dev", "--yes"])
        .assert()
        .success();
    let cfg = efmesh_core::config::Config::defaults("t").engine;
    let mut e = DuckDbEngine::open(p.path(), "efmesh.duckdb", &cfg).unwrap();
    assert_eq!(
        e.query_strings("SELECT t FROM dev__m.a").unwrap(),
        vec![Some("/tmp/efmesh-scratch/spill".to_string())]
    );
    // unset, it is refused at its line like any other `${VAR}`
    let out = efmesh(p.path())
        .env_remove("EFMESH_TEST_SCRATCH")
        .args(["check"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("EFMESH_TEST_SCRATCH"));
}

#[test]
fn a_duckdb_file_held_by_another_process_exits_3_naming_it() {
    let p = project(&[(
        "models/a.sql",
        "MODEL (name m.a, kind INCREMENTAL_BY_TIME_RANGE (time_column ts), start '2026-01-01', cron '@daily');\nSELECT CAST(@start AS TIMESTAMP) AS ts\n",
    )]);
    efmesh(p.path())
        .env("EFMESH_NOW", "2026-01-03T00:00:00Z")
        .args(["apply", "dev", "--yes"])
        .assert()
        .success();
    // this test process holds the database open, as a second apply or a notebook would
    let cfg = efmesh_core::config::Config::defaults("t").engine;
    let held = DuckDbEngine::open(p.path(), "efmesh.duckdb", &cfg).unwrap();
    let me = format!("PID {}", std::process::id());
    for args in [
        &["apply", "prod", "--yes", "--json"][..],
        &["run", "dev", "--json"][..],
    ] {
        let out = efmesh(p.path())
            .env("EFMESH_NOW", "2026-01-05T00:00:00Z")
            .args(args)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(3),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = json(&out.stdout);
        let text = v.to_string();
        assert!(text.contains(&me), "{args:?} names the holder: {v}");
    }
    let out = efmesh(p.path())
        .env("EFMESH_NOW", "2026-01-05T00:00:00Z")
        .args(["apply", "prod", "--yes"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is open for writing by another process") && err.contains(&me),
        "{err}"
    );
    drop(held);
    efmesh(p.path())
        .env("EFMESH_NOW", "2026-01-05T00:00:00Z")
        .args(["apply", "prod", "--yes"])
        .assert()
        .success();
}

#[test]
fn temporary_files_of_dead_runs_are_swept_by_the_next_run() {
    let p = project(&[
        (
            "efmesh.toml",
            "[project]\nname = \"t\"\nstart = \"2026-01-01\"\n[lake]\npath = \"lake\"\n",
        ),
        (
            "models/daily.sql",
            "MODEL (name m.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ts), target parquet, start '2026-01-01', cron '@daily');\nSELECT CAST(@start AS TIMESTAMP) AS ts\n",
        ),
    ]);
    let at = |now: &str, args: &[&str]| {
        efmesh(p.path())
            .env("EFMESH_NOW", now)
            .args(args)
            .assert()
            .success();
    };
    at("2026-01-03T00:00:00Z", &["apply", "prod", "--yes"]);
    let version = daily_version(p.path());
    // pid 4194305 is above Linux's pid_max: a writer that is certainly gone
    let dead = [
        version.join(".data-4194305-1.parquet.tmp"),
        version.join(".manifest.json.tmp-4194305"),
        p.path().join(".efmesh/.project-cache.json.tmp-4194305"),
    ];
    // a writer that is alive (this test) keeps its file
    let live = version.join(format!(".manifest.json.tmp-{}", std::process::id()));
    for f in dead.iter().chain([&live]) {
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, b"half written").unwrap();
    }
    at("2026-01-05T00:00:00Z", &["run", "prod"]);
    for f in &dead {
        assert!(!f.exists(), "{} was left", f.display());
    }
    assert!(live.exists(), "a live writer's file is its own");
}

// 1. and 2. the state against reality

/// A project with a parquet time-range model (24 rows a day) and a mart counting it.
fn lake_pair() -> tempfile::TempDir {
    project(&[
        (
            "efmesh.toml",
            "[project]\nname = \"t\"\nstart = \"2026-01-01\"\n[lake]\npath = \"lake\"\n",
        ),
        (
            "models/daily.sql",
            "MODEL (name m.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, batch_size 1), target parquet, start '2026-01-01', cron '@daily');\nSELECT t.ts FROM generate_series(CAST(@start AS TIMESTAMP), CAST(@end AS TIMESTAMP) - INTERVAL 1 HOUR, INTERVAL 1 HOUR) AS t(ts)\n",
        ),
        (
            "models/total.sql",
            "MODEL (name m.total, kind FULL, cron '@daily');\nSELECT count(*) AS n FROM m.daily\n",
        ),
    ])
}

fn one_value(dir: &Path, sql: &str) -> String {
    let cfg = efmesh_core::config::Config::defaults("t").engine;
    let mut e = DuckDbEngine::open(dir, "efmesh.duckdb", &cfg).unwrap();
    e.query_strings(sql).unwrap()[0].clone().unwrap_or_default()
}

/// The folder of the one version of `m.daily` in the project's lake.
fn daily_version(dir: &Path) -> std::path::PathBuf {
    std::fs::read_dir(dir.join("lake/m/daily"))
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("fp="))
        .unwrap()
        .path()
}

fn manifest_rows(dir: &Path) -> u64 {
    let version = daily_version(dir);
    let m: Value =
        serde_json::from_slice(&std::fs::read(version.join("manifest.json")).unwrap()).unwrap();
    m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rows"].as_u64().unwrap())
        .sum()
}

#[test]
fn a_lost_or_garbled_manifest_is_rebuilt_never_replaced_by_one_batch() {
    let p = lake_pair();
    assert!(
        efmesh_at(p.path(), "2026-01-06T00:00:00Z", &["apply", "dev", "--yes"])
            .status
            .success()
    );
    assert_eq!(manifest_rows(p.path()), 5 * 24);
    assert_eq!(
        one_value(p.path(), "SELECT CAST(n AS VARCHAR) FROM dev__m.total"),
        "120"
    );
    let version = || {
        std::fs::read_dir(p.path().join("lake/m/daily/"))
            .unwrap()
            .flatten()
            .next()
            .unwrap()
            .path()
    };
    for (damage, day, says) in [
        ("delete", "2026-01-07", "has no manifest"),
        ("garble", "2026-01-08", "cannot be read"),
        ("drop a file", "2026-01-09", "are gone"),
    ] {
        let v = version();
        match damage {
            "delete" => std::fs::remove_file(v.join("manifest.json")).unwrap(),
            "garble" => std::fs::write(v.join("manifest.json"), "{ not json").unwrap(),
            _ => {
                let part = std::fs::read_dir(&v)
                    .unwrap()
                    .flatten()
                    .find(|e| e.file_name().to_string_lossy().starts_with("interval="))
                    .unwrap()
                    .path();
                for f in std::fs::read_dir(part).unwrap().flatten() {
                    std::fs::remove_file(f.path()).unwrap();
                }
            }
        }
        let now = format!("{day}T00:00:00Z");
        // status sees it before anything runs
        let out = efmesh_at(p.path(), &now, &["status", "dev", "--check"]);
        assert_eq!(out.status.code(), Some(1), "{damage}: status is unhealthy");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(says),
            "{damage}"
        );
        // the plan says so and rebuilds the whole history
        let out = efmesh_at(p.path(), &now, &["plan", "dev", "--json"]);
        let v = json(&out.stdout);
        assert!(v["warnings"].to_string().contains(says), "{damage}: {v}");
        // the next tick recomputes everything: nothing is lost, nothing doubled
        let out = efmesh_at(p.path(), &now, &["run", "dev"]);
        assert!(
            out.status.success(),
            "{damage}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let days = (chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d").unwrap()
            - chrono::NaiveDate::from_ymd_opt(2026, 1, 1).unwrap())
        .num_days() as u64;
        assert_eq!(manifest_rows(p.path()), days * 24, "{damage}");
        assert_eq!(
            one_value(
                p.path(),
                "SELECT CAST(count(*) AS VARCHAR) FROM dev__m.daily"
            ),
            (days * 24).to_string(),
            "{damage}"
        );
        assert_eq!(
            efmesh_at(p.path(), &now, &["status", "dev", "--check"])
                .status
                .code(),
            Some(0)
        );
    }
}

#[test]
fn a_deleted_database_or_dropped_table_is_seen_and_rebuilt() {
    let p = lake_pair();
    std::fs::write(
        p.path().join("models/daily.sql"),
        "MODEL (name m.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, batch_size 1), start '2026-01-01', cron '@daily');\nSELECT t.ts FROM generate_series(CAST(@start AS TIMESTAMP), CAST(@end AS TIMESTAMP) - INTERVAL 1 HOUR, INTERVAL 1 HOUR) AS t(ts)\n",
    )
    .unwrap();
    let now = "2026-01-06T00:00:00Z";
    assert!(efmesh_at(p.path(), now, &["apply", "dev", "--yes"])
        .status
        .success());
    // the whole database file: even plan knows without opening it
    for f in std::fs::read_dir(p.path()).unwrap().flatten() {
        if f.file_name().to_string_lossy().starts_with("efmesh.duckdb") {
            std::fs::remove_file(f.path()).unwrap();
        }
    }
    let v = json(&efmesh_at(p.path(), now, &["plan", "dev", "--json"]).stdout);
    assert_eq!(v["hasChanges"], true, "{v}");
    assert!(v["warnings"].to_string().contains("is gone"), "{v}");
    assert!(
        !p.path().join("efmesh.duckdb").exists(),
        "plan created no database"
    );
    assert_eq!(
        efmesh_at(p.path(), now, &["status", "dev", "--check"])
            .status
            .code(),
        Some(1)
    );
    assert!(efmesh_at(p.path(), now, &["apply", "dev", "--yes"])
        .status
        .success());
    assert_eq!(
        one_value(p.path(), "SELECT CAST(n AS VARCHAR) FROM dev__m.total"),
        "120"
    );
    // one dropped physical table: apply and run look, and rebuild it
    let table = one_value(
        p.path(),
        "SELECT table_name FROM information_schema.tables WHERE table_schema = '_efmesh' AND table_name LIKE 'm__daily__%'",
    );
    let cfg = efmesh_core::config::Config::defaults("t").engine;
    DuckDbEngine::open(p.path(), "efmesh.duckdb", &cfg)
        .unwrap()
        .query_strings(&format!("DROP TABLE _efmesh.{table} CASCADE"))
        .unwrap();
    assert_eq!(
        efmesh_at(p.path(), now, &["status", "dev", "--check"])
            .status
            .code(),
        Some(1)
    );
    let out = efmesh_at(p.path(), now, &["run", "dev"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        one_value(
            p.path(),
            "SELECT CAST(count(*) AS VARCHAR) FROM dev__m.daily"
        ),
        "120"
    );
    assert_eq!(
        efmesh_at(p.path(), now, &["status", "dev", "--check"])
            .status
            .code(),
        Some(0)
    );
}

#[test]
fn a_moved_project_keeps_reading_its_lake() {
    let p = lake_pair();
    assert!(
        efmesh_at(p.path(), "2026-01-06T00:00:00Z", &["apply", "dev", "--yes"])
            .status
            .success()
    );
    let moved = tempfile::tempdir().unwrap();
    let to = moved.path().join("elsewhere");
    std::fs::rename(p.path(), &to).unwrap();
    // the physical views name the lake's files relative to the project, not where it was
    assert_eq!(
        one_value(&to, "SELECT CAST(count(*) AS VARCHAR) FROM dev__m.daily"),
        "120"
    );
    let out = efmesh_at(&to, "2026-01-07T00:00:00Z", &["run", "dev"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        one_value(&to, "SELECT CAST(n AS VARCHAR) FROM dev__m.total"),
        "144"
    );
    assert_eq!(
        efmesh_at(&to, "2026-01-07T00:00:00Z", &["status", "dev", "--check"])
            .status
            .code(),
        Some(0)
    );
    std::fs::rename(&to, p.path()).unwrap();
}

/// `status dev --deep --json`: its exit code with `--check` and the mismatches as
/// `(kind, object)`.
fn deep(dir: &Path, now: &str) -> (i32, Vec<(String, String)>) {
    let out = efmesh_at(dir, now, &["status", "dev", "--check", "--deep", "--json"]);
    let v = json(&out.stdout);
    let all = v["mismatches"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|m| {
            (
                m["kind"].as_str().unwrap().to_string(),
                m["object"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (out.status.code().unwrap(), all)
}

#[test]
fn status_deep_reports_every_mismatch_and_fails_check_only_for_served_data() {
    let p = lake_pair();
    let now = "2026-01-06T00:00:00Z";
    assert!(efmesh_at(p.path(), now, &["apply", "dev", "--yes"])
        .status
        .success());
    assert_eq!(deep(p.path(), now), (0, vec![]));
    let plain = json(&efmesh_at(p.path(), now, &["status", "dev", "--json"]).stdout);
    assert!(plain.get("mismatches").is_none(), "{plain}");

    // debris: a table no state knows, a staging leftover, a file no manifest names
    let cfg = efmesh_core::config::Config::defaults("t").engine;
    let sql = |s: &str| {
        DuckDbEngine::open(p.path(), "efmesh.duckdb", &cfg)
            .unwrap()
            .execute("test", s)
            .unwrap();
    };
    sql("CREATE TABLE _efmesh.m__gone__deadbeef AS SELECT 1 AS v");
    sql("CREATE TABLE _efmesh.efmesh_stage_0123abcd AS SELECT 1 AS v");
    let version = daily_version(p.path());
    std::fs::write(version.join("stray.parquet.tmp"), b"half").unwrap();
    let (code, all) = deep(p.path(), now);
    let kinds: Vec<&str> = all.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(code, 0, "debris serves nothing: {all:?}");
    assert_eq!(
        kinds,
        ["leftover-stage", "stray-table", "unlisted-file"],
        "{all:?}"
    );
    assert_eq!(all[1].1, "_efmesh.m__gone__deadbeef");
    assert!(all[2].1.ends_with("stray.parquet.tmp"), "{all:?}");

    // served data gone wrong: a view repointed, a view dropped, a file of another size
    sql("CREATE OR REPLACE VIEW dev__m.total AS SELECT 0 AS n");
    sql("DROP VIEW dev__m.daily");
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(version.join("manifest.json")).unwrap()).unwrap();
    let first = manifest["files"][0]["path"].as_str().unwrap().to_string();
    let f = std::fs::OpenOptions::new()
        .append(true)
        .open(version.join(&first))
        .unwrap();
    f.set_len(f.metadata().unwrap().len() + 7).unwrap();
    let (code, all) = deep(p.path(), now);
    assert_eq!(code, 1, "{all:?}");
    for (kind, object) in [
        ("missing-view", "dev__m.daily"),
        ("stale-view", "dev__m.total"),
        ("file-size", first.as_str()),
    ] {
        assert!(
            all.iter().any(|(k, o)| k == kind && o.ends_with(object)),
            "{kind} {object}: {all:?}"
        );
    }
    let text =
        String::from_utf8_lossy(&efmesh_at(p.path(), now, &["status", "dev", "--deep"]).stdout)
            .to_string();
    assert!(text.contains("deep check: 6 mismatch(es)"), "{text}");
}
