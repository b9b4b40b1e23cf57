//! `manifest-schema/manifest.schema.json` against its fixtures and against the Rust type it
//! describes (`efmesh_core::manifest::Manifest`), so the schema and the type cannot drift apart.

mod common;
use common::*;
use efmesh_core::interval::Range;
use efmesh_core::manifest::{
    Freshness, Manifest, ManifestColumn, ManifestFile, ManifestInterval, MANIFEST_VERSION,
};
use efmesh_core::passport::{self, Answerable, Node};
use efmesh_core::types::TypeFamily;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Each invalid fixture and where its one defect is (a JSON pointer into the fixture).
const INVALID: &[(&str, &str)] = &[
    ("absolute-file-path", "/files/0/path"),
    (
        "bad-timestamp-contiguous-through-date-only",
        "/freshness/contiguousThrough",
    ),
    ("bad-timestamp-generated-at-space", "/generatedAt"),
    (
        "bad-timestamp-history-end-date-only",
        "/freshness/historyEnd",
    ),
    ("bad-timestamp-interval-offset", "/intervals/0/start"),
    ("bad-timestamp-month-13", "/effective/completeThrough"),
    ("file-interval-as-string", "/files/0/interval"),
    ("fingerprint-uppercase", "/fingerprint"),
    ("fractional-row-count", "/files/0/rows"),
    ("manifest-version-as-string", "/manifestVersion"),
    ("manifest-version-newer", "/manifestVersion"),
    ("missing-field-caveat-model", "/effective/caveats/0"),
    ("missing-field-effective-limited-by", "/effective"),
    ("missing-field-fingerprint", ""),
    ("missing-field-interval-end", "/intervals/1"),
    ("model-name-without-schema", "/model"),
    ("negative-file-size", "/files/1/bytes"),
    ("null-caveats", "/caveats"),
    ("parent-dir-file-path", "/files/0/path"),
    ("wrong-enum-answerable", "/answerable"),
    ("wrong-enum-effective-answerable", "/effective/answerable"),
    ("wrong-enum-family", "/schema/2/family"),
    ("wrong-enum-kind", "/kind"),
];

fn schema_dir() -> PathBuf {
    repo().join("manifest-schema")
}

fn schema() -> Value {
    read_json(&schema_dir().join("manifest.schema.json"))
}

fn read_json(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// Every `*.json` of a fixture folder, by name without the extension.
fn fixtures(kind: &str) -> Vec<(String, Value)> {
    let dir = schema_dir().join("fixtures").join(kind);
    let mut out: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            (name, read_json(&p))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The instance paths of every violation, deduplicated.
fn violations(instance: &Value) -> BTreeSet<String> {
    manifest_validator()
        .iter_errors(instance)
        .map(|e| e.instance_path().as_str().to_string())
        .collect()
}

#[test]
fn the_schema_is_a_valid_draft_2020_12_schema() {
    let s = schema();
    assert_eq!(
        s["$schema"], "https://json-schema.org/draft/2020-12/schema",
        "the schema declares its draft"
    );
    if let Err(e) = jsonschema::draft202012::meta::validate(&s) {
        panic!("manifest.schema.json breaks the 2020-12 meta-schema: {e}");
    }
    assert_eq!(
        s["properties"]["manifestVersion"]["const"],
        json!(MANIFEST_VERSION),
        "the schema describes the manifest version efmesh writes"
    );
    assert_eq!(
        s["additionalProperties"],
        json!(true),
        "new fields stay additive"
    );
}

#[test]
fn every_valid_fixture_validates_and_round_trips_through_the_rust_type() {
    let valid = fixtures("valid");
    let names: Vec<&str> = valid.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "closed-history",
            "full-model",
            "redacted",
            "time-range-with-gap"
        ]
    );
    for (name, v) in &valid {
        assert_valid_manifest(v);
        let parsed = Manifest::parse(&v.to_string())
            .unwrap_or_else(|e| panic!("valid fixture {name} does not parse: {e}"));
        assert_eq!(
            &serde_json::to_value(&parsed).unwrap(),
            v,
            "{name}: parse then serialize changes it"
        );
    }
}

