//! The SQLite state store: one file next to `efmesh.toml`, WAL mode, every write a transaction.

use super::{
    JournalEntry, LockAttempt, LockInfo, MigrateReport, Outcome, Physics, RunRecord, StateError,
    StateStore, STATE_VERSION,
};
use chrono::{DateTime, Utc};
use efmesh_core::interval::{Ledger, Range};
use efmesh_core::plan::{NewSnapshot, Pointer, StoredSnapshot};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Schema migrations: entry `i` upgrades a store from version `i` to `i + 1`.
/// Version 0 is a store that holds only its `meta` table.
const MIGRATIONS: &[&str] = &[
    // 0 -> 1: the first layout
    "CREATE TABLE snapshots (
        fingerprint TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        physical_fingerprint TEXT NOT NULL,
        definition_hash TEXT NOT NULL,
        metadata_hash TEXT NOT NULL,
        fingerprint_version INTEGER NOT NULL,
        payload TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE physics (
        physical_fingerprint TEXT PRIMARY KEY,
        model TEXT NOT NULL,
        kind TEXT NOT NULL,
        built_at TEXT,
        orphaned_at TEXT,
        claimed_by TEXT,
        claimed_at TEXT
    );
    CREATE TABLE environments (
        env TEXT NOT NULL,
        model TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        metadata_hash TEXT NOT NULL,
        promoted_at TEXT NOT NULL,
        PRIMARY KEY (env, model)
    );
    CREATE TABLE plans (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        env TEXT NOT NULL,
        summary TEXT NOT NULL,
        applied_at TEXT NOT NULL,
        applied_by TEXT NOT NULL
    );
    CREATE INDEX environments_fingerprint ON environments (fingerprint);",
    // 1 -> 2: the interval ledger, keyed by where the data lives
    "CREATE TABLE intervals (
        physical_fingerprint TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('done', 'failed')),
        start_at TEXT NOT NULL,
        end_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (physical_fingerprint, status, start_at)
    );",
    // 2 -> 3: one lock per environment (a lease with a fencing token), and the runs journal
    "CREATE TABLE locks (
        env TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        lease INTEGER NOT NULL,
        acquired_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
    );
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        env TEXT NOT NULL,
        command TEXT NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT NOT NULL,
        outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'awaiting-human', 'lock-held', 'error')),
        detail TEXT NOT NULL
    );
    CREATE INDEX runs_env ON runs (env, id);",
];

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

    fn immediate(&mut self) -> Result<rusqlite::Transaction<'_>, StateError> {
        self.conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(store_err(&self.location))
    }
}

/// Apply the migrations from version `from` up to [`STATE_VERSION`] inside `tx`: the one path
/// both a new store's bootstrap and `efmesh migrate` take.
fn run_migrations(tx: &rusqlite::Transaction<'_>, from: u32) -> rusqlite::Result<()> {
    for m in &MIGRATIONS[from as usize..STATE_VERSION as usize] {
        tx.execute_batch(m)?;
    }
    tx.execute(
        "UPDATE meta SET value = ?1 WHERE key = 'state_version'",
        params![STATE_VERSION.to_string()],
    )?;
    Ok(())
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

/// `(fingerprint, name, physical_fingerprint, definition_hash, fingerprint_version, payload)`.
type SnapshotRow = (String, String, String, String, u32, String);

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
    conn.execute(
        "DELETE FROM intervals WHERE physical_fingerprint = ?1 AND status = 'done'",
        params![pfp],
    )?;
    for r in ledger.ranges() {
        conn.execute(
            "INSERT INTO intervals (physical_fingerprint, status, start_at, end_at, updated_at) VALUES (?1, 'done', ?2, ?3, ?4)",
            params![pfp, edge(r.start), edge(r.end), now],
        )?;
    }
    Ok(())
}

const REFERENCED: &str = "SELECT s.physical_fingerprint FROM environments e JOIN snapshots s ON s.fingerprint = e.fingerprint";

impl StateStore for SqliteState {
    fn reopen(&self) -> Result<Box<dyn StateStore + Send>, StateError> {
        Ok(Box::new(SqliteState::open(&self.path)?))
    }

