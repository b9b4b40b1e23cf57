//! Applying a plan: build the missing physics in DAG order, swap the environment's views in
//! one engine transaction, then record the new state in one state transaction.
//!
//! Consumers never see a half-applied plan: views change only after every build succeeded.
//! A build that fails or is killed leaves the physics already built (and recorded) in place,
//! and the next apply reuses it.

use crate::engine::{Engine, EngineError};
use crate::exec::audits::{self, AuditResult};
use crate::exec::build::{self, ModelDone};
use crate::exec::context::BatchContext;
pub use crate::exec::context::{
    BatchDone, BatchProgress, ModelFinished, Progress, ProgressHook, PROGRESS,
};
use crate::exec::dag::{self, OnFailure, SendLane};
use crate::exec::render::Renderer;
use crate::lake::publish::{is_parquet, LakeContext};
use crate::state::{JournalEntry, StateStore};
use crate::Error;
use chrono::{DateTime, Utc};
use efmesh_core::environment_statements::{Serving, Stage};
use efmesh_core::interval::Range;
use efmesh_core::materialize;
use efmesh_core::model::Kind;
use efmesh_core::naming::{self, PHYSICAL_SCHEMA};
use efmesh_core::plan::{Category, Plan};
use efmesh_core::project::Project;
use serde::Serialize;
use std::collections::HashMap;

/// Options for applying a plan.
#[derive(Debug, Clone, Default)]
pub struct ApplyOptions {
    /// Recorded in the plans journal; defaults to the OS user.
    pub applied_by: Option<String>,
    /// "Now", for the end of time-range builds (defaults to the clock).
    pub now: Option<DateTime<Utc>>,
    /// How often a failed batch write is retried (exponential backoff) before it is marked
    /// failed.
    pub retries: u32,
    /// The environment lock this apply runs under; checked before every write. `Efmesh::apply`
    /// takes the lock itself when this is `None`.
    pub fence: Option<crate::ops::lock::Fence>,
    /// How many models may build at once (`--jobs`); 0 and 1 build one at a time. A model
    /// starts when its ancestors in the plan are done, on its own engine connection.
    pub jobs: usize,
    /// Told when each model starts and finishes and how far its batches are, so a front end
    /// (the CLI's progress view) can show it without parsing logs.
    pub progress: Option<ProgressHook>,
    /// The project root, where seed files are read when the engine cannot read them itself
    /// (PostgreSQL); `Efmesh::apply` sets it. `None`: the working directory.
    pub root: Option<std::path::PathBuf>,
}

/// What an apply did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApplyOutcome {
    /// Models whose physics this apply built, in build order.
    pub built: Vec<String>,
    /// Interval batches computed, in order.
    pub batches: Vec<BatchDone>,
    /// How many audit runs this apply made (each audit over each batch or table).
    pub audits_run: u64,
    /// Non-blocking audits that found violations: logged, counted, and not in the way.
    pub audit_warnings: Vec<AuditResult>,
    /// Whether the environment's views and pointers were swapped.
    pub promoted: bool,
    /// Engine statements issued (schema setup, builds, view swaps).
    pub statements: u64,
}

/// The OS user, for the journal.
pub fn os_user() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .or_else(|_| std::env::var("USERNAME"))
        .unwrap_or_else(|_| "unknown".into())
}

/// Physics the plan rebuilds because it was missing holds nothing, whatever the state says:
/// its done intervals are cleared (one transaction) so the manifest and the passport never
/// claim what the rebuild has not computed yet, and an unreadable manifest is removed so
/// publishing starts from the files this apply writes.
fn void_missing_physics(
    project: &Project,
    plan: &Plan,
    state: &mut dyn StateStore,
    lake: Option<&std::sync::Arc<dyn crate::lake::store::LakeStore>>,
) -> Result<(), Error> {
    if plan.missing_physics.is_empty() {
        return Ok(());
    }
    let ledgers = state.ledgers(&plan.missing_physics)?;
    let cleared: Vec<(String, efmesh_core::interval::Range)> = ledgers
        .iter()
        .flat_map(|(pfp, l)| l.ranges().iter().map(move |r| (pfp.clone(), *r)))
        .collect();
    if !cleared.is_empty() {
        state.clear_intervals(&cleared)?;
    }
    for a in plan.actions.iter().filter(|a| {
        a.physical_fingerprint
            .as_ref()
            .is_some_and(|p| plan.missing_physics.contains(p))
    }) {
        tracing::warn!(
            model = a.model.as_str(),
            env = plan.env.as_str(),
            intervals_voided = cleared.len(),
            "rebuilding physics that is missing"
        );
        let (Some(lake), Some(pfp)) = (lake, a.physical_fingerprint.as_deref()) else {
            continue;
        };
        if project
            .index_of(&a.model)
            .is_some_and(|i| crate::lake::publish::is_parquet(project, i))
        {
            crate::lake::VersionDir::new(lake.clone(), &a.model, pfp)
                .discard_unreadable_manifest()?;
        }
    }
    Ok(())
}

