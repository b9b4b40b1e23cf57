//! What a red-team pass broke (issue 20), one test per finding: hostile names and arguments
//! never reach SQL, efmesh's own namespaces cannot be claimed by a model, and bad input ends
//! in a clear error rather than a panic or a runaway.

mod common;
use common::*;
use efmesh::engine::duckdb::DuckDbEngine;
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
