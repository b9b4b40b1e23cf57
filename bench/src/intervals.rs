//! Per-interval overhead: one hourly `INCREMENTAL_BY_TIME_RANGE` model with
//! `batch_size 1`, backfilled for `hours` hours (a year by default), so every
//! interval is its own engine transaction plus one state write. Timed for
//! efmesh and SQLMesh as whole processes, next to a raw-DuckDB floor that runs
//! the same per-interval `DELETE` + `INSERT` transactions in one connection
//! with no planning and no ledger.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{ensure, Context, Result};

use crate::generate;

/// First hour of the backfill (the models' `start`).
pub const START: &str = "2026-01-01";

/// Default number of hourly intervals: the year 2026.
pub const DEFAULT_HOURS: usize = 8760;

/// Schema/table efmesh exposes the hourly model under in env `dev`.
pub const EFMESH_DEV_VIEW: &str = "dev__bench.hourly";

/// Schema/table SQLMesh exposes the hourly model under in env `dev`.
pub const SQLMESH_DEV_VIEW: &str = "bench__dev.hourly";

/// SQLMesh's physical schema for `bench.*` models (used to count completed
/// hours after a timeout, when the dev view does not exist yet).
pub const SQLMESH_PHYSICAL_SCHEMA: &str = "sqlmesh__bench";

/// `--hours` / `--sqlmesh-short-hours`: a positive whole number of days in
/// hours, so SQLMesh's date-granular, inclusive `--end` covers exactly that
/// range.
pub fn parse_hours(s: &str) -> Result<usize, String> {
    let n: usize = s
        .replace('_', "")
        .parse()
        .map_err(|_| format!("`{s}` is not a number of hours"))?;
    if n == 0 || n % 24 != 0 {
        return Err(format!("{n} is not a positive multiple of 24 hours"));
    }
    if n > 24 * 366 * 50 {
        return Err(format!("{n} hours is unreasonably many"));
    }
    Ok(n)
}

/// Civil date `days` days after 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Days from 1970-01-01 to [`START`] (2026-01-01).
const START_DAYS: i64 = 20_454;

/// `(date, hour)` of hour `h` after [`START`] 00:00.
fn hour_after_start(h: usize) -> ((i64, u32, u32), usize) {
    (civil_from_days(START_DAYS + (h / 24) as i64), h % 24)
}

/// `YYYY-MM-DD HH:MM:SS` of hour `h` after the start.
pub fn hour_ts(h: usize) -> String {
    let ((y, m, d), hh) = hour_after_start(h);
    format!("{y:04}-{m:02}-{d:02} {hh:02}:00:00")
}

/// The pinned "now" for efmesh (`EFMESH_NOW`): the end of the last interval,
/// so exactly `hours` intervals are complete.
pub fn efmesh_now(hours: usize) -> String {
    let ((y, m, d), hh) = hour_after_start(hours);
    format!("{y:04}-{m:02}-{d:02}T{hh:02}:00:00Z")
}

/// SQLMesh's inclusive `--end` date for `hours` (a multiple of 24) hours.
pub fn sqlmesh_end(hours: usize) -> String {
    let (y, m, d) = civil_from_days(START_DAYS + (hours / 24) as i64 - 1);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Root model: `hours` hourly rows, columns declared.
pub fn root_sql(hours: usize) -> String {
    format!(
        "MODEL (
  name src.events,
  kind FULL,
  columns (
    id BIGINT,
    ts TIMESTAMP,
    v DOUBLE
  )
);

SELECT
  range AS id,
  TIMESTAMP '{START}' + to_hours(range) AS ts,
  range * 1.0 AS v
FROM range({hours})
"
    )
}

/// The hourly incremental model. `cron '@hourly'` is needed by SQLMesh (its
/// interval unit defaults from the cron); `@end_ts` is inclusive in both tools.
pub const HOURLY_SQL: &str = "MODEL (
  name bench.hourly,
  kind INCREMENTAL_BY_TIME_RANGE (
    time_column ts,
    batch_size 1
  ),
  interval_unit hour,
  cron '@hourly',
  start '2026-01-01',
  columns (
    id BIGINT,
    ts TIMESTAMP,
    v DOUBLE
  )
);

SELECT
  id,
  ts,
  v
FROM src.events
WHERE
  ts >= @start_ts AND ts <= @end_ts
";

/// All files of the interval project as `(relative path, contents)`.
pub fn project_files(hours: usize) -> Vec<(PathBuf, String)> {
    vec![
        (
            PathBuf::from("efmesh.toml"),
            generate::EFMESH_TOML.to_string(),
        ),
        (
            PathBuf::from("config.yaml"),
            generate::sqlmesh_config_yaml(),
        ),
        (generate::root_model_path(), root_sql(hours)),
        (
            PathBuf::from("models/bench/hourly.sql"),
            HOURLY_SQL.to_string(),
        ),
    ]
}

