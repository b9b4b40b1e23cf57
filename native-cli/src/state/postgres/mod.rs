//! The PostgreSQL state store: the same tables as the SQLite store, in schema `efmesh_state` of
//! a shared server, so several machines (a scheduler and the people applying plans) can share
//! one state.
//!
//! One file per role (`snapshots.rs`, `physics.rs`, `ledger.rs`, `locks.rs`, `journal.rs`),
//! the schema and its migrations in `schema.rs`. Every write goes through
//! [`PostgresState::write`]: one `SERIALIZABLE` transaction, retried on serialization failures,
//! so the guarantees SQLite gets from `BEGIN IMMEDIATE` (one writer at a time) hold here too.
//! Timestamps and interval edges are stored as the same RFC 3339 text as in SQLite, in columns
//! with the `"C"` collation, so comparisons and orderings are byte-wise like SQLite's.

mod journal;
mod ledger;
mod locks;
mod physics;
mod schema;
mod snapshots;

use super::{LockInfo, MigrateReport, StateBackend, StateError, StateStore, STATE_VERSION};
use crate::util::pg_url::{describe, PoolErrors, Redact};
use chrono::{DateTime, Utc};
use efmesh_core::interval::{Ledger, Range};
use efmesh_core::plan::Pointer;
use postgres::error::SqlState;
use postgres::{GenericClient, IsolationLevel, NoTls};
use r2d2_postgres::PostgresConnectionManager;
use schema::{run_migrations, SCHEMA};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

type Manager = PostgresConnectionManager<NoTls>;
type Pool = r2d2::Pool<Manager>;

/// How long connecting (directly, or waiting for a pooled connection) may take before the
/// store reports the server unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Connections one process keeps at most: the `--jobs` workers plus the main thread.
const POOL_SIZE: u32 = 16;
/// Attempts of one write transaction before a serialization failure is reported.
const WRITE_ATTEMPTS: u32 = 8;
/// The advisory lock key that serializes bootstrap and migration of the schema
/// (`efmesh_st` in ASCII).
const SCHEMA_LOCK: i64 = 0x6566_6d65_7368_5f73;

/// A connection to a PostgreSQL state store.
pub struct PostgresState {
    conn: r2d2::PooledConnection<Manager>,
    pool: Pool,
    redact: Arc<Redact>,
}

/// The store's errors from a [`Redact`]: every message scrubbed, every error naming where the
/// store is.
trait StoreErrors {
    fn store(&self, message: impl std::fmt::Display) -> StateError;
    fn pg(&self, e: &postgres::Error) -> StateError;
}

impl StoreErrors for Redact {
    fn store(&self, message: impl std::fmt::Display) -> StateError {
        StateError::Store {
            location: self.location.clone(),
            message: self.scrub(&message.to_string()),
        }
    }

    fn pg(&self, e: &postgres::Error) -> StateError {
        self.store(describe(e))
    }
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

/// Why a write transaction's body stopped: a database error (which [`PostgresState::write`]
/// may retry) or a refusal of the store's own.
pub(super) enum Fail {
    /// The database refused; retried when it is a serialization failure or a deadlock.
    Db(postgres::Error),
    /// The store refused (e.g. [`StateError::Claimed`]); never retried.
    State(StateError),
}

impl From<postgres::Error> for Fail {
    fn from(e: postgres::Error) -> Fail {
        Fail::Db(e)
    }
}

impl From<StateError> for Fail {
    fn from(e: StateError) -> Fail {
        Fail::State(e)
    }
}

/// Serialization failures and deadlocks: a concurrent writer won, running again succeeds.
fn retryable(e: &postgres::Error) -> bool {
    matches!(
        e.code(),
        Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED
    )
}

/// A short, growing, jittered pause between attempts, so racing writers do not collide again.
fn backoff(attempt: u32) -> Duration {
    let jitter = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::from(d.subsec_nanos()) % 5)
        .unwrap_or(0);
    Duration::from_millis((5u64 << attempt.min(5)) + jitter)
}