#[test]
fn every_invalid_fixture_is_rejected_for_its_one_defect() {
    let invalid = fixtures("invalid");
    let names: Vec<&str> = invalid.iter().map(|(n, _)| n.as_str()).collect();
    let expected: Vec<&str> = INVALID.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names, expected,
        "each invalid fixture is listed in INVALID with where its defect is"
    );
    for ((name, v), (_, at)) in invalid.iter().zip(INVALID) {
        let found = violations(v);
        assert_eq!(
            found,
            BTreeSet::from([at.to_string()]),
            "{name}: expected exactly one defect, at `{at}`"
        );
        // the Rust reader (and so the WebAssembly one) refuses what the schema refuses
        assert!(
            Manifest::parse(&v.to_string()).is_err(),
            "{name}: Manifest::parse accepted a manifest the schema rejects"
        );
    }
}

#[test]
fn unknown_fields_are_additive_at_every_level() {
    let (_, mut v) = fixtures("valid")
        .into_iter()
        .find(|(n, _)| n == "time-range-with-gap")
        .unwrap();
    v["someFutureField"] = json!({"any": ["shape"]});
    v["files"][0]["checksum"] = json!("sha256:...");
    v["freshness"]["lagSeconds"] = json!(3600);
    v["effective"]["caveats"] = json!([{"model": "a.b", "text": "x", "since": "2026-01-01"}]);
    assert_valid_manifest(&v);
    Manifest::parse(&v.to_string()).expect("readers ignore fields they do not know");
}

fn at(d: &str) -> chrono::NaiveDateTime {
    chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d")
        .unwrap()
        .and_hms_opt(0, 0, 0)
        .unwrap()
}

/// A real fingerprint, computed by the core from a tiny project.
fn real_fingerprint() -> String {
    use efmesh_core::project::{load, ProjectSources, SourceText};
    let sources = ProjectSources {
        config: efmesh_core::config::Config::defaults("t"),
        models: vec![SourceText {
            path: "models/m.sql".into(),
            text: "MODEL (name s.m, kind FULL);\nSELECT 1 AS x".into(),
        }],
        audits: vec![],
        external_models: vec![],
        macros: vec![],
        config_diagnostics: vec![],
    };
    let loaded = load(&sources, &mut |p: &str| Err(format!("no file {p}")));
    let project = loaded.project.expect("the tiny project loads");
    project.fingerprints[0].clone()
}

/// A manifest built from the core's own values: interval arithmetic, passports, type families.
fn built_in_rust() -> Manifest {
    let caveats = vec!["only ward A reports".to_string()];
    let nodes = vec![
        Node {
            name: "raw.feed",
            answerable: Answerable::Sampled,
            caveats: &caveats,
            coverage: Some(Some(at("2026-01-03"))),
            parents: vec![],
        },
        Node {
            name: "mart.m",
            answerable: Answerable::Full,
            caveats: &[],
            coverage: Some(Some(at("2026-01-06"))),
            parents: vec![0],
        },
    ];
    let effective = passport::effective(&nodes, &[0, 1]).remove(1);
    let day = |d: &str, e: &str| ManifestInterval::from(Range::new(at(d), at(e)));
    let types = ["BIGINT", "VARCHAR", "TIMESTAMP", "BOOLEAN", "STRUCT(a INT)"];
    Manifest {
        manifest_version: MANIFEST_VERSION,
        model: "mart.m".into(),
        fingerprint: real_fingerprint(),
        kind: "INCREMENTAL_BY_TIME_RANGE".into(),
        files: vec![ManifestFile {
            path: "interval=20260101T000000Z/data-1a2b3c4d.parquet".into(),
            bytes: u64::MAX,
            rows: 0,
            interval: Some(day("2026-01-01", "2026-01-02")),
        }],
        schema: types
            .iter()
            .enumerate()
            .map(|(n, t)| ManifestColumn {
                name: format!("c{n}"),
                sql_type: t.to_string(),
                family: TypeFamily::of(t),
            })
            .collect(),
        intervals: vec![
            day("2026-01-01", "2026-01-03"),
            day("2026-01-04", "2026-01-06"),
        ],
        answerable: Answerable::Full,
        caveats: vec![],
        freshness: Freshness {
            contiguous_through: Some(passport::iso(at("2026-01-03"))),
            latest_interval: Some(day("2026-01-05", "2026-01-06")),
            failed_intervals: vec![day("2026-01-03", "2026-01-04")],
            history_end: None,
        },
        effective: Some(effective),
        redacted: vec!["patient_name".into()],
        generated_at: passport::iso(chrono::Utc::now().naive_utc()),
    }
}