/// Write the project into `dir`, which must not exist yet.
pub fn write_project(dir: &Path, hours: usize) -> Result<()> {
    ensure!(!dir.exists(), "{} already exists", dir.display());
    for (rel, text) in project_files(hours) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().expect("relative paths have a parent"))?;
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// efmesh's command (after `-C DIR`).
pub const EFMESH_ARGS: [&str; 4] = ["apply", "dev", "--yes", "--json"];

/// SQLMesh's command (after `-p DIR`) backfilling `hours` hours, with its
/// clock pinned to `now_hours` after the start (the same instant as
/// `EFMESH_NOW`): without `--execution-time` SQLMesh refuses an `--end` in
/// the future, and the benchmark year may not be over on the machine's clock.
pub fn sqlmesh_args(hours: usize, now_hours: usize) -> Vec<String> {
    [
        "plan",
        "dev",
        "--auto-apply",
        "--no-prompts",
        "--start",
        START,
        "--end",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        sqlmesh_end(hours),
        "--execution-time".to_string(),
        hour_ts(now_hours),
    ])
    .collect()
}

/// Row count, distinct hours, min and max `ts` of `relation` in the DuckDB
/// file `db`, opened read-only.
pub fn row_stats(db: &Path, relation: &str) -> Result<(i64, i64, String, String)> {
    let config = duckdb::Config::default()
        .access_mode(duckdb::AccessMode::ReadOnly)
        .context("duckdb config")?;
    let conn = duckdb::Connection::open_with_flags(db, config)
        .with_context(|| format!("opening {} read-only", db.display()))?;
    conn.query_row(
        &format!(
            "SELECT count(*), count(DISTINCT ts), coalesce(CAST(min(ts) AS VARCHAR), ''), \
             coalesce(CAST(max(ts) AS VARCHAR), '') FROM {relation}"
        ),
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )
    .with_context(|| format!("reading {relation} of {}", db.display()))
}

/// Rows in SQLMesh's physical table(s) of `bench.hourly` (each hour is one
/// row, so this is the number of completed intervals), for a run that was
/// killed before it created the dev view.
pub fn sqlmesh_physical_rows(db: &Path) -> Result<i64> {
    let config = duckdb::Config::default()
        .access_mode(duckdb::AccessMode::ReadOnly)
        .context("duckdb config")?;
    let conn = duckdb::Connection::open_with_flags(db, config)
        .with_context(|| format!("opening {} read-only", db.display()))?;
    let tables: Vec<String> = conn
        .prepare(
            "SELECT table_name FROM information_schema.tables \
             WHERE table_schema = ? AND table_name LIKE 'bench__hourly__%' \
             AND table_type = 'BASE TABLE'",
        )?
        .query_map([SQLMESH_PHYSICAL_SCHEMA], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut total = 0;
    for t in tables {
        let n: i64 = conn.query_row(
            &format!("SELECT count(*) FROM {SQLMESH_PHYSICAL_SCHEMA}.\"{t}\""),
            [],
            |r| r.get(0),
        )?;
        total = total.max(n);
    }
    Ok(total)
}

/// Physical tables of the floor.
pub const FLOOR_ROOT: &str = "_floor.src__events";
/// Target table of the floor.
pub const FLOOR_TARGET: &str = "_floor.bench__hourly";

/// Setup statements of the floor: schema, root CTAS (the root model's query),
/// empty target table.
pub fn floor_setup_sql(hours: usize) -> Vec<String> {
    vec![
        "CREATE SCHEMA IF NOT EXISTS _floor".to_string(),
        format!(
            "CREATE TABLE {FLOOR_ROOT} AS SELECT range AS id, TIMESTAMP '{START}' + to_hours(range) AS ts, \
             range * 1.0 AS v FROM range({hours})"
        ),
        format!("CREATE TABLE {FLOOR_TARGET} (id BIGINT, ts TIMESTAMP, v DOUBLE)"),
    ]
}

/// The two statements of interval `h`, as efmesh issues them: delete the
/// hour, insert the model query (with `@start_ts`/`@end_ts` bound the way
/// efmesh binds them: start, and end minus one microsecond) filtered to the
/// half-open hour.
pub fn floor_interval_sql(h: usize) -> [String; 2] {
    let s = format!("{}.000000", hour_ts(h));
    let e = format!("{}.000000", hour_ts(h + 1));
    let e_incl = format!("{}.999999", {
        // the hour containing the last microsecond: HH:59:59.999999
        let t = hour_ts(h);
        format!("{}:59:59", &t[..13])
    });
    [
        format!("DELETE FROM {FLOOR_TARGET} WHERE ts >= '{s}' AND ts < '{e}'"),
        format!(
            "INSERT INTO {FLOOR_TARGET} BY NAME SELECT * FROM (SELECT id, ts, v FROM {FLOOR_ROOT} \
             WHERE ts >= '{s}' AND ts <= '{e_incl}') AS q WHERE q.ts >= '{s}' AND q.ts < '{e}'"
        ),
    ]
}

/// Run the floor in a fresh DuckDB file at `path`: setup (untimed), then
/// `hours` transactions of DELETE + INSERT in one connection (timed, close
/// included). Returns the time and verifies `hours` rows.
pub fn run_floor(hours: usize, path: &Path) -> Result<Duration> {
    ensure!(!path.exists(), "{} already exists", path.display());
    let mut conn =
        duckdb::Connection::open(path).with_context(|| format!("opening {}", path.display()))?;
    for stmt in floor_setup_sql(hours) {
        conn.execute_batch(&stmt)
            .with_context(|| format!("floor: {stmt}"))?;
    }
    let start = Instant::now();
    for h in 0..hours {
        let [del, ins] = floor_interval_sql(h);
        let tx = conn.transaction().context("floor: BEGIN")?;
        tx.execute_batch(&del)
            .with_context(|| format!("floor: {del}"))?;
        tx.execute_batch(&ins)
            .with_context(|| format!("floor: {ins}"))?;
        tx.commit().context("floor: COMMIT")?;
    }
    let rows: i64 = conn.query_row(
        &format!("SELECT count(DISTINCT ts) FROM {FLOOR_TARGET}"),
        [],
        |r| r.get(0),
    )?;
    conn.close().map_err(|(_, e)| e).context("floor: closing")?;
    let elapsed = start.elapsed();
    ensure!(
        rows == hours as i64,
        "floor: {rows} distinct hours, expected {hours}"
    );
    Ok(elapsed)
}

/// One row of the result table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// What was run (`efmesh`, `SQLMesh`, `SQLMesh (720 h)`, `floor`).
    pub tool: String,
    /// Intervals the run was asked to do.
    pub intervals: usize,
    /// Outcome.
    pub outcome: Outcome,
}

