//! The statements each builder writes for DuckDB, frozen: a change here changes what every
//! user's engine runs, so it is reviewed on purpose.

use super::*;
use crate::config::Config;
use crate::interval::Range;
use crate::model::kind::DestructiveChange;
use crate::project::{load, ProjectSources, SourceText};
use crate::sql::dialect::DuckDb;
use crate::time::parse_instant;

fn project(models: &[(&str, &str)]) -> crate::project::Project {
    let sources = ProjectSources {
        config: Config::defaults("t"),
        models: models
            .iter()
            .map(|(p, t)| SourceText {
                path: p.to_string(),
                text: t.to_string(),
            })
            .collect(),
        audits: vec![],
        external_models: vec![],
        macros: vec![],
        config_diagnostics: vec![],
    };
    load(&sources, &mut |_| Ok(b"id,name\n1,a\n".to_vec()))
        .project
        .expect("checks clean")
}

#[test]
fn duckdb_statements_are_frozen() {
    let d = &DuckDb;
    let p = project(&[
        ("models/s.sql", "MODEL (name s.seed, kind SEED (path 's.csv'), columns (id INT, name VARCHAR));"),
        ("models/h.sql", "MODEL (name s.hist, kind SCD_TYPE_2 (unique_key (id), invalidate_hard_deletes true));\nSELECT id, name, now() AS updated_at FROM s.seed"),
        ("models/c.sql", "MODEL (name s.cols, kind SCD_TYPE_2_BY_COLUMN (unique_key id, columns [name]));\nSELECT id, name FROM s.seed"),
    ]);
    let b = Range::new(
        parse_instant("2026-01-01").unwrap(),
        parse_instant("2026-01-02").unwrap(),
    );
    let q = "SELECT 1 AS id, now() AS ts";
    let ts = time_column::TimeColumn::new("ts", "TIMESTAMP", None).unwrap();
    let run_time = parse_instant("2026-01-02").unwrap();
    let files = d.files().unwrap();
    let scd = |i: &str| {
        let i = p.index_of(i).unwrap();
        scd2::batch(d, &p, i, "_efmesh.t", q, run_time).unwrap()
    };
    let out = serde_json::json!({
        "full": full::create(d, "_efmesh.t", q),
        "view": view::create(d, "_efmesh.t", q),
        "time_range.create": time_range::create(d, "_efmesh.t", q),
        "time_range.batch": serde_json::to_value(time_range::batch(d, "_efmesh.t", q, &ts, b, None).unwrap()).unwrap(),
        "time_range.stage": serde_json::to_value(time_range::stage(d, q, &ts, b).unwrap()).unwrap(),
        "unique_key.batch": serde_json::to_value(unique_key::batch(d, "_efmesh.t", q, &["id".into(), "k".into()], None)).unwrap(),
        "scd2.create": scd2::create(d, "_efmesh.t", q, "valid_from", "valid_to"),
        "scd2.by_time": serde_json::to_value(scd("s.hist")).unwrap(),
        "scd2.by_column": serde_json::to_value(scd("s.cols")).unwrap(),
        "seed.select": seed::select(d, &p, p.index_of("s.seed").unwrap(), &seed::source(files, &p, p.index_of("s.seed").unwrap(), "models/s.csv")),
        "seed.bad_values": seed::bad_values(d, &p, p.index_of("s.seed").unwrap(), &seed::source(files, &p, p.index_of("s.seed").unwrap(), "models/s.csv"), 5),
        "evolve": format!("{:?}", evolve::evolve(d, "_efmesh.t", &[("id".into(), "INTEGER".into()), ("x".into(), "VARCHAR".into())], &[("id".into(), "INTEGER".into())], DestructiveChange::Error).map(|e| e.statements)),
        "evolve.refused": format!("{:?}", evolve::evolve(d, "_efmesh.t", &[], &[("id".into(), "INTEGER".into())], DestructiveChange::Error).map(|e| e.statements)),
        "create.view_kind": create(d, &crate::model::Kind::View { materialized: true }, "_efmesh.t", q),
        "parquet": files.copy_to_parquet(q, "/lake/x.parquet"),
        "read_parquet": files.read_parquet(&["/lake/a.parquet".into(), "/lake/it's.parquet".into()]),
    });
    insta::assert_json_snapshot!("duckdb_statements", out);
}

#[test]
fn promotion_swaps_only_what_changed() {
    let p = project(&[
        (
            "models/a.sql",
            "MODEL (name s.a, kind FULL);\nSELECT 1 AS x",
        ),
        (
            "models/b.sql",
            "MODEL (name s.b, kind FULL);\nSELECT x FROM s.a",
        ),
    ]);
    let empty = Default::default();
    let (snaps, built, ledgers) = (Default::default(), Default::default(), Default::default());
    let plan = crate::plan::plan(
        &p,
        "dev",
        crate::plan::PlanState {
            pointers: &empty,
            snapshots: &snaps,
            built: &built,
            ledgers: &ledgers,
            now: parse_instant("2026-01-02").unwrap(),
        },
        &Default::default(),
    )
    .unwrap();
    let names = plan
        .actions
        .iter()
        .map(|a| {
            (
                a.model.clone(),
                format!("_efmesh.{}", a.model.replace('.', "__")),
            )
        })
        .collect();
    assert_eq!(
        promotion::swap(&DuckDb, &plan, &names, &|_, _| vec![]),
        [
            "CREATE SCHEMA IF NOT EXISTS dev__s",
            "CREATE OR REPLACE VIEW dev__s.a AS SELECT * FROM _efmesh.s__a",
            "CREATE OR REPLACE VIEW dev__s.b AS SELECT * FROM _efmesh.s__b",
        ]
    );
}
