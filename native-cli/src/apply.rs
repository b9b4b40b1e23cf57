//! Applying a plan: build the missing physics in DAG order, swap the environment's views in
//! one engine transaction, then record the new state in one state transaction.
//!
//! Consumers never see a half-applied plan: views change only after every build succeeded.
//! A build that fails or is killed leaves the physics already built (and recorded) in place,
//! and the next apply reuses it.

use crate::engine::{Engine, EngineError};
use crate::state::{JournalEntry, StateStore};
use crate::Error;
use chrono::{DateTime, NaiveDateTime, Utc};
use efmesh_core::model::{Kind, Model};
use efmesh_core::model_sql::{render_model, RelationTarget};
use efmesh_core::naming::{self, PHYSICAL_SCHEMA};
use efmesh_core::plan::{Category, Plan};
use efmesh_core::project::{seed_path, Project};
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};
use std::time::Instant;

/// One interval batch an apply computed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchDone {
    /// The model.
    pub model: String,
    /// The batch's first instant.
    pub start: String,
    /// The first instant after it.
    pub end: String,
}

/// A SQL timestamp literal for an interval edge.
fn edge_literal(t: NaiveDateTime) -> String {
    format!("CAST('{}' AS TIMESTAMP)", t.format("%Y-%m-%d %H:%M:%S"))
}

/// Compute a time-range model's planned batches: each is one engine transaction (DELETE of the
/// range, then INSERT of the query rendered for it, filtered to it), recorded done only after
/// it committed. Recomputing an interval therefore never duplicates rows, and a batch that is
/// interrupted is simply computed again.
/// What every batch of one apply shares.
struct BatchContext<'a> {
    project: &'a Project,
    names: &'a HashMap<String, String>,
    retries: u32,
}

fn run_batches(
    cx: &BatchContext,
    i: usize,
    a: &efmesh_core::plan::Action,
    physical: &str,
    state: &mut dyn StateStore,
    engine: &mut dyn Engine,
) -> Result<Vec<BatchDone>, Error> {
    let (project, names, retries) = (cx.project, cx.names, cx.retries);
    let m = &project.models[i];
    let pfp = a.physical_fingerprint.as_deref().unwrap_or_default();
    let mut done = vec![];
    for (k, b) in a.batches.iter().enumerate() {
        let sql = render_model(
            project,
            i,
            &RelationTarget::Physical(names.clone()),
            b.start,
            b.end,
            false,
        )
        .map_err(|e| Error::Render(e.to_string()))?;
        let statements = match &m.kind {
            Kind::IncrementalByTimeRange { time_column, .. } => {
                let tc = engine.quote(time_column);
                let (s, e) = (edge_literal(b.start), edge_literal(b.end));
                vec![
                    format!("DELETE FROM {physical} WHERE {tc} >= {s} AND {tc} < {e}"),
                    format!("INSERT INTO {physical} BY NAME SELECT * FROM ({sql}) AS q WHERE q.{tc} >= {s} AND q.{tc} < {e}"),
                ]
            }
            Kind::IncrementalByUniqueKey { unique_key, .. } => {
                upsert_statements(engine, physical, &sql, unique_key)
            }
            Kind::ScdType2 { .. } | Kind::ScdType2ByColumn { .. } => {
                scd_statements(engine, project, i, physical, &sql, b.end)?
            }
            _ => return Ok(done),
        };
        let batch = format!("{}/{}", k + 1, a.batches.len());
        tracing::info!(model = a.model.as_str(), batch = batch.as_str(), interval = %b, "backfilling");
        let mut attempt = 0;
        loop {
            match engine.transaction(&format!("computing {} for {b}", a.model), &statements) {
                Ok(()) => {
                    state.mark_done(pfp, *b)?;
                    break;
                }
                Err(err) if attempt < retries => {
                    let wait = retry_base() * 2u32.pow(attempt.min(16));
                    attempt += 1;
                    tracing::warn!(model = a.model.as_str(), interval = %b, attempt, retries, wait_ms = wait.as_millis() as u64, error = %err, "batch failed; retrying");
                    std::thread::sleep(wait);
                }
                Err(err) => {
                    state.mark_failed(pfp, *b)?;
                    let message = match err {
                        EngineError::Statement { message, .. } => message,
                        other => other.to_string(),
                    };
                    let message = if attempt > 0 {
                        format!("{message} (after {} attempts)", attempt + 1)
                    } else {
                        message
                    };
                    return Err(Error::Batch {
                        model: a.model.clone(),
                        interval: b.to_string(),
                        message,
                    });
                }
            }
        }
        let iso = |t: NaiveDateTime| t.format("%Y-%m-%dT%H:%M:%SZ").to_string();
        done.push(BatchDone {
            model: a.model.clone(),
            start: iso(b.start),
            end: iso(b.end),
        });
    }
    Ok(done)
}

