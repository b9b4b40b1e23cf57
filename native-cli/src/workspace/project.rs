//! An opened project: the library's entry point, over the configured backends.

use super::backends::{self, Backends};
use super::read::{self, CheckReport};
use crate::engine::Engine;
use crate::exec::apply::{ApplyOptions, ApplyOutcome};
use crate::ops::janitor::{JanitorOptions, JanitorReport};
use crate::state::prelude::*;
use crate::state::MigrateReport;
use crate::{CheckFailure, Error};
use chrono::NaiveDateTime;
use efmesh_core::model_sql::{render_model, RelationTarget};
use efmesh_core::naming;
use efmesh_core::plan::Plan;
use efmesh_core::project::Project;
use efmesh_core::Diagnostic;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// An opened project that checked clean: the entry point of the library.
#[derive(Debug)]
pub struct Efmesh {
    root: PathBuf,
    project: Project,
    warnings: Vec<Diagnostic>,
    backends: Backends,
    /// The engine connection a plan opened to look for missing physics, kept for the apply
    /// that follows: opening a DuckDB file of thousands of tables costs a third of a second,
    /// and an apply paid it twice.
    parked_engine: ParkedEngine,
}

/// The slot [`Efmesh::engine`] takes a parked connection from.
#[derive(Default)]
struct ParkedEngine(std::sync::Mutex<Option<Box<dyn Engine + Send>>>);

impl std::fmt::Debug for ParkedEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parked = self.0.lock().map(|e| e.is_some()).unwrap_or(false);
        f.debug_struct("ParkedEngine")
            .field("parked", &parked)
            .finish()
    }
}

/// One model in [`Graph`]: the `efmesh graph --json` contract.
#[derive(Debug, Clone, Serialize)]
pub struct GraphModel {
    /// The model's `schema.table` name.
    pub name: String,
    /// The kind as written in a MODEL block (`FULL`, `VIEW`, ...).
    pub kind: String,
    /// The names of the models it reads directly, sorted.
    pub deps: Vec<String>,
    /// The full fingerprint: it changes exactly when the model's data would.
    pub fingerprint: String,
}

/// The model DAG in topological order.
#[derive(Debug, Clone, Serialize)]
pub struct Graph {
    /// Every model, parents before children.
    pub models: Vec<GraphModel>,
}

/// Options for [`Efmesh::render`].
#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    /// Render references to this environment's views (default: prod, plain names).
    pub env: Option<String>,
    /// Interval bounds the time macros bind to (default: the model's start, one interval).
    pub start: Option<String>,
    /// End of that interval, exclusive (default: one interval after the start).
    pub end: Option<String>,
    /// Lay the SQL out over indented lines.
    pub pretty: bool,
}

/// A rendered model: the SQL and the interval its macros were bound to.
#[derive(Debug, Clone, Serialize)]
pub struct Rendered {
    /// The model's `schema.table` name.
    pub model: String,
    /// The environment whose views the SQL's references point to.
    pub env: String,
    /// Start of the interval the time macros were bound to (`YYYY-MM-DDTHH:MM:SSZ`).
    pub start: String,
    /// End of that interval, exclusive, in the same format.
    pub end: String,
    /// The SQL as it would run.
    pub sql: String,
}

impl Efmesh {
    /// Open the project at (or above) `dir`. Fails with [`Error::Invalid`] when it does not
    /// check clean, carrying every diagnostic.
    pub fn open(dir: impl AsRef<Path>) -> Result<Efmesh, Error> {
        Efmesh::from_report(read::check(dir.as_ref())?)
    }

    /// The project of a report that checked clean, or every diagnostic as an error.
    pub(crate) fn from_report(report: CheckReport) -> Result<Efmesh, Error> {
        Efmesh::from_report_with(report, None)
    }

