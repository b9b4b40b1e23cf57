//! Building one model of a plan: its physics when new, then its batches, its whole-table
//! audits, and its deferred done marks, on one engine and one state connection.

use crate::engine::{Engine, EngineError};
use crate::exec::audited::{keep_warnings, physical_resolver, run_whole, ModelAudits, WriteError};
use crate::exec::audits::{self, AuditResult};
use crate::exec::context::{BatchContext, BatchDone, PROGRESS};
use crate::exec::materializer::{self, Build};
use crate::exec::render::{complete_until, Renderer};
use crate::state::StateStore;
use crate::Error;
use chrono::{DateTime, Utc};
use efmesh_core::audit::query::AuditQuery;
use efmesh_core::interval::Range;
use efmesh_core::materialize;
use efmesh_core::model::kind::DestructiveChange;
use efmesh_core::model::Kind;
use efmesh_core::plan::Plan;
use efmesh_core::project::Project;
use std::time::Instant;

/// What building one model left behind, for the apply's report.
#[derive(Default)]
pub(crate) struct ModelDone {
    /// Its physics was built (not only new intervals).
    pub built: bool,
    /// The batches computed.
    pub batches: Vec<BatchDone>,
    /// Non-blocking audit violations.
    pub audit_warnings: Vec<AuditResult>,
    /// Audits run.
    pub audits_run: u64,
}

