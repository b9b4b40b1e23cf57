//! The SQLite state store: one file next to `efmesh.toml`, WAL mode, every write a transaction.
//!
//! One file per role (`snapshots.rs`, `physics.rs`, `ledger.rs`, `locks.rs`, `journal.rs`),
//! the schema and its migrations in `schema.rs`.

mod journal;
mod ledger;
mod locks;
mod physics;
mod schema;
mod snapshots;

use super::{LockInfo, MigrateReport, StateBackend, StateError, StateStore, STATE_VERSION};
use chrono::{DateTime, Utc};
use efmesh_core::interval::{Ledger, Range};
use efmesh_core::plan::Pointer;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use schema::run_migrations;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A state store in a SQLite file.
pub struct SqliteState {
    conn: Connection,
    location: String,
    path: PathBuf,
}

fn ts(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// Interval edges are stored as ISO text, which sorts like time.
fn edge(t: chrono::NaiveDateTime) -> String {
    t.format("%Y-%m-%dT%H:%M:%S").to_string()
}

fn parse_edge(s: &str) -> Option<chrono::NaiveDateTime> {
    chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S").ok()
}

fn parse_ts(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

impl SqliteState {
    fn err(&self, e: rusqlite::Error) -> StateError {
        store_err(&self.location)(e)
    }

    fn connect(path: &Path) -> Result<(Connection, String), StateError> {
        let location = path.display().to_string();
        let e = store_err(&location);
        let conn = Connection::open(path).map_err(e)?;
        conn.busy_timeout(Duration::from_secs(10)).map_err(e)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(|err| match err {
                rusqlite::Error::SqliteFailure(f, _)
                    if f.code == rusqlite::ErrorCode::NotADatabase =>
                {
                    StateError::Corrupt {
                        location: location.clone(),
                        message: "the file is not a SQLite database".into(),
                    }
                }
                other => e(other),
            })?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(e)?;
        Ok((conn, location))
    }

    /// The schema version stored in the file (`None` for a brand-new, empty file).
    fn version(conn: &Connection, location: &str) -> Result<Option<u32>, StateError> {
        let has_meta: bool = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n > 0)
            .map_err(store_err(location))?;
        if !has_meta {
            let tables: i64 = conn
                .query_row(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
                    [],
                    |r| r.get(0),
                )
                .map_err(store_err(location))?;
            if tables > 0 {
                return Err(StateError::Corrupt {
                    location: location.into(),
                    message: "it has tables but no efmesh `meta` table".into(),
                });
            }
            return Ok(None);
        }
        let v: Option<String> = conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'state_version'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(store_err(location))?;
        match v.and_then(|v| v.parse().ok()) {
            Some(v) => Ok(Some(v)),
            None => Err(StateError::Corrupt {
                location: location.into(),
                message: "`meta.state_version` is missing or not a number".into(),
            }),
        }
    }

    /// Open (or create) the store at `path`. A new store bootstraps itself at the current
    /// version; an older one refuses until `efmesh migrate`; a newer one is refused.
    pub fn open(path: &Path) -> Result<SqliteState, StateError> {
        let (mut conn, location) = Self::connect(path)?;
        match Self::version(&conn, &location)? {
            None => {
                let e = store_err(&location);
                let tx = conn
                    .transaction_with_behavior(TransactionBehavior::Immediate)
                    .map_err(e)?;
                // another process may have bootstrapped it meanwhile
                if Self::version(&tx, &location)?.is_none() {
                    tx.execute_batch("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO meta (key, value) VALUES ('state_version', '0');")
                        .map_err(e)?;
                    run_migrations(&tx, 0).map_err(e)?;
                }
                tx.commit().map_err(e)?;
            }
            Some(v) if v == STATE_VERSION => {}
            Some(v) if v < STATE_VERSION => {
                return Err(StateError::NeedsMigration { location, found: v })
            }
            Some(v) => return Err(StateError::TooNew { location, found: v }),
        }
        Ok(SqliteState {
            conn,
            location,
            path: path.to_path_buf(),
        })
    }

    /// Upgrade the store at `path` to [`STATE_VERSION`], copying the file to a timestamped
    /// backup first.
    pub fn migrate(path: &Path) -> Result<MigrateReport, StateError> {
        let (mut conn, location) = Self::connect(path)?;
        let from = match Self::version(&conn, &location)? {
            None => {
                drop(conn);
                Self::open(path)?;
                return Ok(MigrateReport {
                    from: STATE_VERSION,
                    to: STATE_VERSION,
                    backup: None,
                });
            }
            Some(v) if v > STATE_VERSION => return Err(StateError::TooNew { location, found: v }),
            Some(v) if v == STATE_VERSION => {
                return Ok(MigrateReport {
                    from: v,
                    to: v,
                    backup: None,
                })
            }
            Some(v) => v,
        };
        let e = store_err(&location);
        let backup: PathBuf = path.with_extension(format!(
            "v{from}.{}.bak",
            Utc::now().format("%Y%m%dT%H%M%S")
        ));
        // VACUUM INTO writes a consistent copy even in WAL mode
        conn.execute("VACUUM INTO ?1", params![backup.display().to_string()])
            .map_err(e)?;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e)?;
        run_migrations(&tx, from).map_err(e)?;
        tx.commit().map_err(e)?;
        Ok(MigrateReport {
            from,
            to: STATE_VERSION,
            backup: Some(backup.display().to_string()),
        })
    }

    /// Run `f` in one write transaction (`BEGIN IMMEDIATE`, so writers queue instead of
    /// deadlocking), committed when it returns `Ok`, rolled back otherwise: every write of the
    /// store goes through here. `e` maps a SQLite error to one that names the store.
    fn write<T>(
        &mut self,
        f: impl FnOnce(
            &rusqlite::Transaction<'_>,
            &dyn Fn(rusqlite::Error) -> StateError,
        ) -> Result<T, StateError>,
    ) -> Result<T, StateError> {
        let location = self.location.clone();
        let e = store_err(&location);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e)?;
        let out = f(&tx, &e)?;
        tx.commit().map_err(e)?;
        Ok(out)
    }
}