    /// [`Efmesh::from_report`] with the backends already opened for the same config, if any.
    fn from_report_with(report: CheckReport, opened: Option<Backends>) -> Result<Efmesh, Error> {
        match report.project {
            Some(project) => Ok(Efmesh {
                backends: match opened {
                    Some(b) => b,
                    None => backends::open(&report.root, &project.config)?,
                },
                root: report.root,
                project,
                warnings: report.diagnostics,
                parked_engine: Default::default(),
            }),
            None => Err(Error::Invalid(Box::new(CheckFailure {
                diagnostics: report.diagnostics,
                files: report.files,
            }))),
        }
    }

    /// The project root (the directory holding `efmesh.toml`).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The checked project.
    pub fn project(&self) -> &Project {
        &self.project
    }

    /// Warnings found while checking.
    pub fn warnings(&self) -> &[Diagnostic] {
        &self.warnings
    }

    fn model_index(&self, name: &str) -> Result<usize, Error> {
        self.project
            .index_of(name)
            .ok_or_else(|| Error::UnknownModel {
                name: name.to_string(),
                suggestion: efmesh_core::suggest::closest(
                    name,
                    self.project.models.iter().map(|m| m.name.as_str()),
                ),
            })
    }

    /// A connection to the configured state store.
    pub fn state(&self) -> Result<Box<dyn StateStore + Send>, Error> {
        Ok(self.backends.state.open()?)
    }

    /// The configured backends (engine, state store, lake), behind their seams.
    pub fn backends(&self) -> &Backends {
        &self.backends
    }

    /// Take `env`'s lock (shared by apply, run and restate) for as long as the returned guard
    /// lives; [`Error::LockHeld`] names a live holder.
    pub fn lock(&self, env: &str) -> Result<crate::ops::lock::EnvLock, Error> {
        naming::validate_env(env).map_err(|e| Error::Argument {
            message: e.to_string(),
            help: None,
        })?;
        crate::ops::lock::EnvLock::acquire(self.backends.state.clone(), env)
    }

    /// A connection to the configured engine: the one the plan left parked, else a new one.
    pub fn engine(&self) -> Result<Box<dyn Engine + Send>, Error> {
        if let Some(engine) = self.parked().take() {
            return Ok(engine);
        }
        Ok(self.backends.engine.open()?)
    }

    /// Close the engine connection a plan kept for its apply. Whoever waits between the plan
    /// and the apply (a confirmation prompt) calls it, so the database is not held open
    /// against other processes while a person reads the plan; so does a long-lived holder of
    /// an `Efmesh` that planned or asked for a status and is done with the engine.
    pub fn release_engine(&self) {
        drop(self.parked().take());
    }

