//! The command line's grammar: clap derive structs, and nothing else.

use crate::Error;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// SQL models, fingerprinted and planned as diffs, applied to DuckDB.
#[derive(Debug, Parser)]
#[command(name = "efmesh", version, after_help = crate::cli::exit::HELP)]
pub struct Cli {
    /// Run as if started in DIR (the project is found by walking up from there).
    #[arg(short = 'C', long = "project", global = true, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Minimum level of logs written to stderr.
    #[arg(long, global = true, value_enum, default_value_t = LogLevel::Info)]
    pub log_level: LogLevel,
    /// What to do; each subcommand is one call into the library.
    #[command(subcommand)]
    pub command: Command,
}

/// How `efmesh query` prints its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum QueryFormat {
    /// Aligned columns for people.
    Table,
    /// RFC 4180 CSV with a header row; NULL is an empty field.
    Csv,
    /// One JSON object: `columns` and `rows` (objects by column name; NULL is `null`).
    Json,
}

/// Log levels for `--log-level`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LogLevel {
    /// Only failures.
    Error,
    /// Failures and things that look wrong.
    Warn,
    /// What efmesh is doing, step by step.
    Info,
    /// Detail for finding out why efmesh did something.
    Debug,
    /// Everything efmesh can log.
    Trace,
}

/// How `apply` and `run` execute a plan.
#[derive(Debug, Args)]
pub struct ExecFlags {
    /// Retry a failed batch write this many times, with exponential backoff.
    #[arg(long, default_value_t = 0)]
    pub retries: u32,
    /// Build up to N models at once: a model starts when its parents in the plan are ready,
    /// independent branches build in parallel, and a failed model blocks only its
    /// descendants.
    #[arg(short = 'j', long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: u16,
    /// Write the command's metrics to this Prometheus textfile (node_exporter's textfile
    /// collector), whatever the outcome.
    #[arg(long, value_name = "PATH")]
    pub metrics: Option<PathBuf>,
}

