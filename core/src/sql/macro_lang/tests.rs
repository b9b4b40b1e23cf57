use super::*;
use crate::sql::{tokenize, Dialect};

fn env() -> MacroEnv {
    let mut e = MacroEnv::default();
    e.variables.insert("region".into(), Value::Str("eu".into()));
    e.variables.insert("min_qty".into(), Value::Num("3".into()));
    e.variables.insert(
        "cols".into(),
        Value::List(vec![Value::Str("a".into()), Value::Str("b".into())]),
    );
    e
}

fn x(sql: &str) -> String {
    x_in(sql, &env())
}

fn x_in(sql: &str, env: &MacroEnv) -> String {
    let tokens = tokenize("m.sql", sql, Dialect::DuckDb).unwrap();
    let out = expand(&tokens, env, "m.sql", false).unwrap_or_else(|e| {
        panic!(
            "{sql}: {:?}",
            e.iter().map(|d| d.to_string()).collect::<Vec<_>>()
        )
    });
    let text: String = out.iter().map(|t| t.token.to_string()).collect();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn err(sql: &str) -> String {
    let tokens = tokenize("m.sql", sql, Dialect::DuckDb).unwrap();
    let e = expand(&tokens, &env(), "m.sql", false).expect_err(sql);
    let d = &e[0];
    format!("{} | {}", d.problem, d.problem.help().unwrap_or_default())
}

#[test]
fn without_macros_the_tokens_are_untouched() {
    assert_eq!(
        x("SELECT a FROM t WHERE d >= @start_ds"),
        "SELECT a FROM t WHERE d >= @start_ds"
    );
}

#[test]
fn def_binds_a_value_and_is_removed() {
    assert_eq!(
        x("@DEF(size, 10); @def(label, 'big'); SELECT a FROM t WHERE n > @size AND k = @label"),
        "SELECT a FROM t WHERE n > 10 AND k = 'big'"
    );
}

#[test]
fn variables_come_from_the_config_and_var_has_a_default() {
    assert_eq!(
        x("SELECT * FROM t WHERE r = @VAR('region') AND q >= @var('MIN_QTY') AND z = @VAR('nope', 7) AND w = @VAR('nope')"),
        "SELECT * FROM t WHERE r = 'eu' AND q >= 3 AND z = 7 AND w = NULL"
    );
    // a bare @name reads the variables too, and a list is a tuple
    assert_eq!(
        x("SELECT * FROM t WHERE r = @region AND c IN @cols"),
        "SELECT * FROM t WHERE r = 'eu' AND c IN ('a', 'b')"
    );
    // a @DEF shadows a variable
    assert_eq!(x("@DEF(region, 'us'); SELECT @region"), "SELECT 'us'");
}

#[test]
fn each_maps_a_lambda_over_items() {
    assert_eq!(
        x("SELECT @EACH([a, b, c], x -> x * 2 AS x_doubled) FROM t"),
        "SELECT a * 2 AS a_doubled, b * 2 AS b_doubled, c * 2 AS c_doubled FROM t"
            .replace("a_doubled", "x_doubled")
            .replace("b_doubled", "x_doubled")
            .replace("c_doubled", "x_doubled")
    );
    assert_eq!(
        x("SELECT @EACH(['us', 'eu'], r -> SUM(CASE WHEN region = r THEN amount END) AS total_@{r}) FROM t"),
        "SELECT SUM(CASE WHEN region = 'us' THEN amount END) AS total_us, SUM(CASE WHEN region = 'eu' THEN amount END) AS total_eu FROM t"
    );
    assert_eq!(
        x("SELECT @EACH(@cols, c -> @c) FROM t"),
        "SELECT 'a', 'b' FROM t"
    );
    // a qualified column's part is not the parameter
    assert_eq!(
        x("SELECT @EACH([p], x -> t.x + x) FROM t"),
        "SELECT t.x + p FROM t"
    );
}

#[test]
fn if_chooses_by_a_condition_evaluated_while_loading() {
    assert_eq!(
        x("SELECT a, @IF(@region = 'eu', vat, 0) AS tax FROM t"),
        "SELECT a, vat AS tax FROM t"
    );
    assert_eq!(
        x("SELECT a, @IF(@min_qty > 5, q, 0) AS tax FROM t"),
        "SELECT a, 0 AS tax FROM t"
    );
    assert_eq!(x("SELECT a FROM t @IF(1 = 2, WHERE b)"), "SELECT a FROM t");
    assert_eq!(
        x("SELECT a FROM t WHERE TRUE @IF(@region IN ('eu', 'uk') AND NOT FALSE, AND eu)"),
        "SELECT a FROM t WHERE TRUE AND eu"
    );
    assert!(
        err("SELECT @IF(col > 1, a, b)").contains("`col` is a column or an undefined variable"),
        "{}",
        err("SELECT @IF(col > 1, a, b)")
    );
}

#[test]
fn reduce_and_filter_fold_and_select_items() {
    assert_eq!(
        x("SELECT @REDUCE([100, 200, 300], (x, y) -> x + y)"),
        "SELECT 100 + 200 + 300"
    );
    assert_eq!(
        x("SELECT @REDUCE(@FILTER([1, 2, 3], x -> x > 1), (x, y) -> x + y)"),
        "SELECT 2 + 3"
    );
    assert_eq!(
        x("SELECT @EVAL(@REDUCE(@FILTER([1, 2, 3], x -> x > 1), (x, y) -> x + y))"),
        "SELECT 5"
    );
    assert_eq!(
        x("SELECT * FROM t WHERE @REDUCE(@EACH([a, b], c -> c > 0), (l, r) -> l AND r)"),
        "SELECT * FROM t WHERE a > 0 AND b > 0"
    );
}

#[test]
fn sql_and_or_and_safe_arithmetic_write_what_sqlmesh_writes() {
    assert_eq!(x("SELECT @SQL('a + 1') AS b"), "SELECT a + 1 AS b");
    assert_eq!(
        x("SELECT * FROM t WHERE @AND(a > 1, NULL, b OR c)"),
        "SELECT * FROM t WHERE (a > 1) AND (b OR c)"
    );
    assert_eq!(
        x("SELECT * FROM t WHERE @OR(NULL)"),
        "SELECT * FROM t WHERE TRUE"
    );
    assert_eq!(
        x("SELECT @SAFE_ADD(a, b) AS s, @SAFE_DIV(a, b) AS d"),
        "SELECT CASE WHEN a IS NULL AND b IS NULL THEN NULL ELSE COALESCE(a, 0) + COALESCE(b, 0) END AS s, a / NULLIF(b, 0) AS d"
    );
    assert_eq!(
        x("SELECT @GENERATE_SURROGATE_KEY(a, b) AS k"),
        "SELECT MD5(CONCAT(COALESCE(CAST(a AS TEXT), '_sqlmesh_surrogate_key_null_'), '|', COALESCE(CAST(b AS TEXT), '_sqlmesh_surrogate_key_null_'))) AS k"
    );
    assert_eq!(
        x("SELECT @GENERATE_SURROGATE_KEY(a, hash_function := 'SHA256') AS k"),
        "SELECT SHA256(CONCAT(COALESCE(CAST(a AS TEXT), '_sqlmesh_surrogate_key_null_'))) AS k"
    );
}

#[test]
fn clause_macros_keep_or_drop_their_clause() {
    assert_eq!(
        x("SELECT a FROM t @WHERE(TRUE) a > 1 ORDER BY a"),
        "SELECT a FROM t WHERE a > 1 ORDER BY a"
    );
    assert_eq!(
        x("SELECT a FROM t @WHERE(@region = 'us') a > 1 ORDER BY a"),
        "SELECT a FROM t ORDER BY a"
    );
    assert_eq!(
        x("SELECT a FROM t @GROUP_BY(1 = 1) a @LIMIT(FALSE) 10"),
        "SELECT a FROM t GROUP BY a"
    );
}

#[test]
fn project_macros_are_called_by_name_with_positional_or_named_arguments() {
    let mut e = env();
    let file = "@DEF(cents, (x) -> x * 100); @DEF(between, (c, lo, hi) -> c >= lo AND c < hi);";
    let tokens = tokenize("macros/m.sql", file, Dialect::DuckDb).unwrap();
    parse_macro_file("macros/m.sql", &tokens, &mut e).unwrap();
    assert_eq!(
        x_in(
            "SELECT @cents(price) AS p FROM t WHERE @between(d, 1, hi := 9)",
            &e
        ),
        "SELECT price * 100 AS p FROM t WHERE d >= 1 AND d < 9"
    );
    // a file-level @DEF lambda works the same way
    assert_eq!(
        x("@DEF(twice, y -> y + y); SELECT @twice(3)"),
        "SELECT 3 + 3"
    );
}

#[test]
fn mistakes_name_the_macro_and_say_what_to_do() {
    assert!(
        err("SELECT @EACH([a], 1)").starts_with("`@EACH`: the last argument must be a lambda"),
        "{}",
        err("SELECT @EACH([a], 1)")
    );
    let e = err("SELECT @EACHH([a], x -> x)");
    assert!(
        e.contains("no macro of this name") && e.contains("did you mean `@EACH`?"),
        "{e}"
    );
    let e = err("SELECT * FROM @RESOLVE_TEMPLATE('@{catalog_name}.t')");
    assert!(e.contains("not supported by efmesh yet"), "{e}");
    let e = err("SELECT col_@{regio}");
    assert!(
        e.contains("not defined") && e.contains("did you mean `region`?"),
        "{e}"
    );
    let e = err("@DEF(f, x -> f(x)); @DEF(g, x -> @g(x)); SELECT @g(1)");
    assert!(e.contains("levels deep"), "{e}");
    let e = err("@DEF(f, (a, b) -> a); SELECT @f(1)");
    assert!(e.contains("missing its argument `b`"), "{e}");
}

#[test]
fn an_unknown_bare_variable_is_left_for_the_time_macro_check() {
    // fold_macros reports it with the time macros as candidates
    assert_eq!(x("SELECT @start_dss"), "SELECT @start_dss");
}

/// The SQL SQLMesh 0.236.4's MacroEvaluator writes for the same calls (DuckDB dialect),
/// recorded from `MacroEvaluator(dialect="duckdb").transform(parse_one(sql)).sql("duckdb")`.
#[test]
fn query_macros_write_what_sqlmesh_writes() {
    assert_eq!(
        x("SELECT date_day, @PIVOT(status, ['cancelled', 'completed']) FROM rides GROUP BY 1"),
        "SELECT date_day, SUM(CASE WHEN status = 'cancelled' THEN 1 ELSE 0 END) AS \"cancelled\", SUM(CASE WHEN status = 'completed' THEN 1 ELSE 0 END) AS \"completed\" FROM rides GROUP BY 1"
    );
    assert_eq!(
        x("SELECT @PIVOT(a, [1, 2], alias := FALSE)"),
        "SELECT SUM(CASE WHEN a = 1 THEN 1 ELSE 0 END), SUM(CASE WHEN a = 2 THEN 1 ELSE 0 END)"
    );
    assert_eq!(
        x("SELECT @PIVOT(a, ['v'], then_value := tv, suffix := '_sfx', quote := FALSE, agg := 'MAX', cmp := '>=')"),
        "SELECT MAX(CASE WHEN a >= 'v' THEN tv ELSE 0 END) AS v_sfx"
    );
    assert_eq!(
        x("@DEDUPLICATE(demo.t, [id, cast(ts as date)], ['ts desc nulls last', 'x'])"),
        "SELECT * FROM demo.t QUALIFY ROW_NUMBER() OVER (PARTITION BY id, cast(ts as date) ORDER BY ts desc nulls last, x) = 1"
    );
    assert_eq!(
        x("SELECT * FROM (@DATE_SPINE('week', '2024-01-01', '2024-01-31')) AS s"),
        "SELECT * FROM (SELECT date_week FROM UNNEST(CAST(GENERATE_SERIES(CAST('2024-01-01' AS DATE), CAST('2024-01-31' AS DATE), INTERVAL '1' WEEK) AS DATE[])) AS _exploded(date_week)) AS s"
    );
    assert_eq!(
        x("@DATE_SPINE('month', start_col, end_col)"),
        "SELECT date_month FROM UNNEST(CAST(GENERATE_SERIES(start_col, end_col, INTERVAL '1' MONTH) AS DATE[])) AS _exploded(date_month)"
    );
    assert_eq!(
        x("SELECT @HAVERSINE_DISTANCE(a.lat, a.lon, b.lat, b.lon, 'km') AS d"),
        "SELECT 7922 * ASIN(SQRT((POWER(SIN(RADIANS((b.lat - a.lat) / 2)), 2)) + (COS(RADIANS(a.lat)) * COS(RADIANS(b.lat)) * POWER(SIN(RADIANS((b.lon - a.lon) / 2)), 2)))) * 1.60934 AS d"
    );
}

#[test]
fn query_macros_refuse_bad_arguments_by_name() {
    assert!(
        err("SELECT @PIVOT(a)").contains("missing its argument `values`"),
        "{}",
        err("SELECT @PIVOT(a)")
    );
    assert!(err("SELECT @PIVOT(a, [1], agg := 'SUM(x')").contains("aggregate function"));
    assert!(
        err("@DATE_SPINE('hour', '2024-01-01', '2024-01-02')").contains("invalid datepart 'hour'")
    );
    assert!(err("@DATE_SPINE('day', '2024-02-01', '2024-01-02')").contains("is after end_date"));
    assert!(err("@DEDUPLICATE(t, [id], [ts])").contains("list of strings"));
    assert!(err("SELECT @HAVERSINE_DISTANCE(1, 2, 3, 4, 'ly')").contains("invalid unit 'ly'"));
    assert!(err("SELECT @PIVOT(a, [1], colour := 1)").contains("has no argument `colour`"));
}

#[test]
fn star_writes_the_relations_columns_as_sqlmesh_does() {
    // before the columns are known, `@STAR` stands in as `table.*`
    assert_eq!(
        x("SELECT @STAR(raw.sales, exclude := [note]) FROM raw.sales"),
        "SELECT \"sales\".* EXCLUDE (\"note\") FROM raw.sales"
    );
    let mut e = env();
    let typed = vec![
        ("id".to_string(), Some("INT".to_string())),
        ("note".to_string(), Some("TEXT".to_string())),
        ("amount".to_string(), Some("DOUBLE".to_string())),
    ];
    let untyped = vec![("id".to_string(), None), ("v".to_string(), None)];
    e.relations = Some(
        [
            ("raw.sales".to_string(), typed),
            ("raw.loose".to_string(), untyped),
        ]
        .into_iter()
        .collect(),
    );
    // recorded from SQLMesh 0.236.4 with the same columns_to_types
    assert_eq!(
        x_in("SELECT @STAR(raw.sales, s, exclude := [note], prefix := 'p_') FROM raw.sales AS s", &e),
        "SELECT CAST(\"s\".\"id\" AS INT) AS \"p_id\", CAST(\"s\".\"amount\" AS DOUBLE) AS \"p_amount\" FROM raw.sales AS s"
    );
    // a type unknown: no casts; unquoted on request
    assert_eq!(
        x_in(
            "SELECT @STAR(raw.loose, quote_identifiers := FALSE, suffix := '_x') FROM raw.loose",
            &e
        ),
        "SELECT loose.id AS id_x, loose.v AS v_x FROM raw.loose"
    );
    // a relation whose columns nobody knows cannot be renamed
    let tokens = tokenize(
        "m.sql",
        "SELECT @STAR(raw.nope, prefix := 'p_') FROM raw.nope",
        Dialect::DuckDb,
    )
    .unwrap();
    let d = expand(&tokens, &e, "m.sql", false).unwrap_err();
    assert!(d[0]
        .problem
        .to_string()
        .contains("columns of `raw.nope` are not known"));
}

#[test]
fn union_writes_the_common_columns_as_sqlmesh_does() {
    // before the columns are known, every column of the tables stands in
    assert_eq!(
        x("@UNION('distinct', foo.a, foo.b)"),
        "SELECT * FROM foo.a UNION SELECT * FROM foo.b"
    );
    let mut e = env();
    let col = |n: &str, t: &str| (n.to_string(), Some(t.to_string()));
    e.relations = Some(
        [
            (
                "foo.a".to_string(),
                vec![col("a", "int"), col("b", "string"), col("c", "string")],
            ),
            (
                "foo.b".to_string(),
                vec![col("c", "string"), col("a", "int"), col("b", "int")],
            ),
        ]
        .into_iter()
        .collect(),
    );
    // SQLMesh 0.236.4's docstring example (foo: a int, b string, c string; bar: c string,
    // a int, b int): 'SELECT CAST(a AS INT) AS a, CAST(c AS TEXT) AS c FROM foo UNION ...'
    assert_eq!(
        x_in("@UNION('distinct', foo.a, foo.b)", &e),
        "SELECT CAST(\"a\" AS int) AS \"a\", CAST(\"c\" AS string) AS \"c\" FROM foo.a UNION SELECT CAST(\"a\" AS int) AS \"a\", CAST(\"c\" AS string) AS \"c\" FROM foo.b"
    );
    // 'all' is the default; a false condition keeps the first table alone
    assert!(x_in("@UNION(foo.a, foo.b)", &e).contains(" UNION ALL SELECT "));
    assert_eq!(
        x_in("@UNION(FALSE, foo.a, foo.b)", &e),
        "SELECT CAST(\"a\" AS int) AS \"a\", CAST(\"c\" AS string) AS \"c\" FROM foo.a"
    );
    assert!(err("@UNION('some', foo.a, foo.b)").contains("invalid type 'some'"));
}

#[test]
fn time_macros_inside_a_macro_call_stay_time_macros() {
    // a macro's result carries its call's span, so `@` and the name come out with one span
    let tokens = tokenize(
        "m.sql",
        "SELECT @IF(@region = 'eu', @start_ds, NULL) AS s FROM t",
        Dialect::DuckDb,
    )
    .unwrap();
    let (q, _) = crate::sql::prepare_query_in(&tokens, "m.sql", Dialect::DuckDb, false, &env())
        .unwrap_or_else(|e| panic!("{:?}", e.iter().map(|d| d.to_string()).collect::<Vec<_>>()));
    assert_eq!(q.canonical, "SELECT @start_ds AS s FROM t");
}
