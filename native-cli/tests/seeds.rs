//! SEED models end to end: CSV, JSON and JSON-lines files loaded with their declared types,
//! the file's content in the fingerprint, and bad files refused by file, row and column.

mod common;
use common::*;
use efmesh::engine::duckdb::DuckDbEngine;
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;

const COLUMNS: &str =
    "columns (code VARCHAR, beds INTEGER, opened DATE, critical BOOLEAN, rate DECIMAL(5, 2))";

fn seed_model(file: &str, name: &str, seed: &str) -> (String, String) {
    (
        format!("models/{file}"),
        format!(
            "MODEL (\n  name ref.{name},\n  kind SEED (path '../seeds/{seed}'),\n  {COLUMNS}\n);\n"
        ),
    )
}

fn files(list: &[(String, String)]) -> Vec<(&str, &str)> {
    list.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect()
}

fn query(dir: &Path, sql: &str) -> Vec<Option<String>> {
    let cfg = efmesh_core::config::Config::defaults("t").engine;
    let mut e = DuckDbEngine::open(dir, "efmesh.duckdb", &cfg).unwrap();
    e.query_strings(sql).unwrap()
}

fn apply_ok(dir: &Path) -> Value {
    let out = efmesh(dir)
        .args(["apply", "dev", "--yes", "--json"])
        .assert()
        .success();
    json(&out.get_output().stdout)
}

fn plan(dir: &Path) -> Value {
    let out = efmesh(dir)
        .args(["plan", "dev", "--json"])
        .assert()
        .success();
    json(&out.get_output().stdout)
}

fn category(plan: &Value, model: &str) -> Option<String> {
    plan["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["model"] == model)
        .map(|a| a["category"].as_str().unwrap().to_string())
}

/// The three rows every format below holds, as `code|beds|opened|critical|rate` with types.
const EXPECTED: [&str; 3] = [
    "CARD|16|2020-01-01|false|1.50",
    "ER|20|2019-05-01|false|0.25",
    "ICU|8||true|2.00",
];

fn rows_of(dir: &Path, view: &str) -> Vec<String> {
    query(
        dir,
        &format!(
            "SELECT concat_ws('|', code, beds, coalesce(opened::VARCHAR, ''), critical, rate) \
             FROM {view} ORDER BY code"
        ),
    )
    .into_iter()
    .map(Option::unwrap_or_default)
    .collect()
}

fn types_of(dir: &Path, view: &str) -> String {
    query(
        dir,
        &format!(
            "SELECT concat_ws(',', typeof(code), typeof(beds), typeof(opened), typeof(critical), typeof(rate)) FROM {view} LIMIT 1"
        ),
    )[0]
    .clone()
    .unwrap()
}

#[test]
fn csv_json_and_json_lines_seeds_load_with_their_declared_types() {
    let models = vec![
        seed_model("csv.sql", "from_csv", "depts.csv"),
        seed_model("json.sql", "from_json", "depts.json"),
        seed_model("jsonl.sql", "from_jsonl", "depts.jsonl"),
        seed_model("ndjson.sql", "from_ndjson", "depts.ndjson"),
        (
            "models/loose.sql".into(),
            "MODEL (name ref.loose, kind SEED (path '../seeds/loose.json'));".into(),
        ),
        (
            "models/use.sql".into(),
            "MODEL (name ref.total, kind FULL);\nSELECT j.beds, l.Label AS label FROM ref.from_json AS j LEFT JOIN ref.loose AS l ON l.id = j.code".into(),
        ),
    ];
    let mut all = files(&models);
    // column order, key order and key case need not follow the declaration
    all.push((
        "seeds/depts.csv",
        "Code,rate,beds,opened,critical\nER,0.25,20,2019-05-01,false\nICU,2,8,,true\nCARD,1.5,16,2020-01-01,false\n",
    ));
    let json = r#"[
  {"code": "ER", "beds": 20, "opened": "2019-05-01", "critical": false, "Rate": 0.25},
  {"Rate": "2.00", "code": "ICU", "beds": "8", "opened": null, "critical": true},
  {"code": "CARD", "beds": 16, "opened": "2020-01-01", "critical": "false", "Rate": 1.5}
]"#;
    all.push(("seeds/depts.json", json));
    let lines = "{\"code\": \"ER\", \"beds\": 20, \"opened\": \"2019-05-01\", \"critical\": false, \"rate\": 0.25}\n\n{\"code\": \"ICU\", \"beds\": 8, \"critical\": true, \"rate\": 2}\n{\"code\": \"CARD\", \"beds\": 16, \"opened\": \"2020-01-01\", \"critical\": false, \"rate\": \"1.5\"}\n";
    all.push(("seeds/depts.jsonl", lines));
    all.push(("seeds/depts.ndjson", lines));
    all.push((
        "seeds/loose.json",
        r#"[{"id": 1, "Label": "a"}, {"id": 2, "Label": {"nested": [1, 2]}}]"#,
    ));
    let p = project(&all);
    efmesh(p.path()).arg("check").assert().success();
    let v = apply_ok(p.path());
    assert_eq!(v["applied"], true);
    for view in [
        "dev__ref.from_csv",
        "dev__ref.from_json",
        "dev__ref.from_jsonl",
        "dev__ref.from_ndjson",
    ] {
        assert_eq!(rows_of(p.path(), view), EXPECTED, "{view}");
        assert_eq!(
            types_of(p.path(), view),
            "VARCHAR,INTEGER,DATE,BOOLEAN,DECIMAL(5,2)",
            "{view}"
        );
    }
    // without declared columns, every value is text, as for CSV; nested values as JSON text
    assert_eq!(
        query(
            p.path(),
            "SELECT concat_ws(',', any_value(typeof(id)), any_value(typeof(Label)), max(Label)) FROM dev__ref.loose"
        ),
        vec![Some("VARCHAR,VARCHAR,{\"nested\":[1,2]}".into())]
    );
    assert_eq!(
        query(p.path(), "SELECT sum(beds)::VARCHAR FROM dev__ref.total"),
        vec![Some("44".into())]
    );
}

