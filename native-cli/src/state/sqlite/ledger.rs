//! The interval ledger, in SQLite: merged done ranges and failed intervals per physics.

use super::{edge, parse_edge, read_ledger, ts, write_ledger, SqliteState};
use crate::state::{LedgerStore, StateError};
use chrono::Utc;
use efmesh_core::interval::{Ledger, Range};
use rusqlite::params;
use std::collections::HashMap;

impl LedgerStore for SqliteState {
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
        self.write(|tx, e| {
            let mut ledger = read_ledger(tx, physical_fingerprint).map_err(e)?;
            ledger.insert(range);
            write_ledger(tx, physical_fingerprint, &ledger, &now).map_err(e)?;
            tx.execute(
                "DELETE FROM intervals WHERE physical_fingerprint = ?1 AND status = 'failed' AND start_at >= ?2 AND end_at <= ?3",
                params![physical_fingerprint, edge(range.start), edge(range.end)],
            )
            .map_err(e)?;
            Ok(())
        })
    }

    fn clear_intervals(&mut self, ranges: &[(String, Range)]) -> Result<(), StateError> {
        let now = ts(Utc::now());
        self.write(|tx, e| {
            for (pfp, range) in ranges {
                let mut ledger = read_ledger(tx, pfp).map_err(e)?;
                ledger.remove(*range);
                write_ledger(tx, pfp, &ledger, &now).map_err(e)?;
            }
            Ok(())
        })
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
        self.write(|tx, e| {
            tx.execute(
                "INSERT INTO intervals (physical_fingerprint, status, start_at, end_at, updated_at) VALUES (?1, 'failed', ?2, ?3, ?4)
                 ON CONFLICT (physical_fingerprint, status, start_at) DO UPDATE SET end_at = excluded.end_at, updated_at = excluded.updated_at",
                params![physical_fingerprint, edge(range.start), edge(range.end), ts(Utc::now())],
            )
            .map_err(e)?;
            Ok(())
        })
    }
}
