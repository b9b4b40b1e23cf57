//! Snapshots, environments and the plans journal, in PostgreSQL.

use super::{parse_ts, read_environment, ts, PostgresState, REFERENCED};
use crate::state::{JournalEntry, SnapshotStore, StateError};
use chrono::Utc;
use efmesh_core::plan::{NewSnapshot, Pointer, StoredSnapshot};
use std::collections::{BTreeMap, HashMap};

impl SnapshotStore for PostgresState {
    fn environment(&mut self, env: &str) -> Result<BTreeMap<String, Pointer>, StateError> {
        read_environment(&mut *self.conn, env).map_err(|e| self.err(e))
    }

    fn snapshots(
        &mut self,
        fingerprints: &[String],
    ) -> Result<HashMap<String, StoredSnapshot>, StateError> {
        if fingerprints.is_empty() {
            return Ok(HashMap::new());
        }
        let rows = self
            .conn
            .query(
                "SELECT fingerprint, name, physical_fingerprint, definition_hash, fingerprint_version, payload
                 FROM snapshots WHERE fingerprint = ANY($1)",
                &[&fingerprints],
            )
            .map_err(|e| self.err(e))?;
        let mut out = HashMap::new();
        for r in rows {
            let get = |i: usize| r.try_get::<_, String>(i).map_err(|e| self.err(e));
            let fingerprint = get(0)?;
            let version: i64 = r.try_get(4).map_err(|e| self.err(e))?;
            let fingerprint_version = u32::try_from(version).map_err(|_| {
                self.corrupt(format!(
                    "fingerprint version {version} of snapshot {fingerprint} is out of range"
                ))
            })?;
            let payload = serde_json::from_str(&get(5)?).map_err(|e| {
                self.corrupt(format!(
                    "payload of snapshot {fingerprint} is not JSON: {e}"
                ))
            })?;
            out.insert(
                fingerprint.clone(),
                StoredSnapshot {
                    fingerprint,
                    name: get(1)?,
                    physical_fingerprint: get(2)?,
                    definition_hash: get(3)?,
                    fingerprint_version,
                    payload,
                },
            );
        }
        Ok(out)
    }

    fn record_snapshots(&mut self, snapshots: &[NewSnapshot]) -> Result<(), StateError> {
        let now = ts(Utc::now());
        self.write(|tx| {
            let stmt = tx.prepare(
                "INSERT INTO snapshots (fingerprint, name, kind, physical_fingerprint, definition_hash, metadata_hash, fingerprint_version, payload, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (fingerprint) DO NOTHING",
            )?;
            for s in snapshots {
                tx.execute(
                    &stmt,
                    &[
                        &s.fingerprint,
                        &s.name,
                        &s.kind,
                        &s.physical_fingerprint,
                        &s.definition_hash,
                        &s.metadata_hash,
                        &i64::from(s.fingerprint_version),
                        &s.payload.to_string(),
                        &now,
                    ],
                )?;
            }
            Ok(())
        })
    }

    fn promote(
        &mut self,
        env: &str,
        pointers: &BTreeMap<String, Pointer>,
        journal: &JournalEntry,
    ) -> Result<(), StateError> {
        let now = ts(journal.applied_at);
        self.write(|tx| {
            let current = read_environment(tx, env)?;
            let gone: Vec<&String> = current
                .keys()
                .filter(|m| !pointers.contains_key(*m))
                .collect();
            if !gone.is_empty() {
                tx.execute(
                    "DELETE FROM environments WHERE env = $1 AND model = ANY($2)",
                    &[&env, &gone],
                )?;
            }
            // one statement for every changed pointer: a promotion of thousands of models is
            // one round trip, not one per model
            let (mut models, mut fps, mut metas) = (vec![], vec![], vec![]);
            for (model, p) in pointers.iter().filter(|(m, p)| {
                current.get(*m).map(|c| (&c.fingerprint, &c.metadata_hash))
                    != Some((&p.fingerprint, &p.metadata_hash))
            }) {
                models.push(model.as_str());
                fps.push(p.fingerprint.as_str());
                metas.push(p.metadata_hash.as_str());
            }
            if !models.is_empty() {
                tx.execute(
                    "INSERT INTO environments (env, model, fingerprint, metadata_hash, promoted_at)
                     SELECT $1, m, f, h, $5 FROM unnest($2::text[], $3::text[], $4::text[]) AS u(m, f, h)
                     ON CONFLICT (env, model) DO UPDATE SET fingerprint = excluded.fingerprint, metadata_hash = excluded.metadata_hash, promoted_at = excluded.promoted_at",
                    &[&env, &models, &fps, &metas, &now],
                )?;
            }
            tx.execute(
                &format!("UPDATE physics SET orphaned_at = NULL WHERE orphaned_at IS NOT NULL AND physical_fingerprint IN ({REFERENCED})"),
                &[],
            )?;
            tx.execute(
                &format!("UPDATE physics SET orphaned_at = $1 WHERE orphaned_at IS NULL AND physical_fingerprint NOT IN ({REFERENCED})"),
                &[&now],
            )?;
            tx.execute(
                "INSERT INTO plans (env, summary, applied_at, applied_by) VALUES ($1, $2, $3, $4)",
                &[&env, &journal.summary.to_string(), &now, &journal.applied_by],
            )?;
            Ok(())
        })
    }

    fn journal(&mut self, env: &str, limit: usize) -> Result<Vec<JournalEntry>, StateError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .conn
            .query(
                "SELECT env, summary, applied_by, applied_at FROM plans WHERE env = $1 ORDER BY id DESC LIMIT $2",
                &[&env, &limit],
            )
            .map_err(|e| self.err(e))?;
        rows.iter()
            .map(|r| {
                let get = |i: usize| r.try_get::<_, String>(i).map_err(|e| self.err(e));
                Ok(JournalEntry {
                    env: get(0)?,
                    summary: serde_json::from_str(&get(1)?).unwrap_or(serde_json::Value::Null),
                    applied_by: get(2)?,
                    applied_at: parse_ts(&get(3)?).unwrap_or_default(),
                })
            })
            .collect()
    }
}
