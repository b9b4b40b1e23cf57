//! Environment leases, in PostgreSQL.
//!
//! Two processes racing for a free or lapsed lock both read it inside a `SERIALIZABLE`
//! transaction; PostgreSQL aborts the later writer with a serialization failure, and its retry
//! (in [`PostgresState::write`]) then sees the winner's live lease and reports it held.

use super::{read_lock, ts, PostgresState};
use crate::state::{LockAttempt, LockInfo, LockStore, StateError};
use chrono::{DateTime, Utc};

impl LockStore for PostgresState {
    fn acquire_lock(
        &mut self,
        env: &str,
        holder: &str,
        now: DateTime<Utc>,
        ttl: chrono::Duration,
        dead: Option<&LockInfo>,
    ) -> Result<LockAttempt, StateError> {
        self.write(|tx| {
            let current = read_lock(tx, env)?;
            let abandoned =
                |l: &LockInfo| dead.is_some_and(|d| d.holder == l.holder && d.lease == l.lease);
            if let Some(held) = current
                .as_ref()
                .filter(|l| l.expires_at > now && !abandoned(l))
            {
                return Ok(LockAttempt::Held(held.clone()));
            }
            let lease = current.map(|l| l.lease + 1).unwrap_or(1);
            tx.execute(
                "INSERT INTO locks (env, holder, lease, acquired_at, expires_at) VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (env) DO UPDATE SET holder = excluded.holder, lease = excluded.lease,
                   acquired_at = excluded.acquired_at, expires_at = excluded.expires_at",
                &[&env, &holder, &lease, &ts(now), &ts(now + ttl)],
            )?;
            Ok(LockAttempt::Acquired(LockInfo {
                env: env.into(),
                holder: holder.into(),
                lease,
                acquired_at: now,
                expires_at: now + ttl,
            }))
        })
    }

    fn renew_lock(
        &mut self,
        env: &str,
        holder: &str,
        lease: i64,
        now: DateTime<Utc>,
        ttl: chrono::Duration,
    ) -> Result<bool, StateError> {
        self.write(|tx| {
            // fenced: only our own lease is extended, and never after it lapsed
            let n = tx.execute(
                "UPDATE locks SET expires_at = $4 WHERE env = $1 AND holder = $2 AND lease = $3 AND expires_at > $5",
                &[&env, &holder, &lease, &ts(now + ttl), &ts(now)],
            )?;
            Ok(n == 1)
        })
    }

    fn release_lock(&mut self, env: &str, holder: &str, lease: i64) -> Result<(), StateError> {
        self.write(|tx| {
            tx.execute(
                "DELETE FROM locks WHERE env = $1 AND holder = $2 AND lease = $3",
                &[&env, &holder, &lease],
            )?;
            Ok(())
        })
    }

    fn lock_info(&mut self, env: &str) -> Result<Option<LockInfo>, StateError> {
        read_lock(&mut *self.conn, env).map_err(|e| self.err(e))
    }
}