/// An upsert by unique key in one transaction: stage the batch, refuse duplicate or NULL keys
/// (naming up to five of them: picking one row silently would hide a data bug), delete the
/// incoming keys, insert the batch.
fn upsert_statements(
    engine: &dyn Engine,
    physical: &str,
    sql: &str,
    unique_key: &[String],
) -> Vec<String> {
    let keys: Vec<String> = unique_key.iter().map(|k| engine.quote(k)).collect();
    let matches = keys
        .iter()
        .map(|k| format!("t.{k} = b.{k}"))
        .collect::<Vec<_>>()
        .join(" AND ");
    let staging = "efmesh_upsert_batch";
    let mut out = stage_with_key_checks(engine, staging, sql, unique_key);
    out.push(format!(
        "DELETE FROM {physical} AS t USING {staging} AS b WHERE {matches}"
    ));
    out.push(format!(
        "INSERT INTO {physical} BY NAME SELECT * FROM {staging}"
    ));
    out.push(format!("DROP TABLE {staging}"));
    out
}

/// Stage a batch's rows in a temp table and refuse duplicate or NULL keys, naming up to five.
fn stage_with_key_checks(
    engine: &dyn Engine,
    staging: &str,
    sql: &str,
    unique_key: &[String],
) -> Vec<String> {
    let keys: Vec<String> = unique_key.iter().map(|k| engine.quote(k)).collect();
    let key_list = keys.join(", ");
    let key_text = if keys.len() == 1 {
        format!("CAST({} AS VARCHAR)", keys[0])
    } else {
        format!("CAST(({key_list}) AS VARCHAR)")
    };
    let any_null = keys
        .iter()
        .map(|k| format!("{k} IS NULL"))
        .collect::<Vec<_>>()
        .join(" OR ");
    let names = unique_key.join(", ");
    vec![
        format!("CREATE OR REPLACE TEMP TABLE {staging} AS SELECT * FROM ({sql}) AS q"),
        format!(
            "SELECT error('duplicate unique_key ({names}) values in one batch: ' || string_agg(k, ', ')) FROM (SELECT {key_text} AS k FROM {staging} GROUP BY {key_list} HAVING count(*) > 1 ORDER BY 1 LIMIT 5) HAVING count(*) > 0"
        ),
        format!("SELECT error('NULL unique_key ({names}) in ' || count(*) || ' row(s) of the batch') FROM {staging} WHERE {any_null} HAVING count(*) > 0"),
    ]
}

