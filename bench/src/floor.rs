//! The "floor": what building a generated project costs in raw DuckDB.
//!
//! No parsing, planning, state or fingerprints: one connection executes the
//! same `CREATE TABLE .. AS SELECT` statements efmesh issues for a cold
//! `apply dev` (root first, then every model in DAG order), then one view per
//! model in a single transaction, the way efmesh swaps an environment's views.
//! Like efmesh, every table is built in its own transaction (autocommit), so
//! the commit pattern matches and the difference to efmesh's cold apply is
//! its own overhead (process start, load, plan, state writes).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::generate::{self, CHAIN_LEN};

/// Schema holding the floor's physical tables (efmesh's is `_efmesh`).
pub const FLOOR_SCHEMA: &str = "_floor";

/// The virtual-layer schema of environment `dev` for the generated models,
/// named as efmesh names it (`<env>__<schema>`).
pub const DEV_BENCH_SCHEMA: &str = "dev__bench";

/// The same for the root `src.events`.
pub const DEV_SRC_SCHEMA: &str = "dev__src";

/// Physical table of the root model.
pub fn root_table() -> String {
    format!("{FLOOR_SCHEMA}.src__events")
}

/// Physical table of generated model `i`: `_floor.m_NNNNN`.
pub fn model_table(i: usize) -> String {
    format!("{FLOOR_SCHEMA}.m_{i:05}")
}

/// Physical table that model `i` reads from; mirrors [`generate::parent_of`].
pub fn parent_table(i: usize) -> String {
    if i % CHAIN_LEN == 0 {
        root_table()
    } else {
        model_table(i - 1)
    }
}

/// The statements of one floor build, split by how they are executed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FloorSql {
    /// Schema creation, executed first (autocommit).
    pub schemas: Vec<String>,
    /// One CTAS per model, root first then DAG order; each autocommitted.
    pub tables: Vec<String>,
    /// One view per model (root included), executed in one transaction.
    pub views: Vec<String>,
}

/// Floor statements for an `n`-model project. Model `i` is
/// `SELECT id, v + i AS v FROM <parent>` exactly as generated, with the parent
/// model replaced by its physical table, as efmesh renders it.
pub fn floor_sql(n: usize) -> FloorSql {
    let schemas = [FLOOR_SCHEMA, DEV_SRC_SCHEMA, DEV_BENCH_SCHEMA]
        .iter()
        .map(|s| format!("CREATE SCHEMA IF NOT EXISTS {s}"))
        .collect();
    let mut tables = Vec::with_capacity(n + 1);
    tables.push(format!(
        "CREATE TABLE {} AS SELECT range AS id, CAST(range AS DOUBLE) AS v FROM range(1000)",
        root_table()
    ));
    tables.extend((0..n).map(|i| {
        format!(
            "CREATE TABLE {} AS SELECT id, v + {i} AS v FROM {}",
            model_table(i),
            parent_table(i)
        )
    }));
    let mut views = Vec::with_capacity(n + 1);
    views.push(format!(
        "CREATE VIEW {DEV_SRC_SCHEMA}.events AS SELECT * FROM {}",
        root_table()
    ));
    views.extend((0..n).map(|i| {
        format!(
            "CREATE VIEW {DEV_BENCH_SCHEMA}.m_{i:05} AS SELECT * FROM {}",
            model_table(i)
        )
    }));
    debug_assert_eq!(generate::model_name(0), "bench.m_00000");
    FloorSql {
        schemas,
        tables,
        views,
    }
}

/// Where the floor builds: a fresh DuckDB file or an in-memory database.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// A DuckDB file at this path; must not exist yet.
    File(&'a Path),
    /// `:memory:`.
    Memory,
}