/// Refuse, before anything runs, a plan that needs capabilities the engine lacks.
fn check_capabilities(project: &Project, plan: &Plan, engine: &dyn Engine) -> Result<(), Error> {
    use crate::engine::EngineFeature;
    use efmesh_core::model::ExternalSource;
    for a in &plan.actions {
        let Some(i) = project.index_of(&a.model) else {
            continue;
        };
        let m = &project.models[i];
        let needs = match &m.kind {
            // a seed the engine cannot read is copied to it row by row
            Kind::Seed { .. } if engine.supports(EngineFeature::CopyRows) => None,
            Kind::Seed { .. } => Some(EngineFeature::FileSources),
            Kind::External {
                source: ExternalSource::Files { .. } | ExternalSource::Url { .. },
            } => Some(EngineFeature::FileSources),
            _ if m.target == efmesh_core::model::Target::Parquet => {
                Some(EngineFeature::ParquetTarget)
            }
            _ if m.target == efmesh_core::model::Target::Ducklake => Some(EngineFeature::DuckLake),
            _ => None,
        };
        if let Some(feature) = needs {
            if !engine.supports(feature) {
                return Err(EngineError::Feature {
                    engine: engine.name(),
                    feature,
                    detail: format!("model `{}` ({}) needs it", m.name, m.file),
                }
                .into());
            }
        }
    }
    Ok(())
}

/// The project's `before_all` or `after_all` statements for `plan`'s environment, rendered
/// and run in one transaction (SQLMesh's environment statements).
fn environment_statements(
    project: &Project,
    plan: &Plan,
    stage: Stage,
    engine: &mut dyn Engine,
) -> Result<(), Error> {
    let list = match stage {
        Stage::BeforeAll => &project.config.before_all,
        Stage::AfterAll => &project.config.after_all,
    };
    if list.is_empty() {
        return Ok(());
    }
    let mut serving = Serving {
        env: plan.env.clone(),
        ..Default::default()
    };
    for m in &project.models {
        if m.kind == Kind::Embedded {
            continue;
        }
        let (schema, table) = naming::view_name(&plan.env, &m.name);
        if !serving.schemas.contains(&schema) {
            serving.schemas.push(schema.clone());
        }
        serving.views.push(format!("{schema}.{table}"));
    }
    let sql = efmesh_core::environment_statements::render(
        list,
        stage,
        &serving,
        &project.config.variables,
    )
    .map_err(|d| Error::Render(d.to_string()))?;
    tracing::info!(
        env = plan.env.as_str(),
        statements = sql.len(),
        "running {}",
        stage.key()
    );
    // one transaction, one statement at a time, so a failure names its statement
    let context = format!("running {}", stage.key());
    engine.begin(&context)?;
    for statement in &sql {
        if let Err(e) = engine.execute(&context, statement) {
            let _ = engine.rollback(&context);
            return Err(Error::Render(format!(
                "`{}` in {} failed, so the apply stopped{}; the statement was `{statement}`: {e}",
                stage.key(),
                list[0].location.file,
                match stage {
                    Stage::BeforeAll => " before building anything",
                    Stage::AfterAll => " after promoting (the environment serves the new versions)",
                }
            )));
        }
    }
    engine.commit(&context)?;
    Ok(())
}

