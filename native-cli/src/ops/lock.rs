//! One lock per environment, shared by `apply`, `run` and `restate`, so two ticks never
//! interleave and a crashed process never wedges the environment.
//!
//! The lock is a lease in the state store (holder, fencing token, expiry). A heartbeat thread
//! renews it every third of its ttl through its own connection, so a backfill longer than the
//! ttl keeps it. A renewal is fenced to our own token: once our lease has lapsed and someone
//! else took the lock, renewal fails, the [`Fence`] trips, and the executor stops before its
//! next write instead of writing behind the new owner. A holder killed with SIGKILL simply
//! stops renewing; its lock is reclaimed when the ttl expires.

use crate::state::{LockAttempt, LockInfo, StateBackend};
use crate::Error;
use chrono::Utc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How long a lease lasts without renewal; `EFMESH_LOCK_TTL_SECONDS` overrides it.
pub fn ttl() -> Duration {
    let secs = std::env::var("EFMESH_LOCK_TTL_SECONDS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|s| *s > 0)
        .unwrap_or(120);
    Duration::from_secs(secs)
}

/// Whether `holder` (a [`holder_id`]) is a process of this host that no longer exists. Only
/// this host's processes can be checked; any other holder, an unparsable id, or a pid that
/// exists (perhaps reused by another process: then the lease is waited out) counts as alive.
fn holder_is_dead(holder: &str) -> bool {
    let Some((who, pid)) = holder.rsplit_once(" pid ") else {
        return false;
    };
    let Ok(pid) = pid.parse::<u32>() else {
        return false;
    };
    let ours = holder_id();
    let host = |h: &str| h.split_once('@').map(|(_, host)| host.to_string());
    let same_host = ours
        .rsplit_once(" pid ")
        .and_then(|(me, _)| host(me))
        .is_some_and(|h| Some(h) == host(who));
    same_host && !crate::util::process::exists(pid)
}

/// This process's holder id: who to ask about a held lock.
pub fn holder_id() -> String {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .or_else(|_| std::env::var("USERNAME"))
        .unwrap_or_else(|_| "unknown".into());
    let host = Some(
        gethostname::gethostname()
            .to_string_lossy()
            .trim()
            .to_string(),
    )
    .filter(|h| !h.is_empty())
    .or_else(|| std::env::var("HOSTNAME").ok())
    .unwrap_or_else(|| "localhost".into());
    format!("{user}@{host} pid {}", std::process::id())
}

struct Shared {
    lost: AtomicBool,
    /// Unix millis until which our lease is known good (the last successful renewal + ttl).
    good_until_ms: AtomicI64,
    stop: Mutex<bool>,
    wake: Condvar,
}

/// What the executor checks before every write: still ours?
#[derive(Clone)]
pub struct Fence {
    shared: Arc<Shared>,
    info: LockInfo,
}

impl Fence {
    /// `Err(LockLost)` once the lease is gone, or may be gone because renewals stopped working.
    pub fn check(&self) -> Result<(), Error> {
        let expired =
            Utc::now().timestamp_millis() >= self.shared.good_until_ms.load(Ordering::SeqCst);
        if self.shared.lost.load(Ordering::SeqCst) || expired {
            return Err(Error::LockLost {
                env: self.info.env.clone(),
                holder: self.info.holder.clone(),
                lease: self.info.lease,
            });
        }
        Ok(())
    }
}

impl std::fmt::Debug for Fence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fence").field("lock", &self.info).finish()
    }
}

/// A held environment lock; released when dropped.
pub struct EnvLock {
    fence: Fence,
    state: Arc<dyn StateBackend>,
    heartbeat: Option<std::thread::JoinHandle<()>>,
}

impl EnvLock {
    /// Take `env`'s lock in `state`, or fail with [`Error::LockHeld`] naming the live holder.
    /// The heartbeat and the release use connections of their own.
    pub fn acquire(state: Arc<dyn StateBackend>, env: &str) -> Result<EnvLock, Error> {
        Self::acquire_for(state, env, ttl())
    }

    /// [`EnvLock::acquire`] with an explicit lease length.
    pub fn acquire_for(
        backend: Arc<dyn StateBackend>,
        env: &str,
        ttl: Duration,
    ) -> Result<EnvLock, Error> {
        let chrono_ttl = chrono::Duration::from_std(ttl).unwrap_or(chrono::Duration::seconds(120));
        let holder = holder_id();
        let mut state = backend.open()?;
        let info = match state.acquire_lock(env, &holder, Utc::now(), chrono_ttl, None)? {
            LockAttempt::Acquired(info) => info,
            // a holder on this host whose process is gone will never renew: take it over now
            // rather than wait out its lease (only if it is still that very lease)
            LockAttempt::Held(lock) if holder_is_dead(&lock.holder) => {
                match state.acquire_lock(env, &holder, Utc::now(), chrono_ttl, Some(&lock))? {
                    LockAttempt::Acquired(info) => {
                        tracing::warn!(
                            env,
                            dead = lock.holder.as_str(),
                            lease = lock.lease,
                            "reclaimed the environment lock from a process that is gone"
                        );
                        info
                    }
                    LockAttempt::Held(lock) => return Err(Error::LockHeld { lock }),
                }
            }
            LockAttempt::Held(lock) => return Err(Error::LockHeld { lock }),
        };
        tracing::debug!(
            env,
            holder = info.holder.as_str(),
            lease = info.lease,
            ttl_s = ttl.as_secs(),
            "lock acquired"
        );
        let shared = Arc::new(Shared {
            lost: AtomicBool::new(false),
            good_until_ms: AtomicI64::new(info.expires_at.timestamp_millis()),
            stop: Mutex::new(false),
            wake: Condvar::new(),
        });
        let fence = Fence {
            shared: shared.clone(),
            info: info.clone(),
        };
        let beat = backend.clone();
        let heartbeat = std::thread::Builder::new()
            .name("efmesh-lock-heartbeat".into())
            .spawn(move || heartbeat(beat, info, shared, ttl, chrono_ttl))
            .map_err(|e| Error::Unsupported(format!("could not start the lock heartbeat: {e}")))?;
        Ok(EnvLock {
            fence,
            state: backend,
            heartbeat: Some(heartbeat),
        })
    }

