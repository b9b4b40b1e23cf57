//! `efmesh-bench`: generates synthetic projects and times whole efmesh CLI
//! processes on them, so performance claims (and later efmesh-vs-SQLMesh
//! comparisons) come from a reproducible harness rather than ad-hoc runs.

mod generate;
mod timing;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};

use timing::stats::{self, Summary};
use timing::Tool;

/// Command-line interface of the harness.
#[derive(Debug, Parser)]
#[command(name = "efmesh-bench", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

/// The harness's subcommands: one to produce a project, one per timed
/// workload.
#[derive(Debug, Subcommand)]
enum Cmd {
    /// Write a synthetic project loadable by both efmesh and SQLMesh.
    Generate(GenerateArgs),
    /// Time `efmesh -C DIR check` on a freshly generated project.
    Check(CheckArgs),
}

/// Arguments of `generate`.
#[derive(Debug, Args)]
struct GenerateArgs {
    /// Number of generated models (in chains of 5 off `src.events`).
    #[arg(long)]
    models: usize,
    /// Project directory to write.
    #[arg(long)]
    out: PathBuf,
    /// Write into an existing non-empty directory, overwriting generated files.
    #[arg(long)]
    force: bool,
}

/// Arguments of `check`.
#[derive(Debug, Args)]
struct CheckArgs {
    /// Number of generated models in the benchmark project.
    #[arg(long)]
    models: usize,
    /// Timed runs after the warm-up.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// Untimed warm-up runs before the timed ones.
    #[arg(long, default_value_t = 1)]
    warmup: u32,
    /// efmesh executable [default: `efmesh` next to this binary, else on PATH].
    #[arg(long)]
    efmesh: Option<PathBuf>,
    /// Print one JSON object instead of the human-readable report.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Cmd::Generate(args) => cmd_generate(args),
        Cmd::Check(args) => cmd_check(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("efmesh-bench: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// `generate`: write the project and say what was written.
fn cmd_generate(args: GenerateArgs) -> Result<()> {
    let summary = generate::write_project(&args.out, args.models, args.force)?;
    print!(
        "generated {} models (+ src.events) in {} ({} files written",
        args.models,
        args.out.display(),
        summary.files_written
    );
    if summary.stale_removed > 0 {
        print!(", {} stale models removed", summary.stale_removed);
    }
    println!(")");
    Ok(())
}

/// `check`: generate into a temp dir, time `efmesh check` there, report.
fn cmd_check(args: CheckArgs) -> Result<()> {
    let program = resolve_efmesh(args.efmesh.as_deref())?;
    let tool = Tool::efmesh(program);
    let dir = tempfile::Builder::new()
        .prefix("efmesh-bench-")
        .tempdir()
        .context("creating temp project dir")?;
    generate::write_project(dir.path(), args.models, false)?;

    let cmd_args = ["check"];
    let samples = tool.bench(
        dir.path(),
        &cmd_args,
        args.warmup as usize,
        args.runs as usize,
    )?;
    let summary = Summary::from_samples(&samples).context("no timed runs")?;
    report(
        "check",
        &tool,
        dir.path(),
        &cmd_args,
        args.models,
        args.warmup,
        &samples,
        &summary,
        args.json,
    );
    Ok(())
}

/// Print a finished measurement, either human-readable (min/median/max plus a
/// markdown table row for pasting into docs) or as a single JSON object.
#[allow(clippy::too_many_arguments)]
fn report(
    workload: &str,
    tool: &Tool,
    project: &Path,
    cmd_args: &[&str],
    models: usize,
    warmup: u32,
    samples: &[std::time::Duration],
    summary: &Summary,
    json: bool,
) {
    let round = |ms: f64| (ms * 1000.0).round() / 1000.0;
    if json {
        let value = serde_json::json!({
            "workload": workload,
            "tool": tool.name,
            "program": tool.program.display().to_string(),
            "command": tool.display_command(project, cmd_args),
            "models": models,
            "warmup": warmup,
            "runs": summary.count,
            "min_ms": round(stats::ms(summary.min)),
            "median_ms": round(stats::ms(summary.median)),
            "max_ms": round(stats::ms(summary.max)),
            "mean_ms": round(stats::ms(summary.mean)),
            "samples_ms": samples.iter().map(|d| round(stats::ms(*d))).collect::<Vec<_>>(),
        });
        println!("{value}");
    } else {
        println!(
            "{} {workload}: {models} models, {} runs after {warmup} warm-up ({})",
            tool.name,
            summary.count,
            tool.program.display()
        );
        println!("  min    {:>10.2} ms", stats::ms(summary.min));
        println!("  median {:>10.2} ms", stats::ms(summary.median));
        println!("  max    {:>10.2} ms", stats::ms(summary.max));
        println!(
            "| {workload} | {models} | {:.2} |",
            stats::ms(summary.median)
        );
    }
}

/// Find the efmesh executable: an explicit `--efmesh` wins; otherwise prefer
/// the one built alongside this binary (same `target/<profile>/`), so
/// `cargo build --release` then `target/release/efmesh-bench check` times the
/// matching build; fall back to `PATH`.
fn resolve_efmesh(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(path) = explicit {
        return Ok(path.to_path_buf());
    }
    let exe_name = format!("efmesh{}", std::env::consts::EXE_SUFFIX);
    let exe = std::env::current_exe().context("locating own executable")?;
    if let Some(sibling) = exe.parent().map(|dir| dir.join(&exe_name)) {
        if sibling.is_file() {
            return Ok(sibling);
        }
    }
    if let Some(path_var) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path_var) {
            let candidate = dir.join(&exe_name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    bail!(
        "no efmesh executable next to {} or on PATH; build it (cargo build -p efmesh --release) or pass --efmesh PATH",
        exe.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn check_defaults() {
        let cli = Cli::try_parse_from(["efmesh-bench", "check", "--models", "3"]).unwrap();
        let Cmd::Check(args) = cli.command else {
            panic!("expected check")
        };
        assert_eq!(
            (args.models, args.runs, args.warmup, args.json),
            (3, 10, 1, false)
        );
        assert!(args.efmesh.is_none());
        assert!(
            Cli::try_parse_from(["efmesh-bench", "check", "--models", "3", "--runs", "0"]).is_err()
        );
    }

    #[test]
    fn explicit_efmesh_wins() {
        assert_eq!(
            resolve_efmesh(Some(Path::new("/bin/true"))).unwrap(),
            PathBuf::from("/bin/true")
        );
    }
}
