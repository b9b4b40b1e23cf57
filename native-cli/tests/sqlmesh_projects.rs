//! SQLMesh projects run as they are, with SQLMesh's `config.yaml` and no `efmesh.toml`, and
//! build the tables SQLMesh 0.236.4 builds. The expected rows were recorded from SQLMesh itself
//! (`sqlmesh plan --auto-apply` on the same directory, then the tables read with DuckDB); the
//! fixtures are `tests/sqlmesh-init` (what `sqlmesh init duckdb` writes, unchanged) and
//! `tests/sqlmesh-macros` (variables, `@DEF`, `@EACH`, `@{}` names, `@GENERATE_SURROGATE_KEY`,
//! `@SAFE_ADD`, `@REDUCE`, `@AND`, `@STAR`, `@PIVOT`, `@DEDUPLICATE`, `@DATE_SPINE`,
//! `@HAVERSINE_DISTANCE`, `@UNION`, a model without `kind`, and an audit defined in a model file). `tests/sqlmesh-tests` holds YAML tests that SQLMesh 0.236.4's `sqlmesh test` passes
//! (CTE outputs, CSV and query fixtures, a fixture file, `execution_time` and variables).
//! `tests/sqlmesh-time-columns` keeps days as text and integers, with and without a format;
//! `tests/sqlmesh-naming` names models after their paths (`model_naming`) and sets the
//! project's `time_column_format`; `tests/sqlmesh-environment-statements` runs `before_all`
//! and `after_all`; `tests/sqlmesh-catalogs` builds in the first of two DuckDB catalogs;
//! `tests/sqlmesh-comments` documents tables and columns; `tests/sqlmesh-seed-columns` has a
//! seed file with a column its models do not declare; `tests/sqlmesh-jinja` has Jinja queries
//! and a Jinja macro file; `tests/sqlmesh-model-statements` has pre-, post-, on-virtual-update
//! and Jinja statements.

mod common;
use common::*;
use std::path::Path;

/// A copy of `tests/<name>` in a temp dir, so nothing is written into the repository.
fn fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = repo().join("tests").join(name);
    for entry in walk(&src) {
        let rel = entry.strip_prefix(&src).unwrap();
        let to = dir.path().join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&entry, to).unwrap();
    }
    dir
}

/// The rows of `sql` in `env`, as CSV lines without the header.
fn rows(dir: &Path, env: &str, sql: &str) -> Vec<String> {
    let out = efmesh(dir)
        .env("EFMESH_NOW", NOW)
        .args(["query", env, sql, "--format", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .skip(1)
        .map(str::to_string)
        .collect()
}

/// [`efmesh_at`], which must succeed.
fn ok_at(dir: &Path, now: &str, args: &[&str]) -> std::process::Output {
    let out = efmesh_at(dir, now, args);
    assert!(out.status.success(), "{args:?} at {now}: {out:?}");
    out
}

/// `efmesh check --json` on `dir`: its exit code and its diagnostics.
fn check_diagnostics(dir: &Path) -> (Option<i32>, Vec<serde_json::Value>) {
    let out = efmesh(dir).args(["check", "--json"]).output().unwrap();
    let v = json(&out.stdout);
    (
        out.status.code(),
        v["diagnostics"].as_array().unwrap().clone(),
    )
}

/// `efmesh check` on `dir` must pass: its diagnostics (warnings only).
fn checks(dir: &Path) -> Vec<serde_json::Value> {
    let (code, diagnostics) = check_diagnostics(dir);
    assert_eq!(code, Some(0), "{diagnostics:?}");
    diagnostics
}

/// `efmesh check` on `dir` must fail: its first diagnostic with `code`.
fn refused(dir: &Path, code: &str) -> serde_json::Value {
    let (exit, diagnostics) = check_diagnostics(dir);
    assert_eq!(exit, Some(1), "{diagnostics:?}");
    diagnostics
        .iter()
        .find(|d| d["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {diagnostics:?}"))
        .clone()
}

/// The clock of every apply: the day after the init template's `start`.
const NOW: &str = "2026-12-04T00:00:00Z";

#[test]
fn the_sqlmesh_init_template_checks_builds_tests_and_matches_sqlmesh() {
    let p = fixture("sqlmesh-init");
    assert!(!p.path().join("efmesh.toml").exists());
    let out = efmesh(p.path())
        .env("EFMESH_NOW", NOW)
        .args(["check", "--json"])
        .output()
        .unwrap();
    let v = json(&out.stdout);
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["models"], 3, "{v}");
    // the linter section is named once as read past; nothing else about the config
    let config_warnings: Vec<&serde_json::Value> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "sqlmesh-config")
        .collect();
    assert_eq!(config_warnings.len(), 1, "{v}");
    assert!(
        config_warnings[0]["message"]
            .as_str()
            .unwrap()
            .contains("`linter`"),
        "{v}"
    );

    efmesh(p.path())
        .env("EFMESH_NOW", NOW)
        .args(["apply", "prod", "--yes"])
        .assert()
        .success();
    // the gateway's database is where the tables are
    assert!(p.path().join("db.db").is_file());
    assert!(!p.path().join("efmesh.duckdb").exists());

    // as SQLMesh built them
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT * FROM sqlmesh_example.full_model ORDER BY ALL"
        ),
        ["1,5", "2,1", "3,1"]
    );
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT * FROM sqlmesh_example.incremental_model ORDER BY ALL"
        ),
        [
            "1,2,2020-01-01",
            "2,1,2020-01-01",
            "3,3,2020-01-03",
            "4,1,2020-01-04",
            "5,1,2020-01-05",
            "6,1,2020-01-06",
            "7,1,2020-01-07"
        ]
    );
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT count(*) FROM sqlmesh_example.seed_model"
        ),
        ["7"]
    );

    // its YAML unit test passes
    let out = efmesh(p.path()).args(["test"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 passed, 0 failed"),
        "{out:?}"
    );
}

