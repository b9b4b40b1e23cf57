//! The engine conformance suite: one body of checks, run against every `EngineFactory`, as
//! sqlparser's `TestedDialects` runs one case across dialects. A new engine is added to
//! [`factories`] and must pass every check unchanged: the statements come from
//! `efmesh_core::materialize` in the engine's own dialect, so what is checked is that the
//! engine runs what the executor will ask of it, with the results efmesh relies on.

use efmesh::engine::duckdb::DuckDbFactory;
use efmesh::engine::postgres::PostgresFactory;

mod common;
use efmesh::engine::{Engine, EngineFactory, RelationKind};
use efmesh_core::interval::Range;
use efmesh_core::materialize::time_column::{TimeColumn, TimeColumnType};
use efmesh_core::materialize::{self, Write};
use efmesh_core::time::parse_instant;
use std::path::Path;

/// Every engine efmesh ships, opened over a fresh database in `dir`.
fn factories(dir: &Path) -> Vec<Box<dyn EngineFactory>> {
    let config = efmesh_core::config::Config::defaults("conformance").engine;
    vec![
        Box::new(DuckDbFactory {
            root: dir.to_path_buf(),
            path: "conformance.duckdb".into(),
            config: config.clone(),
        }),
        Box::new(DuckDbFactory {
            root: dir.to_path_buf(),
            path: ":memory:".into(),
            config: config.clone(),
        }),
        Box::new(PostgresFactory::new(&common::pg_database("conformance"), &config).unwrap()),
    ]
}

/// Run `check` against every engine, naming the engine in a failure.
fn for_every_engine(check: impl Fn(&mut dyn Engine)) {
    let dir = tempfile::tempdir().unwrap();
    for f in factories(dir.path()) {
        let mut engine = f
            .open()
            .unwrap_or_else(|e| panic!("{} does not open: {e}", f.name()));
        assert_eq!(engine.dialect().name(), f.dialect().name());
        let schema = f.dialect().create_schema("_efmesh");
        engine.execute("schema", &schema).unwrap();
        check(engine.as_mut());
    }
}

fn one(engine: &mut dyn Engine, sql: &str) -> String {
    engine.query("conformance", sql, Some(1)).unwrap().rows[0][0]
        .clone()
        .unwrap_or_default()
}

fn day(d: &str) -> chrono::NaiveDateTime {
    parse_instant(d).unwrap()
}

fn run(engine: &mut dyn Engine, w: &Write) {
    let all: Vec<String> = w.statements.iter().chain(&w.cleanup).cloned().collect();
    engine.transaction("conformance", &all).unwrap();
}

#[test]
fn builds_a_table_whole_and_a_view_over_it() {
    for_every_engine(|e| {
        let d = e.dialect();
        let select = "SELECT g.i AS id, g.i * 2 AS v FROM generate_series(0, 4) AS g(i)";
        e.execute(
            "full",
            &materialize::full::create(d, "_efmesh.t_full", select),
        )
        .unwrap();
        assert_eq!(one(e, "SELECT sum(v) FROM _efmesh.t_full"), "20");
        e.execute(
            "view",
            &materialize::view::create(
                d,
                "_efmesh.t_view",
                "SELECT id FROM _efmesh.t_full WHERE v > 4",
            ),
        )
        .unwrap();
        assert_eq!(one(e, "SELECT count(*) FROM _efmesh.t_view"), "2");
        assert_eq!(
            e.relation_kind("_efmesh.t_full").unwrap(),
            Some(RelationKind::Table)
        );
        assert_eq!(
            e.relation_kind("_efmesh.t_view").unwrap(),
            Some(RelationKind::View)
        );
        assert_eq!(e.relation_kind("_efmesh.nope").unwrap(), None);
        let cols: Vec<String> = e
            .table_columns("_efmesh.t_full")
            .unwrap()
            .into_iter()
            .map(|(c, _)| c)
            .collect();
        assert_eq!(cols, ["id", "v"]);
    });
}

#[test]
fn time_range_batches_replace_exactly_their_range() {
    for_every_engine(|e| {
        let d = e.dialect();
        let q = "SELECT g.i AS id, TIMESTAMP '2026-01-01' + g.i * INTERVAL '1 hour' AS ts FROM generate_series(0, 71) AS g(i)";
        e.execute(
            "create",
            &materialize::time_range::create(d, "_efmesh.t_tr", q),
        )
        .unwrap();
        assert_eq!(
            one(e, "SELECT count(*) FROM _efmesh.t_tr"),
            "0",
            "created empty"
        );
        let cols = ["id".to_string(), "ts".to_string()];
        let ts = TimeColumn::new("ts", &column_type(e, "_efmesh.t_tr", "ts"), None).unwrap();
        assert_eq!(ts.ty, TimeColumnType::Temporal);
        let b1 = Range::new(day("2026-01-01"), day("2026-01-02"));
        let b2 = Range::new(day("2026-01-02"), day("2026-01-03"));
        for b in [b1, b2, b1] {
            run(
                e,
                &materialize::time_range::batch(d, "_efmesh.t_tr", q, &ts, b, Some(&cols)).unwrap(),
            );
        }
        assert_eq!(
            one(
                e,
                "SELECT count(*) || '/' || count(DISTINCT id) FROM _efmesh.t_tr"
            ),
            "48/48",
            "a recomputed batch never duplicates rows"
        );
    });
}

