//! The state store: snapshots, environments, physics, the plans journal.
//!
//! A trait so that the SQLite store (the embedded default) and a PostgreSQL store (later) are
//! interchangeable. Every write is one transaction; reads that plans need are compact.

pub mod postgres;
pub mod sqlite;

/// Every role trait, so a caller holding a `dyn StateStore` can call any of them.
pub mod prelude {
    pub use super::{LedgerStore, LockStore, PhysicsStore, RunJournal, SnapshotStore, StateStore};
}

use chrono::{DateTime, Utc};
use efmesh_core::interval::{Ledger, Range};
use efmesh_core::plan::{NewSnapshot, Pointer, StoredSnapshot};
use std::collections::{BTreeMap, HashMap, HashSet};

/// The state schema version this efmesh reads and writes.
pub const STATE_VERSION: u32 = 3;

/// Why the state store failed.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The store could not be opened or queried.
    #[error("state store `{location}`: {message}")]
    Store {
        /// The file or URL.
        location: String,
        /// What the database said.
        message: String,
    },
    /// The store was written by an older efmesh and needs `efmesh migrate`.
    #[error(
        "state store `{location}` has schema version {found}, this efmesh needs {STATE_VERSION}"
    )]
    NeedsMigration {
        /// The file or URL.
        location: String,
        /// The version found.
        found: u32,
    },
    /// The store was written by a newer efmesh.
    #[error("state store `{location}` has schema version {found}, newer than this efmesh understands ({STATE_VERSION})")]
    TooNew {
        /// The file or URL.
        location: String,
        /// The version found.
        found: u32,
    },
    /// The store's content is not what efmesh wrote.
    #[error("state store `{location}` is corrupt: {message}")]
    Corrupt {
        /// The file or URL.
        location: String,
        /// What is wrong.
        message: String,
    },
    /// Physics an apply relies on is being dropped by a janitor right now.
    #[error("physical table for `{model}` is being collected by a janitor")]
    Claimed {
        /// The model whose physics was claimed.
        model: String,
    },
}

impl StateError {
    /// What the user should do.
    pub fn help(&self) -> Option<String> {
        match self {
            StateError::NeedsMigration { .. } => Some("run `efmesh migrate` (it backs the store up first)".into()),
            StateError::TooNew { .. } => Some("upgrade efmesh to a version that knows this store".into()),
            StateError::Corrupt { .. } => Some("restore the state file from a backup, or move it away to start from an empty state".into()),
            StateError::Claimed { .. } => Some("run the apply again; it rebuilds what the janitor removed".into()),
            StateError::Store { .. } => None,
        }
    }
}

/// A physical table (or view) efmesh built, as the janitor sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Physics {
    /// The fingerprint that names it.
    pub physical_fingerprint: String,
    /// The model it belongs to.
    pub model: String,
    /// The model kind, which decides how it is dropped (table or view).
    pub kind: String,
    /// When the last environment stopped referencing it.
    pub orphaned_at: Option<DateTime<Utc>>,
}

/// One applied plan, for the journal.
#[derive(Debug, Clone)]
pub struct JournalEntry {
    /// The environment.
    pub env: String,
    /// The plan summary, as JSON.
    pub summary: serde_json::Value,
    /// Who applied it (the OS user, or the library caller's value).
    pub applied_by: String,
    /// When.
    pub applied_at: DateTime<Utc>,
}

/// The store's outcome of `migrate`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MigrateReport {
    /// The schema version before.
    pub from: u32,
    /// The schema version after.
    pub to: u32,
    /// The backup written before migrating, if any.
    pub backup: Option<String>,
}

/// Who holds an environment's lock, as another process sees it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LockInfo {
    /// The environment.
    pub env: String,
    /// The holder's id (`user@host pid N`).
    pub holder: String,
    /// The fencing token: it grows by one at every acquisition, so a renewal can only extend
    /// the holder's own lease.
    pub lease: i64,
    /// When the holder acquired it.
    pub acquired_at: DateTime<Utc>,
    /// When it lapses unless renewed; after that anyone may take it.
    pub expires_at: DateTime<Utc>,
}

/// What an attempt to take an environment's lock found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockAttempt {
    /// The lock is ours under this lease.
    Acquired(LockInfo),
    /// A live holder has it.
    Held(LockInfo),
}

