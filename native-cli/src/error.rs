//! Errors of the native layer: everything that can stop a command, each with advice.

use efmesh_core::Diagnostic;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A project that failed to check, with the file texts needed to render its diagnostics.
#[derive(Debug)]
pub struct CheckFailure {
    /// Every problem found, errors first.
    pub diagnostics: Vec<Diagnostic>,
    /// The text of every file read, by project-relative path, to show diagnostics in context.
    pub files: BTreeMap<String, String>,
}

/// Why an efmesh operation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No `efmesh.toml` was found walking up from where efmesh was started.
    #[error("could not find `efmesh.toml` in `{}` or any parent directory", start.display())]
    NoProject {
        /// The directory the search started from.
        start: PathBuf,
    },
    /// A file or directory of the project could not be read.
    #[error("cannot read `{}`: {message}", path.display())]
    Io {
        /// The path that failed.
        path: PathBuf,
        /// The operating system's reason.
        message: String,
    },
    /// An object store (an S3 lake) refused or failed a request. The URL names the object;
    /// the message is the store's, which never carries the credentials.
    #[error("object store `{url}`: {message}")]
    ObjectStore {
        /// The object or prefix (`s3://bucket/key`).
        url: String,
        /// What the store said.
        message: String,
    },
    /// The configuration cannot be acted on, e.g. a file glob that does not compile.
    #[error("invalid configuration: {message}")]
    Config {
        /// What is wrong with it.
        message: String,
    },
    /// The project has errors; every diagnostic comes along so all can be fixed in one round.
    #[error("the project has {} error(s)", .0.diagnostics.iter().filter(|d| d.is_error()).count())]
    Invalid(Box<CheckFailure>),
    /// A command named a model the project does not define.
    #[error("unknown model `{name}`")]
    UnknownModel {
        /// The name as given.
        name: String,
        /// The closest model name, when one is near enough to be a likely typo.
        suggestion: Option<String>,
    },
    /// A command-line argument is invalid, e.g. a bad `--start` or an invalid environment name.
    #[error("{message}")]
    Argument {
        /// What is wrong with the argument.
        message: String,
        /// What to do instead, when there is advice.
        help: Option<String>,
    },
    /// A model's SQL could not be rendered; carries the renderer's message.
    #[error("{0}")]
    Render(String),
    /// A model's build failed in the engine; nothing was promoted.
    #[error("building `{model}` failed: {message}")]
    Build {
        /// The model whose build failed.
        model: String,
        /// What the engine said.
        message: String,
        /// The statement that failed.
        sql: String,
    },
    /// Computing an interval batch failed; it is marked failed and nothing was promoted.
    #[error("computing `{model}` for {interval} failed: {message}")]
    Batch {
        /// The model.
        model: String,
        /// The batch's `[start, end)`.
        interval: String,
        /// What the engine said.
        message: String,
    },
    /// The engine failed outside a model build.
    #[error(transparent)]
    Engine(#[from] crate::engine::EngineError),
    /// The state store failed or refused.
    #[error(transparent)]
    State(#[from] crate::state::StateError),
    /// The plan could not be computed.
    #[error(transparent)]
    Plan(#[from] efmesh_core::plan::PlanError),
    /// A configured capability this build of efmesh does not have yet.
    #[error("{0}")]
    Unsupported(String),
    /// The query's result columns disagree with the model's declared `columns`; found by
    /// asking the engine before anything was written.
    #[error("`{model}` ({file}) does not return the columns it declares:{}", differences.iter().map(|d| format!("\n    {d}")).collect::<String>())]
    SchemaMismatch {
        /// The model.
        model: String,
        /// Its file.
        file: String,
        /// Each difference.
        differences: Vec<efmesh_core::contract::ColumnDifference>,
    },
    /// A seed file could not be read or parsed when efmesh loads it for an engine that cannot
    /// read files (PostgreSQL). Nothing was written.
    #[error("seed `{model}` ({file}) cannot be loaded: {reason}")]
    Seed {
        /// The SEED model.
        model: String,
        /// Its seed file, relative to the project root.
        file: String,
        /// Why not.
        reason: String,
    },
    /// Values of a seed file do not fit its declared column types; found (with `TRY_CAST`) before
    /// anything was written.
    #[error("seed `{model}` ({file}) has {rows} row(s) whose values do not fit the declared columns:{}", values.iter().map(|v| format!("\n    {v}")).collect::<String>())]
    SeedValues {
        /// The SEED model.
        model: String,
        /// Its seed file, relative to the project root.
        file: String,
        /// How many rows have at least one bad value.
        rows: u64,
        /// The first bad values (at most 5), in file order.
        values: Vec<SeedBadValue>,
    },
    /// Blocking audits found violations; their data was not promoted.
    #[error("{} blocking audit(s) failed; `{env}` was not changed:{}", failures.len(), failures.iter().map(|f| format!("\n  {}", f.to_string().replace('\n', "\n  "))).collect::<String>())]
    AuditFailed {
        /// The environment the apply was for.
        env: String,
        /// What each failing audit found.
        failures: Vec<crate::exec::audits::AuditResult>,
    },
    /// `efmesh compact` was asked for a model without a `maintenance` policy, or no model has one.
    #[error("{}", match model { Some(m) => format!("`{m}` has no `maintenance` policy, so it cannot be compacted"), None => "no model declares a `maintenance` policy; there is nothing to compact".into() })]
    NoMaintenance {
        /// The model named, or `None` when compacting every model.
        model: Option<String>,
    },
    /// Compacting a partition failed; its files were left as they were unless the message says
    /// otherwise.
    #[error("compacting `{model}` partition `{partition}` failed: {message}")]
    Compact {
        /// The model.
        model: String,
        /// The partition directory.
        partition: String,
        /// What went wrong (the engine names an unreadable file).
        message: String,
    },
    /// With `--jobs`, several models failed, or one failed and blocked its descendants; every
    /// other model was built. Nothing was promoted.
    #[error("{} model(s) failed{}; the environment was not changed:{}", errors.len(), if blocked.is_empty() { String::new() } else { format!(" and {} descendant(s) were not built ({})", blocked.len(), blocked.join(", ")) }, errors.iter().map(|e| format!("\n  {}", e.to_string().replace('\n', "\n  "))).collect::<String>())]
    ModelsFailed {
        /// Each failure, in plan order.
        errors: Vec<Error>,
        /// Models not built because an ancestor failed.
        blocked: Vec<String>,
    },
    /// Another live process holds the environment's lock (an apply, run or restate).
    #[error("environment `{}` is locked by {} since {} (lease expires {})", lock.env, lock.holder, lock.acquired_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true), lock.expires_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))]
    LockHeld {
        /// Who holds it.
        lock: crate::state::LockInfo,
    },
    /// Our lease on the environment's lock lapsed and someone else took it; we stopped before
    /// writing behind the new owner.
    #[error("lost the lock on environment `{env}` (lease {lease} of {holder}); stopped before writing anything more")]
    LockLost {
        /// The environment.
        env: String,
        /// Our holder id.
        holder: String,
        /// Our lease.
        lease: i64,
    },
    /// `efmesh schedule --cron` was given an expression cron (or efmesh) does not accept.
    #[error("invalid cron expression `{expr}`: {message}")]
    CronExpression {
        /// The expression as given.
        expr: String,
        /// What is wrong with it.
        message: String,
    },
    /// `--print-systemd` was asked for a cron expression systemd's calendar syntax cannot
    /// express; efmesh refuses rather than print a timer that fires at other times.
    #[error(
        "cannot translate cron expression `{expr}` into a systemd OnCalendar= value: {reason}"
    )]
    UntranslatableCron {
        /// The expression.
        expr: String,
        /// Why it cannot be translated.
        reason: String,
    },
    /// The `crontab` binary (or the one `EFMESH_CRONTAB` names) is not installed.
    #[error("cannot run `{program}`: it is not installed (or not on PATH)")]
    CrontabMissing {
        /// The program efmesh tried to run.
        program: String,
        /// The environment variable that names another one.
        variable: &'static str,
    },
    /// Reading or writing the crontab through the `crontab` binary failed.
    #[error("`{command}` failed: {message}")]
    Crontab {
        /// The command line that failed (`crontab -l` or `crontab -`).
        command: String,
        /// What it said.
        message: String,
    },
    /// A non-interactive apply met a plan with changes and no `--yes`.
    #[error("the plan for `{env}` has changes; pass --yes to apply them without a prompt")]
    AwaitingConfirmation {
        /// The environment.
        env: String,
    },
}

