//! Audited writes: every write runs its audits before it commits, so failed data is never
//! left behind; and the audits that run over a whole table before promotion.

use crate::engine::{Engine, EngineError};
use crate::exec::audits::{self, AuditResult, AuditStatus};
use crate::Error;
use efmesh_core::audit::query::AuditQuery;
use efmesh_core::model::{Kind, Model};
use efmesh_core::project::Project;
use efmesh_core::sql::render::Relation;
use std::collections::HashMap;

/// A model's audits, split by where they run.
pub(crate) struct ModelAudits<'a> {
    /// Run over each batch written (`per_interval` and unscoped).
    pub(crate) per_batch: Vec<AuditQuery<'a>>,
    /// Run over the whole table before promotion (`whole` and unscoped).
    pub(crate) whole: Vec<AuditQuery<'a>>,
}

impl<'a> ModelAudits<'a> {
    pub(crate) fn of(project: &'a Project, m: &'a Model) -> ModelAudits<'a> {
        let all: Vec<AuditQuery<'a>> = m
            .audits
            .iter()
            .filter_map(|c| efmesh_core::audit::query::resolve(c, &|n| project.audits.get(n)))
            .collect();
        ModelAudits {
            per_batch: all
                .iter()
                .filter(|q| q.scope.per_batch())
                .cloned()
                .collect(),
            whole: all.into_iter().filter(|q| q.scope.whole()).collect(),
        }
    }

    /// Whether intervals must wait for the whole-table audits before they count as done.
    pub(crate) fn defers_marks(&self) -> bool {
        self.whole.iter().any(|q| q.blocking)
    }
}

/// How named audits see the rest of the project during an apply: other models by the physics
/// this plan pins, EXTERNAL sources directly.
pub(crate) fn physical_resolver<'a>(
    project: &'a Project,
    names: &'a HashMap<String, String>,
) -> impl Fn(&str) -> Option<Relation> + 'a {
    let catalog = project.config.default_catalog();
    move |n: &str| {
        // SQLMesh's `db.schema.table`, with `db` the gateway's database, is `schema.table`
        let stripped = catalog
            .as_deref()
            .map(|c| efmesh_core::sql::catalog::strip(n, c));
        let n = stripped.as_deref().unwrap_or(n);
        match names.get(n) {
            Some(p) => Some(Relation::Name(p.clone())),
            None => match &project.model(n)?.kind {
                Kind::External { source } => {
                    Some(efmesh_core::model_sql::external_relation(source))
                }
                _ => None,
            },
        }
    }
}

/// Why an audited write did not commit.
pub(crate) enum WriteError {
    /// The engine failed; the write may be retried.
    Engine(EngineError),
    /// Blocking audits found violations; retrying would find them again.
    Audit(Vec<AuditResult>),
    /// Anything else.
    Other(Error),
}

/// Run `statements` in one transaction, then `audits` over what they wrote, then `cleanup`;
/// commit unless a blocking audit failed, so failed data is never left behind.
pub(crate) fn write_audited(
    engine: &mut dyn Engine,
    context: &str,
    statements: &[String],
    cleanup: &[String],
    audits: &[AuditQuery],
    target: &audits::Target,
) -> Result<Vec<AuditResult>, WriteError> {
    if audits.is_empty() {
        let all: Vec<String> = statements.iter().chain(cleanup).cloned().collect();
        engine
            .transaction(context, &all)
            .map_err(WriteError::Engine)?;
        return Ok(vec![]);
    }
    engine.begin(context).map_err(WriteError::Engine)?;
    let mut run = || -> Result<Vec<AuditResult>, WriteError> {
        for sql in statements {
            engine.execute(context, sql).map_err(WriteError::Engine)?;
        }
        let mut results = vec![];
        for q in audits {
            results.push(audits::run(engine, q, target).map_err(WriteError::Other)?);
        }
        for sql in cleanup {
            engine.execute(context, sql).map_err(WriteError::Engine)?;
        }
        if results.iter().any(|r| r.status == AuditStatus::Failed) {
            return Err(WriteError::Audit(
                results
                    .into_iter()
                    .filter(|r| r.status == AuditStatus::Failed)
                    .collect(),
            ));
        }
        Ok(results)
    };
    match run() {
        Ok(results) => {
            engine.commit(context).map_err(WriteError::Engine)?;
            Ok(results)
        }
        Err(e) => {
            let _ = engine.rollback(context);
            Err(e)
        }
    }
}

/// Log non-blocking violations and keep them for the outcome.
pub(crate) fn keep_warnings(results: Vec<AuditResult>, warnings: &mut Vec<AuditResult>) -> u64 {
    log_warned(&results);
    collect_warned(results, warnings)
}

/// Log the non-blocking violations among `results` as they are found.
pub(crate) fn log_warned(results: &[AuditResult]) {
    for r in results.iter().filter(|r| r.status == AuditStatus::Warned) {
        tracing::warn!(
            model = r.model.as_str(),
            audit = r.audit.as_str(),
            violations = r.violations,
            over = r.over.as_str(),
            interval = r.over.strip_prefix("batch ").unwrap_or("whole"),
            "audit found violations (non-blocking)"
        );
    }
}

/// Keep the non-blocking violations (already logged) for the outcome; how many audits ran.
pub(crate) fn collect_warned(results: Vec<AuditResult>, warnings: &mut Vec<AuditResult>) -> u64 {
    let n = results.len() as u64;
    warnings.extend(
        results
            .into_iter()
            .filter(|r| r.status == AuditStatus::Warned),
    );
    n
}

/// Run whole-table audits (read-only); blocking violations stop the apply before promotion.
pub(crate) fn run_whole(
    engine: &mut dyn Engine,
    queries: &[AuditQuery],
    target: &audits::Target,
    env: &str,
    warnings: &mut Vec<AuditResult>,
) -> Result<u64, Error> {
    let mut results = vec![];
    for q in queries {
        results.push(audits::run(engine, q, target)?);
    }
    let failures: Vec<AuditResult> = results
        .iter()
        .filter(|r| r.status == AuditStatus::Failed)
        .cloned()
        .collect();
    if !failures.is_empty() {
        return Err(Error::AuditFailed {
            env: env.into(),
            failures,
        });
    }
    Ok(keep_warnings(results, warnings))
}