/// How a tick (or an apply, restate) ended, for the runs journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Finished; the detail lists what was computed.
    Ok,
    /// Stopped because the project has unapplied changes a human must apply.
    AwaitingHuman,
    /// Another process holds the environment's lock.
    LockHeld,
    /// Failed; the detail names the model and interval.
    Error,
}

impl Outcome {
    /// The word stored and printed.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::AwaitingHuman => "awaiting-human",
            Outcome::LockHeld => "lock-held",
            Outcome::Error => "error",
        }
    }

    fn parse(s: &str) -> Option<Outcome> {
        [
            Outcome::Ok,
            Outcome::AwaitingHuman,
            Outcome::LockHeld,
            Outcome::Error,
        ]
        .into_iter()
        .find(|o| o.label() == s)
    }
}

/// One finished command in the runs journal.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRecord {
    /// The environment.
    pub env: String,
    /// `run`, `apply` or `restate`.
    pub command: String,
    /// When it started.
    pub started_at: DateTime<Utc>,
    /// When it finished.
    pub finished_at: DateTime<Utc>,
    /// How it ended.
    pub outcome: Outcome,
    /// Structured detail (models processed, `blockedBy`, the lock, the error).
    pub detail: serde_json::Value,
}

/// What an environment serves of one model, as [`SnapshotStore::served_versions`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    /// The version served.
    pub fingerprint: String,
    /// Its metadata hash at promotion.
    pub metadata_hash: String,
}

/// Versions and environments: the snapshots a plan compares, the pointers an environment serves, and the plans journal.
pub trait SnapshotStore {
    /// The environment's pointers, without payloads (empty when it does not exist).
    fn environment(&mut self, env: &str) -> Result<BTreeMap<String, Pointer>, StateError>;
    /// The version and metadata hash of every model the environment serves: all a plan
    /// answered from the project cache compares, so a store may read it without joining the
    /// snapshots for their physics.
    fn served_versions(&mut self, env: &str) -> Result<BTreeMap<String, Served>, StateError> {
        Ok(self
            .environment(env)?
            .into_iter()
            .map(|(model, p)| {
                (
                    model,
                    Served {
                        fingerprint: p.fingerprint,
                        metadata_hash: p.metadata_hash,
                    },
                )
            })
            .collect())
    }
    /// Stored snapshots for these fingerprints (unknown ones are absent).
    fn snapshots(
        &mut self,
        fingerprints: &[String],
    ) -> Result<HashMap<String, StoredSnapshot>, StateError>;
    /// Record new snapshots (idempotent).
    fn record_snapshots(&mut self, snapshots: &[NewSnapshot]) -> Result<(), StateError>;
    /// Replace the environment's pointers, update orphan marks and journal the plan, atomically.
    fn promote(
        &mut self,
        env: &str,
        pointers: &BTreeMap<String, Pointer>,
        journal: &JournalEntry,
    ) -> Result<(), StateError>;
    /// The most recent journal entries of an environment, newest first.
    fn journal(&mut self, env: &str, limit: usize) -> Result<Vec<JournalEntry>, StateError>;
}

/// Which physics exist, which an apply relies on, and which the janitor may claim and drop.
pub trait PhysicsStore {
    /// Physical fingerprints whose physics has been built.
    fn built_physics(&mut self) -> Result<HashSet<String>, StateError>;
    /// When each of these physics was last built (absent: never), for FULL models' crons.
    fn built_times(
        &mut self,
        physical_fingerprints: &[String],
    ) -> Result<HashMap<String, DateTime<Utc>>, StateError>;
    /// Protect physics an apply relies on from the janitor; fails when a janitor claimed it.
    fn pin_physics(&mut self, physical_fingerprints: &[(String, String)])
        -> Result<(), StateError>;
    /// Record that physics now exists.
    fn mark_built(
        &mut self,
        physical_fingerprint: &str,
        model: &str,
        kind: &str,
        at: DateTime<Utc>,
    ) -> Result<(), StateError>;
    /// Physics no environment references, orphaned at or before `cutoff`.
    fn orphans(&mut self, cutoff: DateTime<Utc>) -> Result<Vec<Physics>, StateError>;
    /// Claim orphaned physics for dropping; `false` when it is referenced again, fresher than
    /// the cutoff, or claimed by someone else.
    fn claim(
        &mut self,
        physical_fingerprint: &str,
        claimer: &str,
        cutoff: DateTime<Utc>,
    ) -> Result<bool, StateError>;
    /// Forget claimed physics after it was dropped.
    fn forget(&mut self, physical_fingerprint: &str, claimer: &str) -> Result<(), StateError>;
    /// Give a claim back (the drop failed).
    fn release(&mut self, physical_fingerprint: &str, claimer: &str) -> Result<(), StateError>;
}