/// Map a SQLite error to a [`StateError`] naming the store.
fn read_lock(conn: &Connection, env: &str) -> rusqlite::Result<Option<LockInfo>> {
    conn.query_row(
        "SELECT holder, lease, acquired_at, expires_at FROM locks WHERE env = ?1",
        params![env],
        |r| {
            let (holder, lease, acquired, expires) = <(String, i64, String, String)>::try_from(r)?;
            Ok(LockInfo {
                env: env.into(),
                holder,
                lease,
                // an unreadable instant reads as long past, so a damaged lock can be retaken
                acquired_at: parse_ts(&acquired).unwrap_or_default(),
                expires_at: parse_ts(&expires).unwrap_or_default(),
            })
        },
    )
    .optional()
}

fn store_err(location: &str) -> impl Fn(rusqlite::Error) -> StateError + Copy + '_ {
    move |e| StateError::Store {
        location: location.to_string(),
        message: e.to_string(),
    }
}

/// An environment's pointers, with each served version's physical fingerprint joined in.
fn read_environment(conn: &Connection, env: &str) -> rusqlite::Result<BTreeMap<String, Pointer>> {
    let mut stmt = conn.prepare_cached(
        "SELECT e.model, e.fingerprint, e.metadata_hash, COALESCE(s.physical_fingerprint, e.fingerprint)
         FROM environments e LEFT JOIN snapshots s ON s.fingerprint = e.fingerprint WHERE e.env = ?1",
    )?;
    let rows = stmt.query_map(params![env], |r| {
        Ok((
            r.get::<_, String>(0)?,
            Pointer {
                fingerprint: r.get(1)?,
                metadata_hash: r.get(2)?,
                physical_fingerprint: r.get(3)?,
            },
        ))
    })?;
    rows.collect()
}

/// The done ranges of one physics, read inside a transaction.
fn read_ledger(conn: &Connection, pfp: &str) -> rusqlite::Result<Ledger> {
    let mut stmt = conn.prepare_cached("SELECT start_at, end_at FROM intervals WHERE physical_fingerprint = ?1 AND status = 'done'")?;
    let rows = stmt.query_map(params![pfp], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
    })?;
    let mut ledger = Ledger::default();
    for row in rows {
        let (s, t) = row?;
        if let (Some(s), Some(t)) = (parse_edge(&s), parse_edge(&t)) {
            ledger.insert(Range::new(s, t));
        }
    }
    Ok(ledger)
}

/// Replace the done rows of one physics with `ledger`'s merged ranges.
fn write_ledger(conn: &Connection, pfp: &str, ledger: &Ledger, now: &str) -> rusqlite::Result<()> {
    // cached: a backfill writes the ledger once per interval
    conn.prepare_cached(
        "DELETE FROM intervals WHERE physical_fingerprint = ?1 AND status = 'done'",
    )?
    .execute(params![pfp])?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO intervals (physical_fingerprint, status, start_at, end_at, updated_at) VALUES (?1, 'done', ?2, ?3, ?4)",
    )?;
    for r in ledger.ranges() {
        insert.execute(params![pfp, edge(r.start), edge(r.end), now])?;
    }
    Ok(())
}

