//! The runs journal, in SQLite.

use super::{parse_ts, ts, SqliteState};
use crate::state::{Outcome, RunJournal, RunRecord, StateError};
use rusqlite::params;

impl RunJournal for SqliteState {
    fn record_run(&mut self, run: &RunRecord) -> Result<(), StateError> {
        self.write(|tx, e| {
            tx.execute(
                "INSERT INTO runs (env, command, started_at, finished_at, outcome, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    run.env,
                    run.command,
                    ts(run.started_at),
                    ts(run.finished_at),
                    run.outcome.label(),
                    run.detail.to_string()
                ],
            )
            .map_err(e)?;
            Ok(())
        })
    }

    fn runs(&mut self, env: &str, limit: usize) -> Result<Vec<RunRecord>, StateError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT env, command, started_at, finished_at, outcome, detail FROM runs WHERE env = ?1 ORDER BY id DESC LIMIT ?2")
            .map_err(|e| self.err(e))?;
        type Row = (String, String, String, String, String, String);
        let rows: Result<Vec<Row>, _> = stmt
            .query_map(params![env, limit as i64], |r| Row::try_from(r))
            .and_then(|r| r.collect());
        drop(stmt);
        let location = self.location.clone();
        rows.map_err(|e| self.err(e))?
            .into_iter()
            .map(|(env, command, started, finished, outcome, detail)| {
                let corrupt = |what: &str| StateError::Corrupt {
                    location: location.clone(),
                    message: format!("runs journal: {what}"),
                };
                Ok(RunRecord {
                    env,
                    command,
                    started_at: parse_ts(&started).ok_or_else(|| corrupt("bad started_at"))?,
                    finished_at: parse_ts(&finished).ok_or_else(|| corrupt("bad finished_at"))?,
                    outcome: Outcome::parse(&outcome).ok_or_else(|| corrupt("unknown outcome"))?,
                    detail: serde_json::from_str(&detail)
                        .map_err(|_| corrupt("detail is not JSON"))?,
                })
            })
            .collect()
    }
}