/// Build what `plan` needs and promote it into its environment.
/// `lake` is where `target parquet` versions are published (`[lake] path`).
pub fn apply_plan(
    project: &Project,
    plan: &Plan,
    state: &mut dyn StateStore,
    engine: &mut dyn Engine,
    lake: Option<std::sync::Arc<dyn crate::lake::store::LakeStore>>,
    opts: &ApplyOptions,
) -> Result<ApplyOutcome, Error> {
    let now = opts.now.unwrap_or_else(crate::util::clock::now);
    check_capabilities(project, plan, engine)?;
    let start_statements = engine.statements_issued();
    environment_statements(project, plan, Stage::BeforeAll, engine)?;
    state.record_snapshots(&plan.new_snapshots)?;
    void_missing_physics(project, plan, state, lake.as_ref())?;

    // every model's physical relation, as this plan pins it
    let mut names: HashMap<String, String> = HashMap::new();
    let mut pfps: HashMap<String, String> = HashMap::new();
    for a in &plan.actions {
        if let Some(pfp) = &a.physical_fingerprint {
            let in_ducklake = project
                .model(&a.model)
                .is_some_and(|m| m.target == efmesh_core::model::Target::Ducklake);
            names.insert(
                a.model.clone(),
                naming::physical_relation(&a.model, pfp, in_ducklake),
            );
            pfps.insert(a.model.clone(), pfp.clone());
        }
    }
    let lake = LakeContext {
        project,
        names: &names,
        pfps: &pfps,
        lake,
        now,
        redacted: project
            .config
            .environments
            .get(&plan.env)
            .is_some_and(|e| e.redacted),
    };
    // keep the janitor away from the physics this plan reuses (what the environment already
    // serves is referenced by it, so never an orphan the janitor may claim)
    let reused: Vec<(String, String)> = plan
        .actions
        .iter()
        .filter(|a| !a.build && a.category != Category::Unchanged)
        .filter_map(|a| a.physical_fingerprint.clone().map(|p| (p, a.model.clone())))
        .collect();
    state.pin_physics(&reused)?;

    let render = Renderer::new(project, &names, now);
    // forward-only: the kept physics grows the new version's added columns (NULL for past rows)
    for a in plan.actions.iter().filter(|a| a.forward_only) {
        let i = project.index_of(&a.model).ok_or_else(|| {
            Error::Render(format!("plan names `{}`, which the project lacks", a.model))
        })?;
        crate::exec::build::evolve_schema(project, i, &names[&a.model], &render, engine, now)?;
    }
    let work: Vec<&efmesh_core::plan::Action> = plan
        .actions
        .iter()
        .filter(|a| a.build || !a.batches.is_empty())
        .collect();
    // never more lanes (models, and batches within them) than the engine has connections
    let limit = engine.connection_limit();
    let jobs = opts.jobs.min(limit.unwrap_or(usize::MAX)).max(1);
    let lanes = if jobs > 1 && work.len() > 1 {
        jobs.min(work.len())
    } else {
        1
    };
    let cx = BatchContext {
        project,
        names: &names,
        render: &render,
        retries: opts.retries,
        lake: &lake,
        fence: opts.fence.as_ref(),
        env: &plan.env,
        progress: opts.progress.as_ref(),
        connections_per_model: limit.map(|l| (l / lanes).max(1)),
        root: opts.root.as_deref().unwrap_or(std::path::Path::new(".")),
    };
    let mut built = vec![];
    let mut batches = vec![];
    let mut audit_warnings: Vec<AuditResult> = vec![];
    let mut audits_run = 0u64;
    if plan
        .actions
        .iter()
        .any(|a| a.build || !a.batches.is_empty())
    {
        let create = engine.dialect().create_schema(PHYSICAL_SCHEMA);
        engine.execute("creating the physical schema", &create)?;
        if project
            .models
            .iter()
            .any(|m| m.target == efmesh_core::model::Target::Ducklake)
        {
            let create = format!(
                "CREATE SCHEMA IF NOT EXISTS {}",
                efmesh_core::quote::relation(naming::DUCKLAKE_CATALOG, PHYSICAL_SCHEMA)
            );
            engine.execute(
                "creating the physical schema in the DuckLake catalog",
                &create,
            )?;
        }
    }
    let results = if lanes > 1 {
        build_in_parallel(&cx, plan, &work, now, lanes, engine, state)?
    } else {
        let mut results = vec![];
        for a in &work {
            results.push(tracked(&cx, a, || {
                build::model(&cx, plan, a, now, engine, state)
            })?);
        }
        results
    };
    for a in plan.actions.iter().filter(|a| reuses_physics(a)) {
        cx.tell(Progress::Reused { model: &a.model });
    }
    for (a, done) in work.iter().zip(results) {
        if done.built {
            built.push(a.model.clone());
        }
        batches.extend(done.batches);
        audit_warnings.extend(done.audit_warnings);
        audits_run += done.audits_run;
    }

    audits_run += audit_reused_physics(&cx, plan, now, engine, &mut audit_warnings)?;
    if !built.is_empty() || !batches.is_empty() {
        republish_moved_passports(&cx, plan, engine, state)?;
    }

    // swap the environment's views in one transaction, each followed by its comments and its
    // model's on-virtual-update statements (rendered first: a rendering error stops the apply
    // before anything is swapped)
    let d = engine.dialect();
    let mut virtual_update: HashMap<&str, Vec<String>> = HashMap::new();
    for a in &plan.actions {
        let Some(i) = project.index_of(&a.model) else {
            continue;
        };
        let m = &project.models[i];
        if m.statements.on_virtual_update.is_empty() {
            continue;
        }
        let (vs, vt) = efmesh_core::naming::view_name(&plan.env, &m.name);
        let view = efmesh_core::quote::relation(&vs, &vt);
        let end = crate::exec::render::complete_until(m, now);
        let start = crate::exec::render::model_start(project, i, end);
        let sql = render.statements(
            &m.statements.on_virtual_update,
            efmesh_core::sql::statements::RuntimeStage::Promoting,
            (start, end.max(start)),
            &view,
        )?;
        virtual_update.insert(a.model.as_str(), sql);
    }
    let comments = |model: &str, view: &str| -> Vec<String> {
        let Some(i) = project.index_of(model) else {
            return vec![];
        };
        let m = &project.models[i];
        let columns = materialize::comments::column_descriptions(m, project.columns[i].as_deref());
        let mut out = materialize::comments::statements(
            d,
            view,
            materialize::RelationKind::View,
            m.description.as_deref(),
            &columns,
        );
        out.extend(virtual_update.get(model).cloned().unwrap_or_default());
        out
    };
    let statements = materialize::promotion::swap(d, plan, &names, &comments);
    if !statements.is_empty() {
        engine.transaction(&format!("promoting to {}", plan.env), &statements)?;
    }
    let summary = journal_summary(plan, &built, audits_run, audit_warnings.len());
    let journal = JournalEntry {
        env: plan.env.clone(),
        summary,
        applied_by: opts.applied_by.clone().unwrap_or_else(os_user),
        applied_at: now,
    };
    cx.fenced()?;
    state.promote(&plan.env, &plan.pointers_after(project), &journal)?;
    tracing::info!(
        env = plan.env.as_str(),
        views = statements.len(),
        "promoted"
    );
    environment_statements(project, plan, Stage::AfterAll, engine)?;
    Ok(ApplyOutcome {
        built,
        batches,
        audits_run,
        audit_warnings,
        promoted: true,
        statements: engine.statements_issued() - start_statements,
    })
}