/// The schema version stored in the database (`None` when `efmesh_state` has no tables yet).
fn version(c: &mut impl GenericClient, redact: &Redact) -> Result<Option<u32>, StateError> {
    let row = c
        .query_one(
            "SELECT count(*) FILTER (WHERE c.relname = 'meta'), count(*)
             FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')",
            &[&SCHEMA],
        )
        .map_err(|e| redact.pg(&e))?;
    let (meta, tables): (i64, i64) = (row.get(0), row.get(1));
    if meta == 0 {
        if tables > 0 {
            return Err(StateError::Corrupt {
                location: redact.location.clone(),
                message: format!("schema `{SCHEMA}` has tables but no efmesh `meta` table"),
            });
        }
        return Ok(None);
    }
    let v: Option<String> = c
        .query_opt(
            &format!("SELECT value FROM {SCHEMA}.meta WHERE key = 'state_version'"),
            &[],
        )
        .map_err(|e| redact.pg(&e))?
        .map(|r| r.try_get(0))
        .transpose()
        .map_err(|e| redact.pg(&e))?;
    match v.and_then(|v| v.parse().ok()) {
        Some(v) => Ok(Some(v)),
        None => Err(StateError::Corrupt {
            location: redact.location.clone(),
            message: "`meta.state_version` is missing or not a number".into(),
        }),
    }
}

impl PostgresState {
    fn err(&self, e: postgres::Error) -> StateError {
        self.redact.pg(&e)
    }

    fn location(&self) -> &str {
        &self.redact.location
    }

    /// A corrupt-store error naming this store.
    fn corrupt(&self, message: String) -> StateError {
        StateError::Corrupt {
            location: self.redact.location.clone(),
            message,
        }
    }

    /// Run `f` in one `SERIALIZABLE` write transaction, committed when it returns `Ok`, rolled
    /// back otherwise, and run again (after a short pause) when PostgreSQL reports that a
    /// concurrent transaction won (SQLSTATE 40001, 40P01): every write of the store goes
    /// through here, so two processes never both take a lock or a claim.
    fn write<T>(
        &mut self,
        mut f: impl FnMut(&mut postgres::Transaction<'_>) -> Result<T, Fail>,
    ) -> Result<T, StateError> {
        let mut attempt = 0;
        loop {
            let conn = &mut *self.conn;
            let outcome = (|| {
                let mut tx = conn
                    .build_transaction()
                    .isolation_level(IsolationLevel::Serializable)
                    .start()?;
                let out = f(&mut tx)?;
                tx.commit()?;
                Ok(out)
            })();
            match outcome {
                Ok(v) => return Ok(v),
                Err(Fail::Db(e)) if retryable(&e) && attempt + 1 < WRITE_ATTEMPTS => {
                    tracing::debug!(attempt, "state write conflicted; retrying");
                    std::thread::sleep(backoff(attempt));
                    attempt += 1;
                }
                Err(Fail::Db(e)) => return Err(self.err(e)),
                Err(Fail::State(e)) => return Err(e),
            }
        }
    }
}

/// The lock row of `env`, if any.
fn read_lock(c: &mut impl GenericClient, env: &str) -> Result<Option<LockInfo>, postgres::Error> {
    let Some(r) = c.query_opt(
        "SELECT holder, lease, acquired_at, expires_at FROM locks WHERE env = $1",
        &[&env],
    )?
    else {
        return Ok(None);
    };
    let (acquired, expires): (String, String) = (r.try_get(2)?, r.try_get(3)?);
    Ok(Some(LockInfo {
        env: env.into(),
        holder: r.try_get(0)?,
        lease: r.try_get(1)?,
        // an unreadable instant reads as long past, so a damaged lock can be retaken
        acquired_at: parse_ts(&acquired).unwrap_or_default(),
        expires_at: parse_ts(&expires).unwrap_or_default(),
    }))
}

/// An environment's pointers, with each served version's physical fingerprint joined in.
fn read_environment(
    c: &mut impl GenericClient,
    env: &str,
) -> Result<BTreeMap<String, Pointer>, postgres::Error> {
    c.query(
        "SELECT e.model, e.fingerprint, e.metadata_hash, COALESCE(s.physical_fingerprint, e.fingerprint)
         FROM environments e LEFT JOIN snapshots s ON s.fingerprint = e.fingerprint WHERE e.env = $1",
        &[&env],
    )?
    .iter()
    .map(|r| {
        Ok((
            r.try_get(0)?,
            Pointer {
                fingerprint: r.try_get(1)?,
                metadata_hash: r.try_get(2)?,
                physical_fingerprint: r.try_get(3)?,
            },
        ))
    })
    .collect()
}

/// The done ranges of one physics, read inside a transaction.
fn read_ledger(c: &mut impl GenericClient, pfp: &str) -> Result<Ledger, postgres::Error> {
    let mut ledger = Ledger::default();
    for r in c.query(
        "SELECT start_at, end_at FROM intervals WHERE physical_fingerprint = $1 AND status = 'done'",
        &[&pfp],
    )? {
        let (s, t): (String, String) = (r.try_get(0)?, r.try_get(1)?);
        if let (Some(s), Some(t)) = (parse_edge(&s), parse_edge(&t)) {
            ledger.insert(Range::new(s, t));
        }
    }
    Ok(ledger)
}

/// Replace the done rows of one physics with `ledger`'s merged ranges.
fn write_ledger(
    c: &mut impl GenericClient,
    pfp: &str,
    ledger: &Ledger,
    now: &str,
) -> Result<(), postgres::Error> {
    c.execute(
        "DELETE FROM intervals WHERE physical_fingerprint = $1 AND status = 'done'",
        &[&pfp],
    )?;
    for r in ledger.ranges() {
        c.execute(
            "INSERT INTO intervals (physical_fingerprint, status, start_at, end_at, updated_at) VALUES ($1, 'done', $2, $3, $4)",
            &[&pfp, &edge(r.start), &edge(r.end), &now],
        )?;
    }
    Ok(())
}

/// The physical fingerprints some environment serves: physics in here is never an orphan.
const REFERENCED: &str = "SELECT s.physical_fingerprint FROM environments e JOIN snapshots s ON s.fingerprint = e.fingerprint";

impl StateStore for PostgresState {
    fn reopen(&self) -> Result<Box<dyn StateStore + Send>, StateError> {
        Ok(Box::new(PostgresState {
            conn: checkout(&self.pool, &self.redact)?,
            pool: self.pool.clone(),
            redact: self.redact.clone(),
        }))
    }
}

/// A connection from the pool, or why none could be had (with the server's last word).
fn checkout(pool: &Pool, redact: &Redact) -> Result<r2d2::PooledConnection<Manager>, StateError> {
    pool.get().map_err(|e| redact.store(e))
}

/// The PostgreSQL store at a URL, as the composition root configures it: opens pooled
/// connections to schema `efmesh_state`, bootstrapping a new database and refusing one that
/// needs `efmesh migrate`.
pub struct PostgresBackend {
    /// The connection settings, with the schema and timeouts efmesh adds.
    config: postgres::Config,
    redact: Arc<Redact>,
    /// Built at the first `open`/`migrate`, after one direct connection proved the server
    /// reachable and the credentials right.
    pool: Mutex<Option<Pool>>,
}

impl std::fmt::Debug for PostgresBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresBackend")
            .field("location", &self.redact.location)
            .finish_non_exhaustive()
    }
}

