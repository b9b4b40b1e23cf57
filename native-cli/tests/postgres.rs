//! PostgreSQL end to end through the real binary: as engine and state store of one project, as
//! the state two projects share (its environment lock raced and abandoned by SIGKILL), a
//! backfill killed mid-way, parallel batches, connection errors that never echo the password,
//! and what `check` refuses on a PostgreSQL engine. Every test gets a fresh database from
//! `EFMESH_TEST_PG` (see `common::pg_database`), and reads the results back with the
//! `postgres` crate, not through efmesh.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

/// Every value of the first column of `sql`'s rows, as PostgreSQL prints it.
fn pg_col(url: &str, sql: &str) -> Vec<Option<String>> {
    let mut c = postgres::Client::connect(url, postgres::NoTls)
        .unwrap_or_else(|e| panic!("cannot reach the test database: {e}"));
    c.simple_query(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .into_iter()
        .filter_map(|m| match m {
            postgres::SimpleQueryMessage::Row(r) => Some(r.get(0).map(str::to_string)),
            _ => None,
        })
        .collect()
}

/// The single value `sql` returns.
fn pg_one(url: &str, sql: &str) -> String {
    let rows = pg_col(url, sql);
    assert_eq!(rows.len(), 1, "{sql} returned {rows:?}");
    rows[0].clone().unwrap_or_default()
}

fn pg_exec(url: &str, sql: &str) {
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    c.batch_execute(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// `efmesh.toml` of a project whose engine and state are the given TOML lines.
fn config(engine: &str, state: &str) -> String {
    format!("[project]\nname = \"t\"\nstart = \"2026-01-01\"\n\n[engine]\n{engine}\n\n[state]\n{state}\n")
}

fn pg_config(url: &str) -> String {
    config(
        &format!("postgres = \"{url}\""),
        &format!("postgres = \"{url}\""),
    )
}

/// `efmesh <args> --json` at `now`, which must exit 0; its JSON.
fn ok_json(dir: &Path, now: &str, args: &[&str]) -> Value {
    let out = efmesh(dir)
        .env("EFMESH_NOW", now)
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "efmesh {args:?} exited {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    json(&out.stdout)
}

fn apply_at(dir: &Path, env: &str, now: &str) -> Value {
    ok_json(dir, now, &["apply", env, "--yes"])
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// `(model, start, end)` of every batch an apply reports.
fn batches(v: &Value) -> Vec<(String, String, String)> {
    v["batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["model"].as_str().unwrap().to_string(),
                b["start"].as_str().unwrap().to_string(),
                b["end"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The efmesh binary as a child process in `dir`, stderr piped (logfmt, one line per event).
fn spawn(dir: &Path, envs: &[(&str, &str)], args: &[&str]) -> Child {
    let mut c = StdCommand::new(assert_cmd::cargo::cargo_bin("efmesh"));
    c.current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in envs {
        c.env(k, v);
    }
    c.spawn().unwrap()
}

/// Read `child`'s stderr until a line contains every one of `needles`; its later lines keep
/// being drained (a closed pipe would end the child early).
fn wait_for_log(child: &mut Child, needles: &[&str]) {
    let stderr = child.stderr.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    let mut seen = vec![];
    loop {
        let line = match lines.next() {
            Some(l) => l.unwrap(),
            None => panic!(
                "the process ended before logging {needles:?}:\n{}",
                seen.join("\n")
            ),
        };
        if needles.iter().all(|n| line.contains(n)) {
            break;
        }
        seen.push(line);
    }
    std::thread::spawn(move || lines.for_each(drop));
}

// ---------------------------------------------------------------------------------------------
// 1. a hospital project with engine and state both on PostgreSQL
// ---------------------------------------------------------------------------------------------

/// A small hospital: a movement feed landing in `landing.movements` (an EXTERNAL table the test
/// loads), two FULL reference models, the moves by day (INCREMENTAL_BY_TIME_RANGE, audited),
/// a VIEW joining them, where each patient is now (INCREMENTAL_BY_UNIQUE_KEY), the history of
/// that (SCD_TYPE_2) and a FULL load per department. All in PostgreSQL's SQL.
fn hospital(url: &str) -> tempfile::TempDir {
    let cfg = pg_config(url);
    project(&[
        ("efmesh.toml", &cfg),
        (
            "models/raw/movements.sql",
            "MODEL (name raw.movements, kind EXTERNAL (table landing.movements), columns (move_id BIGINT, patient_id BIGINT, dept_code VARCHAR, moved_at TIMESTAMP));\n",
        ),
        (
            "models/raw/patients.sql",
            "MODEL (\n  name raw.patients,\n  kind FULL,\n  columns (patient_id BIGINT, birth_year INTEGER),\n  grain patient_id\n);\n\nSELECT g.i AS patient_id, CAST(1940 + (g.i * 37) % 80 AS INTEGER) AS birth_year\nFROM generate_series(1, 20) AS g(i)\n",
        ),
        (
            "models/ref/departments.sql",
            "MODEL (\n  name ref.departments,\n  kind FULL,\n  columns (dept_code VARCHAR, dept_name VARCHAR, bed_capacity INTEGER),\n  grain dept_code\n);\n\nSELECT d.dept_code, d.dept_name, d.bed_capacity\nFROM (VALUES ('ER', 'Emergency', 12), ('ICU', 'Intensive care', 6), ('SURG', 'Surgery', 10), ('WARD', 'General ward', 30)) AS d(dept_code, dept_name, bed_capacity)\n",
        ),
        (
            "models/med/moves.sql",
            "MODEL (\n  name med.moves,\n  kind INCREMENTAL_BY_TIME_RANGE (time_column moved_at),\n  cron '@daily',\n  start '2026-01-01',\n  columns (move_id BIGINT, patient_id BIGINT, dept_code VARCHAR, moved_at TIMESTAMP),\n  grain move_id,\n  audits (\n    not_null(columns := (move_id, patient_id, dept_code)),\n    unique_values(columns := (move_id), scope := 'whole'),\n    assert_positive_move_id\n  )\n);\n\nSELECT m.move_id, m.patient_id, m.dept_code, m.moved_at\nFROM raw.movements AS m\nWHERE m.moved_at >= @start AND m.moved_at < @end\n",
        ),
        (
            "audits/assert_positive_move_id.sql",
            "AUDIT (name assert_positive_move_id);\n\nSELECT * FROM @this_model WHERE move_id <= 0\n",
        ),
        (
            "models/med/moves_enriched.sql",
            "MODEL (name med.moves_enriched, kind VIEW);\n\nSELECT mv.move_id, mv.patient_id, mv.dept_code, d.dept_name, 2026 - p.birth_year AS age_years, mv.moved_at\nFROM med.moves AS mv\nJOIN ref.departments AS d ON d.dept_code = mv.dept_code\nJOIN raw.patients AS p ON p.patient_id = mv.patient_id\n",
        ),
        (
            "models/mart/latest_department.sql",
            "MODEL (\n  name mart.latest_department,\n  kind INCREMENTAL_BY_UNIQUE_KEY (unique_key patient_id),\n  cron '@daily',\n  start '2026-01-01',\n  columns (patient_id BIGINT, dept_code VARCHAR, moved_at TIMESTAMP)\n);\n\nSELECT r.patient_id, r.dept_code, r.moved_at\nFROM (\n  SELECT m.patient_id, m.dept_code, m.moved_at,\n    row_number() OVER (PARTITION BY m.patient_id ORDER BY m.moved_at DESC) AS rn\n  FROM med.moves AS m\n) AS r\nWHERE r.rn = 1\n",
        ),
        (
            "models/mart/department_history.sql",
            "MODEL (\n  name mart.department_history,\n  kind SCD_TYPE_2 (unique_key patient_id, updated_at_name moved_at),\n  cron '@daily',\n  start '2026-01-01'\n);\n\nSELECT l.patient_id, l.dept_code, l.moved_at FROM mart.latest_department AS l\n",
        ),
        (
            "models/mart/department_load.sql",
            "MODEL (\n  name mart.department_load,\n  kind FULL,\n  cron '@daily',\n  columns (dept_code VARCHAR, moves BIGINT, patients BIGINT)\n);\n\nSELECT d.dept_code, count(e.move_id) AS moves, count(DISTINCT e.patient_id) AS patients\nFROM ref.departments AS d\nLEFT JOIN med.moves_enriched AS e ON e.dept_code = d.dept_code\nGROUP BY d.dept_code\n",
        ),
    ])
}

/// Where each patient is now, straight from a served `med.moves` (the oracle for the
/// INCREMENTAL_BY_UNIQUE_KEY model, written differently: DISTINCT ON instead of row_number).
fn latest_oracle(schema: &str) -> String {
    format!("SELECT string_agg(patient_id || ':' || dept_code || '@' || moved_at, ' ' ORDER BY patient_id) FROM (SELECT DISTINCT ON (patient_id) patient_id, dept_code, moved_at FROM {schema}.moves ORDER BY patient_id, moved_at DESC) AS o")
}

fn latest_served(schema: &str) -> String {
    format!("SELECT string_agg(patient_id || ':' || dept_code || '@' || moved_at, ' ' ORDER BY patient_id) FROM {schema}.latest_department")
}

/// The load per department, computed here from a served `med.moves`.
fn load_oracle(med: &str) -> String {
    format!("SELECT string_agg(d || ':' || n || ':' || p, ' ' ORDER BY d) FROM (SELECT d.d, count(m.move_id) AS n, count(DISTINCT m.patient_id) AS p FROM (VALUES ('ER'), ('ICU'), ('SURG'), ('WARD')) AS d(d) LEFT JOIN {med}.moves AS m ON m.dept_code = d.d GROUP BY d.d) AS x")
}

fn load_served(mart: &str) -> String {
    format!("SELECT string_agg(dept_code || ':' || moves || ':' || patients, ' ' ORDER BY dept_code) FROM {mart}.department_load")
}

#[test]
fn a_hospital_project_on_postgresql_applies_promotes_restates_and_runs() {
    let url = pg_database("hospital");
    // 14 days of moves, one every 4 hours, patients 1..20 in turn; a patient's department
    // changes at every move of theirs
    pg_exec(
        &url,
        "CREATE SCHEMA landing;
         CREATE TABLE landing.movements AS
         SELECT g.i + 1 AS move_id, g.i % 20 + 1 AS patient_id,
                (ARRAY['ER', 'ICU', 'SURG', 'WARD'])[(g.i % 20 + g.i / 20) % 4 + 1] AS dept_code,
                TIMESTAMP '2026-01-01' + g.i * INTERVAL '4 hours' AS moved_at
         FROM generate_series(0, 83) AS g(i)",
    );
    let p = hospital(&url);
    efmesh(p.path()).arg("check").assert().success();

    // dev: everything is built; the time-range model holds the ten complete days
    let v = apply_at(p.path(), "dev", "2026-01-11T00:00:00Z");
    let mut built = strings(&v["built"]);
    built.sort();
    assert_eq!(
        built,
        vec![
            "mart.department_history",
            "mart.department_load",
            "mart.latest_department",
            "med.moves",
            "med.moves_enriched",
            "raw.patients",
            "ref.departments"
        ],
        "{v}"
    );
    assert!(v["auditsRun"].as_u64().unwrap() >= 3, "{v}");
    assert_eq!(pg_one(&url, "SELECT count(*) FROM dev__med.moves"), "60");
    // `status --deep` against PostgreSQL's own catalog: it agrees, then sees debris and a
    // repointed view, and only the view makes the check fail
    let deep = |code: i32| -> Vec<(String, String)> {
        let out = efmesh(p.path())
            .env("EFMESH_NOW", "2026-01-11T00:00:00Z")
            .args(["status", "dev", "--check", "--deep", "--json"])
            .output()
            .unwrap();
        let v = json(&out.stdout);
        assert_eq!(out.status.code(), Some(code), "{v}");
        v["mismatches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["kind"].as_str().unwrap().into(),
                    m["object"].as_str().unwrap().into(),
                )
            })
            .collect()
    };
    assert_eq!(deep(0), vec![]);
    pg_exec(
        &url,
        "CREATE TABLE _efmesh.med__gone__deadbeef AS SELECT 1 AS v",
    );
    assert_eq!(
        deep(0),
        vec![("stray-table".into(), "_efmesh.med__gone__deadbeef".into())]
    );
    pg_exec(&url, "DROP TABLE _efmesh.med__gone__deadbeef");
    let moves_view = pg_one(&url, "SELECT view_definition FROM information_schema.views WHERE table_schema = 'dev__med' AND table_name = 'moves'");
    pg_exec(
        &url,
        "DROP VIEW dev__med.moves; CREATE VIEW dev__med.moves AS SELECT 1 AS x",
    );
    assert_eq!(
        deep(1),
        vec![("stale-view".into(), "dev__med.moves".into())]
    );
    pg_exec(
        &url,
        &format!("DROP VIEW dev__med.moves; CREATE VIEW dev__med.moves AS {moves_view}"),
    );
    assert_eq!(deep(0), vec![]);
    assert_eq!(
        pg_one(&url, "SELECT count(*) FROM dev__med.moves_enriched"),
        "60"
    );
    assert_eq!(
        pg_one(&url, &latest_served("dev__mart")),
        pg_one(&url, &latest_oracle("dev__med"))
    );
    assert_eq!(
        pg_one(&url, "SELECT count(*) FROM dev__mart.latest_department"),
        "20"
    );
    let tables = pg_one(
        &url,
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = '_efmesh'",
    );

    // prod: a promotion, no physical work
    let v = apply_at(p.path(), "prod", "2026-01-11T00:00:00Z");
    assert!(
        strings(&v["built"]).is_empty() && batches(&v).is_empty(),
        "promotion builds nothing: {v}"
    );
    assert_eq!(
        pg_one(
            &url,
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = '_efmesh'"
        ),
        tables
    );
    assert_eq!(pg_one(&url, "SELECT count(*) FROM med.moves"), "60");
    assert_eq!(
        pg_one(
            &url,
            "SELECT min(moved_at) || ' .. ' || max(moved_at) FROM med.moves"
        ),
        "2026-01-01 00:00:00 .. 2026-01-10 20:00:00"
    );
    assert_eq!(
        pg_one(&url, &load_served("mart")),
        pg_one(&url, &load_oracle("med"))
    );
    assert_eq!(
        pg_one(&url, "SELECT sum(moves) FROM mart.department_load"),
        "60"
    );
    assert_eq!(
        pg_one(
            &url,
            "SELECT count(*) FROM mart.department_history WHERE valid_to IS NULL"
        ),
        "20"
    );
    let plan = ok_json(p.path(), "2026-01-11T00:00:00Z", &["plan", "prod"]);
    assert_eq!(plan["hasChanges"], false, "{plan}");

    // the feed is corrected for Jan 4 and Jan 8; restating Jan 3..5 replays exactly that range
    pg_exec(
        &url,
        "DELETE FROM landing.movements WHERE moved_at::date IN ('2026-01-04', '2026-01-08')",
    );
    let r = ok_json(
        p.path(),
        "2026-01-11T00:00:00Z",
        &[
            "restate",
            "prod",
            "--model",
            "med.moves",
            "--from",
            "2026-01-03",
            "--to",
            "2026-01-05",
        ],
    );
    let restated: Vec<&str> = r["restated"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["model"].as_str().unwrap())
        .collect();
    assert_eq!(restated, vec!["med.moves"], "{r}");
    let v = apply_at(p.path(), "prod", "2026-01-11T00:00:00Z");
    assert_eq!(
        batches(&v),
        vec![(
            "med.moves".to_string(),
            "2026-01-03T00:00:00Z".to_string(),
            "2026-01-05T00:00:00Z".to_string()
        )],
        "{v}"
    );
    let per_day = |day: &str| {
        pg_one(
            &url,
            &format!("SELECT count(*) FROM med.moves WHERE moved_at::date = '{day}'"),
        )
    };
    assert_eq!(per_day("2026-01-03"), "6");
    assert_eq!(
        per_day("2026-01-04"),
        "0",
        "the restated day follows the feed"
    );
    assert_eq!(
        per_day("2026-01-08"),
        "6",
        "a day outside the range is not recomputed"
    );
    assert_eq!(pg_one(&url, "SELECT count(*) FROM med.moves"), "54");
    assert_eq!(
        pg_one(&url, "SELECT count(*) FROM dev__med.moves"),
        "54",
        "dev shares prod's physics"
    );

    // a scheduled tick two days later computes the new days and what depends on them
    let t = ok_json(p.path(), "2026-01-13T00:00:00Z", &["run", "prod"]);
    assert_eq!(t["outcome"], "ok", "{t}");
    let moves = t["processed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["model"] == "med.moves")
        .unwrap_or_else(|| panic!("med.moves not processed: {t}"));
    let spans: Vec<(&str, &str)> = moves["batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["start"].as_str().unwrap(), b["end"].as_str().unwrap()))
        .collect();
    assert_eq!(spans.first().unwrap().0, "2026-01-11T00:00:00Z", "{t}");
    assert_eq!(spans.last().unwrap().1, "2026-01-13T00:00:00Z", "{t}");
    assert_eq!(pg_one(&url, "SELECT count(*) FROM med.moves"), "66");
    assert_eq!(
        pg_one(&url, "SELECT count(*) FROM med.moves_enriched"),
        "66",
        "the view is live"
    );
    assert_eq!(
        pg_one(&url, &latest_served("mart")),
        pg_one(&url, &latest_oracle("med")),
        "the upserted current department"
    );
    assert_eq!(
        pg_one(
            &url,
            "SELECT count(*) FROM mart.latest_department WHERE moved_at >= '2026-01-11'"
        ),
        "12"
    );
    // twelve patients moved on Jan 11-12: each has a closed version ending where the new one
    // starts, and every patient has exactly one open version
    assert_eq!(
        pg_one(
            &url,
            "SELECT count(*) FROM mart.department_history WHERE valid_to IS NULL"
        ),
        "20"
    );
    assert_eq!(
        pg_one(&url, "SELECT count(*) FROM mart.department_history"),
        "32"
    );
    assert_eq!(
        pg_one(
            &url,
            "SELECT count(*) FROM mart.department_history AS a JOIN mart.department_history AS b
               ON a.patient_id = b.patient_id AND a.valid_to = b.valid_from AND a.dept_code <> b.dept_code
             WHERE b.valid_to IS NULL AND b.valid_from >= '2026-01-11'"
        ),
        "12"
    );
    assert_eq!(
        pg_one(
            &url,
            "SELECT string_agg(patient_id || ':' || dept_code, ' ' ORDER BY patient_id) FROM mart.department_history WHERE valid_to IS NULL"
        ),
        pg_one(
            &url,
            "SELECT string_agg(patient_id || ':' || dept_code, ' ' ORDER BY patient_id) FROM mart.latest_department"
        )
    );
    // the FULL model's daily cron came round: refreshed from the new moves
    assert!(
        strings(&t["built"]).contains(&"mart.department_load".to_string()),
        "{t}"
    );
    assert_eq!(
        pg_one(&url, &load_served("mart")),
        pg_one(&url, &load_oracle("med"))
    );
    assert_eq!(
        pg_one(&url, "SELECT sum(moves) FROM mart.department_load"),
        "66"
    );

    // a bad row in the feed: the custom audit blocks the next tick, naming itself
    pg_exec(
        &url,
        "INSERT INTO landing.movements VALUES (-1, 1, 'ER', TIMESTAMP '2026-01-13 10:00')",
    );
    let out = efmesh(p.path())
        .env("EFMESH_NOW", "2026-01-14T00:00:00Z")
        .args(["run", "prod", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let t = json(&out.stdout);
    assert_eq!(t["outcome"], "error", "{t}");
    assert!(t.to_string().contains("assert_positive_move_id"), "{t}");
}

// ---------------------------------------------------------------------------------------------
// 2. two projects, each on its own DuckDB file, sharing one PostgreSQL state
// ---------------------------------------------------------------------------------------------

const RAW: (&str, &str) = (
    "models/raw.sql",
    "MODEL (name s.raw, kind FULL, columns (id BIGINT, v DOUBLE));\nSELECT range AS id, range * 1.5 AS v FROM range(10)",
);
const TOP: (&str, &str) = (
    "models/top.sql",
    "MODEL (name s.top, kind FULL);\nSELECT count(*) AS n, sum(v) AS total FROM s.raw",
);
/// About a second of DuckDB work, so two applies overlap.
const SLOW: (&str, &str) = (
    "models/slow.sql",
    "MODEL (name s.slow, kind FULL);\nSELECT count(*) AS n FROM range(150000000) t(x) WHERE hash(x) % 7 = 3",
);
/// Far longer than any test waits: it holds the lock until it is killed.
const ENDLESS: (&str, &str) = (
    "models/endless.sql",
    "MODEL (name s.endless, kind FULL);\nSELECT count(*) AS n FROM range(40000000000) t(x) WHERE hash(x) % 7 = 3",
);
/// Reads no other model: each project's DuckDB file holds only the physics that project built.
const EXTRA: (&str, &str) = (
    "models/extra.sql",
    "MODEL (name s.extra, kind FULL);\nSELECT 42 AS answer",
);

fn write(dir: &Path, (path, text): (&str, &str)) {
    let p = dir.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn env_models(state: &str, env: &str) -> Vec<Option<String>> {
    pg_col(
        state,
        &format!("SELECT model FROM efmesh_state.environments WHERE env = '{env}' ORDER BY model"),
    )
}

#[test]
fn two_projects_share_one_postgresql_state_and_its_environment_lock() {
    let state = pg_database("shared_state");
    let cfg = config(
        "duckdb = \"efmesh.duckdb\"",
        &format!("postgres = \"{state}\""),
    );
    let a = project(&[("efmesh.toml", &cfg), RAW, TOP]);
    let b = project(&[("efmesh.toml", &cfg), RAW, TOP]);
    let now = "2026-01-02T00:00:00Z";

    // what one project applied, the other sees
    let v = apply_at(a.path(), "dev", now);
    assert_eq!(strings(&v["built"]), vec!["s.raw", "s.top"]);
    // ... and knows that its own DuckDB file does not hold that environment's tables: the
    // state is shared, the physics is per engine, and a plan never pretends otherwise
    let plan = ok_json(b.path(), now, &["plan", "dev"]);
    let summary: Vec<(&str, bool)> = plan["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["category"].as_str().unwrap(),
                a["build"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [("unchanged", true), ("unchanged", true)],
        "{plan}"
    );
    assert!(plan["warnings"].to_string().contains("is gone"), "{plan}");
    let status = ok_json(b.path(), now, &["status", "dev"]);
    assert_eq!(status["exists"], true, "{status}");
    assert_eq!(status["healthy"], false, "{status}");
    // b builds the environment's physics into its own DuckDB; a's is untouched
    let v = apply_at(b.path(), "dev", now);
    assert_eq!(strings(&v["built"]), vec!["s.raw", "s.top"], "{v}");
    for d in [a.path(), b.path()] {
        let plan = ok_json(d, now, &["plan", "dev"]);
        assert_eq!(plan["hasChanges"], false, "{plan}");
    }
    let plan = ok_json(b.path(), now, &["plan", "prod"]);
    assert_eq!(
        (plan["hasChanges"].as_bool(), &plan["summary"]["added"]),
        (Some(true), &Value::from(2)),
        "prod was never applied: {plan}"
    );
    assert!(
        !b.path().join("efmesh.state.sqlite").exists(),
        "no local state"
    );

    // two applies of the same change at once: they serialize through the lock; whichever
    // loses reports the lock held (3) or, having planned before the winner promoted, that the
    // environment changed since its plan (1). Never both build, never a half-written state.
    write(a.path(), SLOW);
    write(b.path(), SLOW);
    let racers: Vec<Child> = [a.path(), b.path()]
        .iter()
        .map(|d| {
            spawn(
                d,
                &[("EFMESH_NOW", now)],
                &["apply", "dev", "--yes", "--json"],
            )
        })
        .collect();
    let outs: Vec<(i32, String, String)> = racers
        .into_iter()
        .map(|c| {
            let o = c.wait_with_output().unwrap();
            (
                o.status.code().unwrap(),
                String::from_utf8_lossy(&o.stdout).to_string(),
                String::from_utf8_lossy(&o.stderr).to_string(),
            )
        })
        .collect();
    let mut builders = 0;
    for (code, stdout, stderr) in &outs {
        match code {
            0 => {
                let v = json(stdout.as_bytes());
                if !strings(&v["built"]).is_empty() {
                    assert_eq!(strings(&v["built"]), vec!["s.slow"], "{v}");
                    builders += 1;
                }
            }
            3 => assert_eq!(
                json(stdout.as_bytes())["error"]["code"],
                "lock-held",
                "{stdout}"
            ),
            1 => assert!(
                json(stdout.as_bytes())["error"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("changed since this plan was made"),
                "{stdout}\n{stderr}"
            ),
            _ => panic!("exit {code}:\n{stdout}\n{stderr}"),
        }
    }
    assert_eq!(builders, 1, "exactly one apply built the change: {outs:#?}");
    assert_eq!(
        env_models(&state, "dev"),
        vec![
            Some("s.raw".into()),
            Some("s.slow".into()),
            Some("s.top".into())
        ]
    );
    assert_eq!(
        pg_one(&state, "SELECT count(*) FROM efmesh_state.locks"),
        "0",
        "both released the lock"
    );
    for d in [a.path(), b.path()] {
        let plan = ok_json(d, now, &["plan", "dev"]);
        assert_eq!(plan["hasChanges"], false, "{plan}");
    }

    // a holder on another host killed with SIGKILL: its lease blocks others until its ttl
    // lapses (a holder on this host whose pid is gone is reclaimed at once; see
    // operations.rs)
    write(a.path(), ENDLESS);
    write(b.path(), EXTRA);
    let mut holder = spawn(
        a.path(),
        &[("EFMESH_NOW", now), ("EFMESH_LOCK_TTL_SECONDS", "3")],
        &["apply", "dev", "--yes"],
    );
    wait_for_log(&mut holder, &["msg=building", "model=s.endless"]);
    holder.kill().unwrap(); // SIGKILL: the lease stays in the store
    holder.wait().unwrap();
    let elsewhere = format!("ci@another-host pid {}", holder.id());
    pg_exec(
        &state,
        &format!("UPDATE efmesh_state.locks SET holder = '{elsewhere}'"),
    );
    let killed_at = Instant::now();
    let out = efmesh(b.path())
        .env("EFMESH_NOW", now)
        .args(["apply", "dev", "--yes"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("is locked by") && err.contains(&elsewhere),
        "names the killed holder: {err}"
    );
    assert_eq!(
        env_models(&state, "dev").len(),
        3,
        "the killed apply promoted nothing"
    );
    std::thread::sleep(
        Duration::from_secs(3).saturating_sub(killed_at.elapsed()) + Duration::from_millis(700),
    );
    let v = apply_at(b.path(), "dev", now);
    // and `s.slow` too when a won the race above: b's own DuckDB lacks it, and apply looks
    let built = strings(&v["built"]);
    assert!(
        built == ["s.extra"] || built == ["s.extra", "s.slow"],
        "{v}"
    );
    assert_eq!(
        env_models(&state, "dev"),
        vec![
            Some("s.extra".into()),
            Some("s.raw".into()),
            Some("s.slow".into()),
            Some("s.top".into())
        ]
    );
    assert_eq!(
        pg_one(&state, "SELECT count(*) FROM efmesh_state.locks"),
        "0"
    );
    let plan = ok_json(b.path(), now, &["plan", "dev"]);
    assert_eq!(plan["hasChanges"], false, "{plan}");
}

// ---------------------------------------------------------------------------------------------
// 3. kill -9 mid-backfill on the PostgreSQL engine
// ---------------------------------------------------------------------------------------------

/// 60 days of hourly events, generated by PostgreSQL.
const PG_EVENTS: (&str, &str) = (
    "models/raw.sql",
    "MODEL (name raw.events, kind FULL, columns (id BIGINT, ts TIMESTAMP));\nSELECT g.i AS id, TIMESTAMP '2026-01-01' + g.i * INTERVAL '1 hour' AS ts FROM generate_series(0, 1439) AS g(i)",
);

/// A daily model over `raw.events` whose every batch sleeps `sleep` seconds on the server.
fn pg_daily(knobs: &str, sleep: &str) -> String {
    format!("MODEL (name m.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, batch_size 1{knobs}), start '2026-01-01', columns (id BIGINT, ts TIMESTAMP, day DATE));\nSELECT e.id, e.ts, CAST(@start AS DATE) AS day FROM raw.events AS e WHERE e.ts >= @start AND e.ts < @end AND (SELECT count(*) FROM (SELECT pg_sleep({sleep})) AS s) > 0")
}

fn done_intervals(url: &str) -> Vec<Option<String>> {
    pg_col(url, "SELECT i.start_at || '..' || i.end_at FROM efmesh_state.intervals AS i JOIN efmesh_state.physics AS p USING (physical_fingerprint) WHERE p.model = 'm.daily' AND i.status = 'done' ORDER BY i.start_at")
}

#[test]
fn a_backfill_on_postgresql_killed_mid_way_resumes_without_duplicates() {
    let url = pg_database("killed_backfill");
    let cfg = pg_config(&url);
    let daily = pg_daily("", "0.1");
    let p = project(&[
        ("efmesh.toml", &cfg),
        PG_EVENTS,
        ("models/daily.sql", &daily),
    ]);
    let now = "2026-02-10T00:00:00Z";
    let mut child = spawn(
        p.path(),
        &[("EFMESH_NOW", now), ("EFMESH_LOCK_TTL_SECONDS", "2")],
        &["apply", "dev", "--yes", "--log-level", "info"],
    );
    wait_for_log(&mut child, &["msg=backfilling", " batch=15/40 "]);
    std::thread::sleep(Duration::from_millis(50));
    child.kill().unwrap(); // SIGKILL between or inside batches
    child.wait().unwrap();

    let before = done_intervals(&url);
    assert!(before.len() <= 1, "{before:?}");
    let resume_at = match before.first() {
        Some(Some(r)) => {
            let (start, end) = r.split_once("..").unwrap();
            assert_eq!(start, "2026-01-01T00:00:00");
            assert!(
                ("2026-01-14T00:00:00".."2026-02-10T00:00:00").contains(&end),
                "the kill interrupted the backfill: {before:?}"
            );
            format!("{end}Z")
        }
        _ => "2026-01-01T00:00:00Z".into(),
    };
    // the killed holder's lease (2 s) lapses; the next apply resumes where the ledger ends
    std::thread::sleep(Duration::from_millis(2300));
    let v = apply_at(p.path(), "dev", now);
    let b = batches(&v);
    assert_eq!(b.first().unwrap().1, resume_at, "{v}");
    assert_eq!(b.last().unwrap().2, "2026-02-10T00:00:00Z", "{v}");
    assert_eq!(
        pg_one(
            &url,
            "SELECT count(*) || '/' || count(DISTINCT id) || '/' || sum(id) FROM dev__m.daily"
        ),
        format!("{n}/{n}/{}", (0..40 * 24).sum::<u64>(), n = 40 * 24),
        "every hour once, as a from-scratch build"
    );
    assert_eq!(
        pg_one(
            &url,
            "SELECT count(*) FROM dev__m.daily WHERE day <> ts::date"
        ),
        "0",
        "each row written by its own day's batch"
    );
    assert_eq!(
        done_intervals(&url),
        vec![Some("2026-01-01T00:00:00..2026-02-10T00:00:00".into())],
        "one merged ledger row"
    );
    assert_eq!(pg_one(&url, "SELECT count(*) FROM efmesh_state.locks"), "0");
}

// ---------------------------------------------------------------------------------------------
// 4. parallel batches build what a sequential build builds
// ---------------------------------------------------------------------------------------------

/// A daily model (`knobs` on its kind) and a daily rollup of it, applied on a fresh database
/// with `[engine]` line `engine` and the apply's `extra` arguments: both tables' every row, the
/// apply's JSON, and how many of the daily model's batches were ever open at once.
fn build_daily(knobs: &str, engine: &str, extra: &[&str]) -> (String, Value, i32) {
    let url = pg_database("batches");
    let cfg = config(
        &format!("postgres = \"{url}\"\n{engine}"),
        &format!("postgres = \"{url}\""),
    );
    let daily = pg_daily(knobs, "0.15");
    let rollup = "MODEL (name m.per_day, kind INCREMENTAL_BY_TIME_RANGE (time_column day, batch_size 1), start '2026-01-01', columns (day DATE, n BIGINT, total NUMERIC));\nSELECT d.day, count(*) AS n, sum(d.id) AS total FROM m.daily AS d WHERE d.day >= CAST(@start AS DATE) AND d.day < CAST(@end AS DATE) GROUP BY d.day";
    let p = project(&[
        ("efmesh.toml", &cfg),
        PG_EVENTS,
        ("models/daily.sql", &daily),
        ("models/per_day.sql", rollup),
    ]);
    let out = efmesh(p.path())
        .env("EFMESH_NOW", "2026-01-17T00:00:00Z")
        .env("EFMESH_LOG_FORMAT", "logfmt")
        .args(["apply", "dev", "--yes", "--json"])
        .args(extra)
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{knobs} {engine} {extra:?}:\n{log}");
    let v = json(&out.stdout);
    let (mut open, mut widest) = (0i32, 0i32);
    for line in log.lines().filter(|l| l.contains("model=m.daily")) {
        if line.contains("msg=backfilling ") {
            open += 1;
        } else if line.contains("msg=backfilled ") {
            open -= 1;
        }
        widest = widest.max(open);
    }
    assert_eq!(open, 0, "every batch that started finished:\n{log}");
    let rows = pg_one(&url, "SELECT md5(string_agg(id || '|' || ts || '|' || day, ',' ORDER BY id)) || ' ' || count(*) FROM dev__m.daily")
        + " "
        + &pg_one(&url, "SELECT string_agg(day || ':' || n || ':' || total, ',' ORDER BY day) FROM dev__m.per_day");
    (rows, v, widest)
}

#[test]
fn parallel_batches_on_postgresql_build_the_same_tables_as_sequential_ones() {
    let (seq, v1, w1) = build_daily(", batch_concurrency 1", "", &[]);
    assert_eq!(w1, 1, "one batch at a time with batch_concurrency 1");
    let expected = (0..16u64)
        .map(|d| {
            format!(
                "2026-01-{:02}:24:{}",
                d + 1,
                (d * 24..d * 24 + 24).sum::<u64>()
            )
        })
        .collect::<Vec<_>>()
        .join(",");
    assert!(seq.ends_with(&format!(" {} {expected}", 16 * 24)), "{seq}");
    assert_eq!(batches(&v1).len(), 32, "16 days of each model");
    // four at once on the default pool of four connections; with `--jobs 2` the pool is
    // shared with the other lane; `pool_size 2` caps the batches at two
    for (engine, extra, most) in [
        ("", &[][..], 4),
        ("", &["--jobs", "2"][..], 2),
        ("pool_size = 2", &[][..], 2),
    ] {
        let (par, v4, w4) = build_daily(", batch_concurrency 4", engine, extra);
        assert!(
            (2..=most).contains(&w4),
            "{engine} {extra:?}: batches overlapped, never more than {most}: {w4}"
        );
        assert_eq!(seq, par, "{engine} {extra:?}: the same rows either way");
        assert_eq!(
            batches(&v1),
            batches(&v4),
            "{engine} {extra:?}: reported in batch order"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 5. connection failures never echo the password
// ---------------------------------------------------------------------------------------------

/// The password of every bad URL below, as written in the URL (percent-encoded) ...
const SECRET: &str = "pw-Xq93%21never%2Fshow";
/// ... and decoded, as the server is sent it.
const SECRET_DECODED: &str = "pw-Xq93!never/show";

/// Run `args` in a project with `cfg`: it must fail with exit 1, name `location`, say
/// `because`, and keep the password (either spelling) out of stdout and stderr, in the human
/// form, the JSON form and with every log line on.
fn fails_naming(cfg: &str, args: &[&str], location: &str, because: &str) {
    let p = project(&[
        ("efmesh.toml", cfg),
        (
            "models/a.sql",
            "MODEL (name s.a, kind FULL, columns (x INTEGER));\nSELECT 1 AS x",
        ),
    ]);
    for extra in [&[][..], &["--json"], &["--log-level", "trace"]] {
        let out = efmesh(p.path())
            .env("EFMESH_NOW", "2026-01-02T00:00:00Z")
            .args(args)
            .args(extra)
            .output()
            .unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(1), "{args:?} {extra:?}: {all}");
        assert!(
            all.contains(location) && all.contains(because),
            "{args:?} {extra:?} does not name {location} and say {because:?}:\n{all}"
        );
        assert!(
            !all.contains("Xq93") && !all.contains(SECRET_DECODED),
            "{args:?} {extra:?} printed the password:\n{all}"
        );
    }
}

#[test]
fn unreachable_servers_and_wrong_passwords_are_reported_without_the_password() {
    // host:port of the real server, for a wrong password that reaches it
    let server = pg_server();
    let hostport = server.split_once('@').unwrap().1.split('/').next().unwrap();
    let cases = [
        (
            format!("postgres://efmesh:{SECRET}@127.0.0.1:1/warehouse"),
            "postgres://efmesh@127.0.0.1:1/warehouse".to_string(),
            "Connection refused",
        ),
        (
            format!("postgres://postgres:{SECRET}@{hostport}/postgres"),
            format!("postgres://postgres@{hostport}/postgres"),
            "password authentication failed",
        ),
    ];
    let good_state = pg_database("bad_engine_state");
    for (url, location, because) in &cases {
        // the state store, with a DuckDB engine
        let cfg = config(
            "duckdb = \"efmesh.duckdb\"",
            &format!("postgres = \"{url}\""),
        );
        for args in [
            &["plan", "dev"][..],
            &["apply", "dev", "--yes"],
            &["run", "dev"],
            &["status", "dev"],
        ] {
            fails_naming(&cfg, args, location, because);
        }
        // the engine, with a state store that works
        let cfg = config(
            &format!("postgres = \"{url}\""),
            &format!("postgres = \"{good_state}\""),
        );
        fails_naming(&cfg, &["apply", "dev", "--yes"], location, because);
    }
    // the failed applies on the engine changed nothing and left no lock behind
    assert_eq!(
        pg_one(
            &good_state,
            "SELECT count(*) FROM efmesh_state.environments"
        ),
        "0"
    );
    assert_eq!(
        pg_one(&good_state, "SELECT count(*) FROM efmesh_state.locks"),
        "0"
    );
}

// ---------------------------------------------------------------------------------------------
// 6. what a PostgreSQL engine cannot build is refused by check
// ---------------------------------------------------------------------------------------------

#[test]
fn check_refuses_a_parquet_target_on_a_postgresql_engine() {
    let url = pg_database("check_parquet");
    let cfg = pg_config(&url) + "\n[lake]\npath = \"lake\"\n";
    let p = project(&[
        ("efmesh.toml", &cfg),
        (
            "models/ok.sql",
            "MODEL (name s.ok, kind FULL, columns (x INTEGER));\nSELECT 1 AS x",
        ),
        (
            "models/daily.sql",
            "MODEL (\n  name s.daily,\n  kind FULL,\n  target parquet,\n  columns (x INTEGER)\n);\nSELECT x FROM s.ok",
        ),
    ]);
    let out = efmesh(p.path()).args(["check", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out.stdout);
    let errors: Vec<&Value> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "error")
        .collect();
    assert_eq!(errors.len(), 1, "{v}");
    let e = errors[0];
    assert_eq!(e["code"], "engine-lacks", "{e}");
    assert_eq!(e["location"]["file"], "models/daily.sql", "{e}");
    assert_eq!(e["location"]["line"], 4, "at the `target` line: {e}");
    let message = e["message"].as_str().unwrap();
    assert!(
        message.contains("s.daily")
            && message.contains("target parquet")
            && message.contains("PostgreSQL"),
        "{message}"
    );
    // the human form names the file and the model too
    let out = efmesh(p.path()).arg("check").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("models/daily.sql:4") && err.contains("s.daily"),
        "{err}"
    );
    // and apply never starts on it
    let out = efmesh(p.path())
        .args(["apply", "dev", "--yes"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        pg_one(
            &url,
            "SELECT count(*) FROM information_schema.schemata WHERE schema_name IN ('_efmesh', 'dev__s')"
        ),
        "0",
        "nothing reached the engine"
    );
}

// ---------------------------------------------------------------------------------------------
// 7. seeds reach PostgreSQL through COPY FROM STDIN
// ---------------------------------------------------------------------------------------------

const SEED_COLUMNS: &str =
    "columns (code VARCHAR, beds INTEGER, opened DATE, critical BOOLEAN, rate DECIMAL(5, 2))";

fn seed_model(name: &str, seed: &str) -> String {
    format!("MODEL (\n  name ref.{name},\n  kind SEED (path '../seeds/{seed}'),\n  {SEED_COLUMNS}\n);\n")
}

fn seed_rows(url: &str, view: &str) -> Vec<Option<String>> {
    pg_col(
        url,
        &format!("SELECT concat_ws('|', code, beds, coalesce(opened::text, ''), critical, rate) FROM {view} ORDER BY code"),
    )
}

#[test]
fn seeds_on_postgresql_are_copied_in_and_cast_like_on_duckdb() {
    let url = pg_database("seeds");
    let csv_model = seed_model("from_csv", "depts.csv");
    let json_model = seed_model("from_json", "depts.json");
    let lines_model = seed_model("from_jsonl", "depts.jsonl");
    // header order and case need not follow the declaration; a quoted field spans two lines
    let csv = "Code,rate,beds,opened,critical\nER,0.25,20,2019-05-01,false\n\"ICU\nnorth\",2,8,,true\nCARD,1.5,16,2020-01-01,false\n";
    let json_seed = r#"[
  {"code": "ER", "beds": 20, "opened": "2019-05-01", "critical": false, "Rate": 0.25},
  {"Rate": "2.00", "code": "ICU\nnorth", "beds": "8", "opened": null, "critical": true},
  {"code": "CARD", "beds": 16, "opened": "2020-01-01", "critical": "false", "Rate": 1.5}
]"#;
    let lines = "{\"code\": \"ER\", \"beds\": 20, \"opened\": \"2019-05-01\", \"critical\": false, \"rate\": 0.25}\n\n{\"code\": \"ICU\\nnorth\", \"beds\": 8, \"critical\": true, \"rate\": 2}\n{\"code\": \"CARD\", \"beds\": 16, \"opened\": \"2020-01-01\", \"critical\": false, \"rate\": \"1.5\"}\n";
    let total = "MODEL (name ref.total, kind FULL);\nSELECT sum(c.beds) AS beds, count(l.code) AS matched FROM ref.from_csv AS c LEFT JOIN ref.loose AS l ON l.code = c.code";
    let p = project(&[
        ("efmesh.toml", &pg_config(&url)),
        ("models/csv.sql", &csv_model),
        ("models/json.sql", &json_model),
        ("models/jsonl.sql", &lines_model),
        (
            "models/loose.sql",
            "MODEL (name ref.loose, kind SEED (path '../seeds/loose.csv'));",
        ),
        ("models/total.sql", total),
        ("seeds/depts.csv", csv),
        ("seeds/depts.json", json_seed),
        ("seeds/depts.jsonl", lines),
        (
            "seeds/loose.csv",
            "code,note\nER,\"tab\there, 'quote', back\\slash\"\n",
        ),
    ]);
    efmesh(p.path()).arg("check").assert().success();
    apply_at(p.path(), "dev", "2026-01-02T00:00:00Z");
    let expected = [
        "CARD|16|2020-01-01|f|1.50",
        "ER|20|2019-05-01|f|0.25",
        "ICU\nnorth|8||t|2.00",
    ]
    .map(|s| Some(s.to_string()));
    for view in [
        "dev__ref.from_csv",
        "dev__ref.from_json",
        "dev__ref.from_jsonl",
    ] {
        assert_eq!(seed_rows(&url, view), expected, "{view}");
        assert_eq!(
            pg_one(&url, &format!("SELECT concat_ws(',', pg_typeof(code), pg_typeof(beds), pg_typeof(opened), pg_typeof(critical), pg_typeof(rate)) FROM {view} LIMIT 1")),
            "character varying,integer,date,boolean,numeric",
            "{view}"
        );
    }
    // undeclared columns stay text, byte for byte
    assert_eq!(
        pg_one(
            &url,
            "SELECT pg_typeof(note) || ':' || note FROM dev__ref.loose"
        ),
        "text:tab\there, 'quote', back\\slash"
    );
    assert_eq!(
        pg_one(&url, "SELECT beds || ':' || matched FROM dev__ref.total"),
        "44:1"
    );

    // the file's bytes are the version: a new row is a breaking change, rebuilt and promoted
    std::fs::write(
        p.path().join("seeds/depts.csv"),
        format!("{csv}WARD,0.5,30,2021-03-01,false\n"),
    )
    .unwrap();
    let plan = ok_json(p.path(), "2026-01-02T00:00:00Z", &["plan", "dev"]);
    let changed: Vec<&Value> = plan["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["build"] == true)
        .collect();
    let names: Vec<&str> = changed
        .iter()
        .map(|a| a["model"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ref.from_csv", "ref.total"], "{plan}");
    apply_at(p.path(), "dev", "2026-01-02T00:00:00Z");
    assert_eq!(pg_one(&url, "SELECT count(*) FROM dev__ref.from_csv"), "4");
    assert_eq!(
        pg_one(&url, "SELECT beds || ':' || matched FROM dev__ref.total"),
        "74:1"
    );

    // a value that does not fit is reported by file, row, line and column; nothing is promoted
    std::fs::write(
        p.path().join("seeds/depts.csv"),
        format!("{csv}WARD,0.5,thirty,2021-03-01,false\n"),
    )
    .unwrap();
    let out = efmesh(p.path())
        .env("EFMESH_NOW", "2026-01-02T00:00:00Z")
        .args(["apply", "dev", "--yes"])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains(
            "seeds/depts.csv: row 4 (line 6): column beds: 'thirty' is not a valid INTEGER"
        ),
        "{stderr}"
    );
    assert_eq!(pg_one(&url, "SELECT count(*) FROM dev__ref.from_csv"), "4");

    // a ragged row is refused with the row, before anything is written
    std::fs::write(p.path().join("seeds/depts.csv"), format!("{csv}WARD,30\n")).unwrap();
    let out = efmesh(p.path())
        .env("EFMESH_NOW", "2026-01-02T00:00:00Z")
        .args(["apply", "dev", "--yes", "--json"])
        .assert()
        .code(1);
    let v = json(&out.get_output().stdout);
    assert_eq!(v["error"]["code"], "seed-file", "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("ref.from_csv")
            && message.contains("seeds/depts.csv")
            && message.contains("row 4 has 2 value(s)"),
        "{message}"
    );
    assert_eq!(pg_one(&url, "SELECT count(*) FROM dev__ref.from_csv"), "4");
}

#[test]
fn diff_and_query_on_postgresql_read_each_environments_views_and_sample_aligned_keys() {
    let url = pg_database("diff");
    let model = |body: &str| format!("MODEL (name s.m, kind FULL, grain id);\n{body}");
    let p = project(&[
        ("efmesh.toml", &pg_config(&url)),
        (
            "models/m.sql",
            &model("SELECT g AS id, g * 2 AS v FROM generate_series(1, 1000) AS g"),
        ),
    ]);
    apply_at(p.path(), "prod", "2026-01-02T00:00:00Z");
    write(
        p.path(),
        (
            "models/m.sql",
            &model("SELECT CAST(g AS TEXT) AS id, g * 2 AS v FROM generate_series(1, 800) AS g"),
        ),
    );
    apply_at(p.path(), "dev", "2026-01-02T00:00:00Z");
    let v = ok_json(
        p.path(),
        "2026-01-02T00:00:00Z",
        &["query", "dev", "SELECT count(*) AS c FROM s.m"],
    );
    assert_eq!(v["rows"][0]["c"], "800");
    for sample in [None, Some("20")] {
        let mut args = vec!["diff", "prod", "dev", "--data"];
        args.extend(sample.iter().flat_map(|s| ["--sample", *s]));
        let v = ok_json(p.path(), "2026-01-02T00:00:00Z", &args);
        let k = &v["models"][0]["data"]["keyed"];
        let matched = k["matched"].as_u64().unwrap();
        assert_eq!(k["onlyInB"], 0, "{sample:?}: {k:#}");
        assert_eq!(
            k["mismatches"][0]["mismatched"], 0,
            "text keys still match integer ones"
        );
        assert_eq!(
            k["comparedA"].as_u64().unwrap(),
            matched + k["onlyInA"].as_u64().unwrap()
        );
        if sample.is_none() {
            assert_eq!((matched, k["onlyInA"].as_u64()), (800, Some(200)));
        } else {
            assert!(matched > 80 && matched < 250, "about a fifth of 800: {k:#}");
        }
    }
}