#[test]
fn the_seed_file_is_in_the_fingerprint_and_the_model_text_is_not() {
    let models = vec![seed_model("json.sql", "depts", "depts.jsonl")];
    let mut all = files(&models);
    let data =
        "{\"code\": \"ER\", \"beds\": 20, \"opened\": null, \"critical\": false, \"rate\": 1}\n";
    all.push(("seeds/depts.jsonl", data));
    let p = project(&all);
    apply_ok(p.path());
    assert_eq!(plan(p.path())["hasChanges"], false);

    // the model file reformatted: comments, case, layout
    std::fs::write(
        p.path().join("models/json.sql"),
        format!(
            "-- departments, from JSON lines\nmodel (NAME ref.depts,\n    KIND seed (PATH '../seeds/depts.jsonl'),\n    {}\n)\n;\n",
            COLUMNS.replace("INTEGER", "integer")
        ),
    )
    .unwrap();
    assert_eq!(plan(p.path())["hasChanges"], false);

    // the same rows, the file's bytes changed: a new version
    std::fs::write(
        p.path().join("seeds/depts.jsonl"),
        format!("{data}{{\"code\": \"ICU\", \"beds\": 8, \"opened\": null, \"critical\": true, \"rate\": 2}}\n"),
    )
    .unwrap();
    let v = plan(p.path());
    assert_eq!(v["hasChanges"], true);
    assert_eq!(category(&v, "ref.depts").as_deref(), Some("breaking"));
    apply_ok(p.path());
    assert_eq!(
        query(p.path(), "SELECT count(*)::VARCHAR FROM dev__ref.depts"),
        vec![Some("2".into())]
    );
}