/// Whether the plan serves `a` from physics that already exists and computes nothing for it:
/// a version another environment built, or one kept through a metadata-only or non-breaking
/// change upstream. An unchanged model, a removed one and an EMBEDDED one (no physics) are
/// not.
fn reuses_physics(a: &efmesh_core::plan::Action) -> bool {
    !a.build
        && a.batches.is_empty()
        && a.physical_fingerprint.is_some()
        && !matches!(a.category, Category::Unchanged | Category::Removed)
}

/// Run one model's `work` between a `Started` and a `Finished` report to the progress hook.
fn tracked(
    cx: &BatchContext,
    a: &efmesh_core::plan::Action,
    work: impl FnOnce() -> Result<ModelDone, Error>,
) -> Result<ModelDone, Error> {
    let started = std::time::Instant::now();
    cx.tell(Progress::Started {
        model: &a.model,
        batches: a.batches.len(),
    });
    let done = work();
    cx.tell(Progress::Finished(ModelFinished {
        model: &a.model,
        failed: done.is_err(),
        built: done.as_ref().is_ok_and(|d| d.built),
        batches: done.as_ref().map_or(0, |d| d.batches.len()),
        duration: started.elapsed(),
    }));
    done
}

/// Reused physics that this promotion changes (a metadata change, a dev version going to
/// prod) meets the whole-table audits the new version declares before it is served; how many
/// audits ran.
fn audit_reused_physics(
    cx: &BatchContext,
    plan: &Plan,
    now: DateTime<Utc>,
    engine: &mut dyn Engine,
    warnings: &mut Vec<AuditResult>,
) -> Result<u64, Error> {
    let project = cx.project;
    let mut audits_run = 0;
    for a in plan.actions.iter().filter(|a| {
        !a.build
            && a.batches.is_empty()
            && !matches!(a.category, Category::Unchanged | Category::Removed)
    }) {
        let (Some(i), Some(physical)) = (project.index_of(&a.model), cx.names.get(&a.model)) else {
            continue;
        };
        let m = &project.models[i];
        let whole = crate::exec::audited::ModelAudits::of(project, m).whole;
        if whole.is_empty() {
            continue;
        }
        let resolve = crate::exec::audited::physical_resolver(project, cx.names);
        let target = audits::Target {
            env: &plan.env,
            model: &a.model,
            relation: physical,
            over: "whole",
            dialect: project.config.dialect(),
            resolve: &resolve,
            interval: Range::new(
                project.history_start(i).unwrap_or_default(),
                crate::exec::render::complete_until(m, now),
            ),
            execution: now.naive_utc(),
        };
        audits_run +=
            crate::exec::audited::run_whole(engine, &whole, &target, &plan.env, warnings)?;
    }
    Ok(audits_run)
}

