//! What efmesh parses but does not build is refused by `check`, at the line that asks for it,
//! and therefore before any apply starts: never accepted and done differently.

mod common;
use common::*;
use serde_json::Value;

/// `efmesh check --json` on a project: exit code and every error diagnostic as
/// `(code, file:line:column, message)`.
fn errors(files: &[(&str, &str)]) -> (i32, Vec<(String, String, String)>) {
    let p = project(files);
    let out = efmesh(p.path()).args(["check", "--json"]).output().unwrap();
    let v = json(&out.stdout);
    let errors = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d: &Value| {
            let l = &d["location"];
            (
                d["code"].as_str().unwrap().to_string(),
                format!(
                    "{}:{}:{}",
                    l["file"].as_str().unwrap_or(""),
                    l["line"],
                    l["column"]
                ),
                d["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (out.status.code().unwrap(), errors)
}

const LAKE: &str = "[project]\nname = \"t\"\nstart = \"2026-01-01\"\n[lake]\npath = \"lake\"\n";

#[test]
fn target_ducklake_without_a_catalog_is_refused_and_nothing_runs() {
    let (code, e) = errors(&[
        ("efmesh.toml", LAKE),
        (
            "models/a.sql",
            "MODEL (name m.a, kind FULL, target ducklake);\nSELECT 1 AS x",
        ),
    ]);
    assert_eq!(code, 1);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(
        (e[0].0.as_str(), e[0].1.as_str()),
        ("target-needs-ducklake", "models/a.sql:1:36")
    );
    assert!(e[0].2.contains("no `[ducklake] catalog`"), "{e:?}");
    // and apply never starts on it
    let p = project(&[
        ("efmesh.toml", LAKE),
        (
            "models/a.sql",
            "MODEL (name m.a, kind FULL, target ducklake);\nSELECT 1 AS x",
        ),
    ]);
    efmesh(p.path())
        .args(["apply", "dev", "--yes"])
        .assert()
        .code(1);
    assert!(
        !p.path().join("efmesh.duckdb").exists(),
        "nothing reached the engine"
    );
}

#[test]
fn config_sections_efmesh_cannot_honour_are_refused_at_their_line() {
    let (code, e) = errors(&[(
        "efmesh.toml",
        "[project]\nname = \"t\"\n[lake]\npath = \"gs://bucket/lake\"\n",
    )]);
    assert_eq!(code, 1);
    assert_eq!(
        (e[0].0.as_str(), e[0].1.as_str()),
        ("not-built-yet", "efmesh.toml:4:8"),
        "{e:?}"
    );
    assert!(e[0].2.contains("`gs://` lake"), "{e:?}");

    let (_, e) = errors(&[(
        "efmesh.toml",
        "[project]\nname = \"t\"\n[ducklake]\ncatalog = \"meta.ducklake\"\n",
    )]);
    // the DuckLake target is built: a catalog the engine cannot read is refused at its line
    assert_eq!(
        (e[0].0.as_str(), e[0].1.as_str()),
        ("config-value", "efmesh.toml:4:11"),
        "{e:?}"
    );
    assert!(e[0].2.contains("`[engine] extensions`"), "{e:?}");

    let (_, e) = errors(&[(
        "efmesh.toml",
        "[project]\nname = \"t\"\n[engine]\npostgres = \"postgres://h/db?sslmode=require\"\n",
    )]);
    // PostgreSQL is built now, but not over TLS: refused at the URL, never sent in clear
    assert!(e[0].2.contains("TLS"), "{e:?}");
    assert_eq!(e[0].1, "efmesh.toml:4:12", "{e:?}");
}

#[test]
fn a_parquet_target_needs_a_lake_and_a_kind_it_can_hold() {
    let (_, e) = errors(&[(
        "models/a.sql",
        "MODEL (name m.a, kind FULL, target parquet);\nSELECT 1 AS x",
    )]);
    assert_eq!(
        (e[0].0.as_str(), e[0].1.as_str()),
        ("target-needs-lake", "models/a.sql:1:36")
    );
    for kind in [
        "VIEW",
        "EMBEDDED",
        "INCREMENTAL_BY_UNIQUE_KEY (unique_key x)",
        "SCD_TYPE_2 (unique_key x)",
    ] {
        let text = format!(
            "MODEL (name m.a, kind {kind}, target parquet);\nSELECT 1 AS x, now() AS updated_at"
        );
        let (code, e) = errors(&[("efmesh.toml", LAKE), ("models/a.sql", &text)]);
        assert_eq!(code, 1, "{kind}");
        assert_eq!(e[0].0, "target-unsupported-kind", "{kind}: {e:?}");
    }
}

#[test]
fn batch_concurrency_is_refused_where_batches_cannot_run_at_once() {
    let cases = [
        // upserts and SCD runs read what the previous batch wrote
        (
            "INCREMENTAL_BY_UNIQUE_KEY (unique_key x, batch_concurrency 4)",
            "batch-concurrency-unsupported",
        ),
        (
            "SCD_TYPE_2 (unique_key x, batch_concurrency 2)",
            "unknown-kind-parameter",
        ),
        // no batches at all
        ("FULL", "batch-concurrency-unsupported"),
    ];
    for (kind, code) in cases {
        let prop = if kind == "FULL" {
            ", batch_concurrency 2"
        } else {
            ""
        };
        let text =
            format!("MODEL (name m.a, kind {kind}{prop});\nSELECT 1 AS x, now() AS updated_at");
        let (status, e) = errors(&[("models/a.sql", &text)]);
        assert_eq!(status, 1, "{kind}");
        assert_eq!(e[0].0, code, "{kind}: {e:?}");
    }
    // parquet versions publish one partition at a time
    let text = "MODEL (name m.a, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, batch_concurrency 4), target parquet);\nSELECT now()::TIMESTAMP AS ts";
    let (_, e) = errors(&[("efmesh.toml", LAKE), ("models/a.sql", text)]);
    assert_eq!(
        (e[0].0.as_str(), e[0].1.as_str()),
        ("not-built-yet", "models/a.sql:1:84"),
        "{e:?}"
    );
    // given twice, once as a property and once in the kind
    let text = "MODEL (name m.a, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, batch_concurrency 4), batch_concurrency 2);\nSELECT now()::TIMESTAMP AS ts";
    let (_, e) = errors(&[("models/a.sql", text)]);
    assert_eq!(e[0].0, "duplicate-property", "{e:?}");
    // a time-range model on engine tables takes it
    let text = "MODEL (name m.a, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, batch_concurrency 4));\nSELECT now()::TIMESTAMP AS ts";
    let (status, e) = errors(&[("models/a.sql", text)]);
    assert_eq!((status, e.len()), (0, 0), "{e:?}");
}