#[test]
fn a_value_that_does_not_fit_names_the_file_row_line_and_column() {
    let models = vec![
        seed_model("csv.sql", "from_csv", "depts.csv"),
        seed_model("json.sql", "from_json", "depts.json"),
        seed_model("jsonl.sql", "from_jsonl", "depts.jsonl"),
    ];
    let mut all = files(&models);
    let one = r#"{"code": "ER", "beds": 1, "opened": null, "critical": false, "rate": 1}"#;
    let array = format!("[{one}]");
    all.push(("seeds/depts.json", &array));
    all.push(("seeds/depts.jsonl", one));
    // a quoted field spans two lines, so row 3 starts on line 5
    let csv = "code,beds,opened,critical,rate\nER,20,2019-05-01,false,1\n\"ICU\nnorth\",8,,true,2\nCARD,twelve,2020-01-01,false,1\n";
    all.push(("seeds/depts.csv", csv));
    let p = project(&all);
    efmesh(p.path()).arg("check").assert().success();
    let out = efmesh(p.path())
        .args(["apply", "dev", "--yes"])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains(
            "seeds/depts.csv: row 3 (line 5): column beds: 'twelve' is not a valid INTEGER"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("seed `ref.from_csv` (seeds/depts.csv) has 1 row(s)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("help: fix the values in the file"),
        "{stderr}"
    );
    // nothing was promoted
    assert_eq!(
        query(
            p.path(),
            "SELECT count(*)::VARCHAR FROM information_schema.tables WHERE table_schema = 'dev__ref'"
        ),
        vec![Some("0".into())]
    );

    // JSON: rows without lines; several bad values, the first five reported, every row counted
    std::fs::write(
        p.path().join("seeds/depts.csv"),
        "code,beds,opened,critical,rate\nER,20,2019-05-01,false,1\n",
    )
    .unwrap();
    let mut rows = vec![
        r#"{"code": "ER", "beds": 1, "opened": null, "critical": false, "rate": 1}"#.to_string(),
    ];
    for n in 0..6 {
        rows.push(format!(
            r#"{{"code": "X{n}", "beds": 1, "opened": "2026-02-3{n}", "critical": "maybe", "rate": 1}}"#
        ));
    }
    std::fs::write(
        p.path().join("seeds/depts.json"),
        format!("[{}]", rows.join(",\n")),
    )
    .unwrap();
    let out = efmesh(p.path())
        .args(["apply", "dev", "--yes", "--json"])
        .assert()
        .code(1);
    let v = json(&out.get_output().stdout);
    assert_eq!(v["error"]["code"], "seed-values");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("seed `ref.from_json` (seeds/depts.json) has 6 row(s)"),
        "{message}"
    );
    let reported: Vec<&str> = message.lines().skip(1).map(str::trim).collect();
    assert_eq!(
        reported,
        [
            "seeds/depts.json: row 2: column opened: '2026-02-30' is not a valid DATE",
            "seeds/depts.json: row 2: column critical: 'maybe' is not a valid BOOLEAN",
            "seeds/depts.json: row 3: column opened: '2026-02-31' is not a valid DATE",
            "seeds/depts.json: row 3: column critical: 'maybe' is not a valid BOOLEAN",
            "seeds/depts.json: row 4: column opened: '2026-02-32' is not a valid DATE",
        ]
    );

    // JSON lines: lines count blank ones
    std::fs::write(
        p.path().join("seeds/depts.json"),
        r#"[{"code": "ER", "beds": 1, "opened": null, "critical": false, "rate": 1}]"#,
    )
    .unwrap();
    // `file` written with `text` fails the apply with `needle` in its report
    let fails_with = |file: &str, text: &str, needle: &str| {
        std::fs::write(p.path().join(file), text).unwrap();
        efmesh(p.path())
            .args(["apply", "dev", "--yes"])
            .assert()
            .code(1)
            .stderr(predicate::str::contains(needle));
    };
    fails_with(
        "seeds/depts.jsonl",
        "{\"code\": \"ER\", \"beds\": 1, \"opened\": null, \"critical\": false, \"rate\": 1}\n\n{\"code\": \"ICU\", \"beds\": 2, \"opened\": null, \"critical\": false, \"rate\": \"1,5\"}\n",
        "seeds/depts.jsonl: row 2 (line 3): column rate: '1,5' is not a valid DECIMAL(5, 2)",
    );

    // a CSV row of another length than the header is refused by row, on DuckDB as on
    // PostgreSQL; a line of whitespace alone is no row, and rows after it keep their lines
    std::fs::write(
        p.path().join("seeds/depts.csv"),
        "code,beds,opened,critical,rate\nER,20,2019-05-01,false,1\nICU,8\n",
    )
    .unwrap();
    let out = efmesh(p.path())
        .args(["apply", "dev", "--yes", "--json"])
        .assert()
        .code(1);
    let v = json(&out.get_output().stdout);
    assert_eq!(v["error"]["code"], "seed-file", "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("row 2 has 2 value(s)"), "{message}");
    fails_with(
        "seeds/depts.csv",
        "code,beds,opened,critical,rate\nER,20,2019-05-01,false,1\n  \nCARD,twelve,2020-01-01,false,1\n  ",
        "seeds/depts.csv: row 2 (line 4): column beds: 'twelve' is not a valid INTEGER",
    );
    std::fs::write(
        p.path().join("seeds/depts.csv"),
        "code,beds,opened,critical,rate\nER,20,2019-05-01,false,1\n  \nCARD,12,2020-01-01,false,1\n  ",
    )
    .unwrap();

    // fixed: the apply goes through
    std::fs::write(
        p.path().join("seeds/depts.jsonl"),
        "{\"code\": \"ER\", \"beds\": 1, \"opened\": null, \"critical\": false, \"rate\": 1}\n",
    )
    .unwrap();
    apply_ok(p.path());
    assert_eq!(
        query(
            p.path(),
            "SELECT string_agg(code || beds, ',' ORDER BY code) FROM dev__ref.from_csv"
        ),
        vec![Some("CARD12,ER20".into())]
    );
}

fn check_codes(dir: &Path) -> Vec<(String, String)> {
    let out = efmesh(dir).args(["check", "--json"]).assert().code(1);
    let v = json(&out.get_output().stdout);
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_header_that_does_not_match_the_declared_columns_names_the_column() {
    let models = vec![
        seed_model("csv.sql", "from_csv", "depts.csv"),
        seed_model("json.sql", "from_json", "depts.json"),
    ];
    let mut all = files(&models);
    all.push((
        "seeds/depts.csv",
        "code,beds,opened,critical,wing\nER,20,2019-05-01,false,A\n",
    ));
    all.push((
        "seeds/depts.json",
        r#"[{"code": "ER", "beds": 20, "opened": null, "critical": false}, {"rate": 1, "Floor": 2}]"#,
    ));
    let p = project(&all);
    let found = check_codes(p.path());
    assert_eq!(
        found,
        [
            (
                "seed-column-missing".to_string(),
                "seed file `seeds/depts.csv` has no column `rate`, which `columns` declares"
                    .to_string()
            ),
            (
                "seed-column-extra".to_string(),
                "seed file `seeds/depts.csv` has column `wing`, which `columns` does not declare"
                    .to_string()
            ),
            (
                "seed-column-extra".to_string(),
                "seed file `seeds/depts.json` has column `Floor`, which `columns` does not declare"
                    .to_string()
            ),
        ]
    );
    // rendered with the file's columns as help, at the model
    efmesh(p.path()).arg("check").assert().code(1).stderr(
        predicate::str::contains("error[seed-column-missing]")
            .and(predicate::str::contains("models/csv.sql"))
            .and(predicate::str::contains(
                "the file's columns: code, beds, opened, critical, wing",
            )),
    );

    // a JSON seed that is not an array of objects
    std::fs::write(
        p.path().join("seeds/depts.csv"),
        "code,beds,opened,critical,rate\n",
    )
    .unwrap();
    std::fs::write(
        p.path().join("seeds/depts.json"),
        "[{\"code\": \"ER\"},\n 42]",
    )
    .unwrap();
    let found = check_codes(p.path());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "seed-malformed");
    assert!(
        found[0].1.starts_with(
            "seed file `seeds/depts.json` is not valid JSON (an array of objects): invalid type: integer `42`, expected a JSON object at line 2"
        ),
        "{}",
        found[0].1
    );
}