    fn parked(&self) -> std::sync::MutexGuard<'_, Option<Box<dyn Engine + Send>>> {
        // a panic while holding the slot leaves at worst a connection to drop
        self.parked_engine
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The project as `env` builds it: redacted (see [`Project::redacted`]) when the
    /// environment is configured with `redacted = true`, else as loaded.
    pub fn project_for(&self, env: &str) -> Result<std::borrow::Cow<'_, Project>, Error> {
        let redacted = self
            .project
            .config
            .environments
            .get(env)
            .is_some_and(|e| e.redacted);
        if !redacted {
            return Ok(std::borrow::Cow::Borrowed(&self.project));
        }
        self.project
            .redacted(self.backends.engine.dialect())
            .map(std::borrow::Cow::Owned)
            .map_err(|message| Error::Config { message })
    }

    /// The plan for `env`: what applying the project there would change.
    pub fn plan(&self, env: &str) -> Result<Plan, Error> {
        self.plan_with_options(env, &efmesh_core::plan::PlanOptions::default())
    }

    /// [`Efmesh::plan`] with the operator's overrides (`--reclassify`, `--forward-only`).
    pub fn plan_with_options(
        &self,
        env: &str,
        options: &efmesh_core::plan::PlanOptions,
    ) -> Result<Plan, Error> {
        self.plan_in(self.state()?.as_mut(), env, options)
    }

    /// [`Efmesh::plan`] against a given state store. Served lake versions are checked against
    /// their manifests first; what is missing is planned as physics to rebuild.
    pub fn plan_in(
        &self,
        state: &mut dyn StateStore,
        env: &str,
        options: &efmesh_core::plan::PlanOptions,
    ) -> Result<Plan, Error> {
        self.plan_checked(state, env, options, false)
    }

    /// The served physics of `env` that is not where the state says: lake versions whose
    /// manifest or files are gone and, with `engine`, physical relations the engine lacks
    /// (which opens the engine, so only commands that need it anyway ask).
    pub fn missing_physics(
        &self,
        env: &str,
        pointers: &BTreeMap<String, efmesh_core::plan::Pointer>,
        engine: bool,
    ) -> Result<Vec<crate::ops::reality::MissingPhysics>, Error> {
        let project = self.project_for(env)?;
        let mut missing =
            crate::ops::reality::missing_in_lake(&project, pointers, self.backends.lake.as_ref())?;
        if pointers.is_empty() {
            return Ok(missing);
        }
        let in_engine = match self.backends.engine.missing_database() {
            // known without opening it, so even `plan` sees it
            Some(file) => crate::ops::reality::all_served(
                &project,
                pointers,
                &format!("the database file `{file}` is gone"),
            ),
            None if engine => match self.engine() {
                Ok(mut e) => {
                    let missing =
                        crate::ops::reality::missing_in_engine(&project, pointers, e.as_mut())?;
                    *self.parked() = Some(e);
                    missing
                }
                // another process is writing: `status` still answers, and apply or run stop
                // at the lock when they open the engine themselves
                Err(Error::Engine(crate::engine::EngineError::Locked { .. })) => vec![],
                Err(e) => return Err(e),
            },
            None => vec![],
        };
        for m in in_engine {
            if !missing
                .iter()
                .any(|x| x.physical_fingerprint == m.physical_fingerprint)
            {
                missing.push(m);
            }
        }
        Ok(missing)
    }

    /// [`Efmesh::plan_in`], also checking the engine for the physics `env` serves when
    /// `engine` (apply and run, which open it anyway).
    pub fn plan_checked(
        &self,
        state: &mut dyn StateStore,
        env: &str,
        options: &efmesh_core::plan::PlanOptions,
        engine: bool,
    ) -> Result<Plan, Error> {
        naming::validate_env(env).map_err(|e| Error::Argument {
            message: e.to_string(),
            help: None,
        })?;
        let project = self.project_for(env)?;
        let project = project.as_ref();
        let pointers = state.environment(env)?;
        let missing = self.missing_physics(env, &pointers, engine)?;
        let mut checked;
        let options = if missing.is_empty() {
            options
        } else {
            checked = options.clone();
            for m in missing {
                tracing::warn!(
                    env,
                    model = m.model.as_str(),
                    missing = m.what.as_str(),
                    "served physics is missing; the plan rebuilds it"
                );
                checked
                    .missing_physics
                    .insert(m.physical_fingerprint, m.what);
            }
            &checked
        };
        let needed = efmesh_core::plan::needed_snapshots(project, &pointers);
        let snapshots = state.snapshots(&needed)?;
        let built = if needed.is_empty() {
            Default::default()
        } else {
            state.built_physics()?
        };
        let candidates = efmesh_core::plan::ledger_candidates(project, &pointers, &snapshots);
        let ledgers = if candidates.is_empty() {
            Default::default()
        } else {
            state.ledgers(&candidates)?
        };
        let plan_state = efmesh_core::plan::PlanState {
            pointers: &pointers,
            snapshots: &snapshots,
            built: &built,
            ledgers: &ledgers,
            now: crate::util::clock::now().naive_utc(),
        };
        Ok(efmesh_core::plan::plan(project, env, plan_state, options)?)
    }

    /// Apply a plan made by [`Efmesh::plan`]: build what it needs, then promote it.
    pub fn apply(&self, plan: &Plan, mut opts: ApplyOptions) -> Result<ApplyOutcome, Error> {
        // under the environment's lock, and only if nobody changed the environment since the
        // plan was made
        let _lock = match opts.fence {
            Some(_) => None,
            None => {
                let lock = self.lock(&plan.env)?;
                opts.fence = Some(lock.fence());
                Some(lock)
            }
        };
        if opts.root.is_none() {
            opts.root = Some(self.root.clone());
        }
        let mut state = self.state()?;
        let pointers = state.environment(&plan.env)?;
        if !plan_is_current(plan, &pointers) {
            return Err(Error::Argument {
                message: format!(
                    "environment `{}` changed since this plan was made (another apply promoted meanwhile)",
                    plan.env
                ),
                help: Some("plan again and review the new plan".into()),
            });
        }
        let applied = crate::exec::apply::apply_plan(
            self.project_for(&plan.env)?.as_ref(),
            plan,
            state.as_mut(),
            self.engine()?.as_mut(),
            self.backends.lake.clone(),
            &opts,
        )?;
        crate::workspace::plan_cache::sweep_dead_temps(&self.root);
        self.write_lake_index(&plan.env, state.as_mut());
        Ok(applied)
    }

    /// After an apply of `prod`, the lake's `index.html` (`[lake.index]`). The data is
    /// promoted by then, so a page that cannot be written is a warning naming the lake, not a
    /// failed apply; the next apply writes it again.
    fn write_lake_index(&self, env: &str, state: &mut dyn StateStore) {
        let config = &self.project.config.lake_index;
        let Some(lake) = self.backends.lake.clone() else {
            return;
        };
        if env != naming::PROD || !config.enabled {
            return;
        }
        let project = match self.project_for(env) {
            Ok(p) => p,
            Err(e) => return tracing::warn!(error = %e, "lake index.html not written"),
        };
        match crate::ops::html_page::write_lake_index(&project, state, lake.clone(), env, config) {
            Ok(()) => tracing::info!(
                page = lake.url(crate::ops::html_page::INDEX_FILE).as_str(),
                "wrote the lake's page"
            ),
            Err(e) => tracing::warn!(
                error = %e,
                lake = lake.describe().as_str(),
                "lake index.html not written; `[lake.index] enabled = false` turns it off"
            ),
        }
    }

    /// Clear `[from, to)` of a time-range model and its time-range descendants in `env`, so
    /// the next apply recomputes exactly that range.
    pub fn restate(
        &self,
        env: &str,
        model: &str,
        from: &str,
        to: &str,
        dry_run: bool,
    ) -> Result<crate::ops::restate::RestateReport, Error> {
        naming::validate_env(env).map_err(|e| Error::Argument {
            message: e.to_string(),
            help: None,
        })?;
        let _lock = if dry_run { None } else { Some(self.lock(env)?) };
        crate::ops::restate::restate(
            &self.project,
            self.state()?.as_mut(),
            env,
            model,
            from,
            to,
            dry_run,
        )
    }

    /// One unattended tick of `env`: what became due, under the lock, journaled.
    pub fn run(
        &self,
        env: &str,
        opts: &crate::ops::run::RunOptions,
    ) -> (crate::ops::run::RunReport, Option<Error>) {
        crate::ops::run::run(self, env, opts)
    }

    /// Whether `env` is healthy, and why not; `deep` also compares every view, physical
    /// table and lake file with the state (`status --deep`).
    pub fn status(&self, env: &str, deep: bool) -> Result<crate::ops::status::StatusReport, Error> {
        naming::validate_env(env).map_err(|e| Error::Argument {
            message: e.to_string(),
            help: None,
        })?;
        let mut state = self.state()?;
        let pointers = state.environment(env)?;
        let missing = self.missing_physics(env, &pointers, true)?;
        let mut report = crate::ops::status::status(
            self.project_for(env)?.as_ref(),
            state.as_mut(),
            env,
            crate::util::clock::now(),
        )?;
        if let Some(first) = missing.first() {
            report.problems.push(format!(
                "{} served version(s) are missing, the first `{}`: {}; `efmesh apply {env}` rebuilds them",
                missing.len(),
                first.model,
                first.what
            ));
            report.healthy = false;
        }
        report.missing_physics = missing;
        if deep && !pointers.is_empty() && self.backends.engine.missing_database().is_none() {
            let known = state.built_physics()?;
            let mut engine = self.engine()?;
            let all = crate::ops::reality::deep_mismatches(
                self.project_for(env)?.as_ref(),
                env,
                &pointers,
                &known,
                engine.as_mut(),
                self.backends.lake.as_ref(),
            )?;
            let wrong = all.iter().filter(|m| m.kind.serves_wrong()).count();
            if wrong > 0 {
                report.problems.push(format!(
                    "{wrong} deep mismatch(es) affect served data; see the deep check below"
                ));
                report.healthy = false;
            }
            report.mismatches = Some(all);
        } else if deep {
            report.mismatches = Some(vec![]);
        }
        Ok(report)
    }

    /// What each model `env` serves may be believed to answer, declared and effective.
    pub fn passport(&self, env: &str) -> Result<crate::ops::passport::PassportReport, Error> {
        naming::validate_env(env).map_err(|e| Error::Argument {
            message: e.to_string(),
            help: None,
        })?;
        crate::ops::passport::passports(&self.project, self.state()?.as_mut(), env)
    }

    /// Audit what `env` serves now, through its views; `only` limits it to these models.
    /// Changes nothing.
    pub fn audit(
        &self,
        env: &str,
        only: &[String],
    ) -> Result<crate::ops::audit::AuditReport, Error> {
        naming::validate_env(env).map_err(|e| Error::Argument {
            message: e.to_string(),
            help: None,
        })?;
        crate::ops::audit::audit_env(
            &self.project,
            self.state()?.as_mut(),
            self.engine()?.as_mut(),
            env,
            only,
            crate::util::clock::now().naive_utc(),
        )
    }

    /// Compare what `env_b` serves with what `env_a` serves: versions always, rows with
    /// `options.data`. Changes nothing.
    pub fn diff(
        &self,
        env_a: &str,
        env_b: &str,
        options: &crate::ops::diff::DiffOptions,
    ) -> Result<crate::ops::diff::EnvDiff, Error> {
        for env in [env_a, env_b] {
            naming::validate_env(env).map_err(|e| Error::Argument {
                message: e.to_string(),
                help: None,
            })?;
        }
        let mut engine = if options.data {
            Some(self.engine()?)
        } else {
            None
        };
        crate::ops::diff::diff(
            &self.project,
            self.state()?.as_mut(),
            engine
                .as_mut()
                .map(|e| e.as_mut() as &mut dyn crate::engine::Engine),
            env_a,
            env_b,
            options,
        )
    }

    /// Run one SELECT against what `env` serves, model names meaning its views.
    pub fn query(&self, env: &str, sql: &str) -> Result<crate::engine::Rows, Error> {
        naming::validate_env(env).map_err(|e| Error::Argument {
            message: e.to_string(),
            help: None,
        })?;
        crate::ops::query::query(
            self.project_for(env)?.as_ref(),
            self.state()?.as_mut(),
            self.engine()?.as_mut(),
            env,
            sql,
        )
    }

    /// Drop physics orphaned for longer than the ttl.
    pub fn janitor(&self, mut opts: JanitorOptions) -> Result<JanitorReport, Error> {
        opts.ducklake = self.project.config.engine.ducklake.is_some();
        crate::ops::janitor::run(
            self.state()?.as_mut(),
            self.engine()?.as_mut(),
            self.backends.lake.clone(),
            &opts,
        )
    }

    /// Column-level lineage of `target` (`schema.table` or `schema.table.column`) in the
    /// project as written: what each column is computed from, down to EXTERNAL and SEED
    /// columns, and what filters and joins decide the rows on the way. Reads no state.
    pub fn lineage(&self, target: &str) -> Result<efmesh_core::lineage::Lineage, Error> {
        use efmesh_core::lineage::{trace, LineageError};
        trace(&self.project, target).map_err(|e| match &e {
            LineageError::UnknownModel { target, suggestion } => Error::UnknownModel {
                name: target.clone(),
                suggestion: suggestion.clone(),
            },
            LineageError::UnknownColumn {
                suggestion,
                available,
                ..
            } => Error::Argument {
                message: e.to_string(),
                help: Some(match suggestion {
                    Some(s) => format!("did you mean `{s}`? its columns: {}", available.join(", ")),
                    None => format!("its columns: {}", available.join(", ")),
                }),
            },
            LineageError::NotTraceable { .. } => Error::Argument {
                message: e.to_string(),
                help: Some(
                    "lineage reads the parsed query; `efmesh check` shows the fallback-parse warning and what sqlparser refused"
                        .into(),
                ),
            },
        })
    }

    /// The DAG in topological order, with kinds, direct dependencies and fingerprints.
    pub fn graph(&self) -> Graph {
        let p = &self.project;
        Graph {
            models: p
                .dag
                .topological_order()
                .iter()
                .map(|&i| GraphModel {
                    name: p.models[i].name.clone(),
                    kind: p.models[i].kind.name().to_string(),
                    deps: p.parent_names(i).into_iter().map(str::to_string).collect(),
                    fingerprint: p.fingerprints[i].clone(),
                })
                .collect(),
        }
    }

    /// `efmesh graph --html`: one self-contained page of the DAG, with `env`'s passports and
    /// coverage when given (an environment never applied is refused, as by `passport`).
    pub fn graph_html(&self, env: Option<&str>) -> Result<String, Error> {
        let page = match env {
            Some(env) => {
                naming::validate_env(env).map_err(|e| Error::Argument {
                    message: e.to_string(),
                    help: None,
                })?;
                // `passports` refuses an environment never applied
                let mut state = self.state()?;
                crate::ops::html_page::page(
                    &*self.project_for(env)?,
                    Some(state.as_mut()),
                    Some(env),
                )?
            }
            None => crate::ops::html_page::page(&self.project, None, None)?,
        };
        Ok(efmesh_core::html_page::render(&page))
    }

    /// The final SQL of a model, references rendered to an environment's views.
    pub fn render(&self, model: &str, opts: &RenderOptions) -> Result<Rendered, Error> {
        let i = self.model_index(model)?;
        let env = opts.env.clone().unwrap_or_else(|| naming::PROD.to_string());
        naming::validate_env(&env).map_err(|e| Error::Argument {
            message: e.to_string(),
            help: None,
        })?;
        let m = &self.project.models[i];
        let parse = |s: &str, what: &str| {
            efmesh_core::time::parse_instant(s).map_err(|message| Error::Argument {
                message: format!("--{what}: {message}"),
                help: None,
            })
        };
        let start: NaiveDateTime = match &opts.start {
            Some(s) => parse(s, "start")?,
            None => self.project.history_start(i).unwrap_or_else(|| {
                crate::util::clock::now()
                    .date_naive()
                    .and_hms_opt(0, 0, 0)
                    .expect("midnight exists")
            }),
        };
        let step = m.interval_unit().step();
        let end = match &opts.end {
            Some(e) => parse(e, "end")?,
            None => start + step,
        };
        if end <= start {
            return Err(Error::Argument {
                message: format!("--end ({end}) must be after --start ({start})"),
                help: None,
            });
        }
        let sql = render_model(
            &self.project,
            i,
            &RelationTarget::Environment(env.clone()),
            &efmesh_core::time::MacroTimes {
                start,
                end,
                execution: crate::util::clock::now().naive_utc(),
            },
            opts.pretty,
        )
        .map_err(|e| Error::Render(e.to_string()))?;
        let fmt = |t: NaiveDateTime| t.format("%Y-%m-%dT%H:%M:%SZ").to_string();
        Ok(Rendered {
            model: m.name.clone(),
            env,
            start: fmt(start),
            end: fmt(end),
            sql,
        })
    }
}

