//! Snapshots, environments and the plans journal, in SQLite.

use super::{parse_ts, read_environment, ts, SqliteState, REFERENCED};
use crate::state::{JournalEntry, Served, SnapshotStore, StateError};
use chrono::Utc;
use efmesh_core::plan::{NewSnapshot, Pointer, StoredSnapshot};
use rusqlite::params;
use std::collections::{BTreeMap, HashMap};

/// One stored snapshot as read back: fingerprint, name, physical fingerprint, definition hash,
/// fingerprint version, payload.
type SnapshotRow = (String, String, String, String, u32, String);

impl SnapshotStore for SqliteState {
    fn environment(&mut self, env: &str) -> Result<BTreeMap<String, Pointer>, StateError> {
        read_environment(&self.conn, env).map_err(|e| self.err(e))
    }

    fn served_versions(&mut self, env: &str) -> Result<BTreeMap<String, Served>, StateError> {
        let read = || -> rusqlite::Result<BTreeMap<String, Served>> {
            let mut stmt = self.conn.prepare_cached(
                "SELECT model, fingerprint, metadata_hash FROM environments WHERE env = ?1",
            )?;
            let rows = stmt.query_map(params![env], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    Served {
                        fingerprint: r.get(1)?,
                        metadata_hash: r.get(2)?,
                    },
                ))
            })?;
            rows.collect()
        };
        read().map_err(|e| self.err(e))
    }

    fn snapshots(
        &mut self,
        fingerprints: &[String],
    ) -> Result<HashMap<String, StoredSnapshot>, StateError> {
        if fingerprints.is_empty() {
            return Ok(HashMap::new());
        }
        let wanted = serde_json::to_string(fingerprints).expect("strings serialize");
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT fingerprint, name, physical_fingerprint, definition_hash, fingerprint_version, payload
                 FROM snapshots WHERE fingerprint IN (SELECT value FROM json_each(?1))",
            )
            .map_err(|e| self.err(e))?;
        let rows: Result<Vec<SnapshotRow>, _> = stmt
            .query_map(params![wanted], |r| SnapshotRow::try_from(r))
            .and_then(|rows| rows.collect());
        drop(stmt);
        let mut out = HashMap::new();
        for (
            fingerprint,
            name,
            physical_fingerprint,
            definition_hash,
            fingerprint_version,
            payload,
        ) in rows.map_err(|e| self.err(e))?
        {
            let payload = serde_json::from_str(&payload).map_err(|e| StateError::Corrupt {
                location: self.location.clone(),
                message: format!("payload of snapshot {fingerprint} is not JSON: {e}"),
            })?;
            out.insert(
                fingerprint.clone(),
                StoredSnapshot {
                    fingerprint,
                    name,
                    physical_fingerprint,
                    definition_hash,
                    fingerprint_version,
                    payload,
                },
            );
        }
        Ok(out)
    }

    fn record_snapshots(&mut self, snapshots: &[NewSnapshot]) -> Result<(), StateError> {
        let now = ts(Utc::now());
        self.write(|tx, e| {
            {
                let mut stmt = tx
                    .prepare_cached(
                        "INSERT OR IGNORE INTO snapshots (fingerprint, name, kind, physical_fingerprint, definition_hash, metadata_hash, fingerprint_version, payload, created_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    )
                    .map_err(e)?;
                for s in snapshots {
                    stmt.execute(params![
                        s.fingerprint,
                        s.name,
                        s.kind,
                        s.physical_fingerprint,
                        s.definition_hash,
                        s.metadata_hash,
                        s.fingerprint_version,
                        s.payload.to_string(),
                        now
                    ])
                    .map_err(e)?;
                }
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
        self.write(|tx, e| {
            {
                let current = read_environment(tx, env).map_err(e)?;
                let mut del = tx
                    .prepare_cached("DELETE FROM environments WHERE env = ?1 AND model = ?2")
                    .map_err(e)?;
                for model in current.keys().filter(|m| !pointers.contains_key(*m)) {
                    del.execute(params![env, model]).map_err(e)?;
                }
                let mut up = tx
                    .prepare_cached(
                        "INSERT INTO environments (env, model, fingerprint, metadata_hash, promoted_at) VALUES (?1, ?2, ?3, ?4, ?5)
                         ON CONFLICT (env, model) DO UPDATE SET fingerprint = excluded.fingerprint, metadata_hash = excluded.metadata_hash, promoted_at = excluded.promoted_at",
                    )
                    .map_err(e)?;
                for (model, p) in pointers.iter().filter(|(m, p)| {
                    current.get(*m).map(|c| (&c.fingerprint, &c.metadata_hash))
                        != Some((&p.fingerprint, &p.metadata_hash))
                }) {
                    up.execute(params![env, model, p.fingerprint, p.metadata_hash, now])
                        .map_err(e)?;
                }
            }
            tx.execute(&format!("UPDATE physics SET orphaned_at = NULL WHERE orphaned_at IS NOT NULL AND physical_fingerprint IN ({REFERENCED})"), [])
                .map_err(e)?;
            tx.execute(&format!("UPDATE physics SET orphaned_at = ?1 WHERE orphaned_at IS NULL AND physical_fingerprint NOT IN ({REFERENCED})"), params![now])
                .map_err(e)?;
            tx.execute(
                "INSERT INTO plans (env, summary, applied_at, applied_by) VALUES (?1, ?2, ?3, ?4)",
                params![env, journal.summary.to_string(), now, journal.applied_by],
            )
            .map_err(e)?;
            Ok(())
        })
    }

    fn journal(&mut self, env: &str, limit: usize) -> Result<Vec<JournalEntry>, StateError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT env, summary, applied_by, applied_at FROM plans WHERE env = ?1 ORDER BY id DESC LIMIT ?2")
            .map_err(|e| self.err(e))?;
        let rows: Result<Vec<(String, String, String, String)>, _> = stmt
            .query_map(params![env, limit as i64], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .and_then(|r| r.collect());
        drop(stmt);
        Ok(rows
            .map_err(|e| self.err(e))?
            .into_iter()
            .map(|(env, summary, applied_by, at)| JournalEntry {
                env,
                summary: serde_json::from_str(&summary).unwrap_or(serde_json::Value::Null),
                applied_by,
                applied_at: parse_ts(&at).unwrap_or_default(),
            })
            .collect())
    }
}