/// One SCD type 2 run in one transaction: compare a snapshot of the source with the open
/// versions, close the ones that changed (and, with `invalidate_hard_deletes`, the ones that
/// disappeared), and open a version for every key without an open one. By time, a row changed
/// when its `updated_at` moved forward, and the new version is valid from it; by column, a row
/// changed when a compared column differs, and versions are valid from the run's time (the
/// batch end). First versions are valid from 1970-01-01 unless the kind says otherwise.
fn scd_statements(
    engine: &dyn Engine,
    project: &Project,
    i: usize,
    physical: &str,
    sql: &str,
    run_time: NaiveDateTime,
) -> Result<Vec<String>, Error> {
    let m = &project.models[i];
    let q = |s: &str| engine.quote(s);
    let staging = "efmesh_scd_batch";
    let epoch = "TIMESTAMP '1970-01-01 00:00:00'".to_string();
    let now = edge_literal(run_time);
    let (unique_key, valid_from_name, valid_to_name, invalidate) = match &m.kind {
        Kind::ScdType2 {
            unique_key,
            valid_from_name,
            valid_to_name,
            invalidate_hard_deletes,
            ..
        }
        | Kind::ScdType2ByColumn {
            unique_key,
            valid_from_name,
            valid_to_name,
            invalidate_hard_deletes,
            ..
        } => (
            unique_key,
            valid_from_name,
            valid_to_name,
            *invalidate_hard_deletes,
        ),
        _ => return Ok(vec![]),
    };
    let vt = q(valid_to_name);
    let vf = q(valid_from_name);
    let matches = unique_key
        .iter()
        .map(|k| format!("t.{0} = s.{0}", q(k)))
        .collect::<Vec<_>>()
        .join(" AND ");
    let (changed, new_from, first_from) = match &m.kind {
        Kind::ScdType2 {
            updated_at_name,
            updated_at_as_valid_from,
            ..
        } => {
            let u = format!("CAST(s.{} AS TIMESTAMP)", q(updated_at_name));
            let first = if *updated_at_as_valid_from {
                u.clone()
            } else {
                epoch
            };
            (
                format!("{u} > CAST(t.{} AS TIMESTAMP)", q(updated_at_name)),
                u,
                first,
            )
        }
        Kind::ScdType2ByColumn {
            columns,
            execution_time_as_valid_from,
            ..
        } => {
            let compared: Vec<String> = if columns.iter().any(|c| c == "*") {
                let all = project.columns[i]
                    .clone()
                    .ok_or_else(|| Error::Render(format!("`{}` compares all columns (`columns *`), but its output columns are unknown; declare `columns`", m.name)))?;
                all.into_iter()
                    .filter(|c| {
                        !unique_key.contains(c) && c != valid_from_name && c != valid_to_name
                    })
                    .collect()
            } else {
                columns.clone()
            };
            let any = compared
                .iter()
                .map(|c| format!("t.{0} IS DISTINCT FROM s.{0}", q(c)))
                .collect::<Vec<_>>()
                .join(" OR ");
            let first = if *execution_time_as_valid_from {
                now.clone()
            } else {
                epoch
            };
            (
                if any.is_empty() {
                    "false".into()
                } else {
                    format!("({any})")
                },
                now.clone(),
                first,
            )
        }
        _ => return Ok(vec![]),
    };
    let mut out = stage_with_key_checks(engine, staging, sql, unique_key);
    out.push(format!("UPDATE {physical} AS t SET {vt} = {new_from} FROM {staging} AS s WHERE {matches} AND t.{vt} IS NULL AND {changed}"));
    if invalidate {
        out.push(format!("UPDATE {physical} AS t SET {vt} = {now} WHERE t.{vt} IS NULL AND NOT EXISTS (SELECT 1 FROM {staging} AS s WHERE {matches})"));
    }
    out.push(format!(
        "INSERT INTO {physical} BY NAME SELECT s.*, CASE WHEN EXISTS (SELECT 1 FROM {physical} AS t WHERE {matches}) THEN {new_from} ELSE {first_from} END AS {vf}, CAST(NULL AS TIMESTAMP) AS {vt} FROM {staging} AS s WHERE NOT EXISTS (SELECT 1 FROM {physical} AS t WHERE {matches} AND t.{vt} IS NULL)"
    ));
    out.push(format!("DROP TABLE {staging}"));
    Ok(out)
}