    /// The fence the executor checks before writing.
    pub fn fence(&self) -> Fence {
        self.fence.clone()
    }

    /// Who holds it (us).
    pub fn info(&self) -> &LockInfo {
        &self.fence.info
    }
}

fn heartbeat(
    backend: Arc<dyn StateBackend>,
    info: LockInfo,
    shared: Arc<Shared>,
    ttl: Duration,
    chrono_ttl: chrono::Duration,
) {
    let every = ttl / 3;
    let mut state = None;
    loop {
        let stop = shared.stop.lock().unwrap_or_else(|p| p.into_inner());
        let (stop, _) = shared
            .wake
            .wait_timeout_while(stop, every, |s| !*s)
            .unwrap_or_else(|p| p.into_inner());
        if *stop {
            return;
        }
        drop(stop);
        if state.is_none() {
            state = backend.open().ok();
        }
        let Some(st) = state.as_mut() else { continue };
        let now = Utc::now();
        match st.renew_lock(&info.env, &info.holder, info.lease, now, chrono_ttl) {
            Ok(true) => {
                shared
                    .good_until_ms
                    .store((now + chrono_ttl).timestamp_millis(), Ordering::SeqCst);
                tracing::trace!(env = info.env.as_str(), lease = info.lease, "lock renewed");
            }
            Ok(false) => {
                tracing::warn!(
                    env = info.env.as_str(),
                    lease = info.lease,
                    "lost the environment lock: its lease lapsed and it was taken"
                );
                shared.lost.store(true, Ordering::SeqCst);
                return;
            }
            // transient (the store is busy): the fence trips by itself if this lasts past the lease
            Err(e) => {
                tracing::warn!(env = info.env.as_str(), error = %e, "could not renew the environment lock")
            }
        }
    }
}

impl Drop for EnvLock {
    fn drop(&mut self) {
        *self
            .fence
            .shared
            .stop
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = true;
        self.fence.shared.wake.notify_all();
        if let Some(h) = self.heartbeat.take() {
            let _ = h.join();
        }
        let info = &self.fence.info;
        match self
            .state
            .open()
            .and_then(|mut s| s.release_lock(&info.env, &info.holder, info.lease))
        {
            Ok(()) => tracing::debug!(env = info.env.as_str(), lease = info.lease, "lock released"),
            // harmless: the lease expires by itself
            Err(e) => {
                tracing::warn!(env = info.env.as_str(), error = %e, "could not release the environment lock; it expires with its lease")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::sqlite::SqliteBackend;

    #[test]
    fn a_holder_whose_lease_was_taken_trips_its_fence_instead_of_writing_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let backend: Arc<dyn StateBackend> = Arc::new(SqliteBackend { path: path.clone() });
        let lock =
            EnvLock::acquire_for(backend.clone(), "prod", Duration::from_millis(900)).unwrap();
        let fence = lock.fence();
        // the heartbeat keeps a live holder's lease: still ours well after one ttl
        std::thread::sleep(Duration::from_millis(1200));
        fence.check().expect("renewed by the heartbeat");
        assert!(matches!(
            EnvLock::acquire_for(backend.clone(), "prod", Duration::from_secs(5)),
            Err(Error::LockHeld { .. })
        ));
        // a stall: the lease lapses in the store and another process takes the lock
        let mut other = backend.open().unwrap();
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute(
                "UPDATE locks SET expires_at = '2000-01-01T00:00:00.000000Z'",
                [],
            )
            .unwrap();
        let LockAttempt::Acquired(theirs) = other
            .acquire_lock(
                "prod",
                "someone else",
                Utc::now(),
                chrono::Duration::seconds(60),
                None,
            )
            .unwrap()
        else {
            panic!("a lapsed lock is free")
        };
        assert_eq!(theirs.lease, lock.info().lease + 1);
        // our next renewal is refused (fenced), and the executor's next check stops it
        std::thread::sleep(Duration::from_millis(700));
        match fence.check() {
            Err(Error::LockLost { lease, .. }) => assert_eq!(lease, lock.info().lease),
            other => panic!("expected lock-lost, got {other:?}"),
        }
        // dropping ours does not release theirs
        drop(lock);
        assert_eq!(
            other.lock_info("prod").unwrap().unwrap().holder,
            "someone else"
        );
    }
}