/// The type `engine` reports for `column` of `table`.
fn column_type(e: &mut dyn Engine, table: &str, column: &str) -> String {
    e.table_columns(table)
        .unwrap()
        .into_iter()
        .find(|(c, _)| c == column)
        .unwrap_or_else(|| panic!("{table} has no column {column}"))
        .1
}

#[test]
fn time_range_batches_compare_text_and_integer_time_columns_in_their_own_type() {
    for_every_engine(|e| {
        let d = e.dialect();
        // days as text in two formats, and as integers; the 3rd of January is outside the batches
        let q = "SELECT * FROM (VALUES (1, '2026-01-01', '20260101', 20260101), (2, '2026-01-02', '20260102', 20260102), (3, '2026-01-03', '20260103', 20260103)) AS t(id, ds, dk, di)";
        let b1 = Range::new(day("2026-01-01"), day("2026-01-02"));
        let b2 = Range::new(day("2026-01-02"), day("2026-01-03"));
        for (table, column, format, ty) in [
            ("_efmesh.t_text", "ds", None, TimeColumnType::Text),
            (
                "_efmesh.t_textf",
                "dk",
                Some("%Y%m%d"),
                TimeColumnType::Text,
            ),
            (
                "_efmesh.t_int",
                "di",
                Some("%Y%m%d"),
                TimeColumnType::Numeric,
            ),
        ] {
            e.execute("create", &materialize::time_range::create(d, table, q))
                .unwrap();
            let t = TimeColumn::new(column, &column_type(e, table, column), format).unwrap();
            assert_eq!(t.ty, ty, "{table}.{column}");
            for b in [b1, b2, b1] {
                run(
                    e,
                    &materialize::time_range::batch(d, table, q, &t, b, None).unwrap(),
                );
            }
            assert_eq!(
                one(
                    e,
                    &format!(
                        "SELECT string_agg(CAST(id AS VARCHAR), ',' ORDER BY id) FROM {table}"
                    )
                ),
                "1,2",
                "{table}: exactly the two days, each once"
            );
        }
    });
}

#[test]
fn unique_key_batches_upsert_and_refuse_duplicate_keys() {
    for_every_engine(|e| {
        let d = e.dialect();
        let v1 = "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) t(id, name)";
        let v2 = "SELECT * FROM (VALUES (2, 'B'), (3, 'c')) t(id, name)";
        e.execute(
            "create",
            &materialize::time_range::create(d, "_efmesh.t_uk", v1),
        )
        .unwrap();
        let key = ["id".to_string()];
        let cols = ["id".to_string(), "name".to_string()];
        run(
            e,
            &materialize::unique_key::batch(d, "_efmesh.t_uk", v1, &key, Some(&cols)),
        );
        run(
            e,
            &materialize::unique_key::batch(d, "_efmesh.t_uk", v2, &key, Some(&cols)),
        );
        assert_eq!(
            one(
                e,
                "SELECT string_agg(id || name, ',' ORDER BY id) FROM _efmesh.t_uk"
            ),
            "1a,2B,3c"
        );
        let dup = "SELECT * FROM (VALUES (4, 'x'), (4, 'y')) t(id, name)";
        let w = materialize::unique_key::batch(d, "_efmesh.t_uk", dup, &key, Some(&cols));
        let all: Vec<String> = w.statements.iter().chain(&w.cleanup).cloned().collect();
        let err = e.transaction("dup", &all).unwrap_err().to_string();
        assert!(err.contains("duplicate unique_key (id)"), "{err}");
        assert_eq!(
            one(e, "SELECT count(*) FROM _efmesh.t_uk"),
            "3",
            "nothing of it was kept"
        );
    });
}