/// Whether the environment still serves exactly what `plan` was made against.
fn plan_is_current(plan: &Plan, pointers: &BTreeMap<String, efmesh_core::plan::Pointer>) -> bool {
    let planned: BTreeMap<&str, Option<&str>> = plan
        .actions
        .iter()
        .map(|a| (a.model.as_str(), a.previous_fingerprint.as_deref()))
        .collect();
    pointers
        .iter()
        .all(|(m, p)| planned.get(m.as_str()).copied().flatten() == Some(p.fingerprint.as_str()))
        && planned
            .iter()
            .all(|(m, prev)| prev.is_none() || pointers.contains_key(*m))
}

/// Upgrade the project's state store to this efmesh's schema version, backing it up first.
/// Works on a project whose models do not check, since only the config is needed.
pub fn migrate(dir: &Path) -> Result<MigrateReport, Error> {
    let (root, config) = read::read_config(dir)?;
    Ok(backends::state(&root, &config)?.migrate()?)
}

/// The state store of the project at `dir`, read from its config alone (the models need not
/// check): a tick whose project does not load still reaches the runs journal.
pub fn state_for_dir(dir: &Path) -> Result<Box<dyn StateStore + Send>, Error> {
    let (root, config) = read::read_config(dir)?;
    Ok(backends::state(&root, &config)?.open()?)
}

