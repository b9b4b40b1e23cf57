//! Physics and the janitor's claims, in PostgreSQL.

use super::{parse_ts, ts, PostgresState, REFERENCED};
use crate::state::{Physics, PhysicsStore, StateError};
use chrono::{DateTime, Utc};
use std::collections::{HashMap, HashSet};

impl PhysicsStore for PostgresState {
    fn built_physics(&mut self) -> Result<HashSet<String>, StateError> {
        let rows = self
            .conn
            .query(
                "SELECT physical_fingerprint FROM physics WHERE built_at IS NOT NULL AND claimed_by IS NULL",
                &[],
            )
            .map_err(|e| self.err(e))?;
        rows.iter()
            .map(|r| r.try_get(0).map_err(|e| self.err(e)))
            .collect()
    }

    fn built_times(
        &mut self,
        physical_fingerprints: &[String],
    ) -> Result<HashMap<String, DateTime<Utc>>, StateError> {
        if physical_fingerprints.is_empty() {
            return Ok(HashMap::new());
        }
        let rows = self
            .conn
            .query(
                "SELECT physical_fingerprint, built_at FROM physics
                 WHERE physical_fingerprint = ANY($1) AND built_at IS NOT NULL",
                &[&physical_fingerprints],
            )
            .map_err(|e| self.err(e))?;
        let mut out = HashMap::new();
        for r in rows {
            let (pfp, at): (String, String) = (
                r.try_get(0).map_err(|e| self.err(e))?,
                r.try_get(1).map_err(|e| self.err(e))?,
            );
            if let Some(t) = parse_ts(&at) {
                out.insert(pfp, t);
            }
        }
        Ok(out)
    }

    fn pin_physics(&mut self, physical: &[(String, String)]) -> Result<(), StateError> {
        self.write(|tx| {
            for (fp, model) in physical {
                let claimed = tx
                    .query_opt(
                        "SELECT claimed_by FROM physics WHERE physical_fingerprint = $1",
                        &[fp],
                    )?
                    .map(|r| r.try_get::<_, Option<String>>(0))
                    .transpose()?;
                if let Some(Some(_)) = claimed {
                    return Err(StateError::Claimed {
                        model: model.clone(),
                    }
                    .into());
                }
                tx.execute(
                    "UPDATE physics SET orphaned_at = NULL WHERE physical_fingerprint = $1",
                    &[fp],
                )?;
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
        let at = ts(at);
        self.write(|tx| {
            tx.execute(
                "INSERT INTO physics (physical_fingerprint, model, kind, built_at) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (physical_fingerprint) DO UPDATE SET built_at = excluded.built_at, orphaned_at = NULL, claimed_by = NULL, claimed_at = NULL",
                &[&physical_fingerprint, &model, &kind, &at],
            )?;
            Ok(())
        })
    }

    fn orphans(&mut self, cutoff: DateTime<Utc>) -> Result<Vec<Physics>, StateError> {
        let rows = self
            .conn
            .query(
                &format!(
                    "SELECT physical_fingerprint, model, kind, orphaned_at FROM physics
                     WHERE orphaned_at IS NOT NULL AND orphaned_at <= $1 AND claimed_by IS NULL AND physical_fingerprint NOT IN ({REFERENCED})
                     ORDER BY model, physical_fingerprint"
                ),
                &[&ts(cutoff)],
            )
            .map_err(|e| self.err(e))?;
        rows.iter()
            .map(|r| {
                let get = |i: usize| r.try_get::<_, String>(i).map_err(|e| self.err(e));
                Ok(Physics {
                    physical_fingerprint: get(0)?,
                    model: get(1)?,
                    kind: get(2)?,
                    orphaned_at: parse_ts(&get(3)?),
                })
            })
            .collect()
    }

    fn claim(
        &mut self,
        physical_fingerprint: &str,
        claimer: &str,
        cutoff: DateTime<Utc>,
    ) -> Result<bool, StateError> {
        let cutoff = ts(cutoff);
        self.write(|tx| {
            let n = tx.execute(
                &format!(
                    "UPDATE physics SET claimed_by = $2, claimed_at = $3
                     WHERE physical_fingerprint = $1 AND claimed_by IS NULL AND orphaned_at IS NOT NULL AND orphaned_at <= $4
                       AND physical_fingerprint NOT IN ({REFERENCED})"
                ),
                &[&physical_fingerprint, &claimer, &ts(Utc::now()), &cutoff],
            )?;
            Ok(n == 1)
        })
    }

    fn forget(&mut self, physical_fingerprint: &str, claimer: &str) -> Result<(), StateError> {
        self.write(|tx| {
            tx.execute(
                "DELETE FROM physics WHERE physical_fingerprint = $1 AND claimed_by = $2",
                &[&physical_fingerprint, &claimer],
            )?;
            Ok(())
        })
    }

    fn release(&mut self, physical_fingerprint: &str, claimer: &str) -> Result<(), StateError> {
        self.write(|tx| {
            tx.execute(
                "UPDATE physics SET claimed_by = NULL, claimed_at = NULL WHERE physical_fingerprint = $1 AND claimed_by = $2",
                &[&physical_fingerprint, &claimer],
            )?;
            Ok(())
        })
    }
}