#[test]
fn variables_and_the_macro_language_build_what_sqlmesh_builds() {
    let p = fixture("sqlmesh-macros");
    efmesh(p.path())
        .env("EFMESH_NOW", NOW)
        .args(["apply", "prod", "--yes"])
        .assert()
        .success();
    // a model that declares its columns gets a table of exactly those types, as SQLMesh's
    // CTAS casts to them (DuckDB's query says INTEGER and DECIMAL(2,1) here)
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT typeof(id), typeof(amount) FROM raw.shop_b LIMIT 1"
        ),
        ["BIGINT,DOUBLE"]
    );
    // recorded from SQLMesh: (1250, 3000, '44610f911284404da78272b33ec79db3', 1, 6)
    assert_eq!(
        rows(p.path(), "prod", "SELECT * FROM mart.by_region"),
        ["1250,3000,44610f911284404da78272b33ec79db3,1,6"]
    );
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT * FROM mart.big_sales ORDER BY ALL"
        ),
        ["eu,30.0", "us,12.5"]
    );
    // @DEDUPLICATE, @DATE_SPINE, @PIVOT and @HAVERSINE_DISTANCE, as SQLMesh built them:
    // (3, 2026-01-03, 1, 1, 1, 30.0, 877.959)
    assert_eq!(
        rows(p.path(), "prod", "SELECT * FROM mart.shaped"),
        ["3,2026-01-03,1,1,1,30.0,877.959"]
    );
    // @STAR, and @STAR over a model that uses @STAR, as SQLMesh built them
    assert_eq!(
        rows(p.path(), "prod", "SELECT * FROM mart.starred ORDER BY ALL"),
        ["eu,10.0", "eu,60.0", "jp,198.0", "us,25.0"]
    );
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT sale_region_2, doubled_2 FROM mart.starred_again ORDER BY ALL"
        ),
        ["eu,60.0", "jp,198.0", "us,25.0"]
    );
    // @UNION: the columns of the same name and type, as SQLMesh built them:
    // [('eu', 4.0), ('jp', 9.5), ('us', 2.5)], and with a false condition [('eu', 4.0), ('us', 2.5)]
    assert_eq!(
        rows(p.path(), "prod", "SELECT * FROM mart.unioned ORDER BY ALL"),
        ["eu,4.0", "jp,9.5", "us,2.5"]
    );
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT * FROM mart.first_only ORDER BY ALL"
        ),
        ["eu,4.0", "us,2.5"]
    );
    // a model without `kind` is a VIEW, as in SQLMesh
    let plan = efmesh(p.path())
        .env("EFMESH_NOW", NOW)
        .args(["plan", "dev", "--json"])
        .output()
        .unwrap();
    let plan = json(&plan.stdout);
    let kind = plan["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["model"] == "mart.big_sales")
        .map(|a| a["kind"].clone());
    assert_eq!(kind, Some(serde_json::json!("VIEW")), "{plan}");

    // changing a variable changes exactly the models that read it
    let config = p.path().join("config.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text.replace("min_amount: 10", "min_amount: 20")).unwrap();
    let plan = efmesh(p.path())
        .env("EFMESH_NOW", NOW)
        .args(["plan", "prod", "--json"])
        .output()
        .unwrap();
    let plan = json(&plan.stdout);
    let mut changed: Vec<&str> = plan["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["category"] != "unchanged")
        .map(|a| a["model"].as_str().unwrap())
        .collect();
    changed.sort();
    assert_eq!(changed, ["mart.big_sales", "mart.by_region"], "{plan}");

    // the audit defined in big_sales.sql after its query blocks, as SQLMesh's does
    // (SQLMesh, with min_amount 10: "'at_least' audit error: 2 rows failed")
    std::fs::write(&config, &text).unwrap();
    let file = p.path().join("models/big_sales.sql");
    let model = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, model.replace("floor := 0", "floor := 100")).unwrap();
    let out = efmesh(p.path())
        .env("EFMESH_NOW", NOW)
        .args(["apply", "prod", "--yes"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("at_least") && stderr.contains("2 violation"),
        "{stderr}"
    );
}

#[test]
fn what_efmesh_cannot_run_is_named_with_what_to_do() {
    // a Python model and a Python macro are listed by file; an empty __init__.py is not
    let p = fixture("sqlmesh-init");
    std::fs::write(
        p.path().join("models/py_model.py"),
        "def entrypoint(context):\n    ...\n",
    )
    .unwrap();
    std::fs::write(
        p.path().join("macros/helpers.py"),
        "from sqlmesh import macro\n",
    )
    .unwrap();
    let out = efmesh(p.path()).args(["check", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let v = json(&out.stdout);
    let python: Vec<(&str, &str)> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "python-file")
        .map(|d| {
            (
                d["location"]["file"].as_str().unwrap(),
                d["message"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        python,
        [
            ("macros/helpers.py", "a Python macro is not supported"),
            ("models/py_model.py", "a Python model is not supported")
        ],
        "{v}"
    );

    // a Jinja query and a Jinja macro file are rendered; Jinja in an audit is refused at its
    // marker, and nothing cascades
    let p = fixture("sqlmesh-init");
    let files = [
        (
            "models/templated.sql",
            "MODEL (name sqlmesh_example.templated, kind FULL);\n\nJINJA_QUERY_BEGIN;\nSELECT {{ 1 + 1 }} AS two\nJINJA_END;\n",
        ),
        (
            "models/child.sql",
            "MODEL (name sqlmesh_example.child, kind FULL);\nSELECT two FROM sqlmesh_example.templated\n",
        ),
        (
            "macros/helpers.sql",
            "-- helpers\n{% macro double(x) %}{{ x }} * 2{% endmacro %}\n",
        ),
        (
            "audits/templated.sql",
            "AUDIT (name templated);\nSELECT * FROM @this_model WHERE id > {{ limit }}\n",
        ),
    ];
    for (file, text) in files {
        std::fs::write(p.path().join(file), text).unwrap();
    }
    let (code, diagnostics) = check_diagnostics(p.path());
    assert_eq!(code, Some(1), "{diagnostics:?}");
    let errors: Vec<(String, &str)> = diagnostics
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| {
            (
                format!(
                    "{}:{}",
                    d["location"]["file"].as_str().unwrap(),
                    d["location"]["line"]
                ),
                d["message"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        errors,
        [(
            "audits/templated.sql:2".to_string(),
            "Jinja templating (`{{`) is not supported by efmesh"
        ),],
        "{diagnostics:?}"
    );

    // a key that would change what is built is refused with its line
    let p = fixture("sqlmesh-init");
    let config = p.path().join("config.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{text}\nloader: mypackage.Loader\n")).unwrap();
    let out = efmesh(p.path()).args(["check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`loader` in config.yaml is not supported"),
        "{stderr}"
    );
    assert!(stderr.contains("config.yaml:"), "{stderr}");
    assert!(stderr.contains("a custom loader is Python"), "{stderr}");

    // a project configured in Python is refused before anything is read
    let p = fixture("sqlmesh-init");
    std::fs::remove_file(p.path().join("config.yaml")).unwrap();
    std::fs::write(p.path().join("config.py"), "config = {}\n").unwrap();
    let out = efmesh(p.path()).args(["check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("config.py") && stderr.contains("config.yaml"),
        "{stderr}"
    );
}

#[test]
fn forward_only_and_disable_restatement_in_the_kind_are_honoured() {
    let model = |expr: &str| {
        format!("MODEL (name m.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, forward_only true, disable_restatement true), start '2026-01-01', cron '@daily');\nSELECT range AS id, {expr} AS v, TIMESTAMP '2026-01-01' + to_days(range) AS ts FROM range(10) WHERE ts >= @start AND ts < @end")
    };
    let p = project(&[("models/daily.sql", &model("1"))]);
    let at = |now: &str, args: &[&str]| efmesh_at(p.path(), now, args);
    assert!(at("2026-01-05T00:00:00Z", &["apply", "dev", "--yes"])
        .status
        .success());
    // a breaking change to the query: forward-only, so the four built days keep v = 1
    std::fs::write(p.path().join("models/daily.sql"), model("2")).unwrap();
    let plan = json(&at("2026-01-08T00:00:00Z", &["plan", "dev", "--json"]).stdout);
    let action = &plan["actions"][0];
    assert_eq!(action["forwardOnly"], true, "{plan}");
    assert!(at("2026-01-08T00:00:00Z", &["apply", "dev", "--yes"])
        .status
        .success());
    let out = at(
        "2026-01-08T00:00:00Z",
        &[
            "query",
            "dev",
            "SELECT v, count(*) FROM m.daily GROUP BY v ORDER BY v",
            "--format",
            "csv",
        ],
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "v,count_star()\n1,4\n2,3\n"
    );
    // and it may not be restated
    let out = at(
        "2026-01-08T00:00:00Z",
        &[
            "restate",
            "dev",
            "--model",
            "m.daily",
            "--from",
            "2026-01-01",
            "--to",
            "2026-01-02",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("disable_restatement"),
        "{out:?}"
    );
}

#[test]
fn on_destructive_change_drops_or_keeps_the_columns_a_forward_only_version_leaves_out() {
    let model = |policy: &str, columns: &str| {
        format!("MODEL (name m.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, forward_only true{policy}), start '2026-01-01', cron '@daily');\nSELECT range AS id, {columns}TIMESTAMP '2026-01-01' + to_days(range) AS ts FROM range(10) WHERE ts >= @start AND ts < @end")
    };
    let columns = |p: &Path| {
        let out = efmesh(p)
            .env("EFMESH_NOW", "2026-01-08T00:00:00Z")
            .args([
                "query",
                "dev",
                "SELECT * FROM m.daily LIMIT 0",
                "--format",
                "csv",
            ])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        stdout.lines().next().unwrap_or_default().replace(',', "|")
    };
    for (policy, outcome) in [
        ("", "refused"),
        (", on_destructive_change error", "refused"),
        (", on_destructive_change allow", "id|ts"),
        (", on_destructive_change warn", "id|ts"),
        (", on_destructive_change ignore", "id|v|ts"),
    ] {
        let p = project(&[("models/daily.sql", &model(policy, "1 AS v, "))]);
        let apply = |now: &str| {
            efmesh(p.path())
                .env("EFMESH_NOW", now)
                .args(["apply", "dev", "--yes"])
                .output()
                .unwrap()
        };
        assert!(apply("2026-01-05T00:00:00Z").status.success());
        // the new version no longer returns `v`
        std::fs::write(p.path().join("models/daily.sql"), model(policy, "")).unwrap();
        let out = apply("2026-01-08T00:00:00Z");
        let stderr = String::from_utf8_lossy(&out.stderr);
        if outcome == "refused" {
            assert_eq!(out.status.code(), Some(1), "{policy}: {stderr}");
            assert!(stderr.contains("drops column(s) v"), "{policy}: {stderr}");
            assert_eq!(columns(p.path()), "id|v|ts", "{policy}");
            continue;
        }
        assert!(out.status.success(), "{policy}: {stderr}");
        assert_eq!(columns(p.path()), outcome, "{policy}");
        if policy.contains("warn") {
            assert!(stderr.contains("on_destructive_change warn"), "{stderr}");
        }
        if policy.contains("ignore") {
            // the four days built before keep v = 1; the three new ones have NULL
            let out = efmesh(p.path())
                .env("EFMESH_NOW", "2026-01-08T00:00:00Z")
                .args([
                    "query",
                    "dev",
                    "SELECT v, count(*) FROM m.daily GROUP BY v ORDER BY v NULLS LAST",
                    "--format",
                    "csv",
                ])
                .output()
                .unwrap();
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                "v,count_star()\n1,4\n,3\n"
            );
        }
    }
}

#[test]
fn auto_restatement_cron_restates_the_latest_intervals_when_it_fires() {
    // one row per day, whose value comes from a file outside the project's models, as
    // late-arriving data would
    let p = project(&[
        ("models/daily.sql", "MODEL (name m.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ds, auto_restatement_cron '@weekly', auto_restatement_intervals 3), start '2026-01-01', cron '@daily');\nSELECT CAST(d.range AS DATE) AS ds, v.v FROM range(CAST(@start_ds AS TIMESTAMP), CAST(@end_ds AS TIMESTAMP) + INTERVAL 1 DAY, INTERVAL 1 DAY) AS d, read_csv('v.csv') AS v\n"),
        ("v.csv", "v\n1\n"),
    ]);
    let at = |now: &str, args: &[&str]| ok_at(p.path(), now, args);
    let value = |v: &str| std::fs::write(p.path().join("v.csv"), format!("v\n{v}\n")).unwrap();
    // 2026-01-01 is a Thursday: @weekly fires at midnight on Sunday 2026-01-04
    at("2026-01-03T00:00:00Z", &["apply", "dev", "--yes"]);
    value("2");
    // no tick since the build: nothing is due
    let quiet = json(&at("2026-01-03T12:00:00Z", &["run", "dev", "--json"]).stdout);
    assert!(quiet.get("autoRestated").is_none(), "{quiet}");
    // it fired: the 3 latest days [01-02, 01-05) are restated, 01-02 with the new value
    let fired = json(&at("2026-01-05T00:00:00Z", &["run", "dev", "--json"]).stdout);
    assert_eq!(
        fired["autoRestated"][0]["start"], "2026-01-02T00:00:00Z",
        "{fired}"
    );
    assert_eq!(
        fired["autoRestated"][0]["end"], "2026-01-05T00:00:00Z",
        "{fired}"
    );
    value("3");
    // no tick since the last run: only the new day is computed
    let next = json(&at("2026-01-06T00:00:00Z", &["run", "dev", "--json"]).stdout);
    assert!(next.get("autoRestated").is_none(), "{next}");
    let rows = at(
        "2026-01-06T00:00:00Z",
        &[
            "query",
            "dev",
            "SELECT ds, v FROM m.daily ORDER BY ds",
            "--format",
            "csv",
        ],
    );
    assert_eq!(
        String::from_utf8_lossy(&rows.stdout),
        "ds,v\n2026-01-01,1\n2026-01-02,2\n2026-01-03,2\n2026-01-04,2\n2026-01-05,3\n"
    );
}

#[test]
fn external_models_are_read_from_every_file_sqlmesh_reads_them_from() {
    let p = fixture("sqlmesh-init");
    std::fs::write(
        p.path().join("models/joined.sql"),
        "MODEL (name sqlmesh_example.joined, kind VIEW);\nSELECT l.id, o.zip FROM raw.legacy AS l JOIN raw.other AS o USING (id)\n",
    )
    .unwrap();
    // an undeclared table is read as it is, as SQLMesh reads it, with a warning that names it
    let errors = |p: &Path| -> Vec<String> {
        let (code, diagnostics) = check_diagnostics(p);
        assert_eq!(code, Some(0), "{diagnostics:?}");
        diagnostics
            .iter()
            .filter(|d| d["code"] == "undeclared-external")
            .map(|d| {
                assert_eq!(d["severity"], "warning", "{d}");
                d["message"].as_str().unwrap().to_string()
            })
            .collect()
    };
    assert_eq!(
        errors(p.path()).len(),
        2,
        "both tables are undeclared at first"
    );
    // SQLMesh's older name for external_models.yaml, and the external_models/ directory
    std::fs::write(
        p.path().join("schema.yaml"),
        "- name: raw.legacy\n  columns:\n    id: int\n",
    )
    .unwrap();
    std::fs::create_dir_all(p.path().join("external_models/more")).unwrap();
    std::fs::write(
        p.path().join("external_models/more/other.yaml"),
        "- name: raw.other\n  columns:\n    id: int\n    zip: text\n",
    )
    .unwrap();
    assert_eq!(errors(p.path()), Vec::<String>::new());
    // with external_models.yaml present, schema.yaml is not read, as in SQLMesh
    std::fs::write(
        p.path().join("external_models.yaml"),
        "- name: raw.unused\n  columns:\n    id: int\n",
    )
    .unwrap();
    let left = errors(p.path());
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].contains("raw.legacy"), "{left:?}");
}

#[test]
fn incremental_by_partition_replaces_the_partitions_each_refresh_returns() {
    let model = |props: &str| {
        format!("MODEL (name m.part, kind INCREMENTAL_BY_PARTITION{props}, cron '@daily');\nSELECT ds, v FROM read_csv('data.csv')\n")
    };
    let p = project(&[
        ("models/part.sql", &model(", partitioned_by ds")),
        ("data.csv", "ds,v\na,1\nb,1\n"),
    ]);
    let at = |now: &str, args: &[&str]| {
        String::from_utf8_lossy(&ok_at(p.path(), now, args).stdout).to_string()
    };
    let table = |now: &str| {
        at(
            now,
            &[
                "query",
                "dev",
                "SELECT ds, v FROM m.part ORDER BY ALL",
                "--format",
                "csv",
            ],
        )
    };
    at("2026-01-03T00:00:00Z", &["apply", "dev", "--yes"]);
    std::fs::write(p.path().join("data.csv"), "ds,v\nb,2\nc,2\n").unwrap();
    // its cron has not fired since the build: the table is as built
    assert!(at("2026-01-03T12:00:00Z", &["run", "dev"]).contains("nothing was due"));
    assert_eq!(table("2026-01-03T12:00:00Z"), "ds,v\na,1\nb,1\n");
    // it fired: partition b is replaced, c added, a (no longer returned) kept
    let ran = at("2026-01-04T00:00:01Z", &["run", "dev"]);
    assert!(ran.contains("rebuilt 1 model(s) on their cron"), "{ran}");
    assert_eq!(table("2026-01-04T00:00:01Z"), "ds,v\na,1\nb,2\nc,2\n");

    // the partition key is required, must be output columns, and is read past on other kinds
    let codes = |text: &str| -> Vec<String> {
        std::fs::write(p.path().join("models/part.sql"), text).unwrap();
        check_diagnostics(p.path())
            .1
            .iter()
            .filter(|d| d["code"] != "columns-unchecked")
            .map(|d| {
                format!(
                    "{} {}",
                    d["code"].as_str().unwrap(),
                    d["message"].as_str().unwrap()
                )
            })
            .collect()
    };
    assert_eq!(
        codes(&model("")),
        ["missing-kind-parameter kind INCREMENTAL_BY_PARTITION needs `partitioned_by`"]
    );
    assert_eq!(
        codes(&model(", partitioned_by day")),
        ["key-column-missing partitioned_by column `day` is not an output column of the model"]
    );
    assert_eq!(
        codes("MODEL (name m.part, kind FULL, partitioned_by ds);\nSELECT 1 AS ds\n"),
        ["ignored-property property `partitioned_by` is ignored by efmesh"]
    );
}

/// `efmesh test --json` on `dir`: the exit code and the report.
fn unit_tests(dir: &Path) -> (i32, serde_json::Value) {
    let out = efmesh(dir).args(["test", "--json"]).output().unwrap();
    (out.status.code().unwrap(), json(&out.stdout))
}

/// Replace `from` (which must be there) by `to` in the fixture's test file.
fn edit_tests(dir: &Path, from: &str, to: &str) {
    let path = dir.join("tests/test_customer_totals.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{from}");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

#[test]
fn sqlmesh_yaml_tests_pass_as_in_sqlmesh_and_fail_where_they_should() {
    let p = fixture("sqlmesh-tests");
    // the fixture file beside the tests is not read as a test file (SQLMesh reads test*.yaml)
    let (code, v) = unit_tests(p.path());
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["passed"], 5, "{v}");

    // a CTE's rows are compared: a wrong amount fails in that CTE only
    edit_tests(
        p.path(),
        "{customer_id: 1, amount: 7.50}",
        "{customer_id: 1, amount: 7.00}",
    );
    let (code, v) = unit_tests(p.path());
    assert_eq!(code, 1, "{v}");
    let t = &v["tests"][0];
    assert_eq!(t["status"], "failed", "{v}");
    assert!(t["diff"].is_null(), "the output still matches: {t}");
    assert_eq!(t["cteDiffs"][0]["cte"], "recent", "{t}");
    assert_eq!(
        t["cteDiffs"][0]["mismatched"][0]["cells"][0]["expected"], "7.00",
        "{t}"
    );
    edit_tests(
        p.path(),
        "{customer_id: 1, amount: 7.00}",
        "{customer_id: 1, amount: 7.50}",
    );

    // the test's variable is what the model reads: with the project's (10), customer 1 is big
    // either way, so a threshold of 13 must flip it
    edit_tests(p.path(), "min_total: 12", "min_total: 13");
    let (code, v) = unit_tests(p.path());
    assert_eq!(code, 1, "{v}");
    let cells = &v["tests"][0]["diff"]["mismatched"][0]["cells"];
    assert_eq!(cells[0]["column"], "big", "{v}");
    assert_eq!(cells[0]["actual"], "false", "{v}");
    edit_tests(p.path(), "min_total: 13", "min_total: 12");

    // without execution_time the clock is today's: nothing is recent, so the test fails
    edit_tests(
        p.path(),
        "    execution_time: 2024-03-01\n    min_total",
        "    min_total",
    );
    let (code, v) = unit_tests(p.path());
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["tests"][0]["cteDiffs"][0]["actualRows"], 0, "{v}");
    edit_tests(
        p.path(),
        "    min_total",
        "    execution_time: 2024-03-01\n    min_total",
    );

    // a query as the expected output is compared like rows
    edit_tests(p.path(), "SELECT 3, 2.50, FALSE", "SELECT 3, 2.75, FALSE");
    let (code, v) = unit_tests(p.path());
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["tests"][1]["status"], "failed", "{v}");
    edit_tests(p.path(), "SELECT 3, 2.75, FALSE", "SELECT 3, 2.50, FALSE");

    // a CTE the query does not define is an error at its line, with the CTEs it has
    edit_tests(
        p.path(),
        "      totals:\n        partial",
        "      totls:\n        partial",
    );
    let (code, v) = unit_tests(p.path());
    assert_eq!(code, 2, "{v}");
    let d = &v["diagnostics"][0];
    assert_eq!(d["code"], "test-unknown-cte", "{v}");
    assert_eq!(d["location"]["line"], 20, "{v}");
    assert!(
        d["help"]
            .as_str()
            .unwrap()
            .contains("did you mean `totals`"),
        "{v}"
    );
    edit_tests(p.path(), "      totls:", "      totals:");
    let (code, v) = unit_tests(p.path());
    assert_eq!(code, 0, "{v}");

    // and SQLMesh's project builds with the same model
    efmesh(p.path())
        .env("EFMESH_NOW", NOW)
        .args(["apply", "prod", "--yes"])
        .assert()
        .success();
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT customer_id, total, n FROM shop.customer_totals ORDER BY ALL"
        ),
        Vec::<String>::new(),
        "in December 2026 no order of early 2024 is recent"
    );
}

/// `tests/sqlmesh-idioms` gathers what public SQLMesh DuckDB projects write that the other
/// fixtures do not; every expected row was recorded from SQLMesh 0.236.4 on the same directory.
#[test]
fn idioms_of_public_sqlmesh_projects_build_what_sqlmesh_builds() {
    let p = fixture("sqlmesh-idioms");
    let out = efmesh(p.path())
        .env("EFMESH_NOW", NOW)
        .args(["apply", "prod", "--yes"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");

    // unaliased `ds::DATE`, `CAST(amount AS DOUBLE)`, `'web'` and `1 + 1` are named as
    // SQLMesh's optimizer names them, and the incremental model's time column is found
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT string_agg(column_name, '|' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_name = 'events' AND table_schema = 'stg'"
        ),
        ["ds|user_id|amount|web|_col_4"]
    );
    // recorded: (2026-01-01, 10.50, web, 2), (2026-01-02, 21.50, web, 2)
    assert_eq!(
        rows(p.path(), "prod", "SELECT * FROM mart.daily ORDER BY ALL"),
        ["2026-01-01,10.50,web,2", "2026-01-02,21.50,web,2"]
    );
    // as SQLMesh typed it: `SUM` of a DECIMAL(10,2) keeps it (DuckDB says DECIMAL(38,2))
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT typeof(total) FROM mart.daily LIMIT 1"
        ),
        ["\"DECIMAL(10,2)\""]
    );
    // a header with spaces after its commas names its columns without them (the values keep
    // theirs), and REAL arithmetic gets sqlglot's DOUBLE where DuckDB says FLOAT, as SQLMesh
    // built it; the non-blocking copy of `number_of_rows` warned and let the model build
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT id, name, doubled, priced, typeof(doubled), typeof(priced) FROM mart.priced ORDER BY id"
        ),
        [
            "1, stripe,1.0,1.9950000047683716,DOUBLE,DOUBLE",
            "2, airbnb,2.5,4.987500190734863,DOUBLE,DOUBLE"
        ]
    );
    // the types SQLMesh 0.236.4 gave them: its bare DECIMAL for a DECIMAL over an integer,
    // the query's own types for a unique-key table and sqlglot's for an SCD table, and a
    // struct declared with angle brackets and built with `STRUCT(x AS name)`
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT (SELECT typeof(ratio) || ' ' || ratio FROM mart.ratios), (SELECT typeof(total) FROM mart.keyed), (SELECT typeof(total) FROM mart.scd), (SELECT typeof(items) || ' ' || items.product_id FROM mart.structs)"
        ),
        ["\"DECIMAL(18,3) 3.333\",HUGEINT,BIGINT,\"STRUCT(product_id VARCHAR, quantity INTEGER) 7\""]
    );
    // whole numbers in a TIMESTAMP or DATE seed column are nanoseconds since the epoch, as
    // pandas reads them for SQLMesh
    assert_eq!(
        rows(p.path(), "prod", "SELECT * FROM raw.epochs ORDER BY id"),
        [
            "1,1970-01-01 00:00:01.696145,1970-01-01",
            "2,1970-01-01 00:00:01.696145,1970-01-01"
        ]
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("number_of_rows_non_blocking"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // a CSV seed without `columns` is typed as pandas types it, and pandas' missing-value
    // markers (NULL, None, NA, N/A, nan) are NULL in every column
    let types = |table: &str| {
        rows(
            p.path(),
            "prod",
            &format!("SELECT string_agg(column_name || ' ' || data_type, '|' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_schema = 'raw' AND table_name = '{table}'"),
        )
    };
    assert_eq!(
        types("people"),
        ["id BIGINT|name VARCHAR|score DOUBLE|ratio DOUBLE|active BOOLEAN|flag BOOLEAN|joined VARCHAR|note VARCHAR|maybe_int DOUBLE|big BIGINT"]
    );
    // recorded: (1, 'Ann', 10.0, 0.5, True, True, '2024-01-04', None, 1.0, 9007199254740993),
    // (2, None, 20.0, 1.0, False, False, '2024-02-05', None, None, 12),
    // (3, 'Cy', None, 2.25, True, True, '2024-03-06', None, 3.0, 13),
    // (4, None, 40.0, None, False, False, '2024-04-07', 'x', 4.0, 14)
    assert_eq!(
        rows(p.path(), "prod", "SELECT * FROM raw.people ORDER BY id"),
        [
            "1,Ann,10.0,0.5,true,true,2024-01-04,,1.0,9007199254740993",
            "2,,20.0,1.0,false,false,2024-02-05,,,12",
            "3,Cy,,2.25,true,true,2024-03-06,,3.0,13",
            "4,,40.0,,false,false,2024-04-07,x,4.0,14"
        ]
    );
    // `$root/seeds/...`, and DATE and TIMESTAMP values written month first; recorded:
    // (1, 2024-01-04, 2024-01-04 13:45, 'a'), (2, 2024-12-31, 2024-12-31 00:00, None),
    // (3, None, 2024-02-03 04:05, 'b')
    assert_eq!(
        rows(p.path(), "prod", "SELECT * FROM raw.dated ORDER BY id"),
        [
            "1,2024-01-04,2024-01-04 13:45:00,a",
            "2,2024-12-31,2024-12-31 00:00:00,",
            "3,,2024-02-03 04:05:00,b"
        ]
    );
    // `db.mart.people_summary` reading `db.raw.people` (the gateway's database is db.db), with
    // audits given bracketed lists and SQLMesh's accepted_range: all three pass, as in SQLMesh
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT count(*), count(label) FROM mart.people_summary"
        ),
        ["4,2"]
    );
    // a model reading its own earlier rows, made from its declared columns and filled a day
    // at a time, with an audit naming `"db"."mart"."running"`; recorded: (2026-01-01, 10.5),
    // (2026-01-02, 32.0), (2026-01-03, 32.0)
    assert_eq!(
        rows(p.path(), "prod", "SELECT * FROM mart.running ORDER BY ds"),
        ["2026-01-01,10.5", "2026-01-02,32.0", "2026-01-03,32.0"]
    );
    // a YAML test's date-only `end` is its whole day, a timestamp `end` exclusive, and
    // untyped fixture numbers are DOUBLE (10.33 * 3 is about 31): SQLMesh passes the same four
    let out = efmesh(p.path()).args(["test"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("4 passed, 0 failed"),
        "{out:?}"
    );

    // without its columns, a model that reads itself has nothing to make its table from
    let running = p.path().join("models/running.sql");
    let text = std::fs::read_to_string(&running).unwrap();
    std::fs::write(
        &running,
        text.replace("  columns (ds DATE, total DOUBLE),\n", ""),
    )
    .unwrap();
    let d = refused(p.path(), "self-reference-columns");
    assert_eq!(d["location"]["file"], "models/running.sql", "{d}");
    assert_eq!(d["location"]["line"], 11, "{d}");
    std::fs::write(&running, text).unwrap();

    // SQLMesh with `max_v := 30`: "'accepted_range' audit error: 1 row failed"
    let file = p.path().join("models/three_part.sql");
    let model = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, model.replace("max_v := 100", "max_v := 30")).unwrap();
    let out = efmesh(p.path())
        .env("EFMESH_NOW", NOW)
        .args(["apply", "prod", "--yes"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "accepted_range(column := score, min_v := 0, max_v := 30) FAILED: 1 violation"
        ) && stderr.contains("id=4"),
        "{stderr}"
    );
}