impl PostgresBackend {
    /// The store at `url` (`postgres://user:password@host:port/db` or a `key=value` string).
    /// Nothing is connected yet; a URL that does not parse is refused here.
    pub fn new(url: String) -> Result<PostgresBackend, StateError> {
        let mut config: postgres::Config = match url.parse() {
            Ok(c) => c,
            Err(e) => {
                let redact = Redact::new(&url, None);
                return Err(
                    redact.store(format!("not a PostgreSQL connection URL: {}", describe(&e)))
                );
            }
        };
        let redact = Arc::new(Redact::new(&url, Some(&config)));
        let options = match config.get_options() {
            Some(o) if !o.is_empty() => format!("{o} -c search_path={SCHEMA}"),
            _ => format!("-c search_path={SCHEMA}"),
        };
        config.options(&options);
        if config.get_application_name().is_none() {
            config.application_name("efmesh");
        }
        config.connect_timeout(CONNECT_TIMEOUT);
        Ok(PostgresBackend {
            config,
            redact,
            pool: Mutex::new(None),
        })
    }

    /// The pool, built on first use. One direct connection comes first, so an unreachable
    /// server or a wrong password is one clear error after at most [`CONNECT_TIMEOUT`]
    /// rather than a pool timeout.
    fn pool(&self) -> Result<Pool, StateError> {
        let mut slot = self.pool.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = slot.as_ref() {
            return Ok(p.clone());
        }
        let probe = self.config.connect(NoTls).map_err(|e| self.redact.pg(&e))?;
        drop(probe);
        let pool = r2d2::Pool::builder()
            .max_size(POOL_SIZE)
            .min_idle(Some(0))
            .connection_timeout(CONNECT_TIMEOUT)
            .error_handler(Box::new(PoolErrors {
                redact: self.redact.clone(),
                role: "state",
            }))
            .build_unchecked(PostgresConnectionManager::new(self.config.clone(), NoTls));
        *slot = Some(pool.clone());
        Ok(pool)
    }

