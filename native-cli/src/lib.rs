//! efmesh: SQL models fingerprinted by their canonical AST, planned as diffs against an
//! environment, and applied to DuckDB.
//!
//! This crate is the native half: it finds a project on disk, reads its files, and hands them
//! to [`efmesh_core`], which does the thinking without I/O. The `efmesh` binary is a thin
//! layer over the [`Efmesh`] facade, so everything the CLI does is available to Rust code.
//!
//! ```
//! # let dir = tempfile::tempdir().unwrap();
//! # std::fs::create_dir_all(dir.path().join("models")).unwrap();
//! # std::fs::write(dir.path().join("efmesh.toml"), "[project]\nname = \"demo\"\n").unwrap();
//! # std::fs::write(dir.path().join("models/a.sql"), "MODEL (name s.a, kind FULL, columns (id INT));\nSELECT 1 AS id").unwrap();
//! # std::fs::write(dir.path().join("models/b.sql"), "MODEL (name s.b, kind VIEW);\nSELECT id FROM s.a").unwrap();
//! use efmesh::{ApplyOptions, Efmesh};
//!
//! let project = Efmesh::open(dir.path())?;
//! let plan = project.plan("dev")?;
//! assert!(plan.has_changes());
//! let applied = project.apply(&plan, ApplyOptions { applied_by: Some("docs".into()), ..Default::default() })?;
//! assert_eq!(applied.built, ["s.a", "s.b"]);
//!
//! // promotion to prod only swaps views
//! let promoted = project.apply(&project.plan("prod")?, ApplyOptions::default())?;
//! assert!(promoted.built.is_empty());
//! assert!(!project.plan("prod")?.has_changes());
//! # Ok::<(), efmesh::Error>(())
//! ```
#![warn(missing_docs)]

pub mod cli;
pub mod engine;
pub mod error;
pub mod exec;
pub mod lake;
pub mod ops;
pub mod state;
pub mod testing;
pub mod util;
pub mod workspace;

pub use efmesh_core as core;
pub use efmesh_core::plan::Plan;
pub use error::{CheckFailure, Error};
pub use exec::apply::{os_user, ApplyOptions, ApplyOutcome};
pub use ops::compact::{CompactOptions, CompactReport};
pub use ops::janitor::{JanitorOptions, JanitorReport};

use chrono::NaiveDateTime;
use efmesh_core::config::{Config, EngineTarget, StateTarget, CONFIG_FILE};
use efmesh_core::external_yaml::EXTERNAL_MODELS_FILE;
use efmesh_core::model_sql::{render_model, RelationTarget};
use efmesh_core::naming;
use efmesh_core::project::{self, Project, ProjectSources, SourceText};
use efmesh_core::Diagnostic;
use engine::duckdb::DuckDbEngine;
use serde::Serialize;
use state::sqlite::SqliteState;
use state::StateStore;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The outcome of checking a project: every diagnostic plus the texts to render them.
#[derive(Debug)]
pub struct CheckReport {
    /// The project root: the directory holding `efmesh.toml`.
    pub root: PathBuf,
    /// Every problem found, errors first; empty when the project is clean.
    pub diagnostics: Vec<Diagnostic>,
    /// The text of every file read, by project-relative path, to show diagnostics in context.
    pub files: BTreeMap<String, String>,
    /// The project, when it checked without errors.
    pub project: Option<Project>,
}

impl CheckReport {
    /// How many diagnostics are errors; any error means the project cannot be used.
    pub fn errors(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count()
    }
    /// How many diagnostics are only warnings.
    pub fn warnings(&self) -> usize {
        self.diagnostics.len() - self.errors()
    }
}

