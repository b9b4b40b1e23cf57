//! The interval ledger, in PostgreSQL: merged done ranges and failed intervals per physics.

use super::{edge, parse_edge, read_ledger, ts, write_ledger, PostgresState};
use crate::state::{LedgerStore, StateError};
use chrono::Utc;
use efmesh_core::interval::{Ledger, Range};
use std::collections::HashMap;

impl LedgerStore for PostgresState {
    fn ledgers(
        &mut self,
        physical_fingerprints: &[String],
    ) -> Result<HashMap<String, Ledger>, StateError> {
        if physical_fingerprints.is_empty() {
            return Ok(HashMap::new());
        }
        let rows = self
            .conn
            .query(
                "SELECT physical_fingerprint, start_at, end_at FROM intervals
                 WHERE status = 'done' AND physical_fingerprint = ANY($1)",
                &[&physical_fingerprints],
            )
            .map_err(|e| self.err(e))?;
        let mut out: HashMap<String, Ledger> = HashMap::new();
        for r in rows {
            let get = |i: usize| r.try_get::<_, String>(i).map_err(|e| self.err(e));
            let (pfp, s, e) = (get(0)?, get(1)?, get(2)?);
            let (Some(start), Some(end)) = (parse_edge(&s), parse_edge(&e)) else {
                return Err(self.corrupt(format!(
                    "interval edge `{s}`/`{e}` of {pfp} is not a timestamp"
                )));
            };
            out.entry(pfp).or_default().insert(Range::new(start, end));
        }
        Ok(out)
    }

    fn mark_done(&mut self, physical_fingerprint: &str, range: Range) -> Result<(), StateError> {
        let now = ts(Utc::now());
        self.write(|tx| {
            let mut ledger = read_ledger(tx, physical_fingerprint)?;
            ledger.insert(range);
            write_ledger(tx, physical_fingerprint, &ledger, &now)?;
            tx.execute(
                "DELETE FROM intervals WHERE physical_fingerprint = $1 AND status = 'failed' AND start_at >= $2 AND end_at <= $3",
                &[&physical_fingerprint, &edge(range.start), &edge(range.end)],
            )?;
            Ok(())
        })
    }

    fn clear_intervals(&mut self, ranges: &[(String, Range)]) -> Result<(), StateError> {
        let now = ts(Utc::now());
        self.write(|tx| {
            for (pfp, range) in ranges {
                let mut ledger = read_ledger(tx, pfp)?;
                ledger.remove(*range);
                write_ledger(tx, pfp, &ledger, &now)?;
            }
            Ok(())
        })
    }

    fn failed_intervals(&mut self, physical_fingerprint: &str) -> Result<Vec<Range>, StateError> {
        let rows = self
            .conn
            .query(
                "SELECT start_at, end_at FROM intervals WHERE status = 'failed' AND physical_fingerprint = $1 ORDER BY start_at",
                &[&physical_fingerprint],
            )
            .map_err(|e| self.err(e))?;
        rows.iter()
            .map(|r| {
                let get = |i: usize| r.try_get::<_, String>(i).map_err(|e| self.err(e));
                let (s, e) = (get(0)?, get(1)?);
                match (parse_edge(&s), parse_edge(&e)) {
                    (Some(start), Some(end)) => Ok(Range::new(start, end)),
                    _ => Err(self.corrupt(format!(
                        "failed interval `{s}`/`{e}` of {physical_fingerprint} is not a timestamp"
                    ))),
                }
            })
            .collect()
    }

    fn mark_failed(&mut self, physical_fingerprint: &str, range: Range) -> Result<(), StateError> {
        let now = ts(Utc::now());
        self.write(|tx| {
            tx.execute(
                "INSERT INTO intervals (physical_fingerprint, status, start_at, end_at, updated_at) VALUES ($1, 'failed', $2, $3, $4)
                 ON CONFLICT (physical_fingerprint, status, start_at) DO UPDATE SET end_at = excluded.end_at, updated_at = excluded.updated_at",
                &[&physical_fingerprint, &edge(range.start), &edge(range.end), &now],
            )?;
            Ok(())
        })
    }
}
