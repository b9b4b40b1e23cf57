//! The PostgreSQL store's schema and its migrations: the SQLite layout, step for step, in
//! PostgreSQL types.
//!
//! Every text column uses the `"C"` collation, so keys, RFC 3339 timestamps and interval
//! edges compare and sort byte-wise, exactly as in SQLite, whatever the database's locale.

use crate::state::STATE_VERSION;

/// The schema every table of the store lives in (the connection's `search_path`).
pub(super) const SCHEMA: &str = "efmesh_state";

/// Schema migrations: entry `i` upgrades a store from version `i` to `i + 1`.
/// Version 0 is a store that holds only its `meta` table.
pub(super) const MIGRATIONS: &[&str] = &[
    // 0 -> 1: the first layout
    r#"CREATE TABLE snapshots (
        fingerprint TEXT COLLATE "C" PRIMARY KEY,
        name TEXT COLLATE "C" NOT NULL,
        kind TEXT COLLATE "C" NOT NULL,
        physical_fingerprint TEXT COLLATE "C" NOT NULL,
        definition_hash TEXT COLLATE "C" NOT NULL,
        metadata_hash TEXT COLLATE "C" NOT NULL,
        fingerprint_version BIGINT NOT NULL,
        payload TEXT NOT NULL,
        created_at TEXT COLLATE "C" NOT NULL
    );
    CREATE TABLE physics (
        physical_fingerprint TEXT COLLATE "C" PRIMARY KEY,
        model TEXT COLLATE "C" NOT NULL,
        kind TEXT COLLATE "C" NOT NULL,
        built_at TEXT COLLATE "C",
        orphaned_at TEXT COLLATE "C",
        claimed_by TEXT COLLATE "C",
        claimed_at TEXT COLLATE "C"
    );
    CREATE TABLE environments (
        env TEXT COLLATE "C" NOT NULL,
        model TEXT COLLATE "C" NOT NULL,
        fingerprint TEXT COLLATE "C" NOT NULL,
        metadata_hash TEXT COLLATE "C" NOT NULL,
        promoted_at TEXT COLLATE "C" NOT NULL,
        PRIMARY KEY (env, model)
    );
    CREATE TABLE plans (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        env TEXT COLLATE "C" NOT NULL,
        summary TEXT NOT NULL,
        applied_at TEXT COLLATE "C" NOT NULL,
        applied_by TEXT COLLATE "C" NOT NULL
    );
    CREATE INDEX environments_fingerprint ON environments (fingerprint);
    CREATE INDEX plans_env ON plans (env, id);"#,
    // 1 -> 2: the interval ledger, keyed by where the data lives
    r#"CREATE TABLE intervals (
        physical_fingerprint TEXT COLLATE "C" NOT NULL,
        status TEXT COLLATE "C" NOT NULL CHECK (status IN ('done', 'failed')),
        start_at TEXT COLLATE "C" NOT NULL,
        end_at TEXT COLLATE "C" NOT NULL,
        updated_at TEXT COLLATE "C" NOT NULL,
        PRIMARY KEY (physical_fingerprint, status, start_at)
    );"#,
    // 2 -> 3: one lock per environment (a lease with a fencing token), and the runs journal
    r#"CREATE TABLE locks (
        env TEXT COLLATE "C" PRIMARY KEY,
        holder TEXT COLLATE "C" NOT NULL,
        lease BIGINT NOT NULL,
        acquired_at TEXT COLLATE "C" NOT NULL,
        expires_at TEXT COLLATE "C" NOT NULL
    );
    CREATE TABLE runs (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        env TEXT COLLATE "C" NOT NULL,
        command TEXT COLLATE "C" NOT NULL,
        started_at TEXT COLLATE "C" NOT NULL,
        finished_at TEXT COLLATE "C" NOT NULL,
        outcome TEXT COLLATE "C" NOT NULL CHECK (outcome IN ('ok', 'awaiting-human', 'lock-held', 'error')),
        detail TEXT NOT NULL
    );
    CREATE INDEX runs_env ON runs (env, id);"#,
];

/// Apply the migrations from version `from` up to [`STATE_VERSION`] inside `tx`: the one path
/// both a new store's bootstrap and `efmesh migrate` take. The tables are created in
/// [`SCHEMA`] whatever the session's `search_path` says.
pub(super) fn run_migrations(
    tx: &mut postgres::Transaction<'_>,
    from: u32,
) -> Result<(), postgres::Error> {
    tx.batch_execute(&format!("SET LOCAL search_path TO {SCHEMA}"))?;
    for m in &MIGRATIONS[from as usize..STATE_VERSION as usize] {
        tx.batch_execute(m)?;
    }
    tx.execute(
        "UPDATE meta SET value = $1 WHERE key = 'state_version'",
        &[&STATE_VERSION.to_string()],
    )?;
    Ok(())
}