/// The interval ledger: what has been computed, per physics, the single source of truth about it.
pub trait LedgerStore {
    /// The done intervals of these physics (absent ones have none).
    fn ledgers(
        &mut self,
        physical_fingerprints: &[String],
    ) -> Result<HashMap<String, Ledger>, StateError>;
    /// Record `range` of this physics as done (merging it into the ledger) and clear failures
    /// inside it, in one transaction.
    fn mark_done(&mut self, physical_fingerprint: &str, range: Range) -> Result<(), StateError>;
    /// Intervals of this physics whose last attempt failed (and were not done since), in order:
    /// the passport's `failedIntervals`.
    fn failed_intervals(&mut self, physical_fingerprint: &str) -> Result<Vec<Range>, StateError>;
    /// Record that computing `range` failed.
    fn mark_failed(&mut self, physical_fingerprint: &str, range: Range) -> Result<(), StateError>;
    /// Clear done intervals (a restatement), all in one transaction.
    fn clear_intervals(&mut self, ranges: &[(String, Range)]) -> Result<(), StateError>;
}

/// One lease per environment, with a fencing token, shared by apply, run and restate.
pub trait LockStore {
    /// Take `env`'s lock for `holder` until `now + ttl`, unless a holder whose lease has not
    /// expired has it. One transaction, so two processes can never both acquire. `dead` is a
    /// lease the caller knows is abandoned (its process is gone from this host): it is taken
    /// over at once if it is still exactly that holder and lease, never if the lock changed
    /// hands meanwhile.
    fn acquire_lock(
        &mut self,
        env: &str,
        holder: &str,
        now: DateTime<Utc>,
        ttl: chrono::Duration,
        dead: Option<&LockInfo>,
    ) -> Result<LockAttempt, StateError>;
    /// Extend our lease to `now + ttl`; `false` when the lock is no longer ours under `lease`
    /// (it expired and someone else took it).
    fn renew_lock(
        &mut self,
        env: &str,
        holder: &str,
        lease: i64,
        now: DateTime<Utc>,
        ttl: chrono::Duration,
    ) -> Result<bool, StateError>;
    /// Give the lock back, if it is still ours under `lease`.
    fn release_lock(&mut self, env: &str, holder: &str, lease: i64) -> Result<(), StateError>;
    /// The lock's current holder, expired or not.
    fn lock_info(&mut self, env: &str) -> Result<Option<LockInfo>, StateError>;
}

/// How every unattended command ended.
pub trait RunJournal {
    /// Journal a finished command.
    fn record_run(&mut self, run: &RunRecord) -> Result<(), StateError>;
    /// The most recent runs of an environment, newest first.
    fn runs(&mut self, env: &str, limit: usize) -> Result<Vec<RunRecord>, StateError>;
}

/// Everything efmesh keeps between runs: every role, on one connection. An implementation is a
/// new file under `state/` plus one line in `workspace::backends`.
pub trait StateStore: SnapshotStore + PhysicsStore + LedgerStore + LockStore + RunJournal {
    /// Another connection to the same store, for a worker thread (`--jobs`).
    fn reopen(&self) -> Result<Box<dyn StateStore + Send>, StateError>;
}

/// Opens (and upgrades) one configured state store: what the composition root hands the
/// library, so nothing above `state/` names a concrete store.
pub trait StateBackend: Send + Sync {
    /// Where it is (a file or a URL without its password), for messages.
    fn location(&self) -> String;
    /// A connection, refusing a store that needs `efmesh migrate` or is too new.
    fn open(&self) -> Result<Box<dyn StateStore + Send>, StateError>;
    /// Upgrade the store to [`STATE_VERSION`], backing it up first.
    fn migrate(&self) -> Result<MigrateReport, StateError>;
}