/// An opened project that checked clean: the entry point of the library.
#[derive(Debug)]
pub struct Efmesh {
    root: PathBuf,
    project: Project,
    warnings: Vec<Diagnostic>,
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

/// Read the process environment for `${VAR}` interpolation.
fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Load and check the project whose root (or any subdirectory) is `dir`.
///
/// Only a missing project or unreadable files are `Err`; problems in the project itself are
/// reported as diagnostics in the [`CheckReport`].
pub fn check(dir: &Path) -> Result<CheckReport, Error> {
    let root = crate::workspace::discover::find_root(dir)?;
    Ok(match read_sources(&root)? {
        Ok((config_text, sources)) => load_sources(root, config_text, sources),
        Err((diagnostics, files)) => CheckReport {
            root,
            diagnostics,
            files,
            project: None,
        },
    })
}

/// Load and check a project from texts already read (see [`read_sources`]).
fn load_sources(root: PathBuf, config_text: String, sources: ProjectSources) -> CheckReport {
    let mut files = BTreeMap::from([(CONFIG_FILE.to_string(), config_text.clone())]);
    let mut read_seed = |rel: &str| std::fs::read(root.join(rel)).map_err(|e| e.to_string());
    let parsed = parse_parallel(&sources);
    let loaded = project::load_parsed(&sources, parsed, &mut read_seed);
    // keep the texts of the files diagnostics point into, for rendering them
    let mentioned: std::collections::HashSet<&str> = loaded
        .diagnostics
        .iter()
        .filter_map(|d| d.location.as_ref())
        .map(|l| l.file.as_str())
        .collect();
    let all = sources
        .models
        .iter()
        .chain(&sources.audits)
        .chain(&sources.external_models);
    for src in all.filter(|s| mentioned.contains(s.path.as_str())) {
        files.insert(src.path.clone(), src.text.clone());
    }
    if let Some(p) = &loaded.project {
        crate::workspace::plan_cache::remember(&root, &config_text, &sources, p);
    }
    CheckReport {
        root,
        diagnostics: loaded.diagnostics,
        files,
        project: loaded.project,
    }
}

impl Efmesh {
    /// Open the project at (or above) `dir`. Fails with [`Error::Invalid`] when it does not
    /// check clean, carrying every diagnostic.
    pub fn open(dir: impl AsRef<Path>) -> Result<Efmesh, Error> {
        Efmesh::from_report(check(dir.as_ref())?)
    }

