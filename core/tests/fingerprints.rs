//! Golden tests: fingerprints and canonical forms are contracts.
//!
//! The corpus snapshot freezes every fingerprint of `tests/fixtures/corpus`; a change fails
//! CI. Changing fingerprints on purpose means bumping `FINGERPRINT_VERSION`, reviewing the
//! new snapshot (`cargo insta review`), and keeping the old one: `corpus_fingerprints_v<N>`
//! freezes what `fingerprint::legacy` must still reproduce, so an upgrade keeps built data.

use efmesh_core::config::Config;
use efmesh_core::model::Kind;
use efmesh_core::project::{load, Loaded, ProjectSources, SourceText};
use efmesh_core::sql::QueryForm;
use std::collections::BTreeMap;
use std::path::Path;

fn files_under(root: &Path, dir: &str) -> Vec<SourceText> {
    let mut out = vec![];
    let mut stack = vec![root.join(dir)];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "sql") {
                let rel = p
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push(SourceText {
                    path: rel,
                    text: std::fs::read_to_string(&p).unwrap(),
                });
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

fn load_dir(root: &Path) -> Loaded {
    let cfg_text = std::fs::read_to_string(root.join("efmesh.toml")).unwrap();
    let config = Config::parse("efmesh.toml", &cfg_text, &|_| None).unwrap();
    let sources = ProjectSources {
        config,
        models: files_under(root, "models"),
        audits: files_under(root, "audits"),
        external_models: vec![],
        macros: vec![],
        config_diagnostics: vec![],
    };
    load(&sources, &mut |rel| {
        std::fs::read(root.join(rel)).map_err(|e| e.to_string())
    })
}

#[test]
fn corpus_fingerprints_are_frozen() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus");
    let loaded = load_dir(&root);
    let errors: Vec<String> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.to_string())
        .collect();
    assert!(errors.is_empty(), "corpus must check clean: {errors:#?}");
    let p = loaded.project.unwrap();
    assert!(p.models.len() >= 40, "the corpus covers at least 40 models");

    // the corpus covers what the golden test promises to cover
    let kinds: std::collections::BTreeSet<&str> = p.models.iter().map(|m| m.kind.name()).collect();
    // every canonical kind (the names manifests accept), and nothing else
    for k in efmesh_core::manifest::KINDS {
        assert!(kinds.contains(k), "corpus lacks a {k} model");
    }
    assert!(
        kinds
            .iter()
            .all(|k| efmesh_core::manifest::KINDS.contains(k)),
        "Kind::name writes a kind manifests do not accept: {kinds:?}"
    );
    let canon: Vec<&str> = p
        .models
        .iter()
        .filter_map(|m| m.query.as_ref())
        .map(|q| q.canonical.as_str())
        .collect();
    for needle in [
        "@start_ds",
        "@end_ds",
        "@start_ts",
        "@end_ts",
        "@start_date",
        "@end_date",
        "@start_dt",
        "@end_dt",
        "@start",
        "WITH ",
        " OVER (",
        "*",
    ] {
        assert!(
            canon.iter().any(|c| c.contains(needle)),
            "corpus lacks `{needle}`"
        );
    }
    assert!(
        p.models.iter().any(|m| matches!(
            m.query.as_ref().map(|q| &q.form),
            Some(QueryForm::Fallback { .. })
        )),
        "corpus lacks a fallback-parsed model"
    );
    assert!(p.models.iter().any(|m| matches!(m.kind, Kind::Seed { .. })));

    let fps: BTreeMap<&str, &str> = p
        .models
        .iter()
        .zip(&p.fingerprints)
        .map(|(m, f)| (m.name.as_str(), f.as_str()))
        .collect();
    insta::assert_yaml_snapshot!("corpus_fingerprints", fps);

    // version 1, frozen before batch_size left the fingerprint: reproduced exactly, so a
    // project built by an older efmesh keeps its physics after the upgrade
    let v1 = p.legacy(1).expect("v1 is reproducible").fingerprints;
    let legacy: BTreeMap<&str, &str> = p
        .models
        .iter()
        .zip(&v1)
        .map(|(m, f)| (m.name.as_str(), f.as_str()))
        .collect();
    insta::assert_yaml_snapshot!("corpus_fingerprints_v1", legacy);
    assert!(
        p.legacy(0).is_none()
            && p.legacy(efmesh_core::fingerprint::FINGERPRINT_VERSION)
                .is_none()
    );
}

