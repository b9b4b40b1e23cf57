//! The state-store conformance suite: one body of checks, run against every `StateBackend`
//! (SQLite and PostgreSQL), so the two stores keep exactly the same semantics. A new store is
//! added to [`backends`] and must pass every check unchanged.

use chrono::Utc;
use efmesh::state::postgres::PostgresBackend;
use efmesh::state::sqlite::SqliteBackend;
use efmesh::state::{JournalEntry, LockAttempt, Outcome, RunRecord, StateBackend, StateError};
use efmesh_core::interval::Range;
use efmesh_core::plan::{NewSnapshot, Pointer};
use std::collections::BTreeMap;

mod common;

/// Every store efmesh ships, each over a fresh, empty location.
fn backends(dir: &std::path::Path) -> Vec<Box<dyn StateBackend>> {
    vec![
        Box::new(SqliteBackend {
            path: dir.join("state.sqlite"),
        }),
        Box::new(PostgresBackend::new(common::pg_database("state")).unwrap()),
    ]
}

/// Run `check` against every store, naming the store in a failure.
fn for_every_store(check: impl Fn(&dyn StateBackend)) {
    let dir = tempfile::tempdir().unwrap();
    for b in backends(dir.path()) {
        eprintln!("store: {}", b.location());
        check(b.as_ref());
    }
}

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
        summary: serde_json::json!({"n": 1}),
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

fn t(x: &str) -> chrono::NaiveDateTime {
    efmesh_core::time::parse_instant(x).unwrap()
}

#[test]
fn bootstraps_and_round_trips_across_connections() {
    for_every_store(|b| {
        let mut s = b.open().unwrap();
        s.record_snapshots(&[snap("f1", "s.a")]).unwrap();
        // recording the same snapshot again is harmless (two hosts planning the same change)
        s.record_snapshots(&[snap("f1", "s.a")]).unwrap();
        s.mark_built("f1", "s.a", "FULL", Utc::now()).unwrap();
        s.promote("dev", &pointers("f1"), &journal("dev")).unwrap();
        drop(s);
        // a second connection (another host) sees all of it
        let mut s = b.open().unwrap();
        assert_eq!(s.environment("dev").unwrap()["s.a"].fingerprint, "f1");
        assert!(s.environment("prod").unwrap().is_empty());
        // what a cached plan compares agrees with the full pointers
        let served = s.served_versions("dev").unwrap();
        assert_eq!(served.len(), 1);
        assert_eq!(
            (
                served["s.a"].fingerprint.as_str(),
                served["s.a"].metadata_hash.as_str()
            ),
            ("f1", "m")
        );
        assert!(s.served_versions("prod").unwrap().is_empty());
        assert_eq!(s.snapshots(&["f1".into(), "nope".into()]).unwrap().len(), 1);
        assert!(s.built_physics().unwrap().contains("f1"));
        assert_eq!(s.journal("dev", 5).unwrap().len(), 1);
        let other = s.reopen().unwrap();
        drop(other);
        assert_eq!(b.migrate().unwrap().backup, None, "nothing to migrate");
    });
}

#[test]
fn orphaning_follows_references_and_claims_are_exclusive() {
    for_every_store(|b| {
        let mut s = b.open().unwrap();
        s.record_snapshots(&[snap("f1", "s.a"), snap("f2", "s.a")])
            .unwrap();
        s.mark_built("f1", "s.a", "FULL", Utc::now()).unwrap();
        s.mark_built("f2", "s.a", "FULL", Utc::now()).unwrap();
        s.promote("dev", &pointers("f1"), &journal("dev")).unwrap();
        s.promote("dev", &pointers("f2"), &journal("dev")).unwrap();
        let later = Utc::now() + chrono::Duration::seconds(1);
        let orphans: Vec<String> = s
            .orphans(later)
            .unwrap()
            .into_iter()
            .map(|o| o.physical_fingerprint)
            .collect();
        assert_eq!(orphans, ["f1"]);
        assert!(!s
            .claim("f1", "j1", Utc::now() - chrono::Duration::days(1))
            .unwrap());
        let mut other = b.open().unwrap();
        let a = s.claim("f1", "j1", later).unwrap();
        let c = other.claim("f1", "j2", later).unwrap();
        assert!(a ^ c, "exactly one claim succeeds");
        assert!(matches!(
            other.pin_physics(&[("f1".into(), "s.a".into())]),
            Err(StateError::Claimed { .. })
        ));
        s.forget("f1", "j1").unwrap();
        assert!(!s.built_physics().unwrap().contains("f1"));
        assert!(
            !s.claim("f2", "j1", later).unwrap(),
            "served physics is no orphan"
        );
    });
}

#[test]
fn the_ledger_keeps_merged_ranges_per_physics() {
    for_every_store(|b| {
        let mut s = b.open().unwrap();
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
            &[Range::new(t("2026-01-01"), t("2026-01-15"))]
        );
        assert_eq!(l["p2"].ranges().len(), 1);
        assert!(!l.contains_key("p3"));
    });
}

