//! The SQLite store's schema and its migrations.

use crate::state::STATE_VERSION;
use rusqlite::params;

/// Schema migrations: entry `i` upgrades a store from version `i` to `i + 1`.
/// Version 0 is a store that holds only its `meta` table.
pub(super) const MIGRATIONS: &[&str] = &[
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

/// Apply the migrations from version `from` up to [`STATE_VERSION`] inside `tx`: the one path
/// both a new store's bootstrap and `efmesh migrate` take.
pub(super) fn run_migrations(tx: &rusqlite::Transaction<'_>, from: u32) -> rusqlite::Result<()> {
    for m in &MIGRATIONS[from as usize..STATE_VERSION as usize] {
        tx.execute_batch(m)?;
    }
    tx.execute(
        "UPDATE meta SET value = ?1 WHERE key = 'state_version'",
        params![STATE_VERSION.to_string()],
    )?;
    Ok(())
}