    /// Bootstrap an empty database at [`STATE_VERSION`]. `READ COMMITTED` on purpose: after
    /// waiting for the advisory lock, the version must be read again with a fresh snapshot,
    /// since another process may have bootstrapped meanwhile.
    fn bootstrap(&self, conn: &mut postgres::Client) -> Result<(), StateError> {
        let e = |err: postgres::Error| self.redact.pg(&err);
        let mut tx = conn.transaction().map_err(e)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
            .map_err(e)?;
        if version(&mut tx, &self.redact)?.is_none() {
            tx.batch_execute(&format!(
                "CREATE SCHEMA IF NOT EXISTS {SCHEMA};
                 CREATE TABLE {SCHEMA}.meta (key TEXT COLLATE \"C\" PRIMARY KEY, value TEXT NOT NULL);
                 INSERT INTO {SCHEMA}.meta (key, value) VALUES ('state_version', '0');"
            ))
            .map_err(e)?;
            run_migrations(&mut tx, 0).map_err(e)?;
        }
        tx.commit().map_err(e)
    }
}

impl StateBackend for PostgresBackend {
    fn location(&self) -> String {
        self.redact.location.clone()
    }

    fn open(&self) -> Result<Box<dyn StateStore + Send>, StateError> {
        let pool = self.pool()?;
        let mut conn = checkout(&pool, &self.redact)?;
        match version(&mut *conn, &self.redact)? {
            None => self.bootstrap(&mut conn)?,
            Some(v) if v == STATE_VERSION => {}
            Some(v) if v < STATE_VERSION => {
                return Err(StateError::NeedsMigration {
                    location: self.location(),
                    found: v,
                })
            }
            Some(v) => {
                return Err(StateError::TooNew {
                    location: self.location(),
                    found: v,
                })
            }
        }
        Ok(Box::new(PostgresState {
            conn,
            pool,
            redact: self.redact.clone(),
        }))
    }

    /// Copies every table of `efmesh_state` into a new schema
    /// `efmesh_state_backup_v<from>_<YYYYMMDDTHHMMSS>`, then runs the migrations, in one
    /// transaction: the backup exists exactly when the upgrade happened.
    fn migrate(&self) -> Result<MigrateReport, StateError> {
        let pool = self.pool()?;
        let mut conn = checkout(&pool, &self.redact)?;
        let current = MigrateReport {
            from: STATE_VERSION,
            to: STATE_VERSION,
            backup: None,
        };
        if version(&mut *conn, &self.redact)?.is_none() {
            self.bootstrap(&mut conn)?;
            return Ok(current);
        }
        let e = |err: postgres::Error| self.redact.pg(&err);
        let mut tx = conn.transaction().map_err(e)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
            .map_err(e)?;
        let from = match version(&mut tx, &self.redact)? {
            // dropped meanwhile: nothing to back up, bootstrap instead
            None => {
                drop(tx);
                self.bootstrap(&mut conn)?;
                return Ok(current);
            }
            Some(v) if v > STATE_VERSION => {
                return Err(StateError::TooNew {
                    location: self.location(),
                    found: v,
                })
            }
            Some(v) if v == STATE_VERSION => return Ok(current),
            Some(v) => v,
        };
        let backup = format!(
            "{SCHEMA}_backup_v{from}_{}",
            Utc::now().format("%Y%m%dT%H%M%S")
        );
        let tables: Vec<String> = tx
            .query(
                "SELECT c.relname::text FROM pg_catalog.pg_class c
                 JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') ORDER BY 1",
                &[&SCHEMA],
            )
            .map_err(e)?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()
            .map_err(e)?;
        let mut copy = format!("CREATE SCHEMA {};", ident(&backup));
        for t in &tables {
            copy.push_str(&format!(
                "CREATE TABLE {}.{} AS TABLE {SCHEMA}.{};",
                ident(&backup),
                ident(t),
                ident(t)
            ));
        }
        tx.batch_execute(&copy).map_err(e)?;
        run_migrations(&mut tx, from).map_err(e)?;
        tx.commit().map_err(e)?;
        Ok(MigrateReport {
            from,
            to: STATE_VERSION,
            backup: Some(backup),
        })
    }
}

/// A quoted SQL identifier (the backup's name keeps its upper-case `T`).
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backend_debug_never_shows_the_password() {
        let b = PostgresBackend::new("postgres://u:s%40cret@db.example:6432/state".into()).unwrap();
        assert!(!format!("{b:?}").contains("cret"));
    }
}