#[test]
fn concurrent_ledger_writes_from_many_connections_all_land() {
    for_every_store(|b| {
        let s = b.open().unwrap();
        let handles: Vec<_> = (0..8)
            .map(|k| {
                let mut c = s.reopen().unwrap();
                std::thread::spawn(move || {
                    let day = t("2026-03-01") + chrono::Duration::days(k);
                    c.mark_done("p", Range::new(day, day + chrono::Duration::days(1)))
                        .unwrap();
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let mut s = s;
        let l = s.ledgers(&["p".into()]).unwrap();
        assert_eq!(
            l["p"].ranges(),
            &[Range::new(t("2026-03-01"), t("2026-03-09"))],
            "no batch's interval was lost to a concurrent writer"
        );
    });
}

#[test]
fn a_lapsed_lease_is_taken_over_and_the_old_holder_cannot_renew_it() {
    for_every_store(|b| {
        let mut st = b.open().unwrap();
        let t0 = Utc::now();
        let ttl = chrono::Duration::seconds(10);
        let LockAttempt::Acquired(a) = st.acquire_lock("prod", "a", t0, ttl, None).unwrap() else {
            panic!("free lock not acquired")
        };
        let mut other = b.open().unwrap();
        match other
            .acquire_lock("prod", "b", t0 + chrono::Duration::seconds(5), ttl, None)
            .unwrap()
        {
            LockAttempt::Held(h) => assert_eq!((h.holder.as_str(), h.lease), ("a", a.lease)),
            got => panic!("{got:?}"),
        }
        assert!(st
            .renew_lock("prod", "a", a.lease, t0 + chrono::Duration::seconds(5), ttl)
            .unwrap());
        let t1 = t0 + chrono::Duration::seconds(16);
        let LockAttempt::Acquired(c) = other.acquire_lock("prod", "b", t1, ttl, None).unwrap()
        else {
            panic!("lapsed lock not taken over")
        };
        assert_eq!(c.lease, a.lease + 1);
        assert!(!st.renew_lock("prod", "a", a.lease, t1, ttl).unwrap());
        st.release_lock("prod", "a", a.lease).unwrap();
        assert_eq!(st.lock_info("prod").unwrap().unwrap().holder, "b");
        other.release_lock("prod", "b", c.lease).unwrap();
        assert_eq!(st.lock_info("prod").unwrap(), None);
    });
}

#[test]
fn an_abandoned_lease_is_reclaimed_at_once_but_only_while_it_is_unchanged() {
    for_every_store(|b| {
        let mut st = b.open().unwrap();
        let t0 = Utc::now();
        let ttl = chrono::Duration::seconds(120);
        let LockAttempt::Acquired(dead) = st.acquire_lock("prod", "a", t0, ttl, None).unwrap()
        else {
            panic!("free lock not acquired")
        };
        let mut other = b.open().unwrap();
        // naming it dead takes it over well inside its lease
        let LockAttempt::Acquired(c) = other
            .acquire_lock("prod", "b", t0, ttl, Some(&dead))
            .unwrap()
        else {
            panic!("an abandoned lease is not reclaimed")
        };
        assert_eq!(c.lease, dead.lease + 1);
        assert!(!st.renew_lock("prod", "a", dead.lease, t0, ttl).unwrap());
        // the same stale knowledge never steals the new, live holder's lease
        match st.acquire_lock("prod", "z", t0, ttl, Some(&dead)).unwrap() {
            LockAttempt::Held(h) => assert_eq!((h.holder.as_str(), h.lease), ("b", c.lease)),
            got => panic!("{got:?}"),
        }
    });
}

#[test]
fn racing_acquirers_never_both_hold_the_lock() {
    for_every_store(|b| {
        let s = b.open().unwrap();
        let now = Utc::now();
        let handles: Vec<_> = (0..6)
            .map(|k| {
                let mut c = s.reopen().unwrap();
                std::thread::spawn(move || {
                    matches!(
                        c.acquire_lock(
                            "prod",
                            &format!("h{k}"),
                            now,
                            chrono::Duration::seconds(60),
                            None
                        )
                        .unwrap(),
                        LockAttempt::Acquired(_)
                    )
                })
            })
            .collect();
        let won = handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .filter(|w| *w)
            .count();
        assert_eq!(won, 1, "exactly one of six racing hosts takes the lock");
    });
}

#[test]
fn the_runs_journal_reads_newest_first() {
    for_every_store(|b| {
        let mut s = b.open().unwrap();
        for (k, outcome) in [Outcome::Ok, Outcome::LockHeld].into_iter().enumerate() {
            let at = Utc::now() + chrono::Duration::seconds(k as i64);
            s.record_run(&RunRecord {
                env: "prod".into(),
                command: "run".into(),
                started_at: at,
                finished_at: at,
                outcome,
                detail: serde_json::json!({"k": k}),
            })
            .unwrap();
        }
        let runs = s.runs("prod", 5).unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].detail["k"], 1);
        assert!(s.runs("dev", 5).unwrap().is_empty());
    });
}
