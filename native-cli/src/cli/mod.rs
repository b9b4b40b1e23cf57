//! The `efmesh` command line: the grammar (`args.rs`), the one exit-code table (`exit.rs`),
//! output (`output.rs`), logging, and one file per command (`commands/`).

/// `println!` for command output: a closed pipe (`efmesh plan --json | head`) ends the
/// command quietly, a full disk or other write failure is an error on stderr, never a panic.
macro_rules! outln {
    () => { $crate::cli::output::write_stdout(format_args!(""), true) };
    ($($t:tt)*) => { $crate::cli::output::write_stdout(format_args!($($t)*), true) };
}

/// `print!` for command output, with [`outln!`]'s handling of write failures.
macro_rules! out {
    ($($t:tt)*) => { $crate::cli::output::write_stdout(format_args!($($t)*), false) };
}

pub mod args;
mod commands;
pub mod exit;
pub mod logging;
mod output;
pub mod plan_view;
pub mod progress_view;
pub mod report;

pub use args::{Cli, Command, ExecFlags, LogLevel, PlanFlags};
use exit::Exit;
use std::path::PathBuf;
use std::process::ExitCode;

/// Run a command and, with `--metrics`, write the textfile whatever its outcome (read from its
/// exit code); a file that cannot be written is a warning, never a failure.
fn with_metrics(
    command: &str,
    env: &str,
    path: Option<&std::path::Path>,
    json: bool,
    f: impl FnOnce() -> Exit,
) -> Exit {
    // refused before the command runs, so a bad path never costs an apply's report
    if let Some(Err(message)) = path.map(crate::util::atomic_file::check_target) {
        return output::fail(
            crate::Error::Argument {
                message: format!("--metrics: {message}"),
                help: Some("pass a path such as `/var/lib/node_exporter/efmesh.prom`".into()),
            },
            json,
        );
    }
    let clock = std::time::Instant::now();
    let code = f();
    if let Some(path) = path {
        let outcome = code.outcome();
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
    let exit = match cli.command {
        Command::Check { json } => commands::check::run(&dir, json),
        Command::Graph {
            html: true, env, ..
        } => commands::graph::html(&dir, env.as_deref()),
        Command::Graph { json, .. } => commands::graph::run(&dir, json),
        Command::Lineage { target, json } => commands::lineage::run(&dir, &target, json),
        Command::Plan { env, flags, json } => commands::plan::run(&dir, &env, &flags, json),
        Command::Apply {
            env,
            yes,
            flags,
            exec,
            json,
        } => with_metrics("apply", &env, exec.metrics.as_deref(), json, || {
            commands::apply::run(&dir, &env, yes, &flags, json, &exec, logging)
        }),
        Command::Run { env, exec, json } => {
            with_metrics("run", &env, exec.metrics.as_deref(), json, || {
                commands::run::run(&dir, &env, &exec, json, logging)
            })
        }
        Command::Status {
            env,
            check,
            deep,
            json,
        } => commands::status::run(&dir, &env, check, deep, json),
        Command::Passport { env, json } => commands::passport::run(&dir, &env, json),
        Command::Audit { env, model, json } => commands::audit::run(&dir, &env, &model, json),
        Command::Restate {
            env,
            model,
            from,
            to,
            dry_run,
            json,
        } => commands::restate::run(&dir, &env, &model, &from, &to, dry_run, json),
        Command::Janitor { ttl, dry_run, json } => commands::janitor::run(&dir, ttl, dry_run, json),
        Command::Compact {
            model,
            dry_run,
            grace,
            json,
        } => commands::compact::run(&dir, model, dry_run, grace, json),
        Command::Migrate { json } => commands::migrate::run(&dir, json),
        Command::Completions { shell } => commands::completions::run(shell),
        Command::Man { out_dir } => commands::man::run(out_dir.as_deref()),
        Command::Init { dir: target, json } => commands::init::run(&dir, target, json),
        Command::Test { names, json } => commands::test::run(&dir, &names, json),
        Command::Schedule {
            env,
            cron,
            remove,
            list,
            print_systemd,
            json,
        } => commands::schedule::run(
            &dir,
            env.as_deref(),
            cron.as_deref(),
            remove,
            list,
            print_systemd,
            json,
        ),
        Command::Diff {
            env_a,
            env_b,
            data,
            model,
            sample,
            json,
        } => commands::diff::run(&dir, &env_a, &env_b, data, model, sample, json),
        Command::Query {
            env,
            sql,
            format,
            json,
        } => {
            let format = if json {
                args::QueryFormat::Json
            } else {
                format
            };
            commands::query::run(&dir, &env, &sql, format)
        }
        Command::Render {
            model,
            env,
            start,
            end,
            json,
        } => commands::render::run(&dir, &model, env, start, end, json),
    };
    output::flush_stdout();
    exit.into()
}