/// Build the floor once and return the wall time from opening the database to
/// closing it (the close is included: for a file it flushes the WAL, which an
/// efmesh process also pays before it exits).
pub fn run(n: usize, target: Target<'_>) -> Result<Duration> {
    let sql = floor_sql(n);
    let start = Instant::now();
    let mut conn = match target {
        Target::File(path) => {
            duckdb::Connection::open(path).with_context(|| format!("opening {}", path.display()))?
        }
        Target::Memory => duckdb::Connection::open_in_memory().context("opening :memory:")?,
    };
    for stmt in sql.schemas.iter().chain(&sql.tables) {
        conn.execute_batch(stmt)
            .with_context(|| format!("floor: {stmt}"))?;
    }
    let tx = conn.transaction().context("floor: BEGIN")?;
    for stmt in &sql.views {
        tx.execute_batch(stmt)
            .with_context(|| format!("floor: {stmt}"))?;
    }
    tx.commit().context("floor: COMMIT")?;
    // cheap sanity check (well under a millisecond): the deepest model is
    // readable through its view, so the floor really built everything
    if n > 0 {
        let rows: i64 = conn
            .query_row(
                &format!("SELECT count(*) FROM {DEV_BENCH_SCHEMA}.m_{:05}", n - 1),
                [],
                |r| r.get(0),
            )
            .context("floor: reading back the last view")?;
        anyhow::ensure!(
            rows == 1000,
            "floor: last view has {rows} rows, expected 1000"
        );
    }
    conn.close().map_err(|(_, e)| e).context("floor: closing")?;
    Ok(start.elapsed())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql_shape_and_order() {
        let sql = floor_sql(7);
        assert_eq!(sql.tables.len(), 8);
        assert_eq!(sql.views.len(), 8);
        assert_eq!(
            sql.tables[0],
            "CREATE TABLE _floor.src__events AS SELECT range AS id, CAST(range AS DOUBLE) AS v FROM range(1000)"
        );
        assert_eq!(
            sql.tables[1],
            "CREATE TABLE _floor.m_00000 AS SELECT id, v + 0 AS v FROM _floor.src__events"
        );
        assert_eq!(
            sql.tables[2],
            "CREATE TABLE _floor.m_00001 AS SELECT id, v + 1 AS v FROM _floor.m_00000"
        );
        assert_eq!(
            sql.tables[6],
            "CREATE TABLE _floor.m_00005 AS SELECT id, v + 5 AS v FROM _floor.src__events"
        );
        assert_eq!(
            sql.views[0],
            "CREATE VIEW dev__src.events AS SELECT * FROM _floor.src__events"
        );
        assert_eq!(
            sql.views[7],
            "CREATE VIEW dev__bench.m_00006 AS SELECT * FROM _floor.m_00006"
        );
        assert!(sql.schemas.iter().any(|s| s.ends_with(" _floor")));
        // every parent is created before its child
        for (i, stmt) in sql.tables.iter().enumerate().skip(1) {
            let parent = stmt.rsplit(" FROM ").next().unwrap();
            let created = sql.tables[..i]
                .iter()
                .any(|t| t.starts_with(&format!("CREATE TABLE {parent} ")));
            assert!(created, "{stmt}: parent not created earlier");
        }
    }

    #[test]
    fn parent_tables_follow_generator() {
        for i in 0..12 {
            let expected = generate::parent_of(i)
                .replace("src.events", "_floor.src__events")
                .replace("bench.", "_floor.");
            assert_eq!(parent_table(i), expected);
        }
    }

    #[test]
    fn runs_in_memory_and_in_a_file() {
        run(12, Target::Memory).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("floor.duckdb");
        run(12, Target::File(&path)).unwrap();
        let conn = duckdb::Connection::open(&path).unwrap();
        let (n, sum): (i64, f64) = conn
            .query_row("SELECT count(*), sum(v) FROM dev__bench.m_00011", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        // chain 10..11 off the root: v + 10 + 11
        assert_eq!((n, sum), (1000, 499_500.0 + 21_000.0));
    }
}