/// Bring kept physics in line with a forward-only version: add its new columns, refuse to
/// drop any (that would rewrite the history forward-only promises to keep).
fn evolve_schema(
    project: &Project,
    i: usize,
    physical: &str,
    names: &HashMap<String, String>,
    engine: &mut dyn Engine,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let m = &project.models[i];
    let edge = complete_until(m, now);
    let sql = render_model(
        project,
        i,
        &RelationTarget::Physical(names.clone()),
        edge,
        edge,
        false,
    )
    .map_err(|e| Error::Render(e.to_string()))?;
    let mut wanted = engine.describe(&sql)?;
    if let Kind::ScdType2 {
        valid_from_name,
        valid_to_name,
        ..
    }
    | Kind::ScdType2ByColumn {
        valid_from_name,
        valid_to_name,
        ..
    } = &m.kind
    {
        wanted.push((valid_from_name.clone(), "TIMESTAMP".into()));
        wanted.push((valid_to_name.clone(), "TIMESTAMP".into()));
    }
    let existing = engine.table_columns(physical)?;
    let has =
        |cols: &[(String, String)], n: &str| cols.iter().any(|(c, _)| c.eq_ignore_ascii_case(n));
    let dropped: Vec<&str> = existing
        .iter()
        .filter(|(c, _)| !has(&wanted, c))
        .map(|(c, _)| c.as_str())
        .collect();
    if !dropped.is_empty() {
        return Err(Error::Plan(efmesh_core::plan::PlanError::ForwardOnly {
            model: m.name.clone(),
            reason: format!(
                "the new version drops column(s) {}; forward-only keeps the existing rows, so it can only add columns. Apply it without --forward-only (a breaking change rebuilds the history)",
                dropped.join(", ")
            ),
        }));
    }
    let added: Vec<String> = wanted
        .iter()
        .filter(|(c, _)| !has(&existing, c))
        .map(|(c, t)| format!("ALTER TABLE {physical} ADD COLUMN {} {t}", engine.quote(c)))
        .collect();
    if !added.is_empty() {
        tracing::info!(
            model = m.name.as_str(),
            columns = added.len(),
            "adding columns (forward-only)"
        );
        engine.transaction(&format!("evolving {}", m.name), &added)?;
    }
    Ok(())
}

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
}

