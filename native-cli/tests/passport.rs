//! `efmesh passport`: declared against effective passports, narrowed by ancestry.

mod common;
use common::*;
use predicates::prelude::*;

fn feed(name: &str, extra: &str) -> String {
    format!("MODEL (name {name}, kind INCREMENTAL_BY_TIME_RANGE (time_column ts), start '2026-01-01'{extra});\nSELECT range AS id, TIMESTAMP '2026-01-01' + to_hours(range) AS ts FROM range(1000) WHERE ts >= @start AND ts < @end")
}

#[test]
fn passport_narrows_a_mart_to_its_stale_source_and_names_it() {
    let fresh = feed("raw.fresh", "");
    let stale = feed(
        "raw.stale",
        ", answerable sampled, caveats ('only ward A reports')",
    );
    let p = project(&[
        ("models/fresh.sql", &fresh),
        ("models/stale.sql", &stale),
        (
            "models/mart.sql",
            "MODEL (name mart.m, kind FULL);\nSELECT f.id FROM raw.fresh AS f JOIN raw.stale AS s USING (id)",
        ),
        (
            "models/dim.sql",
            "MODEL (name mart.dim, kind FULL);\nSELECT 1 AS id",
        ),
    ]);
    efmesh(p.path())
        .env("EFMESH_NOW", "2026-01-10T00:00:00Z")
        .args(["apply", "dev", "--yes"])
        .assert()
        .success();
    // a gap in the stale feed: coverage stops there even though later intervals exist
    efmesh(p.path())
        .args([
            "restate",
            "dev",
            "--model",
            "raw.stale",
            "--from",
            "2026-01-04",
            "--to",
            "2026-01-05",
        ])
        .assert()
        .success();
    let out = efmesh(p.path())
        .args(["passport", "dev", "--json"])
        .assert()
        .success();
    let v = json(&out.get_output().stdout);
    let model = |n: &str| {
        v["models"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["model"] == n)
            .unwrap()
            .clone()
    };
    let stale = model("raw.stale");
    assert_eq!(
        stale["freshness"]["contiguousThrough"],
        "2026-01-04T00:00:00Z"
    );
    assert_eq!(
        stale["freshness"]["latestInterval"]["start"],
        "2026-01-09T00:00:00Z"
    );
    let mart = model("mart.m");
    assert_eq!(mart["answerable"], "full", "declared");
    assert_eq!(
        mart["freshness"],
        serde_json::Value::Null,
        "no claim of its own"
    );
    assert_eq!(mart["effective"]["answerable"], "sampled");
    assert_eq!(mart["effective"]["answerableLimitedBy"], "raw.stale");
    assert_eq!(mart["effective"]["completeThrough"], "2026-01-04T00:00:00Z");
    assert_eq!(mart["effective"]["limitedBy"], "raw.stale");
    assert_eq!(
        mart["effective"]["caveats"],
        serde_json::json!([{"model": "raw.stale", "text": "only ward A reports"}])
    );
    assert_eq!(
        model("raw.fresh")["effective"]["completeThrough"],
        "2026-01-10T00:00:00Z"
    );
    // nothing upstream has time semantics: no claim and nobody named
    let dim = model("mart.dim");
    assert_eq!(dim["effective"]["completeThrough"], serde_json::Value::Null);
    assert_eq!(dim["effective"]["limitedBy"], serde_json::Value::Null);
    insta::assert_json_snapshot!("passport_json", v);

    efmesh(p.path())
        .args(["passport", "dev"])
        .assert()
        .success()
        .stdout(
            predicate::str::is_match(
                r"mart\.m\s+full\s+sampled\s+raw\.stale\s+2026-01-04T00:00:00Z\s+raw\.stale",
            )
            .unwrap(),
        )
        .stdout(predicate::str::contains(
            "caveat (raw.stale): only ward A reports",
        ));
    efmesh(p.path())
        .args(["passport", "nope"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "environment `nope` does not exist",
        ));
}