/// A two-model project: an EXTERNAL parent and the model under test.
fn fp_with_parent(parent_columns: &str, model: &str) -> String {
    let parent = format!(
        "MODEL (name src.events, kind EXTERNAL (table raw.events), columns ({parent_columns}));"
    );
    let mut config = Config::defaults("t");
    config.lake_path = Some("lake".into());
    let sources = ProjectSources {
        config,
        models: vec![
            SourceText {
                path: "models/events.sql".into(),
                text: parent,
            },
            SourceText {
                path: "models/m.sql".into(),
                text: model.into(),
            },
        ],
        audits: vec![],
        external_models: vec![],
        macros: vec![],
        config_diagnostics: vec![],
    };
    let loaded = load(&sources, &mut |_| Err("no seeds".into()));
    let errors: Vec<String> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.to_string())
        .collect();
    assert!(errors.is_empty(), "{model}\n{errors:#?}");
    let p = loaded.project.unwrap();
    p.fingerprints[p.index_of("m.a").unwrap()].clone()
}

const PARENT: &str = "id INT, v DOUBLE, ts TIMESTAMP, label VARCHAR";

fn fp(model: &str) -> String {
    fp_with_parent(PARENT, model)
}

const BASE: &str = "MODEL (name m.a, kind FULL);\nSELECT id, v + 1 AS v FROM src.events WHERE ts >= @start_ds AND label = 'A'";

#[test]
fn reformatting_never_changes_the_fingerprint() {
    let base = fp(BASE);
    for variant in [
        // whitespace and line breaks
        "MODEL (name m.a, kind FULL);\n\n  SELECT   id,\n\tv+1   AS v\nFROM\n  src.events\nWHERE ts>=@start_ds AND label='A'\n",
        // keyword case (and macro case)
        "model (NAME m.a, KIND full);\nselect id, v + 1 as v from src.events where ts >= @START_DS and label = 'A'",
        // comments everywhere
        "-- a model\nMODEL (name m.a, /* kind */ kind FULL);\nSELECT id /* key */, v + 1 AS v -- bump\nFROM src.events WHERE ts >= @start_ds AND label = 'A' -- end",
        // unquoted identifier case
        "MODEL (name M.A, kind FULL);\nSELECT ID, V + 1 AS V FROM SRC.Events WHERE TS >= @start_ds AND LABEL = 'A'",
        // property order, trailing commas, trailing semicolon
        "MODEL (\n  kind FULL,\n  name m.a,\n);\nSELECT id, v + 1 AS v FROM src.events WHERE ts >= @start_ds AND label = 'A';",
        // metadata outside the fingerprint
        "MODEL (name m.a, kind FULL, cron '@hourly', description 'd', owner o, tags [x], audits (not_null(columns := (id))), answerable sampled, caveats ('c'));\nSELECT id, v + 1 AS v FROM src.events WHERE ts >= @start_ds AND label = 'A'",
        "MODEL (name m.a, kind FULL, start '2026-01-01', end '2026-02-01');\nSELECT id, v + 1 AS v FROM src.events WHERE ts >= @start_ds AND label = 'A'",
    ] {
        assert_eq!(fp(variant), base, "variant changed the fingerprint:\n{variant}");
    }
}

#[test]
fn batching_knobs_never_change_the_fingerprint() {
    let q = "SELECT id, v + 1 AS v, ts FROM src.events WHERE ts >= @start_ds AND label = 'A'";
    let base = fp(&format!(
        "MODEL (name m.a, kind INCREMENTAL_BY_TIME_RANGE (time_column ts));\n{q}"
    ));
    for knobs in [
        "batch_size 1",
        "batch_size 30",
        "batch_concurrency 4",
        "batch_size 7, batch_concurrency 2",
    ] {
        let variant = format!(
            "MODEL (name m.a, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, {knobs}));\n{q}"
        );
        assert_eq!(fp(&variant), base, "{knobs} changed the fingerprint");
    }
    let property = format!(
        "MODEL (name m.a, kind INCREMENTAL_BY_TIME_RANGE (time_column ts), batch_concurrency 3);\n{q}"
    );
    assert_eq!(
        fp(&property),
        base,
        "the model-level property is metadata too"
    );
    // lookback decides which late rows the table holds: SQLMesh and efmesh fingerprint it
    let lookback = format!(
        "MODEL (name m.a, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, lookback 2));\n{q}"
    );
    assert_ne!(fp(&lookback), base);
}