/// A published version that did not change still carries an effective passport, which moves
/// when its ancestors do: republish those manifests.
fn republish_moved_passports(
    cx: &BatchContext,
    plan: &Plan,
    engine: &mut dyn Engine,
    state: &mut dyn StateStore,
) -> Result<(), Error> {
    for a in plan
        .actions
        .iter()
        .filter(|a| !a.build && a.batches.is_empty() && a.category != Category::Removed)
    {
        let Some(i) = cx.project.index_of(&a.model) else {
            continue;
        };
        if is_parquet(cx.project, i) && cx.lake.dir(i)?.manifest()?.is_some() {
            cx.lake.refresh_manifest(engine, state, i)?;
        }
    }
    Ok(())
}

/// What the plans journal records about an applied plan.
fn journal_summary(
    plan: &Plan,
    built: &[String],
    audits_run: u64,
    audit_warnings: usize,
) -> serde_json::Value {
    serde_json::json!({
        "counts": plan.counts().into_iter().map(|(c, n)| (c.label().to_string(), n)).collect::<std::collections::BTreeMap<_, _>>(),
        "built": built,
        "auditsRun": audits_run,
        "auditWarnings": audit_warnings,
        "forwardOnly": plan.actions.iter().filter(|a| a.forward_only).map(|a| a.model.clone()).collect::<Vec<_>>(),
        "reclassified": plan.actions.iter().filter(|a| a.explain.iter().any(|e| e.starts_with("reclassified as"))).map(|a| serde_json::json!({"model": a.model, "category": a.category.label()})).collect::<Vec<_>>(),
        "changed": plan.actions.iter().filter(|a| a.category != Category::Unchanged).map(|a| serde_json::json!({"model": a.model, "category": a.category.label(), "fingerprint": a.fingerprint})).collect::<Vec<_>>(),
    })
}

