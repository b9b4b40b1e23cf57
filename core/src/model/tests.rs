use super::*;
use crate::diagnostic::Problem;
use crate::model::kind::DestructiveChange;

fn parse(src: &str) -> (Option<Model>, Vec<Diagnostic>) {
    parse_model_file("models/m.sql", src, Dialect::DuckDb, &Default::default())
}

fn ok(src: &str) -> Model {
    let (m, d) = parse(src);
    assert!(d.iter().all(|d| !d.is_error()), "{d:?}");
    m.expect("model parses")
}

fn first_error(src: &str) -> Diagnostic {
    let (_, d) = parse(src);
    d.into_iter().find(|d| d.is_error()).expect("an error")
}

#[test]
fn every_kind_parses_with_sqlmesh_spelling() {
    let m = ok("MODEL (name a.b, kind INCREMENTAL_BY_TIME_RANGE (time_column (ds, '%Y-%m-%d'), batch_size 7, lookback 2));\nSELECT 1 AS ds");
    assert_eq!(
        m.kind,
        Kind::IncrementalByTimeRange {
            time_column: "ds".into(),
            time_column_format: Some("%Y-%m-%d".into()),
            lookback: 2,
        }
    );
    assert_eq!(
        (m.batching.size, m.batching.concurrency),
        (Some(7), None),
        "the batching knobs are kind parameters, kept outside the kind"
    );
    let m = ok("MODEL (name a.b, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key (id, ds)));\nSELECT 1 AS id, 2 AS ds");
    assert_eq!(
        m.kind,
        Kind::IncrementalByUniqueKey {
            unique_key: vec!["id".into(), "ds".into()],
            lookback: 0,
        }
    );
    let m = ok("MODEL (name a.b, kind SCD_TYPE_2_BY_TIME (unique_key id, updated_at_name changed_at, invalidate_hard_deletes true));\nSELECT 1 AS id, now() AS changed_at");
    assert!(
        matches!(m.kind, Kind::ScdType2 { ref updated_at_name, invalidate_hard_deletes: true, .. } if updated_at_name == "changed_at")
    );
    let m = ok("MODEL (name a.b, kind SCD_TYPE_2_BY_COLUMN (unique_key id, columns [tier, region]));\nSELECT 1 AS id, 'x' AS tier, 'y' AS region");
    assert!(
        matches!(m.kind, Kind::ScdType2ByColumn { ref columns, .. } if columns == &["tier", "region"])
    );
    let m = ok(
        "MODEL (name a.b, kind SCD_TYPE_2_BY_COLUMN (unique_key id, columns *));\nSELECT 1 AS id",
    );
    assert!(matches!(m.kind, Kind::ScdType2ByColumn { ref columns, .. } if columns == &["*"]));
    assert_eq!(
        ok("MODEL (name a.b, kind SEED (path '../seeds/x.csv'))").kind,
        Kind::Seed {
            path: "../seeds/x.csv".into()
        }
    );
    assert_eq!(
        ok("MODEL (name a.b, kind view);\nSELECT 1 AS x").kind,
        Kind::View {
            materialized: false
        }
    );
    assert_eq!(
        ok("MODEL (name a.b, kind EMBEDDED);\nSELECT 1 AS x").kind,
        Kind::Embedded
    );
    let m = ok("MODEL (name raw.e, kind EXTERNAL (path 'archive/**/*.parquet', format parquet, union_by_name true, hive_partitioning true), columns (id INT));");
    assert_eq!(
        m.kind,
        Kind::External {
            source: ExternalSource::Files {
                path: "archive/**/*.parquet".into(),
                format: FileFormat::Parquet,
                union_by_name: true,
                hive_partitioning: true
            }
        }
    );
    let m =
        ok("MODEL (name raw.e, kind EXTERNAL (url 'https://x.test/a.json'), columns (id INT));");
    assert_eq!(
        m.kind,
        Kind::External {
            source: ExternalSource::Url {
                url: "https://x.test/a.json".into(),
                format: FileFormat::Json
            }
        }
    );
    let m = ok("MODEL (name raw.moves, kind EXTERNAL (table raw.moves_src), columns (id INT));");
    assert_eq!(
        m.kind,
        Kind::External {
            source: ExternalSource::Table {
                table: "raw.moves_src".into()
            }
        }
    );
}

