//! Physics and the janitor's claims, in SQLite.

use super::{parse_ts, ts, SqliteState, REFERENCED};
use crate::state::{Physics, PhysicsStore, StateError};
use chrono::{DateTime, Utc};
use rusqlite::{params, OptionalExtension};
use std::collections::{HashMap, HashSet};

impl PhysicsStore for SqliteState {
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

    fn pin_physics(&mut self, physical: &[(String, String)]) -> Result<(), StateError> {
        self.write(|tx, e| {
            let mut claimed_by = tx
                .prepare_cached("SELECT claimed_by FROM physics WHERE physical_fingerprint = ?1")
                .map_err(e)?;
            let mut unorphan = tx
                .prepare_cached("UPDATE physics SET orphaned_at = NULL WHERE physical_fingerprint = ?1 AND orphaned_at IS NOT NULL")
                .map_err(e)?;
            for (fp, model) in physical {
                let claimed: Option<Option<String>> = claimed_by
                    .query_row(params![fp], |r| r.get(0))
                    .optional()
                    .map_err(e)?;
                if let Some(Some(_)) = claimed {
                    return Err(StateError::Claimed {
                        model: model.clone(),
                    });
                }
                unorphan.execute(params![fp]).map_err(e)?;
            }
            Ok(())
        })
    }

    fn mark_built(
        &mut self,
        physical_fingerprint: &str,
        model: &str,
        kind: &str,
        at: DateTime<Utc>,
    ) -> Result<(), StateError> {
        self.write(|tx, e| {
            tx.execute(
                "INSERT INTO physics (physical_fingerprint, model, kind, built_at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (physical_fingerprint) DO UPDATE SET built_at = excluded.built_at, orphaned_at = NULL, claimed_by = NULL, claimed_at = NULL",
                params![physical_fingerprint, model, kind, ts(at)],
            )
            .map_err(e)?;
            Ok(())
        })
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
        self.write(|tx, e| {
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
            Ok(n == 1)
        })
    }

    fn forget(&mut self, physical_fingerprint: &str, claimer: &str) -> Result<(), StateError> {
        self.write(|tx, e| {
            tx.execute(
                "DELETE FROM physics WHERE physical_fingerprint = ?1 AND claimed_by = ?2",
                params![physical_fingerprint, claimer],
            )
            .map_err(e)?;
            Ok(())
        })
    }

    fn release(&mut self, physical_fingerprint: &str, claimer: &str) -> Result<(), StateError> {
        self.write(|tx, e| {
            tx.execute("UPDATE physics SET claimed_by = NULL, claimed_at = NULL WHERE physical_fingerprint = ?1 AND claimed_by = ?2", params![physical_fingerprint, claimer])
                .map_err(e)?;
            Ok(())
        })
    }
}
