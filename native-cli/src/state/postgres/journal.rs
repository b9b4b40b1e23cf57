//! The runs journal, in PostgreSQL.

use super::{parse_ts, ts, PostgresState};
use crate::state::{Outcome, RunJournal, RunRecord, StateError};

impl RunJournal for PostgresState {
    fn record_run(&mut self, run: &RunRecord) -> Result<(), StateError> {
        let (started, finished, detail) = (
            ts(run.started_at),
            ts(run.finished_at),
            run.detail.to_string(),
        );
        self.write(|tx| {
            tx.execute(
                "INSERT INTO runs (env, command, started_at, finished_at, outcome, detail) VALUES ($1, $2, $3, $4, $5, $6)",
                &[&run.env, &run.command, &started, &finished, &run.outcome.label(), &detail],
            )?;
            Ok(())
        })
    }

    fn runs(&mut self, env: &str, limit: usize) -> Result<Vec<RunRecord>, StateError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .conn
            .query(
                "SELECT env, command, started_at, finished_at, outcome, detail FROM runs WHERE env = $1 ORDER BY id DESC LIMIT $2",
                &[&env, &limit],
            )
            .map_err(|e| self.err(e))?;
        let corrupt = |what: &str| StateError::Corrupt {
            location: self.location().to_string(),
            message: format!("runs journal: {what}"),
        };
        rows.iter()
            .map(|r| {
                let get = |i: usize| r.try_get::<_, String>(i).map_err(|e| self.err(e));
                Ok(RunRecord {
                    env: get(0)?,
                    command: get(1)?,
                    started_at: parse_ts(&get(2)?).ok_or_else(|| corrupt("bad started_at"))?,
                    finished_at: parse_ts(&get(3)?).ok_or_else(|| corrupt("bad finished_at"))?,
                    outcome: Outcome::parse(&get(4)?).ok_or_else(|| corrupt("unknown outcome"))?,
                    detail: serde_json::from_str(&get(5)?)
                        .map_err(|_| corrupt("detail is not JSON"))?,
                })
            })
            .collect()
    }
}