#[test]
fn time_columns_of_text_and_integer_type_keep_the_rows_sqlmesh_keeps() {
    let p = fixture("sqlmesh-time-columns");
    ok_at(p.path(), NOW, &["apply", "prod", "--yes"]);
    // as SQLMesh 0.236.4 built them (`sqlmesh plan --auto-apply` on the same files): each batch
    // compares the column in its own type, `BETWEEN` the range's formatted first and last day
    let expected: &[(&str, &[&str])] = &[
        (
            "text_iso",
            &["2,2020-01-01", "3,2020-01-02", "4,2020-01-05"],
        ),
        ("text_fmt", &["2,20200101", "3,20200102", "4,20200105"]),
        ("int_fmt", &["2,20200101", "3,20200102", "4,20200105"]),
        (
            "text_ts",
            &[
                "2,2020-01-01 00:00:00",
                "3,2020-01-02 13:30:00",
                "4,2020-01-05 23:59:59",
            ],
        ),
        (
            "text_ts_default",
            &[
                "2,2020-01-01 00:00:00",
                "3,2020-01-02 13:30:00",
                "4,2020-01-05 23:59:59",
            ],
        ),
        // one batch a day under the default format: only a value that is exactly a day stays
        ("text_ts_batched", &["6,2020-01-03"]),
        ("int_batched", &["2,20200101", "3,20200102", "4,20200105"]),
        (
            "date_col",
            &["2,2020-01-01", "3,2020-01-02", "4,2020-01-05"],
        ),
    ];
    for (table, want) in expected {
        assert_eq!(
            rows(
                p.path(),
                "prod",
                &format!("SELECT * FROM m.{table} ORDER BY ALL")
            ),
            *want,
            "m.{table}"
        );
    }
    // a format that writes dashes for an integer column stops the apply, naming model and fix
    std::fs::write(
        p.path().join("models/int_fmt.sql"),
        "MODEL (name m.int_fmt, kind INCREMENTAL_BY_TIME_RANGE (time_column di), cron '@daily');\nSELECT id, di FROM raw.events WHERE id > 1\n",
    )
    .unwrap();
    let out = efmesh_at(p.path(), NOW, &["apply", "prod", "--yes"]);
    assert!(!out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`m.int_fmt`")
            && err.contains("writes `2020-01-01`")
            && err.contains("'%Y%m%d'"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn model_naming_names_models_after_their_paths_as_sqlmesh_does() {
    let p = fixture("sqlmesh-naming");
    checks(p.path());
    ok_at(p.path(), NOW, &["apply", "prod", "--yes"]);
    // as SQLMesh 0.236.4 built them: a file without MODEL block is a VIEW named after its path,
    // a MODEL block without `name` is named the same way, a declared name wins; `by_day`
    // compares its text days in the project's format ('%Y%m%d')
    let expected: &[(&str, &[&str])] = &[
        (
            "raw.events",
            &[
                "1,20191231,10",
                "2,20200101,20",
                "3,20200102,30",
                "4,20990101,40",
            ],
        ),
        ("mart.by_day", &["20200101,20", "20200102,30"]),
        ("mart.totals", &["2,50"]),
        ("mart.explicit_name", &["3", "4"]),
    ];
    for (table, want) in expected {
        assert_eq!(
            rows(
                p.path(),
                "prod",
                &format!("SELECT * FROM {table} ORDER BY ALL")
            ),
            *want,
            "{table}"
        );
    }
    assert!(rows(
        p.path(),
        "prod",
        "SELECT 1 FROM information_schema.tables WHERE table_name = 'renamed'"
    )
    .is_empty());

    // a file whose path gives no `schema.table` is refused where it is, saying what to do
    std::fs::write(p.path().join("models/loose.sql"), "SELECT 1 AS x\n").unwrap();
    let d = refused(p.path(), "invalid-name");
    assert_eq!(d["location"]["file"], "models/loose.sql", "{d}");
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("models/<schema>/<table>.sql"),
        "{d}"
    );
}

#[test]
fn before_all_and_after_all_run_around_every_apply_as_in_sqlmesh() {
    let p = fixture("sqlmesh-environment-statements");
    checks(p.path());
    ok_at(p.path(), NOW, &["apply", "prod", "--yes"]);
    // as SQLMesh 0.236.4 left them: before_all created what the model reads, after_all wrote
    // its rows with @this_env, @runtime_stage and a variable, and the @IF for prod only
    assert_eq!(
        rows(p.path(), "prod", "SELECT * FROM ops.runs ORDER BY ALL"),
        ["prod,after_all,nightly", "prod only,after_all,nightly"]
    );
    assert_eq!(
        rows(p.path(), "prod", "SELECT * FROM mart.looked_up"),
        ["1,one"]
    );
    // an apply with nothing to do runs nothing, as SQLMesh's "no changes" plan
    ok_at(p.path(), NOW, &["apply", "prod", "--yes"]);
    assert_eq!(
        rows(p.path(), "prod", "SELECT count(*) FROM ops.runs"),
        ["2"]
    );
    // another environment: @this_env is its name, and the @IF is false
    ok_at(p.path(), NOW, &["apply", "dev", "--yes"]);
    assert_eq!(
        rows(p.path(), "prod", "SELECT * FROM ops.runs WHERE env = 'dev'"),
        ["dev,after_all,nightly"]
    );

    // a failing before_all stops the apply before anything is built, naming the statement
    let config = std::fs::read_to_string(p.path().join("config.yaml")).unwrap();
    std::fs::write(
        p.path().join("config.yaml"),
        config.replace(
            "  - CREATE SCHEMA IF NOT EXISTS ops\n",
            "  - CREATE SCHEMA IF NOT EXISTS ops\n  - INSERT INTO ops.missing VALUES (1)\n",
        ),
    )
    .unwrap();
    std::fs::write(
        p.path().join("models/looked_up.sql"),
        "MODEL (name mart.looked_up, kind FULL);\nSELECT k, v, 2 AS w FROM ops.lookup\n",
    )
    .unwrap();
    let out = efmesh_at(p.path(), NOW, &["apply", "prod", "--yes"]);
    assert!(!out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("before_all") && err.contains("ops.missing"),
        "{err}"
    );
    assert_eq!(
        rows(p.path(), "prod", "SELECT * FROM mart.looked_up"),
        ["1,one"],
        "nothing was built or promoted"
    );

    // a statement efmesh cannot render is refused at check, at its line in config.yaml
    std::fs::write(
        p.path().join("config.yaml"),
        format!("{config}  - DELETE FROM ops.runs WHERE env < @start_ds\n"),
    )
    .unwrap();
    let (code, diagnostics) = check_diagnostics(p.path());
    assert_eq!(code, Some(1), "{diagnostics:?}");
    let d = &diagnostics[0];
    assert_eq!(d["location"]["file"], "config.yaml", "{d}");
    assert_eq!(d["location"]["line"], 20, "{d}");
    assert!(d["message"].as_str().unwrap().contains("@start_ds"), "{d}");
}

#[test]
fn catalogs_attach_every_database_and_build_in_the_first_as_sqlmesh_does() {
    let p = fixture("sqlmesh-catalogs");
    checks(p.path());
    ok_at(p.path(), NOW, &["apply", "prod", "--yes"]);
    // as SQLMesh 0.236.4 built them: the views live in the first catalog's file, a name
    // qualified with it is the same model, and the second catalog is read by its name
    assert!(p.path().join("warehouse.duckdb").is_file());
    assert!(p.path().join("side.duckdb").is_file());
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT * FROM mart.from_side ORDER BY ALL"
        ),
        ["1,a", "2,b"]
    );
    assert_eq!(rows(p.path(), "prod", "SELECT * FROM mart.counted"), ["2"]);
    let warehouse = efmesh::engine::duckdb::DuckDbEngine::open(
        p.path(),
        "warehouse.duckdb",
        &efmesh_core::config::Config::defaults("t").engine,
    );
    let mut warehouse = warehouse.unwrap();
    assert_eq!(
        warehouse
            .query_strings("SELECT count(*)::VARCHAR FROM mart.counted")
            .unwrap(),
        [Some("1".to_string())],
        "the views are in the default catalog's file"
    );
    // a model in the other catalog is refused at its name: efmesh builds in the default one
    std::fs::write(
        p.path().join("models/elsewhere.sql"),
        "MODEL (name side.mart.elsewhere, kind FULL);\nSELECT 1 AS x\n",
    )
    .unwrap();
    let d = refused(p.path(), "invalid-name");
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("catalog `side` is not the gateway's default catalog `warehouse`"),
        "{d}"
    );
}