/// Build model `a.model` of `plan`. The apply's scheduler calls it from several threads
/// (`--jobs`), each with its own connections.
pub(crate) fn model(
    cx: &BatchContext,
    plan: &Plan,
    a: &efmesh_core::plan::Action,
    now: DateTime<Utc>,
    engine: &mut dyn Engine,
    state: &mut dyn StateStore,
) -> Result<ModelDone, Error> {
    let project = cx.project;
    let mut out = ModelDone::default();
    let i = project.index_of(&a.model).ok_or_else(|| {
        Error::Render(format!("plan names `{}`, which the project lacks", a.model))
    })?;
    // debug lines (the SQL each statement runs) carry the model they are for
    let _model = tracing::debug_span!("model", model = a.model.as_str()).entered();
    let model_clock = Instant::now();
    let labels = [a.model.as_str(), plan.env.as_str()];
    let metrics = crate::exec::metrics::global();
    let pfp = a.physical_fingerprint.as_deref().unwrap_or_default();
    let physical = &cx.names[&a.model];
    let m = &project.models[i];
    let model_audits = ModelAudits::of(project, m);
    let with_intervals = efmesh_core::plan::has_intervals(&m.kind);
    // a model that reads itself is described once the table it reads exists (below)
    let contract_after_build = a.build && project.reads_itself[i];
    if (a.build || (with_intervals && !a.batches.is_empty())) && !contract_after_build {
        cx.fenced()?;
        check_contract(project, i, cx.render, engine, now)?;
    }
    let resolve = physical_resolver(project, cx.names);
    let whole_target = audits::Target {
        env: &plan.env,
        model: &a.model,
        relation: physical,
        over: "whole",
        dialect: project.config.dialect(),
        resolve: &resolve,
        interval: Range::new(
            project.history_start(i).unwrap_or_default(),
            complete_until(m, now),
        ),
        execution: now.naive_utc(),
    };
    let fail = |failures| Error::AuditFailed {
        env: plan.env.clone(),
        failures,
    };
    let materializer = materializer::of(project, i, cx.lake);
    if a.build {
        let seed = crate::exec::seeds::source(project, i, cx.root, engine)?;
        if let Some(seed) = &seed {
            crate::exec::seeds::check_values(project, i, seed, engine)?;
        }
        let started = Instant::now();
        tracing::info!(
            target: PROGRESS,
            model = a.model.as_str(),
            env = plan.env.as_str(),
            table = physical.as_str(),
            "building"
        );
        // a table built whole is audited whole, inside the transaction that builds it
        let checks: Vec<AuditQuery> = if with_intervals {
            vec![]
        } else {
            let mut all = model_audits.per_batch.clone();
            all.extend(
                model_audits
                    .whole
                    .iter()
                    .filter(|q| !q.scope.per_batch())
                    .cloned(),
            );
            all
        };
        let d = engine.dialect();
        let seed_from = seed.as_ref().map(|s| s.from.as_str());
        let create =
            |relation: &str| create_statement(project, i, relation, cx.render, now, d, seed_from);
        let shape = || shaping_select(project, i, cx.render, now, d);
        let (before, after) = build_statements(project, i, physical, cx.render, engine, now)?;
        let written = materializer.build(
            engine,
            state,
            &Build {
                i,
                physical,
                pfp,
                create: &create,
                shape: &shape,
                before: &before,
                after: &after,
                checks: &checks,
                target: &whole_target,
            },
        );
        match written {
            Ok(results) => out.audits_run += keep_warnings(results, &mut out.audit_warnings),
            Err(WriteError::Audit(failures)) => return Err(fail(failures)),
            Err(WriteError::Other(e)) => return Err(e),
            Err(WriteError::Engine(EngineError::Statement { message, sql, .. })) => {
                return Err(Error::Build {
                    model: a.model.clone(),
                    message,
                    sql,
                })
            }
            Err(WriteError::Engine(other)) => return Err(Error::Engine(other)),
        }
        if contract_after_build {
            check_contract(project, i, cx.render, engine, now)?;
        }
        // the model's documentation on its physics, as SQLMesh registers it
        if m.target == efmesh_core::model::Target::Table {
            let kind = match m.kind {
                efmesh_core::model::Kind::View {
                    materialized: false,
                } => efmesh_core::materialize::RelationKind::View,
                _ => efmesh_core::materialize::RelationKind::Table,
            };
            let columns = efmesh_core::materialize::comments::column_descriptions(
                m,
                project.columns[i].as_deref(),
            );
            let sql = efmesh_core::materialize::comments::statements(
                d,
                physical,
                kind,
                m.description.as_deref(),
                &columns,
            );
            if !sql.is_empty() {
                engine.transaction(&format!("commenting {}", a.model), &sql)?;
            }
        }
        // the apply's clock, which a FULL model's cron is measured from
        state.mark_built(pfp, &a.model, &a.kind, now)?;
        metrics.snapshots_built.with_label_values(&labels).inc();
        tracing::info!(
            target: PROGRESS,
            model = a.model.as_str(),
            env = plan.env.as_str(),
            duration_ms = started.elapsed().as_millis() as u64,
            "built"
        );
        out.built = true;
    }
    let run = crate::exec::batches::run(
        cx,
        i,
        a,
        physical,
        &model_audits,
        &mut out.audit_warnings,
        state,
        engine,
    )
    .map_err(|e| match e {
        Error::AuditFailed { failures, .. } => fail(failures),
        other => other,
    })?;
    out.audits_run += run.audits_run;
    // history as a whole, before anything is promoted or (for deferred intervals) done
    if with_intervals && !a.batches.is_empty() && !model_audits.whole.is_empty() {
        out.audits_run += run_whole(
            engine,
            &model_audits.whole,
            &whole_target,
            &plan.env,
            &mut out.audit_warnings,
        )?;
    }
    for r in &run.deferred {
        state.mark_done(pfp, *r)?;
        metrics
            .intervals_done
            .with_label_values(&labels)
            .inc_by(r.intervals(m.interval_unit()).max(0) as u64);
    }
    if !run.deferred.is_empty() {
        materializer.marks_recorded(engine, state, i)?;
    }
    out.batches = run.done;
    metrics
        .model_build_duration
        .with_label_values(&labels)
        .set(model_clock.elapsed().as_secs_f64());
    Ok(out)
}