const REFERENCED: &str = "SELECT s.physical_fingerprint FROM environments e JOIN snapshots s ON s.fingerprint = e.fingerprint";

impl StateStore for SqliteState {
    fn reopen(&self) -> Result<Box<dyn StateStore + Send>, StateError> {
        Ok(Box::new(SqliteState::open(&self.path)?))
    }
}

/// The SQLite store at a path, as the composition root configures it.
#[derive(Debug, Clone)]
pub struct SqliteBackend {
    /// The state file.
    pub path: PathBuf,
}

impl StateBackend for SqliteBackend {
    fn location(&self) -> String {
        self.path.display().to_string()
    }
    fn open(&self) -> Result<Box<dyn StateStore + Send>, StateError> {
        Ok(Box::new(SqliteState::open(&self.path)?))
    }
    fn migrate(&self) -> Result<MigrateReport, StateError> {
        SqliteState::migrate(&self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{LedgerStore, LockStore, RunJournal, SnapshotStore};

    #[test]
    fn versions_are_checked_and_migrate_backs_up() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO meta VALUES ('state_version', '0');").unwrap();
        }
        assert!(matches!(
            SqliteState::open(&path),
            Err(StateError::NeedsMigration { found: 0, .. })
        ));
        let r = SqliteState::migrate(&path).unwrap();
        assert_eq!((r.from, r.to), (0, STATE_VERSION));
        assert!(Path::new(r.backup.as_ref().unwrap()).is_file());
        SqliteState::open(&path)
            .unwrap()
            .environment("dev")
            .unwrap();
        {
            let c = Connection::open(&path).unwrap();
            c.execute(
                "UPDATE meta SET value = '99' WHERE key = 'state_version'",
                [],
            )
            .unwrap();
        }
        assert!(matches!(
            SqliteState::open(&path),
            Err(StateError::TooNew { found: 99, .. })
        ));
        std::fs::write(
            dir.path().join("garbage.sqlite"),
            b"this is not a database, just bytes that go on for a while..........",
        )
        .unwrap();
        assert!(matches!(
            SqliteState::open(&dir.path().join("garbage.sqlite")),
            Err(StateError::Corrupt { .. })
        ));
    }

    #[test]
    fn the_ledger_keeps_merged_ranges_per_physics() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = SqliteState::open(&dir.path().join("state.sqlite")).unwrap();
        let t = |x: &str| efmesh_core::time::parse_instant(x).unwrap();
        s.mark_done("p1", Range::new(t("2026-01-01"), t("2026-01-08")))
            .unwrap();
        s.mark_failed("p1", Range::new(t("2026-01-08"), t("2026-01-15")))
            .unwrap();
        s.mark_done("p1", Range::new(t("2026-01-08"), t("2026-01-15")))
            .unwrap();
        s.mark_done("p2", Range::new(t("2026-02-01"), t("2026-02-02")))
            .unwrap();
        let l = s.ledgers(&["p1".into(), "p2".into(), "p3".into()]).unwrap();
        assert_eq!(
            l["p1"].ranges(),
            &[Range::new(t("2026-01-01"), t("2026-01-15"))],
            "one row for contiguous history"
        );
        assert_eq!(l["p2"].ranges().len(), 1);
        assert!(!l.contains_key("p3"));
        let failed: i64 = s
            .conn
            .query_row(
                "SELECT count(*) FROM intervals WHERE status = 'failed'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(failed, 0, "a recomputed interval is no longer failed");
    }

    #[test]
    fn a_version_1_store_migrates_to_the_ledger_layout() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        SqliteState::open(&path).unwrap();
        {
            // what efmesh wrote before the ledger existed
            let c = Connection::open(&path).unwrap();
            c.execute_batch(
                "DROP TABLE intervals; DROP TABLE locks; DROP TABLE runs; UPDATE meta SET value = '1' WHERE key = 'state_version';",
            )
            .unwrap();
        }
        assert!(matches!(
            SqliteState::open(&path),
            Err(StateError::NeedsMigration { found: 1, .. })
        ));
        let r = SqliteState::migrate(&path).unwrap();
        assert_eq!((r.from, r.to), (1, 3));
        let mut s = SqliteState::open(&path).unwrap();
        assert!(s.ledgers(&["x".into()]).unwrap().is_empty());
        // and the version 3 tables: the lock and the runs journal
        assert_eq!(s.lock_info("prod").unwrap(), None);
        assert!(s.runs("prod", 5).unwrap().is_empty());
    }
}