#[test]
fn descriptions_become_table_view_and_column_comments_as_sqlmesh_writes_them() {
    let p = fixture("sqlmesh-comments");
    checks(p.path());
    ok_at(p.path(), NOW, &["apply", "prod", "--yes"]);
    // the comments SQLMesh 0.236.4 left on the views: `description`, else the comment before
    // the MODEL block; `column_descriptions`, else the comments at the SELECT's items
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT view_name, comment FROM duckdb_views() WHERE schema_name = 'mart' ORDER BY ALL"
        ),
        [
            "a,\"Orders, one row per order\"",
            "b,\"The b model, described by a leading comment\"",
            "c,C"
        ]
    );
    let column_comments = "SELECT table_name, column_name, comment FROM duckdb_columns() WHERE schema_name = 'mart' AND comment IS NOT NULL ORDER BY ALL";
    assert_eq!(
        rows(p.path(), "prod", column_comments),
        [
            "a,id,The order id",
            "a,total,What was paid",
            "b,id,the id again",
            "c,total,declared"
        ]
    );
    // and on the physical tables (and the VIEW model's physical view), as SQLMesh does
    let physical = rows(
        p.path(),
        "prod",
        "SELECT count(*) FROM duckdb_columns() WHERE schema_name = '_efmesh' AND comment IS NOT NULL",
    );
    assert_eq!(physical, ["4"]);
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT count(*) FROM duckdb_tables() WHERE schema_name = '_efmesh' AND comment IS NOT NULL"
        ),
        ["2"]
    );
    // a description of a column the model does not return is refused at check
    std::fs::write(
        p.path().join("models/c.sql"),
        "MODEL (name mart.c, kind FULL, column_descriptions (totl = 'typo'));\nSELECT id, total FROM mart.a\n",
    )
    .unwrap();
    let d = refused(p.path(), "unknown-column");
    assert!(
        d["help"]
            .as_str()
            .unwrap()
            .contains("did you mean `total`?"),
        "{d}"
    );
}