#[test]
fn a_manifest_built_in_rust_validates() {
    let m = built_in_rust();
    assert_eq!(
        m.effective.as_ref().unwrap().answerable,
        Answerable::Sampled
    );
    assert_eq!(
        m.effective.as_ref().unwrap().limited_by.as_deref(),
        Some("raw.feed")
    );
    let v = serde_json::to_value(&m).unwrap();
    assert_valid_manifest(&v);
    // the other shape of every optional value: null, and a kind without intervals
    let mut bare = m.clone();
    bare.kind = "FULL".into();
    bare.files[0].interval = None;
    bare.intervals.clear();
    bare.freshness = Freshness::default();
    bare.effective = Some(
        passport::effective(
            &[Node {
                name: "s.m",
                answerable: Answerable::Full,
                caveats: &[],
                coverage: None,
                parents: vec![],
            }],
            &[0],
        )
        .remove(0),
    );
    assert_eq!(bare.effective.as_ref().unwrap().limited_by, None);
    assert_valid_manifest(&serde_json::to_value(&bare).unwrap());
    // every answerable and every family the Rust enums have
    for a in [
        Answerable::Full,
        Answerable::Sampled,
        Answerable::Unobservable,
    ] {
        let mut x = m.clone();
        x.answerable = a;
        x.effective.as_mut().unwrap().answerable = a;
        assert_valid_manifest(&serde_json::to_value(&x).unwrap());
    }
    let families: BTreeSet<TypeFamily> = m.schema.iter().map(|c| c.family).collect();
    assert_eq!(families.len(), 5, "the fixture covers every TypeFamily");
}

/// Object keys of the Rust output against the schema's `properties` and `required`: every field
/// serde writes is documented, and every required field is written.
fn check_keys(path: &str, written: &Value, schema_obj: &Value) {
    let keys: BTreeSet<&str> = written
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let props: BTreeSet<&str> = schema_obj["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("{path}: no properties in the schema"))
        .keys()
        .map(String::as_str)
        .collect();
    let required: BTreeSet<&str> = schema_obj["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    let undocumented: Vec<_> = keys.difference(&props).collect();
    assert!(
        undocumented.is_empty(),
        "{path}: serde writes {undocumented:?}, which the schema does not describe"
    );
    let unwritten: Vec<_> = required.difference(&keys).collect();
    assert!(
        unwritten.is_empty(),
        "{path}: the schema requires {unwritten:?}, which serde does not write"
    );
}

#[test]
fn the_schema_documents_exactly_what_serde_writes() {
    let s = schema();
    let v = serde_json::to_value(built_in_rust()).unwrap();
    let defs = &s["$defs"];
    check_keys("manifest", &v, &s);
    check_keys("file", &v["files"][0], &defs["file"]);
    check_keys("interval", &v["intervals"][0], &defs["interval"]);
    check_keys("column", &v["schema"][0], &defs["column"]);
    check_keys("freshness", &v["freshness"], &defs["freshness"]);
    check_keys("effective", &v["effective"], &defs["effective"]);
    check_keys("caveat", &v["effective"]["caveats"][0], &defs["caveat"]);
    // the enums are the Rust enums' serde names
    let names = |vals: &Value| -> BTreeSet<String> {
        vals.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap().to_string())
            .collect()
    };
    let answerable: BTreeSet<String> = [
        Answerable::Full,
        Answerable::Sampled,
        Answerable::Unobservable,
    ]
    .iter()
    .map(|a| {
        serde_json::to_value(a)
            .unwrap()
            .as_str()
            .unwrap()
            .to_string()
    })
    .collect();
    assert_eq!(names(&defs["answerable"]["enum"]), answerable);
    let family: BTreeSet<String> = [
        TypeFamily::Text,
        TypeFamily::Numeric,
        TypeFamily::Temporal,
        TypeFamily::Boolean,
        TypeFamily::Any,
    ]
    .iter()
    .map(|f| {
        serde_json::to_value(f)
            .unwrap()
            .as_str()
            .unwrap()
            .to_string()
    })
    .collect();
    assert_eq!(
        names(&defs["column"]["properties"]["family"]["enum"]),
        family
    );
    // every kind efmesh names (the alias SCD_TYPE_2_BY_TIME is read, never written)
    let kinds: BTreeSet<String> = efmesh_core::model::kind::KIND_NAMES
        .iter()
        .filter(|k| **k != "SCD_TYPE_2_BY_TIME")
        .map(|k| k.to_string())
        .collect();
    assert_eq!(names(&s["properties"]["kind"]["enum"]), kinds);
}