impl Error {
    pub(crate) fn io(path: &Path, e: std::io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
    }

    /// A stable identifier for `--json` consumers.
    pub fn code(&self) -> &'static str {
        match self {
            Error::NoProject { .. } => "no-project",
            Error::Io { .. } => "io",
            Error::ObjectStore { .. } => "object-store",
            Error::Config { .. } => "config",
            Error::Invalid(_) => "invalid-project",
            Error::UnknownModel { .. } => "unknown-model",
            Error::Argument { .. } => "argument",
            Error::Render(_) => "render",
            Error::Build { .. } => "build",
            Error::Batch { .. } => "batch",
            Error::Engine(crate::engine::EngineError::Locked { .. }) => "engine-locked",
            Error::Engine(_) => "engine",
            Error::State(_) => "state",
            Error::Plan(_) => "plan",
            Error::Unsupported(_) => "unsupported",
            Error::AwaitingConfirmation { .. } => "awaiting-confirmation",
            Error::LockHeld { .. } => "lock-held",
            Error::ModelsFailed { .. } => "models-failed",
            Error::LockLost { .. } => "lock-lost",
            Error::NoMaintenance { .. } => "no-maintenance",
            Error::Compact { .. } => "compact",
            Error::SchemaMismatch { .. } => "schema-mismatch",
            Error::AuditFailed { .. } => "audit-failed",
            Error::SeedValues { .. } => "seed-values",
            Error::Seed { .. } => "seed-file",
            Error::CronExpression { .. } => "cron-expression",
            Error::UntranslatableCron { .. } => "cron-untranslatable",
            Error::CrontabMissing { .. } => "crontab-missing",
            Error::Crontab { .. } => "crontab",
        }
    }

    /// What to do about it.
    pub fn help(&self) -> Option<String> {
        match self {
            Error::NoProject { .. } => Some(
                "run inside a project, pass `-C <dir>`, or create one with `efmesh init`".into(),
            ),
            Error::Invalid(_) => Some("fix the errors above; `efmesh check` lists them all".into()),
            Error::UnknownModel {
                suggestion: Some(s),
                ..
            } => Some(format!(
                "did you mean `{s}`? `efmesh graph` lists every model"
            )),
            Error::UnknownModel { .. } => Some("`efmesh graph` lists every model".into()),
            Error::Argument { help, .. } => help.clone(),
            Error::Build { .. } => Some("fix the model and apply again; physics already built is kept and reused, and the environment was not changed".into()),
            Error::Batch { .. } => Some("fix the cause and apply again: the failed batch and everything after it are computed then; finished batches are kept".into()),
            Error::State(e) => e.help(),
            Error::Engine(crate::engine::EngineError::Locked { .. }) => {
                Some("DuckDB allows one writer per database file; retry when that process finishes (another `efmesh apply`, `run` or `janitor` on this project, or a client with the file open)".into())
            }
            Error::Engine(crate::engine::EngineError::Connect { message, .. }) if message.contains("lock") => {
                Some("another process has the database open for writing (DuckDB allows one writer); retry when it finishes".into())
            }
            Error::Plan(efmesh_core::plan::PlanError::NewerFingerprintVersion { .. }) => {
                Some("upgrade efmesh".into())
            }
            Error::Plan(efmesh_core::plan::PlanError::TooManyBatches { .. }) => Some(
                "raise the model's `batch_size` (intervals per batch; `batch_size` is metadata, so changing it rebuilds nothing), move its `start` later, or give it a coarser `cron` (an SCD model runs one interval per batch)"
                    .into(),
            ),
            Error::Plan(_) => None,
            Error::AwaitingConfirmation { .. } => Some("review it with `efmesh plan`, then rerun with --yes".into()),
            Error::ModelsFailed { .. } => Some("fix the models above and apply again: everything that was built is kept and reused".into()),
            Error::LockHeld { .. } => Some("wait for it to finish and run again; a holder that was killed loses the lock when its lease expires (`EFMESH_LOCK_TTL_SECONDS`, default 120)".into()),
            Error::LockLost { .. } => Some("the process stalled longer than the lock's lease (`EFMESH_LOCK_TTL_SECONDS`); run again: finished intervals are kept".into()),
            Error::NoMaintenance { .. } => Some("only an EXTERNAL model reading parquet files can be compacted: add `maintenance (partition_key day, unique_key (id), order received_at)` to its MODEL block (the manual, docs/src/compact.md)".into()),
            Error::Compact { .. } => Some("the partition's files were not deleted: fix or move away the file the message names, then run `efmesh compact` again".into()),
            Error::SchemaMismatch { .. } => Some("change the query or its `columns` so they agree; nothing was written for this model and the environment was not changed".into()),
            Error::Seed { .. } => Some("fix the file (`efmesh check` reads it too) and apply again; nothing was written for this model and the environment was not changed".into()),
            Error::SeedValues { .. } => Some("fix the values in the file, or declare the columns with types that fit them; nothing was written for this model and the environment was not changed".into()),
            Error::AuditFailed { .. } => Some("fix the data or the model and apply again; the audited intervals are not marked done, so they are computed again then. `blocking := false` turns an audit into a warning".into()),
            Error::CronExpression { .. } => Some("give five fields `minute hour day-of-month month day-of-week` (e.g. `*/15 * * * *`, `0 3 * * 1-5`) or a macro: @hourly, @daily, @weekly, @monthly, @yearly".into()),
            Error::UntranslatableCron { .. } => Some("use a simpler expression (restrict the day of month or the day of week, not both), or write OnCalendar= by hand (`man systemd.time`)".into()),
            Error::CrontabMissing { variable, .. } => Some(format!("install cron (`apt-get install cron`), point {variable} at a crontab binary, or print systemd units instead with `efmesh schedule <env> --print-systemd`")),
            Error::Crontab { .. } => Some("the crontab was not changed; `crontab -l` shows it as it is".into()),
            _ => None,
        }
    }
}

/// One value of a seed file that does not fit its column's declared type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedBadValue {
    /// The seed file, relative to the project root.
    pub file: String,
    /// The data row, counted from 1 (a CSV header is not a row).
    pub row: u64,
    /// The file line the row starts on (CSV and JSON lines; a JSON array has none).
    pub line: Option<u64>,
    /// The declared column.
    pub column: String,
    /// The value as written (shortened when long).
    pub value: String,
    /// The declared type, as written in `columns`.
    pub sql_type: String,
}

impl std::fmt::Display for SeedBadValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: row {}", self.file, self.row)?;
        if let Some(line) = self.line {
            write!(f, " (line {line})")?;
        }
        write!(
            f,
            ": column {}: '{}' is not a valid {}",
            self.column,
            self.value.replace('\'', "''"),
            self.sql_type
        )
    }
}