#[test]
fn a_seed_column_the_model_does_not_declare_is_left_out_as_in_sqlmesh() {
    let p = fixture("sqlmesh-seed-columns");
    let diagnostics = checks(p.path());
    let left_out: Vec<&serde_json::Value> = diagnostics
        .iter()
        .filter(|d| d["code"] == "seed-column-left-out")
        .collect();
    assert_eq!(left_out.len(), 2, "one per model: {diagnostics:?}");
    assert_eq!(left_out[0]["severity"], "warning");
    ok_at(p.path(), NOW, &["apply", "prod", "--yes"]);
    // as SQLMesh 0.236.4 loaded them: the declared columns, in the declared order
    let described = |t: &str| {
        rows(
            p.path(),
            "prod",
            &format!("SELECT column_name || ' ' || data_type FROM information_schema.columns WHERE table_schema = 'raw' AND table_name = '{t}' ORDER BY ordinal_position"),
        )
    };
    assert_eq!(described("s"), ["id INTEGER", "name VARCHAR"]);
    assert_eq!(described("t"), ["name VARCHAR", "id INTEGER"]);
    assert_eq!(
        rows(p.path(), "prod", "SELECT * FROM raw.t ORDER BY ALL"),
        ["a,1", "b,2"]
    );
    // a declared column the file lacks stays an error, at check (SQLMesh fails at apply)
    std::fs::write(
        p.path().join("models/u.sql"),
        "MODEL (name raw.u, kind SEED (path '../seeds/s.csv'), columns (id INT, missing TEXT));\n",
    )
    .unwrap();
    let (code, diagnostics) = check_diagnostics(p.path());
    assert_eq!(code, Some(1), "{diagnostics:?}");
    assert!(
        diagnostics
            .iter()
            .any(|d| d["code"] == "seed-column-missing"),
        "{diagnostics:?}"
    );
}