#[test]
fn properties_are_read_with_any_case_and_trailing_commas() {
    let m = ok("-- header comment\nModel (\n  NAME Med.Moves,\n  Kind Full,\n  start '2026-01-01',\n  cron '@daily',\n  grain (case_id, moved_at),\n  columns (case_id VARCHAR, moved_at TIMESTAMP,),\n  tags [a, b],\n  owner jen,\n  description 'x',\n  target parquet,\n  answerable sampled,\n  caveats ('partial before March',),\n  redact (ssn),\n  audits (not_null(columns := (case_id)), unique_values(columns := (case_id, moved_at)), mine),\n);\nselect 'a' as case_id, now() as moved_at");
    assert_eq!(m.name, "med.moves");
    assert_eq!(m.grain, vec!["case_id", "moved_at"]);
    assert_eq!(
        m.columns
            .as_ref()
            .unwrap()
            .iter()
            .map(|c| c.family)
            .collect::<Vec<_>>(),
        vec![TypeFamily::Text, TypeFamily::Temporal]
    );
    assert_eq!(m.tags, vec!["a", "b"]);
    assert_eq!(
        (m.target, m.answerable),
        (Target::Parquet, Answerable::Sampled)
    );
    assert_eq!(m.caveats, vec!["partial before March"]);
    assert_eq!(m.audits.len(), 3);
    assert_eq!(
        m.audits[1].args,
        vec![("columns".to_string(), "(case_id, moved_at)".to_string())]
    );
}

#[test]
fn unknown_property_lists_the_known_ones_at_its_position() {
    let d = first_error("MODEL (\n  name a.b,\n  kidn FULL\n);\nSELECT 1 AS x");
    assert!(
        matches!(&d.problem, Problem::UnknownProperty { name, suggestion: Some(s), .. } if name == "kidn" && s == "kind")
    );
    let loc = d.location.unwrap();
    assert_eq!((loc.line, loc.column), (3, 3));
    assert!(d.problem.help().unwrap().contains("interval_unit"));
}

#[test]
fn ignored_sqlmesh_properties_warn() {
    let (m, d) = parse("MODEL (name a.b, dialect duckdb, kind FULL (), physical_properties (x = 1));\nSELECT 1 AS x");
    assert!(m.is_some());
    assert_eq!(
        d.iter()
            .map(|d| (d.problem.code(), d.is_error()))
            .collect::<Vec<_>>(),
        vec![("ignored-property", false)],
        "`dialect duckdb` is what efmesh parses anyway; a storage option is read past"
    );
    assert!(d[0].problem.help().unwrap().contains("storage options"));
}

#[test]
fn a_seeds_batch_size_warns_and_elsewhere_stays_unknown() {
    // SQLMesh's chunking of a seed's inserts: the same rows either way
    let (m, d) = parse("MODEL (name a.b, kind SEED (path 'x.csv', batch_size 1000));");
    assert!(m.is_some());
    assert_eq!(codes(&d), vec![("ignored-property", false)]);
    assert!(d[0].to_string().contains("SEED batch_size"), "{d:?}");
    let (_, d) = parse("MODEL (name a.b, kind VIEW (batch_size 10));\nSELECT 1 AS x");
    assert_eq!(codes(&d), vec![("unknown-kind-parameter", true)]);
}

fn parse_in(src: &str, env: &ParseEnv) -> (Option<Model>, Vec<Diagnostic>) {
    parse_model_file("models/m.sql", src, Dialect::DuckDb, env)
}

fn codes(d: &[Diagnostic]) -> Vec<(&'static str, bool)> {
    d.iter().map(|d| (d.problem.code(), d.is_error())).collect()
}