/// Build `work` (in plan order, parents first) with up to `jobs` lanes: a model starts once
/// every ancestor this plan builds is done (through models it does not build, such as an
/// EMBEDDED one in between), each lane on its own engine and state connection. A failed model
/// blocks only its descendants: the rest completes, and every failure is reported. Nothing is
/// promoted then, exactly as when one model fails in a sequential apply.
#[allow(clippy::too_many_arguments)]
fn build_in_parallel(
    cx: &BatchContext,
    plan: &Plan,
    work: &[&efmesh_core::plan::Action],
    now: DateTime<Utc>,
    jobs: usize,
    engine: &mut dyn Engine,
    state: &mut dyn StateStore,
) -> Result<Vec<ModelDone>, Error> {
    let project = cx.project;
    let index: Vec<usize> = work
        .iter()
        .map(|a| {
            project.index_of(&a.model).ok_or_else(|| {
                Error::Render(format!("plan names `{}`, which the project lacks", a.model))
            })
        })
        .collect::<Result<_, _>>()?;
    let deps: Vec<Vec<usize>> = index
        .iter()
        .map(|&i| {
            let ancestors: std::collections::HashSet<usize> =
                project.dag.ancestors(i).into_iter().collect();
            (0..work.len())
                .filter(|&k| ancestors.contains(&index[k]))
                .collect()
        })
        .collect();
    let lane = |engine: &mut dyn Engine, state: &mut dyn StateStore, k: usize| {
        tracked(cx, work[k], || build::model(cx, plan, work[k], now, engine, state)).inspect_err(|e| {
            tracing::error!(model = work[k].model.as_str(), error = %e, "model failed; its descendants will not be built, the rest goes on");
        })
    };
    let mut others: Vec<Box<SendLane<'_, ModelDone, Error>>> = vec![];
    for _ in 1..jobs.min(work.len()).max(1) {
        let (mut e, mut s) = (engine.another_connection()?, state.reopen()?);
        let lane = &lane;
        others.push(Box::new(move |k| lane(e.as_mut(), s.as_mut(), k)));
    }
    let mut local = |k| lane(&mut *engine, &mut *state, k);
    let out = dag::run(&deps, OnFailure::BlockDependents, &mut local, others);
    let blocked: Vec<String> = out.blocked.iter().map(|&k| work[k].model.clone()).collect();
    let mut errors = out.errors;
    match errors.len() {
        0 => Ok(out
            .results
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect()),
        1 if blocked.is_empty() => Err(errors.remove(0).1),
        _ => Err(Error::ModelsFailed {
            errors: errors.into_iter().map(|(_, e)| e).collect(),
            blocked,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineFeature;

    /// An engine without file access: the only stand-in in this crate, because no real engine
    /// that lacks the capability is wired up yet.
    struct NoFiles;
    impl Engine for NoFiles {
        fn name(&self) -> &'static str {
            "NoFiles"
        }
        fn dialect(&self) -> &'static dyn crate::engine::SqlDialect {
            &efmesh_core::sql::dialect::DuckDb
        }
        fn another_connection(&self) -> Result<Box<dyn Engine + Send>, EngineError> {
            Ok(Box::new(NoFiles))
        }
        fn supports(&self, f: EngineFeature) -> bool {
            !matches!(f, EngineFeature::FileSources | EngineFeature::CopyRows)
        }
        fn copy_rows(
            &mut self,
            _: &str,
            _: &str,
            _: &[String],
            _: &[Vec<Option<String>>],
        ) -> Result<(), EngineError> {
            panic!("nothing may run")
        }
        fn transaction(&mut self, _: &str, _: &[String]) -> Result<(), EngineError> {
            panic!("nothing may run")
        }
        fn execute(&mut self, _: &str, _: &str) -> Result<(), EngineError> {
            panic!("nothing may run")
        }
        fn statements_issued(&self) -> u64 {
            0
        }
        fn query(
            &mut self,
            _: &str,
            _: &str,
            _: Option<usize>,
        ) -> Result<crate::engine::Rows, EngineError> {
            panic!("nothing may run")
        }
        fn describe(&mut self, _: &str) -> Result<Vec<(String, String)>, EngineError> {
            panic!("nothing may run")
        }
        fn table_columns(&mut self, _: &str) -> Result<Vec<(String, String)>, EngineError> {
            panic!("nothing may run")
        }
    }

    #[test]
    fn a_missing_capability_fails_before_anything_runs() {
        let sources = efmesh_core::project::ProjectSources {
            config: efmesh_core::config::Config::defaults("t"),
            models: vec![efmesh_core::project::SourceText {
                path: "models/s.sql".into(),
                text: "MODEL (name s.seed, kind SEED (path 's.csv'));".into(),
            }],
            audits: vec![],
            external_models: vec![],
            macros: vec![],
            config_diagnostics: vec![],
        };
        let loaded = efmesh_core::project::load(&sources, &mut |_| Ok(b"a,b\n1,2\n".to_vec()));
        let project = loaded.project.unwrap();
        let pointers = Default::default();
        let snaps = Default::default();
        let built = Default::default();
        let ledgers = Default::default();
        let plan = efmesh_core::plan::plan(
            &project,
            "dev",
            efmesh_core::plan::PlanState {
                pointers: &pointers,
                snapshots: &snaps,
                built: &built,
                ledgers: &ledgers,
                now: crate::util::clock::now().naive_utc(),
            },
            &Default::default(),
        )
        .unwrap();
        let err = check_capabilities(&project, &plan, &NoFiles).unwrap_err();
        assert!(
            err.to_string().contains("NoFiles cannot FileSources"),
            "{err}"
        );
        assert!(err.to_string().contains("s.seed"), "{err}");
    }
}