/// How one measured run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Finished, verified.
    Done(Duration),
    /// Killed at the limit, with the intervals completed if known.
    TimedOut(Duration, Option<i64>),
    /// Failed or skipped, with a reason.
    Failed(String),
}

impl Row {
    /// Intervals per second, for finished runs (for a timeout: completed / limit).
    pub fn rate(&self) -> Option<f64> {
        match &self.outcome {
            Outcome::Done(d) => Some(self.intervals as f64 / d.as_secs_f64()),
            Outcome::TimedOut(d, Some(n)) => Some(*n as f64 / d.as_secs_f64()),
            _ => None,
        }
    }
    /// Seconds, for finished runs.
    pub fn secs(&self) -> Option<f64> {
        match &self.outcome {
            Outcome::Done(d) => Some(d.as_secs_f64()),
            _ => None,
        }
    }
}

/// Markdown table of `rows` (rows[0] must be efmesh).
pub fn markdown(rows: &[Row]) -> String {
    let mut out =
        String::from("| tool | intervals | seconds | intervals/s |\n|---|---:|---:|---:|\n");
    for r in rows {
        let (secs, rate) = match &r.outcome {
            Outcome::Done(d) => (
                format!("{:.2}", d.as_secs_f64()),
                format!("{:.1}", r.rate().unwrap_or(0.0)),
            ),
            Outcome::TimedOut(d, done) => (
                format!("timed out after {:.0}", d.as_secs_f64()),
                match done {
                    Some(n) => format!("≈{:.1} ({n} done)", r.rate().unwrap_or(0.0)),
                    None => "–".into(),
                },
            ),
            Outcome::Failed(why) => (format!("failed: {why}"), "–".into()),
        };
        out.push_str(&format!(
            "| {} | {} | {secs} | {rate} |\n",
            r.tool, r.intervals
        ));
    }
    out
}

/// `efmesh/floor` time ratio (same interval count required).
pub fn efmesh_over_floor(efmesh: &Row, floor: &Row) -> Option<f64> {
    Some(efmesh.secs()? / floor.secs()?)
}