#[test]
fn sqlmesh_properties_are_honoured_or_refused_by_name() {
    // `enabled false`: no model, no error
    let (m, d) = parse(
        "MODEL (name a.b, kind FULL, enabled false);
SELECT 1 AS x",
    );
    assert!(m.is_none() && d.iter().all(|d| !d.is_error()), "{d:?}");
    assert!(
        ok("MODEL (name a.b, enabled true);
SELECT 1 AS x")
        .name
            == "a.b"
    );
    // another dialect: read as DuckDB when its query parses as DuckDB, refused when not
    let (m, d) = parse(
        "MODEL (name a.b, dialect 'snowflake');
SELECT 1 AS x",
    );
    assert!(m.is_some());
    assert_eq!(codes(&d), [("foreign-dialect", false)]);
    let e = first_error(
        "MODEL (name a.b, dialect bigquery);
SELECT STRUCT<a INT64>(1) FROM `p.d.t` QUALIFY 1 WINDOW",
    );
    assert_eq!(e.problem.code(), "unsupported-property", "{e:?}");
    assert!(e.problem.help().unwrap().contains("DuckDB SQL"));
    // partial intervals and another gateway would build something else
    // a partial interval only exists when the cron fires inside an interval
    let e = first_error(
        "MODEL (name a.b, allow_partials true, cron '0 6 * * *');
SELECT 1 AS x",
    );
    assert_eq!(
        e.problem.to_string(),
        "property `allow_partials` is not supported by efmesh"
    );
    assert!(e.problem.help().unwrap().contains("`0 6 * * *`"), "{e:?}");
    let e = first_error(
        "MODEL (name a.b, allow_partials true, cron '@hourly', interval_unit day);
SELECT 1 AS x",
    );
    assert_eq!(e.problem.code(), "unsupported-property", "{e:?}");
    for cron in ["@daily", "0 0 * * 1", "@weekly"] {
        ok(&format!(
            "MODEL (name a.b, allow_partials true, cron '{cron}');
SELECT 1 AS x"
        ));
    }
    ok("MODEL (name a.b, allow_partials true, cron '@hourly');
SELECT 1 AS x");
    ok("MODEL (name a.b, allow_partials true);
SELECT 1 AS x");
    assert!(
        ok("MODEL (name a.b, allow_partials false);
SELECT 1 AS x")
        .name
            == "a.b"
    );
    let env = ParseEnv {
        sqlmesh: true,
        gateway: Some("local".into()),
        ..Default::default()
    };
    let (_, d) = parse_in(
        "MODEL (name a.b, gateway local);
SELECT 1 AS x",
        &env,
    );
    assert!(d.is_empty(), "{d:?}");
    let (_, d) = parse_in(
        "MODEL (name a.b, gateway warehouse);
SELECT 1 AS x",
        &env,
    );
    assert_eq!(codes(&d), [("unsupported-property", true)]);
    assert!(d[0].problem.help().unwrap().contains("gateway `local`"));
    // an unknown property warns in a SQLMesh project, and fails in an efmesh one
    let (m, d) = parse_in(
        "MODEL (name a.b, cronn '@daily');
SELECT 1 AS x",
        &env,
    );
    assert!(m.is_some());
    assert_eq!(codes(&d), [("unknown-sqlmesh-property", false)]);
    assert!(d[0]
        .problem
        .help()
        .unwrap()
        .contains("did you mean `cron`?"));
    assert_eq!(
        first_error(
            "MODEL (name a.b, cronn '@daily');
SELECT 1 AS x"
        )
        .problem
        .code(),
        "unknown-property"
    );
}

#[test]
fn kind_parameters_that_change_tables_are_honoured_or_refused() {
    let m = ok("MODEL (name a.b, kind INCREMENTAL_BY_TIME_RANGE (time_column ds, forward_only true, disable_restatement true, on_destructive_change error));
SELECT 1 AS ds");
    assert_eq!(
        m.policy,
        ChangePolicy {
            forward_only: true,
            disable_restatement: true,
            on_destructive_change: DestructiveChange::Error,
            auto_restatement: None,
        }
    );
    for (written, policy) in [
        ("allow", DestructiveChange::Allow),
        ("warn", DestructiveChange::Warn),
        ("ignore", DestructiveChange::Ignore),
    ] {
        let in_kind = ok(&format!("MODEL (name a.b, kind INCREMENTAL_BY_TIME_RANGE (time_column ds, on_destructive_change {written}));
SELECT 1 AS ds"));
        assert_eq!(in_kind.policy.on_destructive_change, policy);
    }
    let m = ok("MODEL (name a.b, kind INCREMENTAL_BY_TIME_RANGE (time_column ds, auto_restatement_cron '@weekly', auto_restatement_intervals 3));
SELECT 1 AS ds");
    assert_eq!(
        m.policy.auto_restatement,
        Some(crate::model::kind::AutoRestatement {
            cron: "@weekly".into(),
            intervals: Some(3)
        })
    );
    let e = first_error("MODEL (name a.b, kind INCREMENTAL_BY_TIME_RANGE (time_column ds, auto_restatement_cron 'sometimes'));
SELECT 1 AS ds");
    assert_eq!(e.problem.code(), "invalid-value", "{e:?}");
    let e = first_error("MODEL (name a.b, kind INCREMENTAL_BY_TIME_RANGE (time_column ds, on_destructive_change drop));
SELECT 1 AS ds");
    assert_eq!(e.problem.code(), "invalid-value", "{e:?}");
    assert_eq!(
        ok(
            "MODEL (name a.b, kind INCREMENTAL_BY_TIME_RANGE (time_column ds));
SELECT 1 AS ds"
        )
        .policy,
        ChangePolicy::default()
    );
    for (src, said) in [
        ("MODEL (name a.b, kind VIEW (forward_only true));
SELECT 1 AS x", "no history to keep"),
        ("MODEL (name a.b, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key id, when_matched (WHEN MATCHED THEN UPDATE SET x = 1)));
SELECT 1 AS id", "does not support MERGE"),
        ("MODEL (name a.b, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key id, merge_filter x > 1));
SELECT 1 AS id", "does not support MERGE"),
        ("MODEL (name a.b, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key id, auto_restatement_cron '@weekly'));
SELECT 1 AS id", "INCREMENTAL_BY_TIME_RANGE models only"),
    ] {
        let e = first_error(src);
        assert_eq!(e.problem.code(), "unsupported-property", "{src}: {e:?}");
        assert!(e.problem.help().unwrap().contains(said), "{src}: {:?}", e.problem.help());
    }
}

#[test]
fn properties_may_use_the_project_variables_and_defaults_fill_the_rest() {
    let mut env = ParseEnv::default();
    env.macros.variables.insert(
        "schema".into(),
        crate::sql::macro_lang::Value::Str("sales".into()),
    );
    env.defaults.kind = crate::model::defaults::default_kind("VIEW");
    env.defaults.cron = Some("@hourly".into());
    env.defaults.owner = Some("data".into());
    let (m, d) = parse_in(
        "MODEL (name @{schema}.orders, owner ana);
SELECT 1 AS x",
        &env,
    );
    assert!(d.iter().all(|d| !d.is_error()), "{d:?}");
    let m = m.unwrap();
    assert_eq!(m.name, "sales.orders");
    assert_eq!(
        m.kind,
        Kind::View {
            materialized: false
        }
    );
    assert_eq!(m.cron.as_deref(), Some("@hourly"));
    assert_eq!(
        m.owner.as_deref(),
        Some("ana"),
        "a declared property wins over the default"
    );
}

#[test]
fn shape_errors_are_reported() {
    assert!(
        matches!(first_error("MODEL (name a.b, kind FUL);\nSELECT 1").problem, Problem::UnknownKind { suggestion: Some(ref s), .. } if s == "FULL")
    );
    assert!(matches!(
        first_error("MODEL (name a.b, kind INCREMENTAL_BY_TIME_RANGE (batch_size 2));\nSELECT 1")
            .problem,
        Problem::MissingKindParameter {
            param: "time_column",
            ..
        }
    ));
    assert!(matches!(first_error("MODEL (name a.b, kind INCREMENTAL_BY_TIME_RANGE (time_column ds, batchsize 2));\nSELECT 1").problem, Problem::UnknownKindParameter { .. }));
    assert!(matches!(
        first_error("MODEL (name ab, kind FULL);\nSELECT 1").problem,
        Problem::InvalidName { .. }
    ));
    assert!(matches!(
        first_error("MODEL (kind FULL);\nSELECT 1").problem,
        Problem::MissingName
    ));
    assert!(matches!(
        first_error("MODEL (name a.b, kind FULL);").problem,
        Problem::MissingQuery { .. }
    ));
    assert!(matches!(
        first_error("MODEL (name a.b, kind SEED (path 'x.csv'));\nSELECT 1").problem,
        Problem::UnexpectedQuery { .. }
    ));
    assert!(matches!(
        first_error("MODEL (name a.b, kind EXTERNAL (table x.y));").problem,
        Problem::ExternalWithoutColumns
    ));
    assert!(matches!(
        first_error("MODEL (name a.b);\nSELECT 1; SELECT 2").problem,
        Problem::MultipleStatements { count: 2 }
    ));
    assert!(matches!(
        first_error("MODEL (name a.b);\nCREATE TABLE x (a INT)").problem,
        Problem::NotAQuery
    ));
    assert!(matches!(
        first_error("SELECT 1").problem,
        Problem::MissingModelBlock
    ));
    assert!(matches!(
        first_error("MODEL (name a.b, start 'someday');\nSELECT 1").problem,
        Problem::InvalidValue { .. }
    ));
    let d = first_error("MODEL (name a.b);\nSELECT * FROM t WHERE d >= @start_dss");
    assert!(
        matches!(&d.problem, Problem::UnknownMacro { suggestion: Some(s), .. } if s == "start_ds")
    );
    assert_eq!(d.location.unwrap().line, 2);
}

#[test]
fn a_time_column_format_that_is_not_strftime_is_refused_where_it_is_written() {
    let d = first_error(
        "MODEL (\n  name a.b,\n  kind INCREMENTAL_BY_TIME_RANGE (time_column (ds, '%Y-%Q')),\n);\nSELECT 1 AS ds",
    );
    assert!(
        matches!(&d.problem, Problem::InvalidValue { property, expected } if property == "time_column" && expected.contains("'%Y-%Q' is not a strftime format")),
        "{d:?}"
    );
    let at = d.location.unwrap();
    assert_eq!((at.line, at.column), (3, 47), "{at:?}");
    // the project's default format fills a time column declared without one
    let mut env = ParseEnv::default();
    env.defaults.time_column_format = Some("%Y%m%d".into());
    let (m, _) = parse_model_file(
        "models/m.sql",
        "MODEL (name a.b, kind INCREMENTAL_BY_TIME_RANGE (time_column dk));\nSELECT '20200101' AS dk",
        Dialect::DuckDb,
        &env,
    );
    assert!(
        matches!(m.unwrap().kind, Kind::IncrementalByTimeRange { time_column_format: Some(f), .. } if f == "%Y%m%d")
    );
    // Python's microseconds directive is accepted as SQLMesh writes it
    ok("MODEL (name a.b, kind INCREMENTAL_BY_TIME_RANGE (time_column (ts, '%Y-%m-%d %H:%M:%S.%f')));\nSELECT 1 AS ts");
}

#[test]
fn fallback_keeps_engine_sql_plannable() {
    let (m, d) =
        parse("MODEL (name a.b, columns (a INT));\nSELECT * FROM t ASOF JOIN u ON t.a >= u.a");
    let m = m.unwrap();
    assert!(matches!(
        m.query.unwrap().form,
        sql::QueryForm::Fallback { .. }
    ));
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].problem.code(), "fallback-parse");
    let loc = d[0].location.as_ref().unwrap();
    assert_eq!(
        (loc.line, loc.column),
        (2, 29),
        "points at the token the parser stopped at"
    );
}

#[test]
fn an_unreadable_kind_reports_only_itself() {
    let (m, d) = parse("MODEL (name a.b, kind SEED (pth 'x.csv'));");
    assert!(
        m.is_some(),
        "the model is kept so children still resolve it"
    );
    let errors: Vec<&str> = d
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.problem.code())
        .collect();
    assert_eq!(errors, vec!["missing-kind-parameter"]);
}

#[test]
fn the_interval_unit_comes_from_interval_unit_or_cron() {
    let mut m = ok("MODEL (name a.b);\nSELECT 1 AS x");
    assert_eq!(m.interval_unit(), IntervalUnit::Day);
    for (cron, unit) in [
        ("@hourly", IntervalUnit::Hour),
        ("@daily", IntervalUnit::Day),
        ("0 * * * *", IntervalUnit::Hour),
        ("*/5 * * * *", IntervalUnit::Minute),
        ("30 2 * * *", IntervalUnit::Day),
    ] {
        m.cron = Some(cron.into());
        assert_eq!(m.interval_unit(), unit, "{cron}");
    }
    m.interval_unit = Some(IntervalUnit::Minute);
    assert_eq!(m.interval_unit(), IntervalUnit::Minute);
}

#[test]
fn statements_that_would_never_run_are_refused_where_written() {
    let d = first_error("MODEL (name a.b, kind EMBEDDED);\nSET threads = 1;\nSELECT 1 AS a");
    assert_eq!(d.problem.code(), "model-statement");
    assert_eq!(d.location.map(|l| l.line), Some(2));
    let d = first_error(
        "MODEL (name a.b, kind FULL, target parquet);\nSELECT 1 AS a;\nCREATE TABLE t (a INT)",
    );
    assert_eq!(d.problem.code(), "model-statement");
    assert_eq!(d.location.map(|l| l.line), Some(3));
}

#[test]
fn struct_columns_may_be_declared_with_angle_brackets_as_sqlglot_reads_them() {
    let m = ok("MODEL (name a.b, columns (id INT, items STRUCT<product_id VARCHAR, quantity INTEGER>, tags ARRAY<TEXT>));\nSELECT 1 AS id");
    let cols = m.columns.unwrap();
    let types: Vec<&str> = cols.iter().map(|c| c.sql_type.as_str()).collect();
    assert_eq!(
        types,
        [
            "INT",
            "STRUCT(\"product_id\" VARCHAR, \"quantity\" INTEGER)",
            "TEXT[]"
        ]
    );
}
