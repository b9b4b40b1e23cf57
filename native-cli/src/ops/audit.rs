//! `efmesh audit <env>`: audit what an environment serves now, through its views.
//!
//! Apply audits data on its way in; this catches what goes wrong afterwards (an upstream
//! table edited by hand, a late correction, a rule added after the data was built). It changes
//! nothing. Per-interval audits are reported as skipped, visibly, because they make a claim
//! about each batch as it was rendered, which an after-the-fact look cannot check: a clean run
//! must not read as full coverage.

use crate::engine::Engine;
use crate::exec::audits::{self, AuditResult, AuditStatus};
use crate::state::StateStore;
use crate::Error;
use efmesh_core::audit::query::{resolve, Scope};
use efmesh_core::model::Kind;
use efmesh_core::model_sql::external_relation;
use efmesh_core::naming;
use efmesh_core::project::Project;
use efmesh_core::sql::render::Relation;
use serde::Serialize;

/// What auditing an environment found.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditReport {
    /// The environment audited.
    pub env: String,
    /// Every audit, in model order, including the skipped ones.
    pub results: Vec<AuditResult>,
    /// Audits without violations.
    pub passed: usize,
    /// Blocking audits with violations: the command fails.
    pub failed: usize,
    /// Non-blocking audits with violations.
    pub warned: usize,
    /// Audits not run here (per-interval ones).
    pub skipped: usize,
    /// Models whose served version is not the project's current one: their data is audited
    /// with the audits the project declares now.
    pub stale: Vec<String>,
}

impl AuditReport {
    /// Whether a blocking audit found violations.
    pub fn has_failures(&self) -> bool {
        self.failed > 0
    }
}

/// Why `efmesh audit` does not run a per-interval audit.
pub const PER_INTERVAL_SKIP: &str = "skipped: per-interval audit, checked by apply over each batch it writes; declare `scope := 'whole'` (or no scope) to check it here";

/// Audit `env`'s views: every model it serves that has audits, or only `only` when given.
pub fn audit_env(
    project: &Project,
    state: &mut dyn StateStore,
    engine: &mut dyn Engine,
    env: &str,
    only: &[String],
    now: chrono::NaiveDateTime,
) -> Result<AuditReport, Error> {
    let pointers = super::served(state, env)?;
    for name in only {
        let Some(i) = project.index_of(name) else {
            return Err(Error::UnknownModel {
                name: name.clone(),
                suggestion: efmesh_core::suggest::closest(
                    name,
                    project.models.iter().map(|m| m.name.as_str()),
                ),
            });
        };
        if efmesh_core::plan::has_physics(&project.models[i].kind) && !pointers.contains_key(name) {
            return Err(Error::Argument {
                message: format!("`{env}` does not serve `{name}`"),
                help: Some(format!(
                    "apply the project to `{env}` first (`efmesh apply {env}`)"
                )),
            });
        }
    }
    let view = |n: &str| {
        let (s, t) = naming::view_name(env, n);
        efmesh_core::quote::relation(&s, &t)
    };
    let resolve_ref = |n: &str| -> Option<Relation> {
        let m = project.model(n)?;
        match &m.kind {
            Kind::External { source } => Some(external_relation(source)),
            _ if pointers.contains_key(n) => Some(Relation::Name(view(n))),
            _ => None,
        }
    };
    let mut report = AuditReport {
        env: env.into(),
        results: vec![],
        passed: 0,
        failed: 0,
        warned: 0,
        skipped: 0,
        stale: vec![],
    };
    for &i in project.dag.topological_order() {
        let m = &project.models[i];
        if m.audits.is_empty() || (!only.is_empty() && !only.contains(&m.name)) {
            continue;
        }
        let relation = match &m.kind {
            Kind::External { source } => match external_relation(source) {
                Relation::Name(n) => n,
                Relation::Expr(e) => e,
            },
            Kind::Embedded => continue,
            _ => match pointers.get(&m.name) {
                Some(p) => {
                    if p.fingerprint != project.fingerprints[i] {
                        report.stale.push(m.name.clone());
                    }
                    view(&m.name)
                }
                None => continue,
            },
        };
        let start = project.history_start(i).unwrap_or_default();
        let end = efmesh_core::interval::complete_until(m.history_end(), now, m.interval_unit());
        let target = audits::Target {
            env,
            model: &m.name,
            relation: &relation,
            over: "whole",
            dialect: project.config.dialect(),
            resolve: &resolve_ref,
            interval: efmesh_core::interval::Range::new(start, end),
            execution: now,
        };
        for call in &m.audits {
            let Some(q) = resolve(call, &|n| project.audits.get(n)) else {
                continue;
            };
            let r = if q.scope == Scope::PerInterval {
                AuditResult::skipped(&m.name, &q, PER_INTERVAL_SKIP)
            } else {
                audits::run(engine, &q, &target)?
            };
            match r.status {
                AuditStatus::Passed => report.passed += 1,
                AuditStatus::Failed => report.failed += 1,
                AuditStatus::Warned => report.warned += 1,
                AuditStatus::Skipped => report.skipped += 1,
            }
            report.results.push(r);
        }
    }
    Ok(report)
}
