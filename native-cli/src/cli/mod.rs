//! The `efmesh` command line: clap definitions and the thin dispatch onto the library.

pub mod logging;
pub mod plan_view;
pub mod report;

use crate::{Efmesh, Error, RenderOptions};
use clap::{Args, Parser, Subcommand, ValueEnum};
use efmesh_core::{Diagnostic, API_VERSION};
use serde::Serialize;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

const EXIT_CODES: &str = "\
Exit codes:
  0  ok
  1  error (bad project, engine or state failure)
  2  awaiting a human (a plan with changes, applied without --yes in a non-TTY; a `run`
     tick blocked by unapplied changes)
  3  the environment's lock is held by another apply, run or restate (try again later)";

/// SQL models, fingerprinted and planned as diffs, applied to DuckDB.
#[derive(Debug, Parser)]
#[command(name = "efmesh", version, after_help = EXIT_CODES)]
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
    /// Run the unit tests in tests/*.yaml (SQLMesh's format): each model over fixture rows on
    /// an in-memory DuckDB, its output compared with the expected rows.
    #[command(after_help = crate::testing::EXIT_CODES)]
    Test {
        /// Run only these tests; a model's name runs every test of that model.
        names: Vec<String>,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Show the models in topological order with kinds, dependencies and fingerprints.
    Graph {
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
        /// Days an orphaned table is kept.
        #[arg(long, default_value_t = 7.0)]
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
    /// Scaffold a working project (models over data DuckDB generates itself).
    Init {
        /// Where to create it (default: the current directory).
        dir: Option<PathBuf>,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Serialize)]
struct ApplyJson<'a> {
    env: &'a str,
    applied: bool,
    plan: crate::cli::plan_view::PlanJson<'a>,
    built: &'a [String],
    batches: &'a [crate::exec::apply::BatchDone],
    promoted: bool,
    statements: u64,
    #[serde(rename = "auditsRun")]
    audits_run: u64,
    #[serde(rename = "auditWarnings")]
    audit_warnings: &'a [crate::exec::audits::AuditResult],
}

#[derive(Serialize)]
struct InitJson<'a> {
    dir: String,
    files: &'a [String],
}

fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