/// The statement that builds model `i`'s physics at `relation`: a seed cast from its records
/// (`seed`, from [`crate::exec::seeds::source`]), or the query rendered over its history so far.
fn create_statement(
    project: &Project,
    i: usize,
    relation: &str,
    render: &Renderer,
    now: DateTime<Utc>,
    d: &dyn efmesh_core::sql::dialect::SqlDialect,
    seed: Option<&str>,
) -> Result<String, Error> {
    let m = &project.models[i];
    let select = match (&m.kind, seed) {
        // CSV or JSON, every value read as text and cast to the declared columns
        (Kind::Seed { .. }, Some(from)) => materialize::seed::select(d, project, i, from),
        (Kind::Seed { .. }, None) => {
            return Err(Error::Render(format!(
                "seed `{}` was not loaded before its build",
                m.name
            )))
        }
        _ => shaping_select(project, i, render, now, d)?,
    };
    Ok(materialize::create(d, &m.kind, relation, &select))
}

/// Model `i`'s pre- and post-statements as its build runs them, at the stage SQLMesh runs them:
/// `creating` around an interval model's empty table (its time macros at the epoch, as
/// SQLMesh's separate table creation has them), and around a FULL or VIEW model's write when
/// its relation does not exist yet; `evaluating` when a FULL model is refreshed in place.
fn build_statements(
    project: &Project,
    i: usize,
    physical: &str,
    render: &Renderer,
    engine: &mut dyn Engine,
    now: DateTime<Utc>,
) -> Result<(Vec<String>, Vec<String>), Error> {
    use efmesh_core::sql::statements::RuntimeStage;
    let m = &project.models[i];
    if !m.statements.around_writes() {
        return Ok((vec![], vec![]));
    }
    let (stage, range) = if efmesh_core::plan::has_intervals(&m.kind) {
        // SQLMesh renders its table creation with start and end at the epoch's first day
        let epoch = chrono::DateTime::UNIX_EPOCH.naive_utc();
        (
            RuntimeStage::Creating,
            (epoch, epoch + chrono::Duration::days(1)),
        )
    } else {
        let end = complete_until(m, now);
        let start = crate::exec::render::model_start(project, i, end);
        let stage = match engine.relation_kind(physical)? {
            Some(_) => RuntimeStage::Evaluating,
            None => RuntimeStage::Creating,
        };
        (stage, (start, end.max(start)))
    };
    Ok((
        render.statements(&m.statements.pre, stage, range, physical)?,
        render.statements(&m.statements.post, stage, range, physical)?,
    ))
}

/// What model `i`'s new physics is shaped from: its query over its history so far, or, for a
/// model whose query reads the table being created, its declared columns.
fn shaping_select(
    project: &Project,
    i: usize,
    render: &Renderer,
    now: DateTime<Utc>,
    d: &dyn efmesh_core::sql::dialect::SqlDialect,
) -> Result<String, Error> {
    let m = &project.models[i];
    if project.reads_itself[i] {
        let columns = m.columns.as_deref().unwrap_or_default();
        return Ok(materialize::declared_shape(d, columns));
    }
    let select = render.whole(i, now)?;
    if !project.config.is_sqlmesh() {
        return Ok(select);
    }
    // SQLMesh creates a table with the types its model declares (its SCD validity columns
    // aside, which it adds itself), or else, for the kinds whose table it creates from the
    // query, with the types it infers when it knows them all; views keep the query's types
    let scd = matches!(
        m.kind,
        Kind::ScdType2 { .. } | Kind::ScdType2ByColumn { .. }
    );
    let from_query = scd || matches!(m.kind, Kind::Full | Kind::IncrementalByTimeRange { .. });
    let declares = from_query
        || matches!(
            m.kind,
            Kind::IncrementalByUniqueKey { .. } | Kind::IncrementalByPartition { .. }
        );
    match (&m.columns, &project.inferred_types[i]) {
        (Some(columns), _) if declares => {
            let managed = m.kind.validity_columns();
            let typed: Vec<(String, String)> = columns
                .iter()
                .filter(|c| managed.is_none_or(|(f, t)| c.name != f && c.name != t))
                .map(|c| (c.name.clone(), c.sql_type.clone()))
                .collect();
            Ok(materialize::cast_to(d, &typed, &select))
        }
        (None, Some(types)) if from_query => Ok(materialize::cast_to(d, types, &select)),
        _ => Ok(select),
    }
}