/// The first retry waits this long, the next twice as long, and so on. `EFMESH_RETRY_BASE_MS`
/// shortens it for tests.
fn retry_base() -> std::time::Duration {
    let ms = std::env::var("EFMESH_RETRY_BASE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    std::time::Duration::from_millis(ms)
}

/// What an apply did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApplyOutcome {
    /// Models whose physics this apply built, in build order.
    pub built: Vec<String>,
    /// Interval batches computed, in order.
    pub batches: Vec<BatchDone>,
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

fn qualified((schema, table): (String, String)) -> String {
    format!("{schema}.{table}")
}

/// The last complete interval edge before `now`: builds of time-range models cover
/// `[start, this)` until incremental backfill lands.
fn complete_until(m: &Model, now: DateTime<Utc>) -> NaiveDateTime {
    efmesh_core::interval::unit_of(m).floor(now.naive_utc())
}

fn model_start(project: &Project, i: usize, end: NaiveDateTime) -> NaiveDateTime {
    project
        .history_start(i)
        .unwrap_or(end - chrono::Duration::days(1))
        .min(end)
}

/// The DDL that builds model `i`'s physics at `physical`.
fn build_statement(
    project: &Project,
    i: usize,
    physical: &str,
    names: &HashMap<String, String>,
    now: DateTime<Utc>,
) -> Result<String, Error> {
    let m = &project.models[i];
    match &m.kind {
        Kind::Seed { path } => {
            let file = seed_path(&m.file, path).replace('\'', "''");
            let select = match &m.columns {
                Some(cols) => cols
                    .iter()
                    .map(|c| format!("CAST(\"{0}\" AS {1}) AS \"{0}\"", c.name, c.sql_type))
                    .collect::<Vec<_>>()
                    .join(", "),
                None => "*".into(),
            };
            Ok(format!("CREATE OR REPLACE TABLE {physical} AS SELECT {select} FROM read_csv('{file}', header = true, all_varchar = true)"))
        }
        kind => {
            let end = complete_until(m, now);
            let start = model_start(project, i, end);
            let sql = render_model(
                project,
                i,
                &RelationTarget::Physical(names.clone()),
                start,
                end.max(start),
                false,
            )
            .map_err(|e| Error::Render(e.to_string()))?;
            Ok(match kind {
                Kind::View {
                    materialized: false,
                } => format!("CREATE OR REPLACE VIEW {physical} AS {sql}"),
                // created empty with the query's columns; the interval batches fill it
                Kind::ScdType2 { valid_from_name, valid_to_name, .. } | Kind::ScdType2ByColumn { valid_from_name, valid_to_name, .. } => format!(
                    "CREATE OR REPLACE TABLE {physical} AS SELECT *, CAST(NULL AS TIMESTAMP) AS \"{valid_from_name}\", CAST(NULL AS TIMESTAMP) AS \"{valid_to_name}\" FROM ({sql}) AS q LIMIT 0"
                ),
                Kind::IncrementalByTimeRange { .. } | Kind::IncrementalByUniqueKey { .. } => {
                    format!(
                        "CREATE OR REPLACE TABLE {physical} AS SELECT * FROM ({sql}) AS q LIMIT 0"
                    )
                }
                _ => format!("CREATE OR REPLACE TABLE {physical} AS {sql}"),
            })
        }
    }
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

/// Build what `plan` needs and promote it into its environment.
pub fn apply_plan(
    project: &Project,
    plan: &Plan,
    state: &mut dyn StateStore,
    engine: &mut dyn Engine,
    opts: &ApplyOptions,
) -> Result<ApplyOutcome, Error> {
    let now = opts.now.unwrap_or_else(crate::clock::now);
    check_capabilities(project, plan, engine)?;
    let start_statements = engine.statements_issued();
    state.record_snapshots(&plan.new_snapshots)?;

    // every model's physical relation, as this plan pins it
    let mut names: HashMap<String, String> = HashMap::new();
    for a in &plan.actions {
        if let Some(pfp) = &a.physical_fingerprint {
            names.insert(
                a.model.clone(),
                qualified(naming::physical_name(&a.model, pfp)),
            );
        }
    }
    // keep the janitor away from the physics this plan reuses
    let reused: Vec<(String, String)> = plan
        .actions
        .iter()
        .filter(|a| !a.build)
        .filter_map(|a| a.physical_fingerprint.clone().map(|p| (p, a.model.clone())))
        .collect();
    state.pin_physics(&reused)?;

    // forward-only: the kept physics grows the new version's added columns (NULL for past rows)
    for a in plan.actions.iter().filter(|a| a.forward_only) {
        let i = project.index_of(&a.model).ok_or_else(|| {
            Error::Render(format!("plan names `{}`, which the project lacks", a.model))
        })?;
        evolve_schema(project, i, &names[&a.model], &names, engine, now)?;
    }
    let cx = BatchContext {
        project,
        names: &names,
        retries: opts.retries,
    };
    let mut built = vec![];
    let mut batches = vec![];
    if plan
        .actions
        .iter()
        .any(|a| a.build || !a.batches.is_empty())
    {
        engine.execute(
            "creating the physical schema",
            &format!("CREATE SCHEMA IF NOT EXISTS {PHYSICAL_SCHEMA}"),
        )?;
    }
    for a in plan
        .actions
        .iter()
        .filter(|a| a.build || !a.batches.is_empty())
    {
        let i = project.index_of(&a.model).ok_or_else(|| {
            Error::Render(format!("plan names `{}`, which the project lacks", a.model))
        })?;
        let pfp = a.physical_fingerprint.as_deref().unwrap_or_default();
        let physical = &names[&a.model];
        if a.build {
            let sql = build_statement(project, i, physical, &names, now)?;
            let started = Instant::now();
            tracing::info!(
                model = a.model.as_str(),
                env = plan.env.as_str(),
                table = physical.as_str(),
                "building"
            );
            engine
                .transaction(&format!("building {}", a.model), &[sql])
                .map_err(|e| match e {
                    EngineError::Statement { message, sql, .. } => Error::Build {
                        model: a.model.clone(),
                        message,
                        sql,
                    },
                    other => Error::Engine(other),
                })?;
            state.mark_built(pfp, &a.model, &a.kind, Utc::now())?;
            tracing::info!(
                model = a.model.as_str(),
                duration_ms = started.elapsed().as_millis() as u64,
                "built"
            );
            built.push(a.model.clone());
        }
        batches.extend(run_batches(&cx, i, a, physical, state, engine)?);
    }

    // swap the environment's views in one transaction
    let mut statements = vec![];
    let mut schemas = BTreeSet::new();
    for a in &plan.actions {
        let changed = a.category != Category::Unchanged;
        let (vs, vt) = naming::view_name(&plan.env, &a.model);
        match (&a.physical_fingerprint, a.category) {
            (_, Category::Removed) => statements.push(format!("DROP VIEW IF EXISTS {vs}.{vt}")),
            (Some(_), _) if changed => {
                if schemas.insert(vs.clone()) {
                    statements.push(format!("CREATE SCHEMA IF NOT EXISTS {vs}"));
                }
                statements.push(format!(
                    "CREATE OR REPLACE VIEW {vs}.{vt} AS SELECT * FROM {}",
                    names[&a.model]
                ));
            }
            // a version without physics (EMBEDDED, EXTERNAL) has no view; drop one an older
            // version of it may have left
            (None, _) if changed && a.previous_fingerprint.is_some() => {
                statements.push(format!("DROP VIEW IF EXISTS {vs}.{vt}"))
            }
            _ => {}
        }
    }
    if !statements.is_empty() {
        engine.transaction(&format!("promoting to {}", plan.env), &statements)?;
    }
    let summary = serde_json::json!({
        "counts": plan.counts().into_iter().map(|(c, n)| (c.label().to_string(), n)).collect::<std::collections::BTreeMap<_, _>>(),
        "built": built,
        "forwardOnly": plan.actions.iter().filter(|a| a.forward_only).map(|a| a.model.clone()).collect::<Vec<_>>(),
        "reclassified": plan.actions.iter().filter(|a| a.explain.iter().any(|e| e.starts_with("reclassified as"))).map(|a| serde_json::json!({"model": a.model, "category": a.category.label()})).collect::<Vec<_>>(),
        "changed": plan.actions.iter().filter(|a| a.category != Category::Unchanged).map(|a| serde_json::json!({"model": a.model, "category": a.category.label(), "fingerprint": a.fingerprint})).collect::<Vec<_>>(),
    });
    let journal = JournalEntry {
        env: plan.env.clone(),
        summary,
        applied_by: opts.applied_by.clone().unwrap_or_else(os_user),
        applied_at: now,
    };
    state.promote(&plan.env, &plan.pointers_after(project), &journal)?;
    tracing::info!(
        env = plan.env.as_str(),
        views = statements.len(),
        "promoted"
    );
    Ok(ApplyOutcome {
        built,
        batches,
        promoted: true,
        statements: engine.statements_issued() - start_statements,
    })
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
        fn supports(&self, f: EngineFeature) -> bool {
            f != EngineFeature::FileSources
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
            external_models: None,
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
                now: crate::clock::now().naive_utc(),
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