#[test]
fn jinja_queries_render_with_macros_variables_and_each_batchs_range_as_in_sqlmesh() {
    let p = fixture("sqlmesh-jinja");
    checks(p.path());
    ok_at(p.path(), NOW, &["apply", "prod", "--yes"]);
    // as SQLMesh 0.236.4 built them: a `{% macro %}` from macros/, var() with and without a
    // default, a map variable's key and length, a loop, a Jinja comment; and per batch its
    // own start_ds/end_ds
    assert_eq!(
        rows(p.path(), "prod", "SELECT * FROM m.jinja_full ORDER BY ALL"),
        [
            "2,40,eu,north,2,a,b",
            "3,60,eu,north,2,a,b",
            "4,80,eu,north,2,a,b"
        ]
    );
    // `@VAR` of a map is SQLMesh's `MAP([keys], [values])`, lists inside it as lists
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT shop, shop_name, tiers, typeof(shop) FROM m.map_var"
        ),
        ["\"{city=oslo, name=north}\",north,\"{a=[1, 2], b=[3]}\",\"MAP(VARCHAR, VARCHAR)\""]
    );
    assert_eq!(
        rows(p.path(), "prod", "SELECT * FROM m.jinja_incr ORDER BY ALL"),
        // time variables inside longer strings, written as SQLMesh's Jinja writes them
        [
            "2,2020-01-01,2020-01-01,from 2020-01-01 00:00:00 to 2020-01-01 23:59:59.999999 (1577923199.999)",
            "3,2020-01-03,2020-01-03,from 2020-01-03 00:00:00 to 2020-01-03 23:59:59.999999 (1578095999.999)"
        ]
    );
    // a changed variable is a changed model
    let config = std::fs::read_to_string(p.path().join("config.yaml")).unwrap();
    std::fs::write(
        p.path().join("config.yaml"),
        config.replace("region: eu", "region: us"),
    )
    .unwrap();
    ok_at(p.path(), NOW, &["apply", "prod", "--yes"]);
    assert_eq!(
        rows(p.path(), "prod", "SELECT DISTINCT region FROM m.jinja_full"),
        ["us"]
    );
    // a Jinja audit takes each call's arguments, then its defaults: as in SQLMesh 0.236.4, a
    // threshold of 70 finds one row, the default of 1000 none
    let model = p.path().join("models/jinja_full.sql");
    let text = std::fs::read_to_string(&model).unwrap();
    std::fs::write(
        &model,
        text.replace(
            "jinja_at_most(column := doubled)",
            "jinja_at_most(column := doubled, threshold := 70)",
        ),
    )
    .unwrap();
    let out = efmesh_at(p.path(), NOW, &["apply", "prod", "--yes"]);
    assert!(!out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("jinja_at_most") && err.contains("1 violation "),
        "{err}"
    );
    // an argument used for more than its value would render alike for every call: refused
    let audit = p.path().join("audits/jinja_audits.sql");
    let audit_text = std::fs::read_to_string(&audit).unwrap();
    std::fs::write(
        &audit,
        audit_text.replace(
            "WHERE {{ column }}",
            "WHERE {% if column %}{{ column }}{% endif %}",
        ),
    )
    .unwrap();
    let d = refused(p.path(), "jinja-template");
    assert_eq!(d["location"]["file"], "audits/jinja_audits.sql", "{d}");
    assert_eq!(d["location"]["line"], 9, "{d}");
    std::fs::write(&audit, audit_text).unwrap();
    std::fs::write(&model, text).unwrap();
    // a template that does not render is refused at check, at its line in the model file
    std::fs::write(
        p.path().join("models/jinja_full.sql"),
        "MODEL (name m.jinja_full, kind FULL);\nJINJA_QUERY_BEGIN;\nSELECT\n  {{ id }\nFROM raw.events\nJINJA_END;\n",
    )
    .unwrap();
    let d = refused(p.path(), "jinja-template");
    assert_eq!(d["location"]["file"], "models/jinja_full.sql", "{d}");
    assert_eq!(d["location"]["line"], 4, "{d}");
    // `this_model` inside a longer string is no relation, and says so
    std::fs::write(
        p.path().join("models/jinja_full.sql"),
        "MODEL (name m.jinja_full, kind FULL);\nJINJA_QUERY_BEGIN;\nSELECT 'in {{ this_model }}' AS s\nJINJA_END;\n",
    )
    .unwrap();
    let d = refused(p.path(), "jinja-template");
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("inside a longer string"),
        "{d}"
    );
}