#[test]
fn semantic_edits_always_change_the_fingerprint() {
    let base = fp(BASE);
    let mut seen = vec![base.clone()];
    for variant in [
        "MODEL (name m.a, kind FULL);\nSELECT id, v + 2 AS v FROM src.events WHERE ts >= @start_ds AND label = 'A'",
        "MODEL (name m.a, kind FULL);\nSELECT id, v + 1 AS v FROM src.events WHERE ts > @start_ds AND label = 'A'",
        "MODEL (name m.a, kind FULL);\nSELECT id, v + 1 AS v FROM src.events WHERE ts >= @end_ds AND label = 'A'",
        "MODEL (name m.a, kind FULL);\nSELECT id, v + 1 AS v FROM src.events WHERE ts >= @start_ds AND label = 'a'",
        "MODEL (name m.a, kind FULL);\nSELECT id, v + 1 AS v, ts FROM src.events WHERE ts >= @start_ds AND label = 'A'",
        "MODEL (name m.a, kind FULL);\nSELECT id, v + 1 AS w FROM src.events WHERE ts >= @start_ds AND label = 'A'",
        "MODEL (name m.a, kind VIEW);\nSELECT id, v + 1 AS v FROM src.events WHERE ts >= @start_ds AND label = 'A'",
        "MODEL (name m.a, kind FULL, grain id);\nSELECT id, v + 1 AS v FROM src.events WHERE ts >= @start_ds AND label = 'A'",
        "MODEL (name m.a, kind FULL, columns (id INT, v DOUBLE));\nSELECT id, v + 1 AS v FROM src.events WHERE ts >= @start_ds AND label = 'A'",
        "MODEL (name m.a, kind FULL, columns (id VARCHAR, v DOUBLE));\nSELECT id, v + 1 AS v FROM src.events WHERE ts >= @start_ds AND label = 'A'",
        "MODEL (name m.a, kind FULL, target parquet);\nSELECT id, v + 1 AS v FROM src.events WHERE ts >= @start_ds AND label = 'A'",
        "MODEL (name m.a, kind FULL, redact (v));\nSELECT id, v + 1 AS v FROM src.events WHERE ts >= @start_ds AND label = 'A'",
        "MODEL (name m.a, kind INCREMENTAL_BY_TIME_RANGE (time_column ts));\nSELECT id, v + 1 AS v, ts FROM src.events WHERE ts >= @start_ds AND label = 'A'",
        "MODEL (name m.a, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, lookback 1));\nSELECT id, v + 1 AS v, ts FROM src.events WHERE ts >= @start_ds AND label = 'A'",
    ] {
        let f = fp(variant);
        assert!(!seen.contains(&f), "variant did not change the fingerprint:\n{variant}");
        seen.push(f);
    }
    // a parent's new version changes the child's fingerprint
    assert_ne!(
        fp_with_parent(
            "id INT, v DOUBLE, ts TIMESTAMP, label VARCHAR, extra INT",
            BASE
        ),
        base
    );
    // ... but not a change of a parent's column type within the same family
    assert_eq!(
        fp_with_parent("id BIGINT, v DOUBLE, ts TIMESTAMP, label TEXT", BASE),
        base
    );
}

#[test]
fn canonical_forms_are_frozen() {
    let cases = [
        "SELECT a.id,\n  SUM(a.v) OVER (PARTITION BY a.id ORDER BY a.ts) AS running\nFROM src.events AS a -- c\nWHERE a.ts BETWEEN @start_ts AND @end_ts",
        "WITH x AS (select * EXCLUDE (label) from src.events) SELECT X.*, 'Keep Case' AS s FROM x QUALIFY row_number() OVER (PARTITION BY id ORDER BY ts DESC) = 1",
        "PIVOT src.events ON label USING sum(v)   -- fallback\nGROUP BY id",
    ];
    let out: Vec<String> = cases
        .iter()
        .map(|q| {
            let src = format!("MODEL (name m.a, kind FULL);\n{q}");
            let (m, _) = efmesh_core::model::parse_model_file(
                "m.sql",
                &src,
                efmesh_core::sql::Dialect::DuckDb,
                &Default::default(),
            );
            m.unwrap().query.unwrap().canonical
        })
        .collect();
    insta::assert_yaml_snapshot!("canonical_forms", out);
}