/// The subcommands of `efmesh`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Load the project and check every model, reference and column; changes nothing.
    Check {
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Compare two environments: which models serve different versions and why, and with
    /// `--data` how their rows differ (counts, key overlap, column mismatches, schema drift).
    Diff {
        /// The environment compared against (`prod`).
        env_a: String,
        /// The environment compared (`dev`).
        env_b: String,
        /// Also compare rows through both environments' views.
        #[arg(long)]
        data: bool,
        /// Only these models, comma-separated (listed even when unchanged).
        #[arg(long, value_delimiter = ',', value_name = "MODEL,...")]
        model: Vec<String>,
        /// With `--data`, compare only this percentage of keys, chosen by hash so the same
        /// keys are taken on both sides.
        #[arg(long, value_name = "PERCENT")]
        sample: Option<f64>,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Run one SELECT against what an environment serves: model names mean its views
    /// (`mart.stays` is `dev__mart.stays` in dev), EXTERNAL models their sources.
    Query {
        /// The environment (`prod`, `dev`, ...).
        env: String,
        /// One SELECT (or WITH … SELECT) statement.
        sql: String,
        /// How to print the rows.
        #[arg(long, value_enum, default_value_t = QueryFormat::Table)]
        format: QueryFormat,
        /// The same as `--format json`, as every command spells it.
        #[arg(long, conflicts_with = "format")]
        json: bool,
    },
    /// Print the final SQL of a model, as it would run.
    Render {
        /// The model, as `schema.table`.
        model: String,
        /// Render references to this environment's views (default: prod).
        #[arg(long)]
        env: Option<String>,
        /// Start of the interval the time macros bind to (default: the model's start).
        #[arg(long)]
        start: Option<String>,
        /// End of that interval, exclusive (default: one interval after start).
        #[arg(long)]
        end: Option<String>,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Run the unit tests in tests/**/test*.yaml (SQLMesh's format): each model over fixture
    /// rows on an in-memory DuckDB, its output (and CTEs) compared with the expected rows. They
    /// run on DuckDB
    /// even when `[engine]` is PostgreSQL: no test ever touches the configured database.
    #[command(after_help = crate::testing::EXIT_CODES)]
    Test {
        /// Run only these tests; a model's name runs every test of that model.
        names: Vec<String>,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Trace a model's columns (or one column) to what they are computed from, down to
    /// EXTERNAL and SEED columns, with the filters and joins on the way; reads no state.
    Lineage {
        /// `schema.table` for every column, or `schema.table.column`.
        target: String,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Show the models in topological order with kinds, dependencies and fingerprints.
    Graph {
        /// Print one self-contained HTML page (the layered DAG; click a model for its kind,
        /// fingerprint, SQL, columns and audits): `efmesh graph --html > dag.html`.
        #[arg(long, conflicts_with = "json")]
        html: bool,
        /// With `--html`, also show each model's passport and coverage in this environment.
        #[arg(long, requires = "html")]
        env: Option<String>,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Show what applying the project to an environment would change; changes nothing.
    Plan {
        /// The environment (`prod`, `dev`, ...).
        env: String,
        /// How the plan is made and shown.
        #[command(flatten)]
        flags: PlanFlags,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Plan, confirm, build what is missing, and swap the environment's views.
    Apply {
        /// The environment (`prod`, `dev`, ...).
        env: String,
        /// Apply without asking (required outside a terminal when the plan has changes).
        #[arg(short = 'y', long)]
        yes: bool,
        /// How the plan is made and shown.
        #[command(flatten)]
        flags: PlanFlags,
        /// How the models are built.
        #[command(flatten)]
        exec: ExecFlags,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Show what each model an environment serves may be believed to answer: declared and
    /// effective `answerable`, coverage, and the model that imposed each limit.
    Passport {
        /// The environment (`prod`, `dev`, ...).
        env: String,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// One unattended tick: compute the intervals that became due (plus lookback) for the
    /// models the environment serves, under its lock. Never applies model changes: with
    /// unapplied changes it exits 2 and names them (`blockedBy`). Every tick is journaled.
    Run {
        /// The environment (`prod`, `dev`, ...).
        env: String,
        /// How the models are built.
        #[command(flatten)]
        exec: ExecFlags,
        /// Print one JSON object on stdout (also for a tick that exits 2 or 3).
        #[arg(long)]
        json: bool,
    },
    /// Is the environment healthy? The last applied plan, lag per incremental model, failed
    /// intervals, recent ticks and the lock.
    Status {
        /// The environment (`prod`, `dev`, ...).
        env: String,
        /// Exit 1 when unhealthy (failed intervals, or a last tick that ended in error); the
        /// report is printed either way. Awaiting a human, a held lock and lag are healthy.
        #[arg(long)]
        check: bool,
        /// Also compare every view, physical table and lake file with the state and report
        /// each mismatch (a stale view, a stray table, a file of the wrong size, a file no
        /// manifest names); the ones that affect served data make `--check` fail.
        #[arg(long)]
        deep: bool,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Audit what an environment serves now, through its views; changes nothing. Exits 1 when
    /// a blocking audit finds violations. Per-interval audits are listed as skipped.
    Audit {
        /// The environment (`prod`, `dev`, ...).
        env: String,
        /// Only these models (comma-separated `schema.table`).
        #[arg(long, value_delimiter = ',')]
        model: Vec<String>,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Replay a past range of a time-range model and its time-range descendants: clears their
    /// done intervals so the next apply recomputes exactly that range.
    Restate {
        /// The environment.
        env: String,
        /// The INCREMENTAL_BY_TIME_RANGE model.
        #[arg(long)]
        model: String,
        /// First instant to recompute (ISO UTC, aligned to the model's intervals).
        #[arg(long)]
        from: String,
        /// First instant not to recompute.
        #[arg(long)]
        to: String,
        /// Show what would be recomputed; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Run `efmesh run <env>` unattended: register it in your crontab (replacing the line an
    /// earlier `schedule` wrote), remove it, list it, or print systemd units instead.
    #[command(after_help = crate::ops::schedule::AFTER_HELP)]
    Schedule {
        /// The environment the tick runs (optional with --list: then every environment).
        #[arg(required_unless_present = "list")]
        env: Option<String>,
        /// When to run, as a 5-field cron expression or a macro like @daily
        /// (default: `0 * * * *`, hourly).
        #[arg(long, value_name = "EXPR", conflicts_with_all = ["remove", "list"])]
        cron: Option<String>,
        /// Remove the environment's line from the crontab (nothing scheduled is not an error).
        #[arg(long, conflicts_with_all = ["list", "print_systemd"])]
        remove: bool,
        /// Show this project's efmesh lines of the crontab with their next run times.
        #[arg(long, conflicts_with = "print_systemd")]
        list: bool,
        /// Print a systemd service and timer doing the same instead; installs nothing.
        #[arg(long)]
        print_systemd: bool,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Drop physical tables no environment has referenced for longer than the ttl.
    Janitor {
        /// Days an orphaned table is kept (0 to 36500; fractions allowed).
        #[arg(long, default_value_t = 7.0, value_parser = parse_ttl_days)]
        ttl: f64,
        /// Show what would be dropped; drop nothing.
        #[arg(long)]
        dry_run: bool,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Merge each settled partition's small files into one, deduplicating by the model's
    /// `maintenance` policy. Never touches a partition dated today or later, or one whose
    /// newest file is younger than the grace period; deletes only the files it merged.
    Compact {
        /// Only these models (comma-separated `schema.table`; default: every model with a
        /// `maintenance` policy).
        #[arg(long, value_delimiter = ',')]
        model: Vec<String>,
        /// Show what would be compacted; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Minutes the newest file of a partition must have rested (overrides the policies).
        #[arg(long, value_name = "MIN")]
        grace: Option<u32>,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Upgrade the state store's schema to this efmesh version (backing it up first).
    Migrate {
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Print the shell completion script for efmesh, e.g.
    /// `efmesh completions bash > ~/.local/share/bash-completion/completions/efmesh`.
    Completions {
        /// The shell to complete in.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page efmesh(1) in roff (`efmesh man | man -l -`), or write one page per
    /// subcommand (efmesh-plan.1, ...) into a directory on MANPATH.
    Man {
        /// Write efmesh.1 and every efmesh-<subcommand>.1 into DIR instead of printing.
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
    },
    /// Scaffold a working project (models over data DuckDB generates itself).
    Init {
        /// Where to create it (default: the current directory).
        dir: Option<PathBuf>,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
}

/// The flags `plan` and `apply` share.
#[derive(Debug, Args)]
pub struct PlanFlags {
    /// Show which parts of each definition diverged, and why each category follows.
    #[arg(long)]
    pub explain: bool,
    /// The operator's verdict on direct changes: `model=breaking|non-breaking`, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub reclassify: Vec<String>,
    /// Apply these models' changes without replaying history (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub forward_only: Vec<String>,
}

impl PlanFlags {
    /// Parse `--reclassify` and `--forward-only` into plan options.
    pub(crate) fn options(&self) -> Result<efmesh_core::plan::PlanOptions, Error> {
        let (reclassify, forward_only) = (&self.reclassify, &self.forward_only);
        use efmesh_core::plan::Category;
        let mut o = efmesh_core::plan::PlanOptions::default();
        for r in reclassify.iter().filter(|r| !r.trim().is_empty()) {
            let (model, verdict) = r.split_once('=').ok_or_else(|| Error::Argument {
                message: format!("--reclassify `{r}` is not `model=breaking|non-breaking`"),
                help: None,
            })?;
            let verdict = match verdict.trim() {
                "breaking" => Category::Breaking,
                "non-breaking" => Category::NonBreaking,
                other => {
                    return Err(Error::Argument {
                        message: format!(
                            "--reclassify verdict `{other}` is not `breaking` or `non-breaking`"
                        ),
                        help: None,
                    })
                }
            };
            o.reclassify
                .insert(model.trim().to_ascii_lowercase(), verdict);
        }
        o.forward_only = forward_only
            .iter()
            .map(|m| m.trim().to_ascii_lowercase())
            .filter(|m| !m.is_empty())
            .collect();
        Ok(o)
    }
}

/// `--ttl` in days: a finite number from 0 to 36,500 (a century), so the cutoff it makes is
/// always a real instant.
fn parse_ttl_days(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(d) if d.is_finite() && (0.0..=36_500.0).contains(&d) => Ok(d),
        _ => Err(format!("`{s}` is not a number of days from 0 to 36500")),
    }
}