    /// The project of a report that checked clean, or every diagnostic as an error.
    fn from_report(report: CheckReport) -> Result<Efmesh, Error> {
        match report.project {
            Some(project) => Ok(Efmesh {
                root: report.root,
                project,
                warnings: report.diagnostics,
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

    /// Open the configured state store.
    pub fn state(&self) -> Result<SqliteState, Error> {
        open_state(&self.root, &self.project.config)
    }

    /// Take `env`'s lock (shared by apply, run and restate) for as long as the returned guard
    /// lives; [`Error::LockHeld`] names a live holder.
    pub fn lock(&self, env: &str) -> Result<crate::ops::lock::EnvLock, Error> {
        naming::validate_env(env).map_err(|e| Error::Argument {
            message: e.to_string(),
            help: None,
        })?;
        crate::ops::lock::EnvLock::acquire(state_file(&self.root, &self.project.config)?, env)
    }

    /// Open the configured engine.
    pub fn engine(&self) -> Result<DuckDbEngine, Error> {
        match &self.project.config.engine.target {
            EngineTarget::Duckdb { path } => Ok(DuckDbEngine::open(
                &self.root,
                path,
                &self.project.config.engine,
            )?),
            EngineTarget::Postgres { .. } => Err(Error::Unsupported(
                "the PostgreSQL engine is not built yet; use `[engine] duckdb = \"...\"`".into(),
            )),
        }
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
            .redacted(&efmesh_core::sql::dialect::DuckDb)
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
        self.plan_in(&mut self.state()?, env, options)
    }

    /// [`Efmesh::plan`] against a given state store.
    pub fn plan_in(
        &self,
        state: &mut dyn StateStore,
        env: &str,
        options: &efmesh_core::plan::PlanOptions,
    ) -> Result<Plan, Error> {
        naming::validate_env(env).map_err(|e| Error::Argument {
            message: e.to_string(),
            help: None,
        })?;
        let project = self.project_for(env)?;
        let project = project.as_ref();
        let pointers = state.environment(env)?;
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
        if opts.lake.is_none() {
            opts.lake = self.lake_dir();
        }
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
        crate::exec::apply::apply_plan(
            self.project_for(&plan.env)?.as_ref(),
            plan,
            &mut state,
            &mut self.engine()?,
            &opts,
        )
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
            &mut self.state()?,
            env,
            model,
            from,
            to,
            dry_run,
        )
    }

    /// One unattended tick of `env` (see [`crate::ops::run::run`]).
    pub fn run(
        &self,
        env: &str,
        opts: &crate::ops::run::RunOptions,
    ) -> (crate::ops::run::RunReport, Option<Error>) {
        crate::ops::run::run(self, env, opts)
    }

    /// Whether `env` is healthy, and why not (see [`crate::ops::status::status`]).
    pub fn status(&self, env: &str) -> Result<crate::ops::status::StatusReport, Error> {
        naming::validate_env(env).map_err(|e| Error::Argument {
            message: e.to_string(),
            help: None,
        })?;
        crate::ops::status::status(
            self.project_for(env)?.as_ref(),
            &mut self.state()?,
            env,
            crate::util::clock::now(),
        )
    }

    /// What each model `env` serves may be believed to answer, declared and effective.
    pub fn passport(&self, env: &str) -> Result<crate::ops::passport::PassportReport, Error> {
        naming::validate_env(env).map_err(|e| Error::Argument {
            message: e.to_string(),
            help: None,
        })?;
        crate::ops::passport::passports(&self.project, &mut self.state()?, env)
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
            &mut self.state()?,
            &mut self.engine()?,
            env,
            only,
            crate::util::clock::now().naive_utc(),
        )
    }

    /// The lake folder (`[lake] path`, resolved against the project root), if configured.
    fn lake_dir(&self) -> Option<PathBuf> {
        self.project
            .config
            .lake_path
            .as_ref()
            .map(|p| self.root.join(p))
    }

    /// Drop physics orphaned for longer than the ttl.
    pub fn janitor(&self, mut opts: JanitorOptions) -> Result<JanitorReport, Error> {
        if opts.lake.is_none() {
            opts.lake = self.lake_dir();
        }
        crate::ops::janitor::run(&mut self.state()?, &mut self.engine()?, &opts)
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
            start,
            end,
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

/// Open the state store a config names.
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

/// The configured state store's file (the lock's heartbeat opens connections of its own).
fn state_file(root: &Path, config: &Config) -> Result<PathBuf, Error> {
    match &config.state {
        StateTarget::Sqlite { path } => Ok(root.join(path)),
        StateTarget::Postgres { .. } => Err(Error::Unsupported(
            "the PostgreSQL state store is not built yet; use `[state] sqlite = \"...\"`".into(),
        )),
    }
}

fn open_state(root: &Path, config: &Config) -> Result<SqliteState, Error> {
    Ok(SqliteState::open(&state_file(root, config)?)?)
}

/// Upgrade the project's state store to this efmesh's schema version, backing it up first.
/// Works on a project whose models do not check, since only the config is needed.
pub fn migrate(dir: &Path) -> Result<state::MigrateReport, Error> {
    let (root, config) = read_config(dir)?;
    Ok(SqliteState::migrate(&state_file(&root, &config)?)?)
}

/// The root of the project at (or above) `dir` and its parsed `efmesh.toml`, without loading a
/// model: for commands that need only the config (`migrate`, `schedule`) or must reach the state
/// store even when the models do not check (`run`).
pub(crate) fn read_config(dir: &Path) -> Result<(PathBuf, Config), Error> {
    let root = crate::workspace::discover::find_root(dir)?;
    let text = std::fs::read_to_string(root.join(CONFIG_FILE))
        .map_err(|e| Error::io(&root.join(CONFIG_FILE), e))?;
    let files = BTreeMap::from([(CONFIG_FILE.to_string(), text.clone())]);
    let config = Config::parse(CONFIG_FILE, &text, &process_env)
        .map_err(|diagnostics| Error::Invalid(Box::new(CheckFailure { diagnostics, files })))?;
    Ok((root, config))
}

/// The state store of the project at `dir`, read from its config alone (the models need not
/// check): a tick whose project does not load still reaches the runs journal.
pub fn state_for_dir(dir: &Path) -> Result<SqliteState, Error> {
    let (root, config) = read_config(dir)?;
    open_state(&root, &config)
}

/// Parse model files on every core: files are independent, and on thousands of models parsing
/// dominates the time of every command.
fn parse_parallel(sources: &ProjectSources) -> Vec<project::ParsedFile> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8);
    if threads < 2 || sources.models.len() < 64 {
        return project::parse_models(sources);
    }
    let dialect = sources.config.dialect();
    let chunk = sources.models.len().div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = sources
            .models
            .chunks(chunk)
            .map(|files| {
                s.spawn(move || {
                    files
                        .iter()
                        .map(|f| efmesh_core::model::parse_model_file(&f.path, &f.text, dialect))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a parser thread panicked"))
            .collect()
    })
}

/// A config that failed to parse: its diagnostics and the text to render them.
type ConfigFailure = (Vec<Diagnostic>, BTreeMap<String, String>);

/// Read `efmesh.toml` and every project file it selects.
fn read_sources(root: &Path) -> Result<Result<(String, ProjectSources), ConfigFailure>, Error> {
    let read = |rel: &str| -> Result<String, Error> {
        let p = root.join(rel);
        std::fs::read_to_string(&p).map_err(|e| Error::io(&p, e))
    };
    let config_text = read(CONFIG_FILE)?;
    let config = match Config::parse(CONFIG_FILE, &config_text, &process_env) {
        Ok(c) => c,
        Err(diagnostics) => {
            return Ok(Err((
                diagnostics,
                BTreeMap::from([(CONFIG_FILE.to_string(), config_text)]),
            )))
        }
    };
    let mut sources = ProjectSources {
        config: config.clone(),
        models: vec![],
        audits: vec![],
        external_models: None,
    };
    for path in crate::workspace::discover::matching_files(root, &config.model_globs)? {
        let text = read(&path)?;
        sources.models.push(SourceText { path, text });
    }
    for path in crate::workspace::discover::matching_files(root, &config.audit_globs)? {
        let text = read(&path)?;
        sources.audits.push(SourceText { path, text });
    }
    if root.join(EXTERNAL_MODELS_FILE).is_file() {
        let text = read(EXTERNAL_MODELS_FILE)?;
        sources.external_models = Some(SourceText {
            path: EXTERNAL_MODELS_FILE.into(),
            text,
        });
    }
    Ok(Ok((config_text, sources)))
}

/// Plan `env` for the project at (or above) `dir`, reading its files once. When nothing
/// changed since the last load and the environment serves exactly the cached versions, the
/// no-op plan comes from the project cache without parsing a model (the cache never decides a
/// change); otherwise the project is loaded from the same texts and returned with the plan.
pub fn plan_dir(
    dir: &Path,
    env: &str,
    options: &efmesh_core::plan::PlanOptions,
) -> Result<(Plan, Option<Efmesh>), Error> {
    let root = crate::workspace::discover::find_root(dir)?;
    let (config_text, sources) = match read_sources(&root)? {
        Ok(s) => s,
        Err((diagnostics, files)) => {
            return Err(Error::Invalid(Box::new(CheckFailure {
                diagnostics,
                files,
            })))
        }
    };
    if *options == efmesh_core::plan::PlanOptions::default() && naming::validate_env(env).is_ok() {
        if let Some(models) = crate::workspace::plan_cache::lookup(&root, &config_text, &sources) {
            let pointers = open_state(&root, &sources.config)?.environment(env)?;
            if let Some(plan) = crate::workspace::plan_cache::noop_plan(env, &models, &pointers) {
                return Ok((plan, None));
            }
        }
    }
    let project = Efmesh::from_report(load_sources(root, config_text, sources))?;
    let plan = project.plan_with_options(env, options)?;
    Ok((plan, Some(project)))
}