/// Plan `env` for the project at (or above) `dir`, reading its files at most once. When
/// nothing changed since the last load (known from a stat of every file, else from their
/// texts) and the environment serves exactly the cached versions, the no-op plan comes from
/// the project cache without parsing a model (the cache never decides a change); otherwise the
/// project is loaded from the texts and returned with the plan.
pub fn plan_dir(
    dir: &Path,
    env: &str,
    options: &efmesh_core::plan::PlanOptions,
) -> Result<(Plan, Option<Efmesh>), Error> {
    plan_dir_checked(dir, env, options, false)
}

/// [`plan_dir`], checking the engine for the served physics when `engine` (for `apply`,
/// which opens it anyway; never answered from the project cache then).
pub fn plan_dir_checked(
    dir: &Path,
    env: &str,
    options: &efmesh_core::plan::PlanOptions,
    engine: bool,
) -> Result<(Plan, Option<Efmesh>), Error> {
    let root = super::discover::find_root(dir)?;
    let selected = match read::select_sources(&root)? {
        Ok(s) => s,
        Err((diagnostics, files)) => {
            return Err(Error::Invalid(Box::new(CheckFailure {
                diagnostics,
                files,
            })))
        }
    };
    let cacheable = !engine
        && *options == efmesh_core::plan::PlanOptions::default()
        && naming::validate_env(env).is_ok();
    let noop = |models: &[super::plan_cache::CachedModel], config: &efmesh_core::config::Config| {
        let pointers = backends::state(&root, config)?
            .open()?
            .served_versions(env)?;
        Ok::<_, Error>(super::plan_cache::noop_plan(env, models, &pointers))
    };
    // whether the cache already said what the project is (and the environment differs)
    let mut known = false;
    if cacheable {
        let stamped =
            super::plan_cache::lookup_stamped(&root, selected.config_text(), selected.paths());
        if let Some(models) = stamped {
            if let Some(plan) = noop(&models, selected.config())? {
                return Ok((plan, None));
            }
            known = true;
        }
    }
    let (config_text, sources, stamps) = read::read_selected(&root, selected)?;
    if cacheable && !known {
        if let Some(models) = super::plan_cache::lookup(&root, &config_text, &sources, &stamps) {
            if let Some(plan) = noop(&models, &sources.config)? {
                return Ok((plan, None));
            }
        }
    }
    // an apply opens the engine anyway: open it while the models parse, since both take a
    // good part of a second on a project of thousands (a failed open is met again, and
    // reported, where the plan or the build opens it, after the project's own diagnostics)
    let opened = engine
        .then(|| backends::open(&root, &sources.config).ok())
        .flatten();
    let factory = opened
        .as_ref()
        .map(|b| b.engine.clone())
        .filter(|f| f.missing_database().is_none());
    let (report, connection) = std::thread::scope(|s| {
        let opening = factory.as_ref().map(|f| s.spawn(|| f.open()));
        let report = read::load_sources(root, config_text, sources, stamps);
        (report, opening.and_then(|h| h.join().ok()?.ok()))
    });
    let project = Efmesh::from_report_with(report, opened)?;
    if let Some(e) = connection {
        *project.parked() = Some(e);
    }
    let plan = project.plan_checked(project.state()?.as_mut(), env, options, engine)?;
    Ok((plan, Some(project)))
}