#[test]
fn a_version_from_another_fingerprint_version_is_breaking_or_refused() {
    use efmesh_core::fingerprint::FINGERPRINT_VERSION;
    use efmesh_core::plan::{
        plan, Category, PlanError, PlanOptions, PlanState, Pointer, StoredSnapshot,
    };
    use std::collections::{BTreeMap, HashMap, HashSet};
    let sources = ProjectSources {
        config: Config::defaults("t"),
        models: vec![SourceText {
            path: "models/a.sql".into(),
            text: "MODEL (name s.a, kind FULL);\nSELECT 1 AS x".into(),
        }],
        audits: vec![],
        external_models: vec![],
        macros: vec![],
        config_diagnostics: vec![],
    };
    let p = load(&sources, &mut |_| Err("no seeds".into()))
        .project
        .unwrap();
    let stored = |version: u32| {
        let snap = StoredSnapshot {
            fingerprint: "old".into(),
            name: "s.a".into(),
            physical_fingerprint: "old".into(),
            definition_hash: "whatever".into(),
            fingerprint_version: version,
            payload: serde_json::json!({}),
        };
        HashMap::from([("old".to_string(), snap)])
    };
    let pointers = BTreeMap::from([(
        "s.a".to_string(),
        Pointer {
            fingerprint: "old".into(),
            metadata_hash: "m".into(),
            physical_fingerprint: "old".into(),
        },
    )]);
    let (built, ledgers) = (HashSet::new(), HashMap::new());
    let now = efmesh_core::time::parse_instant("2026-01-02").unwrap();
    let older = stored(FINGERPRINT_VERSION - 1);
    let state = PlanState {
        pointers: &pointers,
        snapshots: &older,
        built: &built,
        ledgers: &ledgers,
        now,
    };
    let a = plan(&p, "dev", state, &PlanOptions::default())
        .unwrap()
        .actions
        .remove(0);
    assert_eq!(a.category, Category::Breaking);
    assert_eq!(
        a.explain,
        vec![format!(
            "fingerprint version changed from {} to {FINGERPRINT_VERSION}, and the definition changed since it was built",
            FINGERPRINT_VERSION - 1
        )]
    );
    assert!(a.build, "a changed definition gets physics of its own");

    // the version served is this very definition, fingerprinted the old way: the upgrade
    // keeps its physics and rebuilds nothing
    let v1 = p.legacy(FINGERPRINT_VERSION - 1).unwrap().fingerprints;
    let mut same = older.clone();
    let mut snap = same.remove("old").unwrap();
    snap.fingerprint = v1[0].clone();
    same.insert(v1[0].clone(), snap);
    let same_pointers = BTreeMap::from([(
        "s.a".to_string(),
        Pointer {
            fingerprint: v1[0].clone(),
            metadata_hash: "m".into(),
            physical_fingerprint: "old".into(),
        },
    )]);
    let built_old = HashSet::from(["old".to_string()]);
    let state = PlanState {
        pointers: &same_pointers,
        snapshots: &same,
        built: &built_old,
        ledgers: &ledgers,
        now,
    };
    let a = plan(&p, "dev", state, &PlanOptions::default())
        .unwrap()
        .actions
        .remove(0);
    assert_eq!(a.category, Category::MetadataOnly, "{:?}", a.explain);
    assert_eq!(a.physical_fingerprint.as_deref(), Some("old"));
    assert!(!a.build);
    assert_ne!(a.fingerprint.as_deref(), Some(v1[0].as_str()));
    let newer = stored(FINGERPRINT_VERSION + 1);
    let state = PlanState {
        pointers: &pointers,
        snapshots: &newer,
        built: &built,
        ledgers: &ledgers,
        now,
    };
    assert!(matches!(
        plan(&p, "dev", state, &PlanOptions::default()),
        Err(PlanError::NewerFingerprintVersion { .. })
    ));
}