/// Bring kept physics in line with a forward-only version: add its new columns; the ones it no
/// longer returns are refused, dropped or kept as its `on_destructive_change` says (refusing is
/// the default: dropping rewrites the history forward-only promises to keep).
pub(crate) fn evolve_schema(
    project: &Project,
    i: usize,
    physical: &str,
    render: &Renderer,
    engine: &mut dyn Engine,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let m = &project.models[i];
    let sql = render.at_edge(i, now)?;
    let mut wanted = engine.describe(&sql)?;
    if let Some((valid_from, valid_to)) = m.kind.validity_columns() {
        wanted.push((valid_from.to_string(), "TIMESTAMP".into()));
        wanted.push((valid_to.to_string(), "TIMESTAMP".into()));
    }
    let existing = engine.table_columns(physical)?;
    let policy = m.policy.on_destructive_change;
    let evolution =
        materialize::evolve::evolve(engine.dialect(), physical, &wanted, &existing, policy)
            .map_err(|dropped| {
                Error::Plan(efmesh_core::plan::PlanError::ForwardOnly {
                    model: m.name.clone(),
                    reason: format!(
                        "the new version drops column(s) {}; forward-only keeps the existing rows, so it can only add columns. Apply it without --forward-only (a breaking change rebuilds the history), or set `on_destructive_change` to `allow`, `warn` or `ignore` in the model's kind",
                        dropped.join(", ")
                    ),
                })
            })?;
    if !evolution.dropped.is_empty() && policy == DestructiveChange::Warn {
        tracing::warn!(
            model = m.name.as_str(),
            columns = evolution.dropped.join(",").as_str(),
            "dropping columns the forward-only version no longer returns (on_destructive_change warn)"
        );
    }
    if !evolution.kept.is_empty() {
        tracing::info!(
            model = m.name.as_str(),
            columns = evolution.kept.join(",").as_str(),
            "keeping columns the forward-only version no longer returns; new rows hold NULL (on_destructive_change ignore)"
        );
    }
    if !evolution.statements.is_empty() {
        tracing::info!(
            model = m.name.as_str(),
            statements = evolution.statements.len(),
            "evolving the schema (forward-only)"
        );
        engine.transaction(&format!("evolving {}", m.name), &evolution.statements)?;
    }
    Ok(())
}

/// Enforce the schema contract before anything is written: ask the engine for the columns the
/// query returns (without running it) and compare them with the declared `columns`.
fn check_contract(
    project: &Project,
    i: usize,
    render: &Renderer,
    engine: &mut dyn Engine,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let m = &project.models[i];
    let Some(declared) = &m.columns else {
        return Ok(());
    };
    if m.query.is_none() {
        return Ok(());
    }
    let sql = render.whole(i, now)?;
    let returned = engine.describe(&sql).map_err(|e| match e {
        EngineError::Statement { message, sql, .. } => Error::Build {
            model: m.name.clone(),
            message,
            sql,
        },
        other => Error::Engine(other),
    })?;
    let managed: Vec<&str> = m
        .kind
        .validity_columns()
        .map(|(f, t)| vec![f, t])
        .unwrap_or_default();
    let declared: Vec<(String, String)> = declared
        .iter()
        .map(|c| (c.name.clone(), c.sql_type.clone()))
        .collect();
    let differences = efmesh_core::contract::compare(&declared, &returned, &managed);
    if differences.is_empty() {
        Ok(())
    } else {
        Err(Error::SchemaMismatch {
            model: m.name.clone(),
            file: m.file.clone(),
            differences,
        })
    }
}
