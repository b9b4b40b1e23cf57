//! `efmesh diff <a> <b>`: versions classified as a plan would, and with `--data` rows matched
//! on the model's key, against answers worked out by hand from the SQL.

mod common;
use common::*;
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;

fn diff(dir: &Path, args: &[&str]) -> Value {
    let mut all = vec!["diff", "prod", "dev", "--json"];
    all.extend_from_slice(args);
    let out = efmesh(dir).args(&all).assert().success();
    json(&out.get_output().stdout)
}

fn model<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["model"] == name)
        .unwrap_or_else(|| panic!("{name} not in {v:#}"))
}

fn mismatched(m: &Value, column: &str) -> u64 {
    m["data"]["keyed"]["mismatches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["column"] == column)
        .unwrap_or_else(|| panic!("{column} not compared"))["mismatched"]
        .as_u64()
        .unwrap()
}

#[test]
fn every_kind_of_version_difference_is_named() {
    let p = project(&[
        (
            "models/a.sql",
            "MODEL (name s.a, kind FULL);\nSELECT range AS id FROM range(5)",
        ),
        (
            "models/b.sql",
            "MODEL (name s.b, kind FULL);\nSELECT 1 AS x",
        ),
        (
            "models/c.sql",
            "MODEL (name s.c, kind FULL, description 'one');\nSELECT 1 AS x",
        ),
        (
            "models/d.sql",
            "MODEL (name s.d, kind FULL);\nSELECT id FROM s.a",
        ),
        (
            "models/e.sql",
            "MODEL (name s.e, kind FULL);\nSELECT 1 AS x",
        ),
        (
            "models/same.sql",
            "MODEL (name s.same, kind FULL);\nSELECT 1 AS x",
        ),
    ]);
    efmesh(p.path())
        .args(["apply", "prod", "--yes"])
        .assert()
        .success();
    let w = |f: &str, t: &str| std::fs::write(p.path().join(f), t).unwrap();
    w(
        "models/a.sql",
        "MODEL (name s.a, kind FULL);\nSELECT range AS id FROM range(5) WHERE range > 1",
    );
    w(
        "models/b.sql",
        "MODEL (name s.b, kind FULL);\nSELECT 1 AS x, 2 AS y",
    );
    w(
        "models/c.sql",
        "MODEL (name s.c, kind FULL, description 'two');\nSELECT 1 AS x",
    );
    std::fs::remove_file(p.path().join("models/e.sql")).unwrap();
    w(
        "models/f.sql",
        "MODEL (name s.f, kind FULL);\nSELECT 1 AS x",
    );
    efmesh(p.path())
        .args(["apply", "dev", "--yes"])
        .assert()
        .success();

    let v = diff(p.path(), &[]);
    let got: Vec<(String, String)> = v["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["model"].as_str().unwrap().into(),
                m["category"].as_str().unwrap().into(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = [
        ("s.a", "breaking"),
        ("s.b", "non-breaking"),
        ("s.c", "metadata-only"),
        ("s.d", "indirect"),
        ("s.e", "removed"),
        ("s.f", "added"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(got, want);
    assert_eq!(v["unchanged"], 1, "s.same");
    assert_eq!(model(&v, "s.a")["paths"], serde_json::json!(["where"]));
    assert_eq!(model(&v, "s.e")["versionB"], Value::Null);
    assert!(
        v["models"][0].get("data").is_none(),
        "no data without --data"
    );
    insta::assert_json_snapshot!("diff_json", v, {
        ".models[].versionA" => "[fingerprint]",
        ".models[].versionB" => "[fingerprint]",
    });

    // --model lists a named model even when unchanged, and refuses one neither serves
    let v = diff(p.path(), &["--model", "s.same,s.a"]);
    let names: Vec<&str> = v["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["model"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["s.a", "s.same"]);
    assert_eq!(model(&v, "s.same")["category"], "unchanged");
    efmesh(p.path())
        .args(["diff", "prod", "dev", "--model", "s.sme"])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "neither `prod` nor `dev` serves `s.sme`",
        ))
        .stderr(predicate::str::contains("did you mean `s.same`?"));
    efmesh(p.path())
        .args(["diff", "prod", "nowhere"])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "environment `nowhere` does not exist",
        ));
    efmesh(p.path())
        .args(["diff", "prod", "dev", "--sample", "10"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--sample only applies to --data"));
    efmesh(p.path())
        .args(["diff", "prod", "dev", "--data", "--sample", "0"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("above 0 and at most 100"));
}

/// The hospital example, with `mart.stays` changed in dev: ER stays dropped and `stay_hours`
/// doubled (minutes / 30 instead of / 60).
fn hospital_changed() -> tempfile::TempDir {
    let dir = copy_example("hospital");
    efmesh(dir.path())
        .args(["apply", "prod", "--yes"])
        .assert()
        .success();
    let stays = dir.path().join("models/mart/stays.sql");
    let text = std::fs::read_to_string(&stays).unwrap();
    let changed = text
        .replace("/ 60.0 AS stay_hours", "/ 30.0 AS stay_hours")
        .replace(
            "FROM ordered AS o",
            "FROM ordered AS o WHERE o.dept_code <> 'ER'",
        );
    assert_ne!(text, changed);
    std::fs::write(&stays, changed).unwrap();
    efmesh(dir.path())
        .args(["apply", "dev", "--yes"])
        .assert()
        .success();
    dir
}

fn count(dir: &Path, env: &str, sql: &str) -> u64 {
    let out = efmesh(dir)
        .args(["query", env, sql, "--format", "json"])
        .assert()
        .success();
    json(&out.get_output().stdout)["rows"][0]["c"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn data_diff_on_the_hospital_matches_the_hand_worked_answer() {
    let p = hospital_changed();
    let v = diff(
        p.path(),
        &["--data", "--model", "mart.stays,mart.department_load"],
    );
    let stays = model(&v, "mart.stays");
    assert_eq!(stays["category"], "breaking");
    assert_eq!(
        stays["paths"],
        serde_json::json!(["where", "projection[8] (changed)"])
    );
    let d = &stays["data"];
    // raw.movements: 50 patients, each entering through ER once and moving 1-3 more times;
    // a stay is a movement, so prod holds one stay per movement and dev drops the 50 ER ones
    assert_eq!(
        count(p.path(), "prod", "SELECT count(*) AS c FROM raw.movements"),
        149
    );
    assert_eq!(
        count(
            p.path(),
            "prod",
            "SELECT count(*) AS c FROM mart.stays WHERE dept_code = 'ER'"
        ),
        50
    );
    assert_eq!(
        (d["rowsA"].as_u64(), d["rowsB"].as_u64()),
        (Some(149), Some(99))
    );
    assert_eq!(d["key"], serde_json::json!(["stay_id"]));
    let k = &d["keyed"];
    assert_eq!(
        (
            k["matched"].as_u64(),
            k["onlyInA"].as_u64(),
            k["onlyInB"].as_u64()
        ),
        (Some(99), Some(50), Some(0))
    );
    // doubled hours differ wherever a stay lasted at all: every dev stay but zero-length ones
    let lasting = count(
        p.path(),
        "dev",
        "SELECT count(*) AS c FROM mart.stays WHERE stay_hours <> 0",
    );
    assert_eq!(mismatched(stays, "stay_hours"), lasting);
    for c in [
        "patient_id",
        "stay_seq",
        "dept_code",
        "dept_name",
        "age_band",
        "entered_at",
        "left_at",
        "is_current",
    ] {
        assert_eq!(mismatched(stays, c), 0, "{c} is untouched by the change");
    }
    assert_eq!(
        d["schema"],
        serde_json::json!({"onlyInA": [], "onlyInB": [], "typeChanged": []})
    );

    // downstream: one row per department on both sides; only ER's counts change, and every
    // department's average stay doubles (each department has stays that lasted)
    let load = model(&v, "mart.department_load");
    assert_eq!(load["category"], "indirect");
    let k = &load["data"]["keyed"];
    assert_eq!(
        (
            k["matched"].as_u64(),
            k["onlyInA"].as_u64(),
            k["onlyInB"].as_u64()
        ),
        (Some(7), Some(0), Some(0))
    );
    assert_eq!(mismatched(load, "stay_count"), 1, "ER");
    assert_eq!(mismatched(load, "dept_name"), 0);
    assert_eq!(mismatched(load, "bed_capacity"), 0);

    // the human report says the same
    efmesh(p.path())
        .args(["diff", "prod", "dev", "--data", "--model", "mart.stays"])
        .assert()
        .success()
        .stdout(predicate::str::contains("rows: 149 → 99"))
        .stdout(predicate::str::contains(
            "key (stay_id): 99 matched, 50 only in prod, 0 only in dev",
        ));
}

#[test]
fn a_sample_never_reports_a_key_both_sides_have_as_only_in_one() {
    // the same 2,000 keys on both sides, retyped (BIGINT → VARCHAR) and with other values
    let p = project(&[(
        "models/m.sql",
        "MODEL (name s.m, kind FULL, grain id);\nSELECT range AS id, range * 2 AS v FROM range(2000)",
    )]);
    efmesh(p.path())
        .args(["apply", "prod", "--yes"])
        .assert()
        .success();
    std::fs::write(
        p.path().join("models/m.sql"),
        "MODEL (name s.m, kind FULL, grain id);\nSELECT CAST(range AS VARCHAR) AS id, range * 3 AS v FROM range(2000)",
    )
    .unwrap();
    efmesh(p.path())
        .args(["apply", "dev", "--yes"])
        .assert()
        .success();
    let mut sizes = vec![];
    for sample in ["1", "5", "10", "33.3", "50", "99.9", "100"] {
        let v = diff(p.path(), &["--data", "--sample", sample]);
        let m = model(&v, "s.m");
        let k = &m["data"]["keyed"];
        assert_eq!(k["onlyInA"], 0, "--sample {sample}: {k:#}");
        assert_eq!(k["onlyInB"], 0, "--sample {sample}: {k:#}");
        let matched = k["matched"].as_u64().unwrap();
        assert_eq!(k["comparedA"].as_u64().unwrap(), matched);
        assert_eq!(k["comparedB"].as_u64().unwrap(), matched);
        // every key but 0 has 2·id ≠ 3·id
        assert!(mismatched(m, "v") + 1 >= matched && mismatched(m, "v") <= matched);
        assert_eq!(
            m["data"]["schema"]["typeChanged"],
            serde_json::json!([["id", "BIGINT", "VARCHAR"]])
        );
        // deterministic: the same keys every time
        assert_eq!(
            diff(p.path(), &["--data", "--sample", sample])["models"][0]["data"]["keyed"],
            *k
        );
        sizes.push(matched);
    }
    assert_eq!(*sizes.last().unwrap(), 2000);
    assert!(
        sizes.windows(2).all(|w| w[0] <= w[1]),
        "a larger share keeps a superset: {sizes:?}"
    );
    assert!(
        sizes[0] > 0 && sizes[0] < 100,
        "1% of 2,000 keys is about 20: {sizes:?}"
    );
}

#[test]
fn a_model_without_a_key_is_compared_by_counts_and_says_why() {
    let p = project(&[(
        "models/m.sql",
        "MODEL (name s.m, kind FULL);\nSELECT range AS n FROM range(4)",
    )]);
    efmesh(p.path())
        .args(["apply", "prod", "--yes"])
        .assert()
        .success();
    std::fs::write(
        p.path().join("models/m.sql"),
        "MODEL (name s.m, kind FULL);\nSELECT range AS n FROM range(6)",
    )
    .unwrap();
    efmesh(p.path())
        .args(["apply", "dev", "--yes"])
        .assert()
        .success();
    let v = diff(p.path(), &["--data"]);
    let d = &model(&v, "s.m")["data"];
    assert_eq!(
        (d["rowsA"].as_u64(), d["rowsB"].as_u64()),
        (Some(4), Some(6))
    );
    assert_eq!(d["keyed"], Value::Null);
    assert!(
        d["note"].as_str().unwrap().contains("declare `grain`"),
        "{d:#}"
    );
}