#[test]
fn scd_type_2_closes_changed_versions_and_opens_new_ones() {
    let sources = efmesh_core::project::ProjectSources {
        config: efmesh_core::config::Config::defaults("t"),
        models: vec![efmesh_core::project::SourceText {
            path: "models/h.sql".into(),
            text: "MODEL (name s.h, kind SCD_TYPE_2 (unique_key id));\nSELECT 1 AS id, 'x' AS tier, now() AS updated_at".into(),
        }],
        audits: vec![],
        external_models: vec![],
        macros: vec![],
        config_diagnostics: vec![],
    };
    let project = efmesh_core::project::load(&sources, &mut |_| Err("none".into()))
        .project
        .unwrap();
    for_every_engine(|e| {
        let d = e.dialect();
        let run1 = "SELECT * FROM (VALUES (1, 'gold', TIMESTAMP '2026-01-01'), (2, 'silver', TIMESTAMP '2026-01-01')) t(id, tier, updated_at)";
        let run2 = "SELECT * FROM (VALUES (1, 'platinum', TIMESTAMP '2026-01-05'), (2, 'silver', TIMESTAMP '2026-01-01')) t(id, tier, updated_at)";
        e.execute(
            "create",
            &materialize::scd2::create(d, "_efmesh.t_scd", run1, "valid_from", "valid_to"),
        )
        .unwrap();
        for (q, at) in [(run1, "2026-01-02"), (run2, "2026-01-06")] {
            let w = materialize::scd2::batch(d, &project, 0, "_efmesh.t_scd", q, day(at)).unwrap();
            run(e, &w);
        }
        assert_eq!(
            one(e, "SELECT string_agg(id || tier || coalesce(CAST(valid_to AS VARCHAR), '-'), ',' ORDER BY id, valid_from) FROM _efmesh.t_scd"),
            "1gold2026-01-05 00:00:00,1platinum-,2silver-",
            "the changed row's old version is closed at its new updated_at"
        );
    });
}

#[test]
fn promotion_swaps_views_in_one_transaction_and_failures_leave_nothing() {
    for_every_engine(|e| {
        let d = e.dialect();
        for (t, n) in [("_efmesh.v1", 1), ("_efmesh.v2", 2)] {
            e.execute(
                "t",
                &materialize::full::create(d, t, &format!("SELECT {n} AS version")),
            )
            .unwrap();
        }
        let swap = |e: &mut dyn Engine, target: &str| {
            let statements = vec![
                d.create_schema("dev__s"),
                d.replace_view("dev__s.m", &format!("SELECT * FROM {target}")),
            ];
            e.transaction("swap", &statements)
        };
        swap(e, "_efmesh.v1").unwrap();
        assert_eq!(one(e, "SELECT version FROM dev__s.m"), "1");
        swap(e, "_efmesh.v2").unwrap();
        assert_eq!(one(e, "SELECT version FROM dev__s.m"), "2");
        // a failing statement rolls the whole transaction back
        let bad = vec![
            d.replace_view("dev__s.m", "SELECT * FROM _efmesh.v1"),
            "SELECT * FROM nowhere".to_string(),
        ];
        assert!(e.transaction("bad", &bad).is_err());
        assert_eq!(
            one(e, "SELECT version FROM dev__s.m"),
            "2",
            "the swap did not happen"
        );
        e.execute("drop", &d.drop(RelationKind::View, "dev__s.m", true))
            .unwrap();
        assert_eq!(e.relation_kind("dev__s.m").unwrap(), None);
    });
}

#[test]
fn another_connection_sees_the_same_database() {
    for_every_engine(|e| {
        let d = e.dialect();
        e.execute(
            "t",
            &materialize::full::create(d, "_efmesh.shared", "SELECT 42 AS answer"),
        )
        .unwrap();
        let mut other = e.another_connection().unwrap();
        assert_eq!(
            one(other.as_mut(), "SELECT answer FROM _efmesh.shared"),
            "42"
        );
        assert_eq!(
            other.describe("SELECT answer FROM _efmesh.shared").unwrap()[0].0,
            "answer"
        );
    });
}

#[test]
fn copied_rows_arrive_as_text_exactly_with_their_nulls() {
    for_every_engine(|e| {
        let d = e.dialect();
        let columns = vec!["id".to_string(), "Odd Name".to_string()];
        let staging = materialize::seed::staging_table(d, &columns);
        // twice: a rerun on the same connection replaces the table
        e.execute("staging", &staging).unwrap();
        e.execute("staging", &staging).unwrap();
        let hostile = "tab\there, \"quoted\", back\\slash, new\nline, 'single', é, \\N";
        let rows = vec![
            vec![Some("1".into()), Some(hostile.to_string())],
            vec![Some("2".into()), None],
            vec![Some("3".into()), Some(String::new())],
        ];
        e.copy_rows("copy", materialize::seed::STAGING, &columns, &rows)
            .unwrap();
        let staged = materialize::seed::STAGING;
        let got = e
            .query(
                "read back",
                &format!(
                    "SELECT id, {} FROM {staged} ORDER BY id",
                    d.ident("Odd Name")
                ),
                None,
            )
            .unwrap();
        assert_eq!(got.rows, rows, "{}", e.name());
        // what seeds do next: cast into typed columns
        assert_eq!(
            one(e, &format!("SELECT sum(CAST(id AS INTEGER)) FROM {staged}")),
            "6"
        );
        // a column the table lacks is the engine's error, not a panic
        let bad = e.copy_rows("copy", staged, &["nope".to_string()], &[vec![None]]);
        assert!(bad.is_err(), "{}", e.name());
    });
}