#[test]
fn model_statements_run_around_writes_and_promotions_as_in_sqlmesh() {
    let p = fixture("sqlmesh-model-statements");
    checks(p.path());
    ok_at(p.path(), NOW, &["apply", "prod", "--yes"]);
    // as SQLMesh 0.236.4 left them: the pre-statements made the view the query reads; the
    // post-statement's `@IF(@runtime_stage = 'evaluating', ...)` did not run at the first
    // build, whose stage is `creating`
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT * FROM mart.customers ORDER BY ALL"
        ),
        ["1,00000", "2,"]
    );
    // the incremental model's statements ran once around its empty table (`creating`, at the
    // epoch) and around each batch (`evaluating`, with the batch's range and `@this_model`);
    // the on-virtual-update statements after the view was swapped (`promoting`)
    let logs = "SELECT * FROM mart.logs ORDER BY ALL";
    assert_eq!(
        rows(p.path(), "prod", logs),
        [
            "batch,creating,1970-01-01,0",
            "batch,evaluating,2026-11-30,1",
            "batch,evaluating,2026-12-01,2",
            "batch,evaluating,2026-12-02,3",
            // a JINJA_STATEMENT block, with var(), this_model, start_ds and a loop
            "batch,jinja 00000,1970-01-01,3",
            "batch,jinja 00000,2026-11-30,3",
            "batch,jinja 00000,2026-12-01,3",
            "batch,jinja 00000,2026-12-02,3",
            "promotion,promoting,,2"
        ]
    );
    // another environment builds nothing; its new view of the model runs them again
    ok_at(p.path(), NOW, &["apply", "dev", "--yes"]);
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT count(*) FROM mart.logs WHERE source = 'promotion'"
        ),
        ["2"]
    );
    // a day later the FULL model is refreshed in place: the stage is `evaluating` now
    ok_at(p.path(), "2026-12-05T00:00:00Z", &["run", "prod"]);
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT * FROM mart.customers ORDER BY ALL"
        ),
        ["1,refreshed", "2,refreshed"]
    );
    assert_eq!(rows(p.path(), "prod", logs).len(), 10, "no promotion ran");
    // a changed statement changes the model: it is built again (at `creating`)
    let path = p.path().join("models/customers.sql");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("'refreshed'", "'again'")).unwrap();
    ok_at(
        p.path(),
        "2026-12-05T00:00:00Z",
        &["apply", "prod", "--yes"],
    );
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT * FROM mart.customers ORDER BY ALL"
        ),
        ["1,00000", "2,"]
    );

    // two queries, or none, are refused where written
    std::fs::write(
        &path,
        "MODEL (name mart.customers, kind FULL);\nSELECT 1 AS a;\nSELECT 2 AS a;\n",
    )
    .unwrap();
    let d = refused(p.path(), "multiple-statements");
    assert_eq!(d["location"]["line"], 3, "{d}");
    std::fs::write(
        &path,
        "MODEL (name mart.customers, kind FULL);\nSELECT 1 AS a;\nON_VIRTUAL_UPDATE_BEGIN;\nSELECT 2;\n",
    )
    .unwrap();
    let d = refused(p.path(), "model-statement");
    assert_eq!(d["location"]["line"], 3, "{d}");
    // a Jinja statement is rendered once, so it cannot branch on the stage, and says so
    std::fs::write(
        &path,
        "MODEL (name mart.customers, kind FULL);\nSELECT 1 AS a;\nJINJA_STATEMENT_BEGIN;\n{% if runtime_stage == 'evaluating' %}SELECT 1;{% endif %}\nJINJA_END;\n",
    )
    .unwrap();
    let d = refused(p.path(), "jinja-template");
    assert_eq!(d["location"]["line"], 4, "{d}");
    assert!(
        d["message"].as_str().unwrap().contains("runtime_stage"),
        "{d}"
    );
    // a statement that fails stops the build, naming the model, and nothing is promoted
    std::fs::write(
        &path,
        "MODEL (name mart.customers, kind FULL);\nINSERT INTO ops.nowhere VALUES (1);\nSELECT 3 AS customer_id, 'x' AS zip;\n",
    )
    .unwrap();
    let out = efmesh_at(
        p.path(),
        "2026-12-05T00:00:00Z",
        &["apply", "prod", "--yes"],
    );
    assert!(!out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("mart.customers") && err.contains("nowhere"),
        "{err}"
    );
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT * FROM mart.customers ORDER BY ALL"
        ),
        ["1,00000", "2,"]
    );
}

#[test]
fn models_named_without_a_schema_are_in_schema_default_as_in_sqlmesh() {
    let p = fixture("sqlmesh-no-schema");
    checks(p.path());
    ok_at(p.path(), NOW, &["apply", "prod", "--yes"]);
    // as SQLMesh 0.236.4 built them: each read by its one-part name, a CTE of a model's name
    // read as the CTE, a model named like a reserved word
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT * FROM \"default\".\"order\" ORDER BY ALL"
        ),
        ["2,10", "4,10"]
    );
    assert_eq!(
        rows(
            p.path(),
            "prod",
            "SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema = 'default' ORDER BY ALL"
        ),
        ["default,doubled", "default,numbers", "default,order"]
    );
}