fn confirm(env: &str) -> bool {
    use std::io::Write;
    print!("Apply this plan to `{env}`? [y/N] ");
    let _ = std::io::stdout().flush();
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer).is_ok() && matches!(answer.trim(), "y" | "Y" | "yes")
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
    fn options(&self) -> Result<efmesh_core::plan::PlanOptions, Error> {
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

fn apply_command(
    dir: &std::path::Path,
    env: &str,
    yes: bool,
    flags: &PlanFlags,
    json: bool,
    exec: &ExecFlags,
    logging: crate::cli::logging::Logging,
) -> ExitCode {
    let planned = flags
        .options()
        .and_then(|options| crate::plan_dir(dir, env, &options));
    let (plan, project) = match planned {
        Ok(p) => p,
        Err(e) => return fail(e, json),
    };
    // every apply's plan, also one that stops for confirmation
    crate::exec::metrics::record_plan(&plan);
    if !json {
        print!(
            "{}",
            crate::cli::plan_view::render(&plan, flags.explain, stdout_color())
        );
    }
    let emit = |applied: bool, out: Option<&crate::ApplyOutcome>| {
        if json {
            print_json(ApplyJson {
                env,
                applied,
                plan: crate::cli::plan_view::PlanJson::of(&plan),
                built: out.map(|o| &o.built[..]).unwrap_or(&[]),
                batches: out.map(|o| &o.batches[..]).unwrap_or(&[]),
                promoted: out.is_some_and(|o| o.promoted),
                statements: out.map(|o| o.statements).unwrap_or(0),
                audits_run: out.map(|o| o.audits_run).unwrap_or(0),
                audit_warnings: out.map(|o| &o.audit_warnings[..]).unwrap_or(&[]),
            });
        }
    };
    if !plan.has_changes() {
        emit(true, None);
        return ExitCode::SUCCESS;
    }
    if !yes {
        if json || !interactive() {
            emit(false, None);
            if !json {
                let e = Error::AwaitingConfirmation { env: env.into() };
                eprintln!("error: {e}");
                if let Some(h) = e.help() {
                    eprintln!("  help: {h}");
                }
            }
            return ExitCode::from(2);
        }
        if !confirm(env) {
            eprintln!("apply cancelled; nothing changed");
            return ExitCode::from(1);
        }
    }
    let Some(p) = project else {
        // a plan answered from the cache has no changes; this cannot be reached
        return fail(
            Error::Render("a cached plan cannot be applied".into()),
            json,
        );
    };
    // a bar per backfilled model, only for people: never under --json or off a terminal
    let bars = (!json && logging.bars_allowed())
        .then(|| std::sync::Arc::new(crate::cli::logging::BackfillBars::new()));
    let progress = bars
        .clone()
        .map(|b| crate::exec::apply::ProgressHook(std::sync::Arc::new(move |p| b.update(p))));
    let applied = p.apply(
        &plan,
        crate::ApplyOptions {
            retries: exec.retries,
            progress,
            jobs: exec.jobs.into(),
            ..Default::default()
        },
    );
    if let Some(b) = &bars {
        b.clear();
    }
    match applied {
        Ok(out) => {
            emit(true, Some(&out));
            if !json {
                for w in &out.audit_warnings {
                    println!("warning: audit {w}");
                }
                let warned = match out.audit_warnings.len() {
                    0 => String::new(),
                    n => format!(", {n} with non-blocking violations"),
                };
                println!(
                    "Applied to `{env}`: built {} physical table(s), ran {} audit(s){warned}, swapped views.",
                    out.built.len(),
                    out.audits_run
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(e, json),
    }
}

#[derive(Serialize)]
struct Envelope<T: Serialize> {
    #[serde(rename = "apiVersion")]
    api_version: u32,
    #[serde(flatten)]
    body: T,
}

fn print_json<T: Serialize>(body: T) {
    let v = Envelope {
        api_version: API_VERSION,
        body,
    };
    println!(
        "{}",
        serde_json::to_string_pretty(&v).expect("JSON output serializes")
    );
}

#[derive(Serialize)]
struct CheckJson<'a> {
    ok: bool,
    models: usize,
    errors: usize,
    warnings: usize,
    diagnostics: &'a [Diagnostic],
}

#[derive(Serialize)]
struct ErrorJson<'a> {
    ok: bool,
    error: ErrorBody,
    diagnostics: &'a [Diagnostic],
}

#[derive(Serialize)]
struct ErrorBody {
    code: &'static str,
    message: String,
    help: Option<String>,
}

fn stdout_color() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

fn stderr_color() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Report a fatal error in the requested format and return exit code 1.
fn fail(err: Error, json: bool) -> ExitCode {
    let empty = vec![];
    let (diags, files) = match &err {
        Error::Invalid(f) => (&f.diagnostics, Some(&f.files)),
        _ => (&empty, None),
    };
    if json {
        print_json(ErrorJson {
            ok: false,
            error: ErrorBody {
                code: err.code(),
                message: err.to_string(),
                help: err.help(),
            },
            diagnostics: diags,
        });
    } else {
        if let Some(files) = files {
            crate::cli::report::print_diagnostics(diags, files, stderr_color());
        }
        eprintln!("error: {err}");
        if let Some(h) = err.help() {
            eprintln!("  help: {h}");
        }
    }
    ExitCode::from(if matches!(err, Error::LockHeld { .. }) {
        3
    } else {
        1
    })
}

/// Run a command and, with `--metrics`, write the textfile whatever its outcome (read from its
/// exit code); a file that cannot be written is a warning, never a failure.
fn with_metrics(
    command: &str,
    env: &str,
    path: Option<&std::path::Path>,
    f: impl FnOnce() -> ExitCode,
) -> ExitCode {
    let clock = std::time::Instant::now();
    let code = f();
    if let Some(path) = path {
        let outcome = if code == ExitCode::SUCCESS {
            "ok"
        } else if code == ExitCode::from(2) {
            "awaiting-human"
        } else if code == ExitCode::from(3) {
            "lock-held"
        } else {
            "error"
        };
        let done = crate::exec::metrics::Finished {
            command,
            env,
            outcome,
            duration: clock.elapsed(),
        };
        if let Err(e) = crate::exec::metrics::write_file(path, &done) {
            tracing::warn!(path = %path.display(), error = e.as_str(), "metrics not written");
        }
    }
    code
}

fn run_command(
    dir: &std::path::Path,
    env: &str,
    exec: &ExecFlags,
    json: bool,
    logging: crate::cli::logging::Logging,
) -> ExitCode {
    let started = chrono::Utc::now();
    // the same bars as apply: only for people, never under --json or off a terminal
    let bars = (!json && logging.bars_allowed())
        .then(|| std::sync::Arc::new(crate::cli::logging::BackfillBars::new()));
    let progress = bars
        .clone()
        .map(|b| crate::exec::apply::ProgressHook(std::sync::Arc::new(move |p| b.update(p))));
    let (report, error) = match Efmesh::open(dir) {
        Ok(ef) => ef.run(
            env,
            &crate::ops::run::RunOptions {
                retries: exec.retries,
                jobs: exec.jobs.into(),
                progress,
            },
        ),
        Err(e) => {
            let report = crate::ops::run::journal_load_failure(dir, env, started, &e);
            if !json {
                // the full diagnostic, with file and line
                return fail(e, false);
            }
            (report, Some(e))
        }
    };
    if let Some(b) = &bars {
        b.clear();
    }
    use crate::state::Outcome;
    let code = match report.outcome {
        Outcome::Ok => 0,
        Outcome::Error => 1,
        Outcome::AwaitingHuman => 2,
        Outcome::LockHeld => 3,
    };
    if json {
        print_json(&report);
    } else {
        match report.outcome {
            Outcome::Ok if report.processed.is_empty() => println!("`{env}`: nothing was due"),
            Outcome::Ok => {
                let n: usize = report.processed.iter().map(|p| p.batches.len()).sum();
                println!(
                    "`{env}`: computed {n} batch(es) of {} model(s)",
                    report.processed.len()
                );
                for p in &report.processed {
                    println!("  {} ({} batch(es))", p.model, p.batches.len());
                }
            }
            Outcome::AwaitingHuman => {
                eprintln!("`{env}` has unapplied changes; a tick never applies them:");
                for b in report.blocked_by.iter().flatten() {
                    eprintln!("  {} ({})", b.model, b.category);
                }
                eprintln!(
                    "  help: review with `efmesh plan {env}` and apply with `efmesh apply {env}`"
                );
            }
            Outcome::LockHeld => {
                if let Some(l) = &report.lock {
                    eprintln!(
                        "`{env}` is locked by {} since {}; this tick did nothing",
                        l.holder,
                        l.acquired_at
                            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                    );
                }
            }
            Outcome::Error => {}
        }
    }
    if let (Some(e), false) = (&error, json) {
        eprintln!("error: {e}");
        if let Some(h) = e.help() {
            eprintln!("  help: {h}");
        }
    }
    ExitCode::from(code)
}

fn init_logging(level: LogLevel) -> crate::cli::logging::Logging {
    let lvl = match level {
        LogLevel::Error => tracing::Level::ERROR,
        LogLevel::Warn => tracing::Level::WARN,
        LogLevel::Info => tracing::Level::INFO,
        LogLevel::Debug => tracing::Level::DEBUG,
        LogLevel::Trace => tracing::Level::TRACE,
    };
    crate::cli::logging::init(lvl)
}

/// Run the parsed command line and return the process exit code.
pub fn run(cli: Cli) -> ExitCode {
    let logging = init_logging(cli.log_level);
    let dir = cli.project.clone().unwrap_or_else(|| PathBuf::from("."));
    match cli.command {
        Command::Check { json } => match crate::check(&dir) {
            Err(e) => fail(e, json),
            Ok(report) => {
                let ok = report.errors() == 0;
                let models = report.project.as_ref().map(|p| p.models.len()).unwrap_or(0);
                if json {
                    print_json(CheckJson {
                        ok,
                        models,
                        errors: report.errors(),
                        warnings: report.warnings(),
                        diagnostics: &report.diagnostics,
                    });
                } else {
                    crate::cli::report::print_diagnostics(
                        &report.diagnostics,
                        &report.files,
                        stderr_color(),
                    );
                    if ok {
                        println!(
                            "ok: {models} models checked, {} warning(s)",
                            report.warnings()
                        );
                    } else {
                        eprintln!(
                            "error: {} error(s), {} warning(s); nothing was run",
                            report.errors(),
                            report.warnings()
                        );
                    }
                }
                ExitCode::from(if ok { 0 } else { 1 })
            }
        },
        Command::Graph { json } => match Efmesh::open(&dir) {
            Err(e) => fail(e, json),
            Ok(p) => {
                let g = p.graph();
                if json {
                    print_json(&g);
                } else {
                    let width = g.models.iter().map(|m| m.name.len()).max().unwrap_or(0);
                    for m in &g.models {
                        let deps = if m.deps.is_empty() {
                            String::new()
                        } else {
                            format!("  <- {}", m.deps.join(", "))
                        };
                        println!(
                            "{:width$}  {:<25}  {}{}",
                            m.name,
                            m.kind,
                            efmesh_core::naming::fp8(&m.fingerprint),
                            deps
                        );
                    }
                }
                ExitCode::SUCCESS
            }
        },
        Command::Plan { env, flags, json } => match flags
            .options()
            .and_then(|options| crate::plan_dir(&dir, &env, &options))
        {
            Err(e) => fail(e, json),
            Ok((plan, _)) => {
                if json {
                    print_json(crate::cli::plan_view::PlanJson::of(&plan));
                } else {
                    print!(
                        "{}",
                        crate::cli::plan_view::render(&plan, flags.explain, stdout_color())
                    );
                }
                ExitCode::SUCCESS
            }
        },
        Command::Apply {
            env,
            yes,
            flags,
            exec,
            json,
        } => with_metrics("apply", &env, exec.metrics.as_deref(), || {
            apply_command(&dir, &env, yes, &flags, json, &exec, logging)
        }),
        Command::Run { env, exec, json } => {
            with_metrics("run", &env, exec.metrics.as_deref(), || {
                run_command(&dir, &env, &exec, json, logging)
            })
        }
        Command::Status { env, check, json } => {
            match Efmesh::open(&dir).and_then(|p| p.status(&env)) {
                Err(e) => fail(e, json),
                Ok(r) => {
                    let code = if check && !r.healthy { 1 } else { 0 };
                    if json {
                        print_json(&r);
                    } else {
                        print!("{r}");
                    }
                    ExitCode::from(code)
                }
            }
        }
        Command::Passport { env, json } => {
            match Efmesh::open(&dir).and_then(|p| p.passport(&env)) {
                Err(e) => fail(e, json),
                Ok(r) => {
                    if json {
                        print_json(&r);
                    } else {
                        print!("{r}");
                    }
                    ExitCode::SUCCESS
                }
            }
        }
        Command::Audit { env, model, json } => {
            let only: Vec<String> = model
                .iter()
                .map(|m| m.trim().to_ascii_lowercase())
                .filter(|m| !m.is_empty())
                .collect();
            match Efmesh::open(&dir).and_then(|p| p.audit(&env, &only)) {
                Err(e) => fail(e, json),
                Ok(r) => {
                    if json {
                        print_json(&r);
                    } else {
                        for x in &r.results {
                            println!("{x}");
                        }
                        for m in &r.stale {
                            println!("note: `{env}` serves an older version of {m}; it was audited with the project's current audits");
                        }
                        println!(
                            "{} audit(s) on `{env}`: {} passed, {} failed, {} warning(s), {} skipped",
                            r.results.len(),
                            r.passed,
                            r.failed,
                            r.warned,
                            r.skipped
                        );
                    }
                    if r.has_failures() {
                        ExitCode::from(1)
                    } else {
                        ExitCode::SUCCESS
                    }
                }
            }
        }
        Command::Restate {
            env,
            model,
            from,
            to,
            dry_run,
            json,
        } => match Efmesh::open(&dir).and_then(|p| p.restate(&env, &model, &from, &to, dry_run)) {
            Err(e) => fail(e, json),
            Ok(r) => {
                if json {
                    print_json(&r);
                } else {
                    let verb = if r.dry_run { "would clear" } else { "cleared" };
                    for x in &r.restated {
                        let note = if x.was_done {
                            ""
                        } else {
                            " (nothing there was done yet)"
                        };
                        println!("{verb} {} [{}, {}){note}", x.model, x.start, x.end);
                    }
                    if !r.dry_run {
                        println!("the next `efmesh apply {}` recomputes these ranges", r.env);
                    }
                }
                ExitCode::SUCCESS
            }
        },
        Command::Janitor { ttl, dry_run, json } => {
            let opts = crate::JanitorOptions {
                ttl_days: ttl,
                dry_run,
                now: None,
            };
            match Efmesh::open(&dir).and_then(|p| p.janitor(opts)) {
                Err(e) => fail(e, json),
                Ok(r) => {
                    if json {
                        print_json(&r);
                    } else {
                        let verb = if r.dry_run { "would drop" } else { "dropped" };
                        for c in &r.dropped {
                            match &c.files {
                                Some(files) => {
                                    println!(
                                        "{verb} {} ({}) and its files {files}",
                                        c.table, c.model
                                    )
                                }
                                None => println!("{verb} {} ({})", c.table, c.model),
                            }
                        }
                        for c in &r.skipped {
                            println!(
                                "skipped {} ({}): referenced again or claimed by another janitor",
                                c.table, c.model
                            );
                        }
                        println!("janitor: {verb} {} physical table(s)", r.dropped.len());
                    }
                    ExitCode::SUCCESS
                }
            }
        }
        Command::Compact {
            model,
            dry_run,
            grace,
            json,
        } => {
            let opts = crate::CompactOptions {
                models: model.into_iter().filter(|m| !m.trim().is_empty()).collect(),
                dry_run,
                grace_minutes: grace,
                now: None,
            };
            match Efmesh::open(&dir).and_then(|p| p.compact(&opts)) {
                Err(e) => fail(e, json),
                Ok(r) if json => {
                    print_json(&r);
                    ExitCode::SUCCESS
                }
                Ok(r) => {
                    print!("{r}");
                    ExitCode::SUCCESS
                }
            }
        }
        Command::Migrate { json } => match crate::migrate(&dir) {
            Err(e) => fail(e, json),
            Ok(r) => {
                if json {
                    print_json(&r);
                } else if r.from == r.to {
                    println!("state store is at version {} already", r.to);
                } else {
                    println!(
                        "state store migrated from version {} to {} (backup: {})",
                        r.from,
                        r.to,
                        r.backup.as_deref().unwrap_or("-")
                    );
                }
                ExitCode::SUCCESS
            }
        },
        Command::Init { dir: target, json } => {
            let target = target.map(|t| dir.join(t)).unwrap_or(dir.clone());
            match crate::workspace::init::init(&target) {
                Err(e) => fail(e, json),
                Ok(files) => {
                    if json {
                        print_json(InitJson {
                            dir: target.display().to_string(),
                            files: &files,
                        });
                    } else {
                        for f in &files {
                            println!("created {}", target.join(f).display());
                        }
                        println!(
                            "next: cd {} && efmesh plan dev && efmesh apply dev --yes",
                            target.display()
                        );
                    }
                    ExitCode::SUCCESS
                }
            }
        }
        Command::Test { names, json } => test_command(&dir, &names, json),
        Command::Schedule {
            env,
            cron,
            remove,
            list,
            print_systemd,
            json,
        } => schedule_command(
            &dir,
            env.as_deref(),
            cron.as_deref(),
            remove,
            list,
            print_systemd,
            json,
        ),
        Command::Render {
            model,
            env,
            start,
            end,
            json,
        } => {
            let opts = RenderOptions {
                env,
                start,
                end,
                pretty: !json,
            };
            let r = Efmesh::open(&dir).and_then(|p| p.render(&model, &opts));
            match r {
                Err(e) => fail(e, json),
                Ok(r) => {
                    if json {
                        print_json(&r);
                    } else {
                        println!("-- {} in {} for [{}, {})", r.model, r.env, r.start, r.end);
                        println!("{}", r.sql);
                    }
                    ExitCode::SUCCESS
                }
            }
        }
    }
}

/// `efmesh test`: exit 0 when every test passed, 1 when some failed, 2 when they could not run.
fn test_command(dir: &std::path::Path, names: &[String], json: bool) -> ExitCode {
    let run = Efmesh::open(dir).and_then(|p| crate::testing::run_project(&p, names));
    let run = match run {
        Ok(r) => r,
        Err(e) => {
            fail(e, json);
            return ExitCode::from(2);
        }
    };
    if json {
        print_json(&run);
    } else if !run.diagnostics.is_empty() {
        crate::testing::print_errors(&run.diagnostics, &run.files, stderr_color());
        eprintln!(
            "error: {} error(s) in the test files; no test was run",
            run.diagnostics.len()
        );
    } else {
        print!("{run}");
    }
    ExitCode::from(run.exit_code())
}

/// `efmesh schedule`: one of scheduling, `--remove`, `--list` or `--print-systemd`.
fn schedule_command(
    dir: &std::path::Path,
    env: Option<&str>,
    cron: Option<&str>,
    remove: bool,
    list: bool,
    print_systemd: bool,
    json: bool,
) -> ExitCode {
    let env_of = || env.expect("clap requires <env> without --list");
    let runs = |e: &crate::ops::schedule::ScheduleEntry| match e.next_runs.as_slice() {
        [] => "unknown".to_string(),
        r => r.join(", "),
    };
    if list {
        return match crate::ops::schedule::list(dir, env) {
            Err(e) => fail(e, json),
            Ok(r) if json => {
                print_json(&r);
                ExitCode::SUCCESS
            }
            Ok(r) => {
                if r.entries.is_empty() {
                    println!("nothing is scheduled for the project in `{}`", r.dir);
                }
                for e in &r.entries {
                    println!("{}  `{}`  next: {}", e.env, e.cron, runs(e));
                    println!("    {}", e.command);
                }
                ExitCode::SUCCESS
            }
        };
    }
    if print_systemd {
        return match crate::ops::schedule::systemd_units(dir, env_of(), cron) {
            Err(e) => fail(e, json),
            Ok(u) if json => {
                print_json(&u);
                ExitCode::SUCCESS
            }
            Ok(u) => {
                print!("{u}");
                ExitCode::SUCCESS
            }
        };
    }
    if remove {
        return match crate::ops::schedule::remove(dir, env_of()) {
            Err(e) => fail(e, json),
            Ok(r) if json => {
                print_json(&r);
                ExitCode::SUCCESS
            }
            Ok(r) => {
                match &r.entry {
                    Some(e) => println!(
                        "removed `efmesh run {}` (`{}`) from your crontab",
                        r.env, e.cron
                    ),
                    None => println!(
                        "nothing was scheduled for `{}` in this project; the crontab was not changed",
                        r.env
                    ),
                }
                ExitCode::SUCCESS
            }
        };
    }
    match crate::ops::schedule::schedule(dir, env_of(), cron) {
        Err(e) => fail(e, json),
        Ok(r) if json => {
            print_json(&r);
            ExitCode::SUCCESS
        }
        Ok(r) => {
            let e = &r.entry;
            match (r.action, &r.previous_cron) {
                ("unchanged", _) => println!(
                    "`efmesh run {}` is already scheduled at `{}`; the crontab was not changed",
                    e.env, e.cron
                ),
                (_, Some(was)) => println!(
                    "rescheduled `efmesh run {}` at `{}` (was `{was}`) in your crontab",
                    e.env, e.cron
                ),
                _ => println!(
                    "scheduled `efmesh run {}` at `{}` in your crontab",
                    e.env, e.cron
                ),
            }
            println!("  next runs (local time): {}", runs(e));
            println!("  log: {}", r.log);
            ExitCode::SUCCESS
        }
    }
}
