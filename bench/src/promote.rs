//! Promotion against DuckDB's own cost.
//!
//! An environment is views over shared physics, so promoting a build is a view swap and
//! nothing else. Two floors say how close efmesh comes to that: the same `CREATE OR REPLACE
//! VIEW` statements run by raw DuckDB in one transaction on a copy of the same file (open,
//! DDL, commit, close with its checkpoint), and, for a promotion of one changed model, merely
//! opening and closing the file, which every promotion must pay.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context, Result};

/// The leaf model the one-model promotion changes: the last of the first chain, so no other
/// model depends on it and exactly one view moves.
pub const CHANGED_MODEL: usize = crate::generate::CHAIN_LEN - 1;

/// What the changed model adds to `v`, so its prod view proves the promotion happened.
pub const CHANGE_OFFSET: i64 = 1_000_000;

/// The file text of [`CHANGED_MODEL`] after the change.
pub fn changed_model_sql() -> String {
    let i = CHANGED_MODEL;
    let sql = crate::generate::model_sql(i);
    let before = format!("v + {i} AS v");
    debug_assert!(sql.contains(&before));
    sql.replace(&before, &format!("v + {i} + {CHANGE_OFFSET} AS v"))
}

/// `max(v)` of the changed model's prod view once the change is promoted: the root's largest
/// `v` (999) plus the chain's offsets 0..=CHANGED_MODEL plus the change.
pub fn changed_max_v() -> f64 {
    let chain: usize = (0..=CHANGED_MODEL).sum();
    (999 + chain as i64 + CHANGE_OFFSET) as f64
}

/// The statements that promote every view of `dev` in `db` to prod, as efmesh's promotion
/// writes them: a schema per prod schema, then `CREATE OR REPLACE VIEW` over the same physics.
pub fn swap_sql(db: &Path) -> Result<Vec<String>> {
    let conn = read_only(db)?;
    let mut stmt = conn.prepare(
        "SELECT schema_name, view_name, sql FROM duckdb_views() \
         WHERE NOT internal AND schema_name LIKE 'dev\\_\\_%' ESCAPE '\\' ORDER BY 1, 2",
    )?;
    let views: Vec<(String, String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<std::result::Result<_, _>>()?;
    ensure!(!views.is_empty(), "{} has no dev views", db.display());
    let mut schemas = std::collections::BTreeSet::new();
    let mut out = vec![];
    let mut swaps = vec![];
    for (schema, view, sql) in views {
        let prod = schema.trim_start_matches("dev__").to_string();
        let body = sql
            .split_once(" AS ")
            .map(|(_, b)| b.trim_end().trim_end_matches(';'))
            .with_context(|| format!("view {schema}.{view}: no body in `{sql}`"))?;
        if schemas.insert(prod.clone()) {
            out.push(format!("CREATE SCHEMA IF NOT EXISTS {prod}"));
        }
        swaps.push(format!("CREATE OR REPLACE VIEW {prod}.{view} AS {body}"));
    }
    out.extend(swaps);
    Ok(out)
}

/// Of the statements [`swap_sql`] returns, those that promote the changed model alone: its
/// schema, then its view.
pub fn one_view(all: &[String]) -> Vec<String> {
    let name = crate::generate::model_name(CHANGED_MODEL);
    let (schema, table) = name.split_once('.').unwrap_or(("", &name));
    let view = format!("VIEW {schema}.{table} AS ");
    all.iter()
        .filter(|s| *s == &format!("CREATE SCHEMA IF NOT EXISTS {schema}") || s.contains(&view))
        .cloned()
        .collect()
}

fn read_only(db: &Path) -> Result<duckdb::Connection> {
    let config = duckdb::Config::default().access_mode(duckdb::AccessMode::ReadOnly)?;
    duckdb::Connection::open_with_flags(db, config)
        .with_context(|| format!("opening {} read-only", db.display()))
}

/// Raw DuckDB promoting with `statements` on the file `db`: open, one transaction, close (the
/// close checkpoints). The time covers all of it.
pub fn floor_swap(db: &Path, statements: &[String]) -> Result<Duration> {
    let start = Instant::now();
    let mut conn =
        duckdb::Connection::open(db).with_context(|| format!("opening {}", db.display()))?;
    let tx = conn.transaction()?;
    for s in statements {
        tx.execute_batch(s)
            .with_context(|| format!("promotion floor: {s}"))?;
    }
    tx.commit()?;
    conn.close().map_err(|(_, e)| e)?;
    Ok(start.elapsed())
}

/// Raw DuckDB opening and closing the file `db`: the least any promotion pays.
pub fn floor_open(db: &Path) -> Result<Duration> {
    let start = Instant::now();
    let conn = duckdb::Connection::open(db).with_context(|| format!("opening {}", db.display()))?;
    conn.close().map_err(|(_, e)| e)?;
    Ok(start.elapsed())
}

/// `max(v)` of `schema.m_<CHANGED_MODEL>` in `db`.
pub fn max_v(db: &Path, schema: &str) -> Result<f64> {
    let conn = read_only(db)?;
    let name = crate::generate::model_name(CHANGED_MODEL);
    let table = name.rsplit('.').next().unwrap_or(&name);
    Ok(
        conn.query_row(&format!("SELECT max(v) FROM {schema}.{table}"), [], |r| {
            r.get(0)
        })?,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_change_touches_one_leaf_and_is_visible() {
        let sql = changed_model_sql();
        assert!(sql.contains("v + 4 + 1000000 AS v"), "{sql}");
        // no generated model reads the changed one
        assert_ne!(
            crate::generate::parent_of(CHANGED_MODEL + 1),
            crate::generate::model_name(CHANGED_MODEL)
        );
        assert_eq!(changed_max_v(), 1_001_009.0);
    }

    #[test]
    fn swap_sql_promotes_every_dev_view_and_the_floors_run() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("e.duckdb");
        {
            let c = duckdb::Connection::open(&db).unwrap();
            c.execute_batch(
                "CREATE SCHEMA _p; CREATE TABLE _p.t AS SELECT 1.0::DOUBLE AS v; CREATE SCHEMA dev__bench; \
                 CREATE VIEW dev__bench.m_00004 AS SELECT * FROM _p.t; CREATE SCHEMA dev__src; \
                 CREATE VIEW dev__src.events AS SELECT * FROM _p.t; CREATE SCHEMA other; \
                 CREATE VIEW other.x AS SELECT 2 AS v",
            )
            .unwrap();
        }
        let sql = swap_sql(&db).unwrap();
        assert_eq!(
            sql,
            [
                "CREATE SCHEMA IF NOT EXISTS bench",
                "CREATE SCHEMA IF NOT EXISTS src",
                "CREATE OR REPLACE VIEW bench.m_00004 AS SELECT * FROM _p.t",
                "CREATE OR REPLACE VIEW src.events AS SELECT * FROM _p.t",
            ]
        );
        assert_eq!(
            one_view(&sql),
            [
                "CREATE SCHEMA IF NOT EXISTS bench",
                "CREATE OR REPLACE VIEW bench.m_00004 AS SELECT * FROM _p.t",
            ]
        );
        floor_swap(&db, &sql).unwrap();
        floor_open(&db).unwrap();
        assert_eq!(max_v(&db, "bench").unwrap(), 1.0);
    }
}