/// efmesh speed-up over SQLMesh: ratio of intervals/s.
pub fn speedup(efmesh: &Row, sqlmesh: &Row) -> Option<f64> {
    Some(efmesh.rate()? / sqlmesh.rate()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hours_parsing() {
        assert_eq!(parse_hours("8760"), Ok(8760));
        assert_eq!(parse_hours("8_760"), Ok(8760));
        assert_eq!(parse_hours("720"), Ok(720));
        for bad in ["0", "25", "x", "-24"] {
            assert!(parse_hours(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(START_DAYS), (2026, 1, 1));
        assert_eq!(hour_ts(0), "2026-01-01 00:00:00");
        assert_eq!(hour_ts(25), "2026-01-02 01:00:00");
        assert_eq!(hour_ts(8759), "2026-12-31 23:00:00");
        assert_eq!(efmesh_now(8760), "2027-01-01T00:00:00Z");
        assert_eq!(efmesh_now(720), "2026-01-31T00:00:00Z");
        assert_eq!(sqlmesh_end(8760), "2026-12-31");
        assert_eq!(sqlmesh_end(720), "2026-01-30");
        assert_eq!(sqlmesh_end(24), "2026-01-01");
        // leap year handled (2028-02-29 exists)
        assert_eq!(
            civil_from_days(START_DAYS + 365 * 2 + 31 + 28),
            (2028, 2, 29)
        );
    }

    #[test]
    fn project_contents() {
        let files = project_files(720);
        let paths: Vec<_> = files.iter().map(|(p, _)| p.clone()).collect();
        assert_eq!(
            paths,
            [
                PathBuf::from("efmesh.toml"),
                PathBuf::from("config.yaml"),
                PathBuf::from("models/src/events.sql"),
                PathBuf::from("models/bench/hourly.sql"),
            ]
        );
        assert!(files[2].1.contains("FROM range(720)"));
        assert!(files[2].1.contains("ts TIMESTAMP"));
        let hourly = &files[3].1;
        for needle in [
            "INCREMENTAL_BY_TIME_RANGE",
            "time_column ts",
            "batch_size 1",
            "interval_unit hour",
            "cron '@hourly'",
            "start '2026-01-01'",
            "ts >= @start_ts AND ts <= @end_ts",
        ] {
            assert!(hourly.contains(needle), "{needle}");
        }
    }

    #[test]
    fn commands() {
        assert_eq!(
            sqlmesh_args(8760, 8760).join(" "),
            "plan dev --auto-apply --no-prompts --start 2026-01-01 --end 2026-12-31 \
             --execution-time 2027-01-01 00:00:00"
        );
        assert!(sqlmesh_args(720, 8760)
            .join(" ")
            .contains("--end 2026-01-30 --execution-time 2027-01-01"));
        assert_eq!(EFMESH_ARGS.join(" "), "apply dev --yes --json");
    }

    #[test]
    fn floor_sql_shape() {
        let [del, ins] = floor_interval_sql(23);
        assert_eq!(
            del,
            "DELETE FROM _floor.bench__hourly WHERE ts >= '2026-01-01 23:00:00.000000' \
             AND ts < '2026-01-02 00:00:00.000000'"
        );
        assert!(ins.starts_with("INSERT INTO _floor.bench__hourly BY NAME SELECT * FROM ("));
        assert!(ins.contains("ts <= '2026-01-01 23:59:59.999999'"));
        assert!(ins.ends_with(
            "q.ts >= '2026-01-01 23:00:00.000000' AND q.ts < '2026-01-02 00:00:00.000000'"
        ));
        assert!(floor_setup_sql(48)[1].contains("range(48)"));
    }

    #[test]
    fn floor_runs_small() {
        let dir = tempfile::tempdir().unwrap();
        let d = run_floor(48, &dir.path().join("f.duckdb")).unwrap();
        assert!(d > Duration::ZERO);
        let (n, distinct, min, max) =
            row_stats(&dir.path().join("f.duckdb"), FLOOR_TARGET).unwrap();
        assert_eq!((n, distinct), (48, 48));
        assert_eq!(min, "2026-01-01 00:00:00");
        assert_eq!(max, "2026-01-02 23:00:00");
    }

    #[test]
    fn table_and_ratios() {
        let ef = Row {
            tool: "efmesh".into(),
            intervals: 100,
            outcome: Outcome::Done(Duration::from_secs(2)),
        };
        let floor = Row {
            tool: "floor".into(),
            intervals: 100,
            outcome: Outcome::Done(Duration::from_secs(1)),
        };
        let sm = Row {
            tool: "SQLMesh".into(),
            intervals: 100,
            outcome: Outcome::TimedOut(Duration::from_secs(10), Some(10)),
        };
        assert_eq!(ef.rate(), Some(50.0));
        assert_eq!(efmesh_over_floor(&ef, &floor), Some(2.0));
        assert_eq!(speedup(&ef, &sm), Some(50.0));
        let md = markdown(&[ef, sm, floor]);
        assert!(md.contains("| efmesh | 100 | 2.00 | 50.0 |"));
        assert!(md.contains("| SQLMesh | 100 | timed out after 10 | ≈1.0 (10 done) |"));
    }
}