    fn environment(&mut self, env: &str) -> Result<BTreeMap<String, Pointer>, StateError> {
        read_environment(&self.conn, env).map_err(|e| self.err(e))
    }

    fn snapshots(
        &mut self,
        fingerprints: &[String],
    ) -> Result<HashMap<String, StoredSnapshot>, StateError> {
        if fingerprints.is_empty() {
            return Ok(HashMap::new());
        }
        let wanted = serde_json::to_string(fingerprints).expect("strings serialize");
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT fingerprint, name, physical_fingerprint, definition_hash, fingerprint_version, payload
                 FROM snapshots WHERE fingerprint IN (SELECT value FROM json_each(?1))",
            )
            .map_err(|e| self.err(e))?;
        let rows: Result<Vec<SnapshotRow>, _> = stmt
            .query_map(params![wanted], |r| SnapshotRow::try_from(r))
            .and_then(|rows| rows.collect());
        drop(stmt);
        let mut out = HashMap::new();
        for (
            fingerprint,
            name,
            physical_fingerprint,
            definition_hash,
            fingerprint_version,
            payload,
        ) in rows.map_err(|e| self.err(e))?
        {
            let payload = serde_json::from_str(&payload).map_err(|e| StateError::Corrupt {
                location: self.location.clone(),
                message: format!("payload of snapshot {fingerprint} is not JSON: {e}"),
            })?;
            out.insert(
                fingerprint.clone(),
                StoredSnapshot {
                    fingerprint,
                    name,
                    physical_fingerprint,
                    definition_hash,
                    fingerprint_version,
                    payload,
                },
            );
        }
        Ok(out)
    }

    fn built_physics(&mut self) -> Result<HashSet<String>, StateError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT physical_fingerprint FROM physics WHERE built_at IS NOT NULL AND claimed_by IS NULL")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .and_then(|rows| rows.collect());
        drop(stmt);
        rows.map_err(|e| self.err(e))
    }

    fn built_times(
        &mut self,
        physical_fingerprints: &[String],
    ) -> Result<HashMap<String, DateTime<Utc>>, StateError> {
        let mut out = HashMap::new();
        let mut stmt = self
            .conn
            .prepare_cached("SELECT built_at FROM physics WHERE physical_fingerprint = ?1 AND built_at IS NOT NULL")
            .map_err(|e| self.err(e))?;
        for pfp in physical_fingerprints {
            let at: Option<String> = stmt
                .query_row(params![pfp], |r| r.get(0))
                .optional()
                .map_err(|e| StateError::Store {
                    location: self.location.clone(),
                    message: e.to_string(),
                })?;
            if let Some(t) = at.as_deref().and_then(parse_ts) {
                out.insert(pfp.clone(), t);
            }
        }
        Ok(out)
    }

    fn record_snapshots(&mut self, snapshots: &[NewSnapshot]) -> Result<(), StateError> {
        let now = ts(Utc::now());
        let location = self.location.clone();
        let e = store_err(&location);
        let tx = self.immediate()?;
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO snapshots (fingerprint, name, kind, physical_fingerprint, definition_hash, metadata_hash, fingerprint_version, payload, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                )
                .map_err(e)?;
            for s in snapshots {
                stmt.execute(params![
                    s.fingerprint,
                    s.name,
                    s.kind,
                    s.physical_fingerprint,
                    s.definition_hash,
                    s.metadata_hash,
                    s.fingerprint_version,
                    s.payload.to_string(),
                    now
                ])
                .map_err(e)?;
            }
        }
        tx.commit().map_err(e)
    }

    fn pin_physics(&mut self, physical: &[(String, String)]) -> Result<(), StateError> {
        let location = self.location.clone();
        let e = store_err(&location);
        let tx = self.immediate()?;
        for (fp, model) in physical {
            let claimed: Option<Option<String>> = tx
                .query_row(
                    "SELECT claimed_by FROM physics WHERE physical_fingerprint = ?1",
                    params![fp],
                    |r| r.get(0),
                )
                .optional()
                .map_err(e)?;
            if let Some(Some(_)) = claimed {
                return Err(StateError::Claimed {
                    model: model.clone(),
                });
            }
            tx.execute(
                "UPDATE physics SET orphaned_at = NULL WHERE physical_fingerprint = ?1",
                params![fp],
            )
            .map_err(e)?;
        }
        tx.commit().map_err(e)
    }

    fn mark_built(
        &mut self,
        physical_fingerprint: &str,
        model: &str,
        kind: &str,
        at: DateTime<Utc>,
    ) -> Result<(), StateError> {
        let location = self.location.clone();
        let e = store_err(&location);
        let tx = self.immediate()?;
        tx.execute(
            "INSERT INTO physics (physical_fingerprint, model, kind, built_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (physical_fingerprint) DO UPDATE SET built_at = excluded.built_at, orphaned_at = NULL, claimed_by = NULL, claimed_at = NULL",
            params![physical_fingerprint, model, kind, ts(at)],
        )
        .map_err(e)?;
        tx.commit().map_err(e)
    }

    fn promote(
        &mut self,
        env: &str,
        pointers: &BTreeMap<String, Pointer>,
        journal: &JournalEntry,
    ) -> Result<(), StateError> {
        let now = ts(journal.applied_at);
        let location = self.location.clone();
        let e = store_err(&location);
        let tx = self.immediate()?;
        {
            let current = read_environment(&tx, env).map_err(e)?;
            let mut del = tx
                .prepare_cached("DELETE FROM environments WHERE env = ?1 AND model = ?2")
                .map_err(e)?;
            for model in current.keys().filter(|m| !pointers.contains_key(*m)) {
                del.execute(params![env, model]).map_err(e)?;
            }
            let mut up = tx
                .prepare_cached(
                    "INSERT INTO environments (env, model, fingerprint, metadata_hash, promoted_at) VALUES (?1, ?2, ?3, ?4, ?5)
                     ON CONFLICT (env, model) DO UPDATE SET fingerprint = excluded.fingerprint, metadata_hash = excluded.metadata_hash, promoted_at = excluded.promoted_at",
                )
                .map_err(e)?;
            for (model, p) in pointers.iter().filter(|(m, p)| {
                current.get(*m).map(|c| (&c.fingerprint, &c.metadata_hash))
                    != Some((&p.fingerprint, &p.metadata_hash))
            }) {
                up.execute(params![env, model, p.fingerprint, p.metadata_hash, now])
                    .map_err(e)?;
            }
        }
        tx.execute(&format!("UPDATE physics SET orphaned_at = NULL WHERE orphaned_at IS NOT NULL AND physical_fingerprint IN ({REFERENCED})"), [])
            .map_err(e)?;
        tx.execute(&format!("UPDATE physics SET orphaned_at = ?1 WHERE orphaned_at IS NULL AND physical_fingerprint NOT IN ({REFERENCED})"), params![now])
            .map_err(e)?;
        tx.execute(
            "INSERT INTO plans (env, summary, applied_at, applied_by) VALUES (?1, ?2, ?3, ?4)",
            params![env, journal.summary.to_string(), now, journal.applied_by],
        )
        .map_err(e)?;
        tx.commit().map_err(e)
    }

    fn orphans(&mut self, cutoff: DateTime<Utc>) -> Result<Vec<Physics>, StateError> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT physical_fingerprint, model, kind, orphaned_at FROM physics
                 WHERE orphaned_at IS NOT NULL AND orphaned_at <= ?1 AND claimed_by IS NULL AND physical_fingerprint NOT IN ({REFERENCED})
                 ORDER BY model, physical_fingerprint"
            ))
            .map_err(|e| self.err(e))?;
        let rows: Result<Vec<(String, String, String, String)>, _> = stmt
            .query_map(params![ts(cutoff)], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .and_then(|r| r.collect());
        drop(stmt);
        Ok(rows
            .map_err(|e| self.err(e))?
            .into_iter()
            .map(|(physical_fingerprint, model, kind, at)| Physics {
                physical_fingerprint,
                model,
                kind,
                orphaned_at: parse_ts(&at),
            })
            .collect())
    }

    fn claim(
        &mut self,
        physical_fingerprint: &str,
        claimer: &str,
        cutoff: DateTime<Utc>,
    ) -> Result<bool, StateError> {
        let location = self.location.clone();
        let e = store_err(&location);
        let tx = self.immediate()?;
        let n = tx
            .execute(
                &format!(
                    "UPDATE physics SET claimed_by = ?2, claimed_at = ?3
                     WHERE physical_fingerprint = ?1 AND claimed_by IS NULL AND orphaned_at IS NOT NULL AND orphaned_at <= ?4
                       AND physical_fingerprint NOT IN ({REFERENCED})"
                ),
                params![physical_fingerprint, claimer, ts(Utc::now()), ts(cutoff)],
            )
            .map_err(e)?;
        tx.commit().map_err(e)?;
        Ok(n == 1)
    }

    fn forget(&mut self, physical_fingerprint: &str, claimer: &str) -> Result<(), StateError> {
        let location = self.location.clone();
        let e = store_err(&location);
        let tx = self.immediate()?;
        tx.execute(
            "DELETE FROM physics WHERE physical_fingerprint = ?1 AND claimed_by = ?2",
            params![physical_fingerprint, claimer],
        )
        .map_err(e)?;
        tx.commit().map_err(e)
    }

    fn release(&mut self, physical_fingerprint: &str, claimer: &str) -> Result<(), StateError> {
        let location = self.location.clone();
        let e = store_err(&location);
        let tx = self.immediate()?;
        tx.execute("UPDATE physics SET claimed_by = NULL, claimed_at = NULL WHERE physical_fingerprint = ?1 AND claimed_by = ?2", params![physical_fingerprint, claimer])
            .map_err(e)?;
        tx.commit().map_err(e)
    }

    fn ledgers(
        &mut self,
        physical_fingerprints: &[String],
    ) -> Result<HashMap<String, Ledger>, StateError> {
        let wanted = serde_json::to_string(physical_fingerprints).expect("strings serialize");
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT physical_fingerprint, start_at, end_at FROM intervals
                 WHERE status = 'done' AND physical_fingerprint IN (SELECT value FROM json_each(?1))",
            )
            .map_err(|e| self.err(e))?;
        let rows: Result<Vec<(String, String, String)>, _> = stmt
            .query_map(params![wanted], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .and_then(|r| r.collect());
        drop(stmt);
        let mut out: HashMap<String, Ledger> = HashMap::new();
        for (pfp, s, e) in rows.map_err(|e| self.err(e))? {
            let (Some(s), Some(e)) = (parse_edge(&s), parse_edge(&e)) else {
                return Err(StateError::Corrupt {
                    location: self.location.clone(),
                    message: format!("interval edge `{s}`/`{e}` of {pfp} is not a timestamp"),
                });
            };
            out.entry(pfp).or_default().insert(Range::new(s, e));
        }
        Ok(out)
    }

    fn mark_done(&mut self, physical_fingerprint: &str, range: Range) -> Result<(), StateError> {
        let now = ts(Utc::now());
        let location = self.location.clone();
        let e = store_err(&location);
        let tx = self.immediate()?;
        let mut ledger = read_ledger(&tx, physical_fingerprint).map_err(e)?;
        ledger.insert(range);
        write_ledger(&tx, physical_fingerprint, &ledger, &now).map_err(e)?;
        tx.execute(
            "DELETE FROM intervals WHERE physical_fingerprint = ?1 AND status = 'failed' AND start_at >= ?2 AND end_at <= ?3",
            params![physical_fingerprint, edge(range.start), edge(range.end)],
        )
        .map_err(e)?;
        tx.commit().map_err(e)
    }

    fn clear_intervals(&mut self, ranges: &[(String, Range)]) -> Result<(), StateError> {
        let now = ts(Utc::now());
        let location = self.location.clone();
        let e = store_err(&location);
        let tx = self.immediate()?;
        for (pfp, range) in ranges {
            let mut ledger = read_ledger(&tx, pfp).map_err(e)?;
            ledger.remove(*range);
            write_ledger(&tx, pfp, &ledger, &now).map_err(e)?;
        }
        tx.commit().map_err(e)
    }

    fn failed_intervals(&mut self, physical_fingerprint: &str) -> Result<Vec<Range>, StateError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT start_at, end_at FROM intervals WHERE status = 'failed' AND physical_fingerprint = ?1 ORDER BY start_at",
            )
            .map_err(|e| self.err(e))?;
        let rows: Result<Vec<(String, String)>, _> = stmt
            .query_map(params![physical_fingerprint], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .and_then(|r| r.collect());
        drop(stmt);
        let mut out = vec![];
        for (s, e) in rows.map_err(|e| self.err(e))? {
            match (parse_edge(&s), parse_edge(&e)) {
                (Some(s), Some(e)) => out.push(Range::new(s, e)),
                _ => {
                    return Err(StateError::Corrupt {
                        location: self.location.clone(),
                        message: format!(
                        "failed interval `{s}`/`{e}` of {physical_fingerprint} is not a timestamp"
                    ),
                    })
                }
            }
        }
        Ok(out)
    }

    fn mark_failed(&mut self, physical_fingerprint: &str, range: Range) -> Result<(), StateError> {
        let location = self.location.clone();
        let e = store_err(&location);
        let tx = self.immediate()?;
        tx.execute(
            "INSERT INTO intervals (physical_fingerprint, status, start_at, end_at, updated_at) VALUES (?1, 'failed', ?2, ?3, ?4)
             ON CONFLICT (physical_fingerprint, status, start_at) DO UPDATE SET end_at = excluded.end_at, updated_at = excluded.updated_at",
            params![physical_fingerprint, edge(range.start), edge(range.end), ts(Utc::now())],
        )
        .map_err(e)?;
        tx.commit().map_err(e)
    }

    fn journal(&mut self, env: &str, limit: usize) -> Result<Vec<JournalEntry>, StateError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT env, summary, applied_by, applied_at FROM plans WHERE env = ?1 ORDER BY id DESC LIMIT ?2")
            .map_err(|e| self.err(e))?;
        let rows: Result<Vec<(String, String, String, String)>, _> = stmt
            .query_map(params![env, limit as i64], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .and_then(|r| r.collect());
        drop(stmt);
        Ok(rows
            .map_err(|e| self.err(e))?
            .into_iter()
            .map(|(env, summary, applied_by, at)| JournalEntry {
                env,
                summary: serde_json::from_str(&summary).unwrap_or(serde_json::Value::Null),
                applied_by,
                applied_at: parse_ts(&at).unwrap_or_default(),
            })
            .collect())
    }

    fn acquire_lock(
        &mut self,
        env: &str,
        holder: &str,
        now: DateTime<Utc>,
        ttl: chrono::Duration,
    ) -> Result<LockAttempt, StateError> {
        let location = self.location.clone();
        let e = store_err(&location);
        let tx = self.immediate()?;
        let current = read_lock(&tx, env).map_err(e)?;
        if let Some(held) = current.as_ref().filter(|l| l.expires_at > now) {
            return Ok(LockAttempt::Held(held.clone()));
        }
        let lease = current.map(|l| l.lease + 1).unwrap_or(1);
        tx.execute(
            "INSERT INTO locks (env, holder, lease, acquired_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (env) DO UPDATE SET holder = excluded.holder, lease = excluded.lease,
               acquired_at = excluded.acquired_at, expires_at = excluded.expires_at",
            params![env, holder, lease, ts(now), ts(now + ttl)],
        )
        .map_err(e)?;
        tx.commit().map_err(e)?;
        Ok(LockAttempt::Acquired(LockInfo {
            env: env.into(),
            holder: holder.into(),
            lease,
            acquired_at: now,
            expires_at: now + ttl,
        }))
    }

    fn renew_lock(
        &mut self,
        env: &str,
        holder: &str,
        lease: i64,
        now: DateTime<Utc>,
        ttl: chrono::Duration,
    ) -> Result<bool, StateError> {
        let location = self.location.clone();
        let e = store_err(&location);
        let tx = self.immediate()?;
        // fenced: only our own lease is extended, and never after it lapsed
        let n = tx
            .execute(
                "UPDATE locks SET expires_at = ?4 WHERE env = ?1 AND holder = ?2 AND lease = ?3 AND expires_at > ?5",
                params![env, holder, lease, ts(now + ttl), ts(now)],
            )
            .map_err(e)?;
        tx.commit().map_err(e)?;
        Ok(n == 1)
    }

    fn release_lock(&mut self, env: &str, holder: &str, lease: i64) -> Result<(), StateError> {
        let location = self.location.clone();
        let e = store_err(&location);
        let tx = self.immediate()?;
        tx.execute(
            "DELETE FROM locks WHERE env = ?1 AND holder = ?2 AND lease = ?3",
            params![env, holder, lease],
        )
        .map_err(e)?;
        tx.commit().map_err(e)
    }

    fn lock_info(&mut self, env: &str) -> Result<Option<LockInfo>, StateError> {
        read_lock(&self.conn, env).map_err(|e| self.err(e))
    }

    fn record_run(&mut self, run: &RunRecord) -> Result<(), StateError> {
        let location = self.location.clone();
        let e = store_err(&location);
        let tx = self.immediate()?;
        tx.execute(
            "INSERT INTO runs (env, command, started_at, finished_at, outcome, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                run.env,
                run.command,
                ts(run.started_at),
                ts(run.finished_at),
                run.outcome.label(),
                run.detail.to_string()
            ],
        )
        .map_err(e)?;
        tx.commit().map_err(e)
    }

    fn runs(&mut self, env: &str, limit: usize) -> Result<Vec<RunRecord>, StateError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT env, command, started_at, finished_at, outcome, detail FROM runs WHERE env = ?1 ORDER BY id DESC LIMIT ?2")
            .map_err(|e| self.err(e))?;
        type Row = (String, String, String, String, String, String);
        let rows: Result<Vec<Row>, _> = stmt
            .query_map(params![env, limit as i64], |r| Row::try_from(r))
            .and_then(|r| r.collect());
        drop(stmt);
        let location = self.location.clone();
        rows.map_err(|e| self.err(e))?
            .into_iter()
            .map(|(env, command, started, finished, outcome, detail)| {
                let corrupt = |what: &str| StateError::Corrupt {
                    location: location.clone(),
                    message: format!("runs journal: {what}"),
                };
                Ok(RunRecord {
                    env,
                    command,
                    started_at: parse_ts(&started).ok_or_else(|| corrupt("bad started_at"))?,
                    finished_at: parse_ts(&finished).ok_or_else(|| corrupt("bad finished_at"))?,
                    outcome: Outcome::parse(&outcome).ok_or_else(|| corrupt("unknown outcome"))?,
                    detail: serde_json::from_str(&detail)
                        .map_err(|_| corrupt("detail is not JSON"))?,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(fp: &str, model: &str) -> NewSnapshot {
        NewSnapshot {
            fingerprint: fp.into(),
            name: model.into(),
            kind: "FULL".into(),
            physical_fingerprint: fp.into(),
            definition_hash: "d".into(),
            metadata_hash: "m".into(),
            payload: serde_json::json!({"query": "SELECT 1"}),
            fingerprint_version: 1,
        }
    }

    fn journal(env: &str) -> JournalEntry {
        JournalEntry {
            env: env.into(),
            summary: serde_json::json!({}),
            applied_by: "t".into(),
            applied_at: Utc::now(),
        }
    }

    fn pointers(fp: &str) -> BTreeMap<String, Pointer> {
        BTreeMap::from([(
            "s.a".to_string(),
            Pointer {
                fingerprint: fp.into(),
                metadata_hash: "m".into(),
                physical_fingerprint: fp.into(),
            },
        )])
    }

    #[test]
    fn bootstraps_and_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let mut s = SqliteState::open(&path).unwrap();
        s.record_snapshots(&[snap("f1", "s.a")]).unwrap();
        s.mark_built("f1", "s.a", "FULL", Utc::now()).unwrap();
        s.promote("dev", &pointers("f1"), &journal("dev")).unwrap();
        drop(s);
        let mut s = SqliteState::open(&path).unwrap();
        assert_eq!(s.environment("dev").unwrap()["s.a"].fingerprint, "f1");
        assert!(s.environment("prod").unwrap().is_empty());
        assert_eq!(s.snapshots(&["f1".into(), "nope".into()]).unwrap().len(), 1);
        assert!(s.built_physics().unwrap().contains("f1"));
        assert_eq!(s.journal("dev", 5).unwrap().len(), 1);
    }

    #[test]
    fn orphaning_follows_references_and_claims_are_exclusive() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let mut s = SqliteState::open(&path).unwrap();
        s.record_snapshots(&[snap("f1", "s.a"), snap("f2", "s.a")])
            .unwrap();
        s.mark_built("f1", "s.a", "FULL", Utc::now()).unwrap();
        s.mark_built("f2", "s.a", "FULL", Utc::now()).unwrap();
        s.promote("dev", &pointers("f1"), &journal("dev")).unwrap();
        s.promote("dev", &pointers("f2"), &journal("dev")).unwrap();
        let later = Utc::now() + chrono::Duration::seconds(1);
        let orphans = s.orphans(later).unwrap();
        assert_eq!(
            orphans
                .iter()
                .map(|o| o.physical_fingerprint.as_str())
                .collect::<Vec<_>>(),
            vec!["f1"]
        );
        // not old enough for a cutoff in the past
        assert!(!s
            .claim("f1", "j1", Utc::now() - chrono::Duration::days(1))
            .unwrap());
        // two janitors: exactly one claim wins, even from separate connections
        let mut other = SqliteState::open(&path).unwrap();
        let a = s.claim("f1", "j1", later).unwrap();
        let b = other.claim("f1", "j2", later).unwrap();
        assert!(a ^ b, "exactly one claim succeeds");
        // an apply that re-references claimed physics is refused
        assert!(matches!(
            other.pin_physics(&[("f1".into(), "s.a".into())]),
            Err(StateError::Claimed { .. })
        ));
        s.forget("f1", "j1").unwrap();
        assert!(!s.built_physics().unwrap().contains("f1"));
        // re-referencing un-orphans: promote back to f2 in prod keeps f2 referenced
        assert!(!s.claim("f2", "j1", later).unwrap());
    }

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

    #[test]
    fn a_lapsed_lease_is_taken_over_and_the_old_holder_cannot_renew_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut st = SqliteState::open(&dir.path().join("s.sqlite")).unwrap();
        let t0 = Utc::now();
        let ttl = chrono::Duration::seconds(10);
        let LockAttempt::Acquired(a) = st.acquire_lock("prod", "a", t0, ttl).unwrap() else {
            panic!("free lock not acquired")
        };
        // live: refused, and the refusal names the holder
        match st
            .acquire_lock("prod", "b", t0 + chrono::Duration::seconds(5), ttl)
            .unwrap()
        {
            LockAttempt::Held(h) => assert_eq!((h.holder.as_str(), h.lease), ("a", a.lease)),
            other => panic!("{other:?}"),
        }
        assert!(st
            .renew_lock("prod", "a", a.lease, t0 + chrono::Duration::seconds(5), ttl)
            .unwrap());
        // lapsed (renewed until t0+15s): b takes it under a new fencing token
        let t1 = t0 + chrono::Duration::seconds(16);
        let LockAttempt::Acquired(b) = st.acquire_lock("prod", "b", t1, ttl).unwrap() else {
            panic!("lapsed lock not taken over")
        };
        assert_eq!(b.lease, a.lease + 1);
        // a's renewal is fenced to its own lease: it fails, and a's release is a no-op
        assert!(!st.renew_lock("prod", "a", a.lease, t1, ttl).unwrap());
        st.release_lock("prod", "a", a.lease).unwrap();
        assert_eq!(st.lock_info("prod").unwrap().unwrap().holder, "b");
        st.release_lock("prod", "b", b.lease).unwrap();
        assert_eq!(st.lock_info("prod").unwrap(), None);
    }
}
