//! `efmesh-bench`: generates synthetic projects and times whole efmesh CLI
//! processes on them, so performance claims (and later efmesh-vs-SQLMesh
//! comparisons) come from a reproducible harness rather than ad-hoc runs.

mod compare;
/// The eventlake example's fixture generator, shared with its tests.
#[path = "../../examples/eventlake/generate.rs"]
mod eventlake;
mod floor;
mod generate;
mod intervals;
mod jobs;
mod parquet_write;
mod pg_bench;
mod promote;
mod scale;
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
    /// Time cold plan+apply, no-op plan and promotion for efmesh and SQLMesh,
    /// next to raw DuckDB running the same statements (the floor).
    Compare(CompareArgs),
    /// Per-interval overhead: backfill one hourly INCREMENTAL_BY_TIME_RANGE
    /// model (batch_size 1) with efmesh, SQLMesh and raw DuckDB (the floor).
    Intervals(IntervalsArgs),
    /// Write the eventlake example's landing zone (deterministic parquet files) into
    /// `<DIR>/landing`: `cargo run -p efmesh-bench -- eventlake examples/eventlake`.
    Eventlake(EventlakeArgs),
    /// Parquet writer choice: time DuckDB `COPY ... (FORMAT parquet)` against
    /// `query_arrow` into the parquet crate's `ArrowWriter`, for one large file
    /// and for many 24-row files, in one process.
    ParquetWrite(ParquetWriteArgs),
    /// `--jobs N` on a wide DAG: a cold `apply` of independent FULL models and a mart with
    /// `--jobs 1`, `2` and `4`, median wall time and speed-up.
    Jobs(JobsArgs),
    /// PostgreSQL: a 365-day daily backfill with batch concurrency 1 vs 4 on the PostgreSQL
    /// engine, and no-op plan / promotion with PostgreSQL state vs SQLite state.
    Postgres(PostgresArgs),
    /// Growth with project size: `check` and a no-op `plan` (after one cold apply) at each
    /// size, with time per model and peak memory.
    Scale(ScaleArgs),
}

/// Arguments of `scale`.
#[derive(Debug, Args)]
struct ScaleArgs {
    /// Project sizes, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "2000,10000,50000", value_parser = compare::parse_models)]
    models: Vec<usize>,
    /// Timed runs of `check` and of the no-op plan per size, after one warm-up.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// efmesh executable [default: `efmesh` next to this binary, else on PATH].
    #[arg(long)]
    efmesh: Option<PathBuf>,
    /// Keep the projects here (must not exist) instead of a removed temp directory.
    #[arg(long)]
    work_dir: Option<PathBuf>,
    /// Give up on any one command after this many seconds.
    #[arg(long, default_value_t = 1800, value_parser = clap::value_parser!(u64).range(1..))]
    timeout_secs: u64,
}

/// Arguments of `jobs`.
#[derive(Debug, Args)]
struct JobsArgs {
    /// Independent branches.
    #[arg(long, default_value_t = 16)]
    width: usize,
    /// Rows each branch aggregates.
    #[arg(long, default_value_t = 2_000_000)]
    rows: u64,
    /// Runs per setting (the median is reported).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// The `--jobs` settings (SQLMesh: `concurrent_tasks`), comma-separated; the first is the
    /// base of the speed-ups.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8", value_parser = compare::parse_models)]
    jobs: Vec<usize>,
    /// efmesh executable [default: `efmesh` next to this binary, else on PATH].
    #[arg(long)]
    efmesh: Option<PathBuf>,
    /// SQLMesh executable, timed on the same project with the DuckDB connection's
    /// `concurrent_tasks` set to each setting [default: `sqlmesh` on PATH, else skipped].
    #[arg(long)]
    sqlmesh: Option<PathBuf>,
}

/// Arguments of `postgres`.
#[derive(Debug, Args)]
struct PostgresArgs {
    /// A PostgreSQL URL of a user who may create databases (each run gets a fresh one).
    #[arg(long)]
    server: String,
    /// Cold backfills per setting (the median is reported).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Models of the plan/promotion project.
    #[arg(long, default_value_t = 2000)]
    models: usize,
    /// Runs of the no-op plan and of the promotion.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// efmesh executable [default: `efmesh` next to this binary, else on PATH].
    #[arg(long)]
    efmesh: Option<PathBuf>,
}

/// Arguments of `parquet-write`.
#[derive(Debug, Args)]
struct ParquetWriteArgs {
    /// Rows of the large case (one file per run).
    #[arg(long, default_value_t = parquet_write::DEFAULT_ROWS, value_parser = clap::value_parser!(u64).range(1..))]
    rows: u64,
    /// Timed runs per method and case; medians are reported.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// Files per run in the small case (24 rows each).
    #[arg(long, default_value_t = parquet_write::SMALL_FILES, value_parser = parse_positive)]
    small_files: usize,
}

/// Arguments of `eventlake`.
#[derive(Debug, Args)]
struct EventlakeArgs {
    /// The project directory (a copy of examples/eventlake); `landing/` must not exist yet.
    dir: PathBuf,
}

/// Arguments of `intervals`.
#[derive(Debug, Args)]
struct IntervalsArgs {
    /// Hourly intervals to backfill (a multiple of 24).
    #[arg(long, default_value_t = intervals::DEFAULT_HOURS, value_parser = intervals::parse_hours)]
    hours: usize,
    /// Also time SQLMesh on this shorter range (a multiple of 24 hours), for
    /// when the full range would not fit the timeout.
    #[arg(long, value_parser = intervals::parse_hours)]
    sqlmesh_short_hours: Option<usize>,
    /// Skip the full-range SQLMesh run (use with --sqlmesh-short-hours).
    #[arg(long)]
    skip_sqlmesh_full: bool,
    /// efmesh executable [default: `efmesh` next to this binary, else on PATH].
    #[arg(long)]
    efmesh: Option<PathBuf>,
    /// SQLMesh executable [default: `sqlmesh` on PATH; SQLMesh is skipped if absent].
    #[arg(long)]
    sqlmesh: Option<PathBuf>,
    /// Per-command limit in seconds.
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    timeout_secs: u64,
    /// Directory for the projects [default: a temp dir, removed afterwards];
    /// must not exist yet, and is kept.
    #[arg(long)]
    work_dir: Option<PathBuf>,
    /// Print one JSON object instead of the markdown table.
    #[arg(long)]
    json: bool,
}

/// Arguments of `compare`.
#[derive(Debug, Args)]
struct CompareArgs {
    /// Project sizes, comma-separated (e.g. `100,500,2000`).
    #[arg(long, value_delimiter = ',', required = true, value_parser = compare::parse_models)]
    models: Vec<usize>,
    /// Timed runs of the no-op plan, the promotion (each on a restored copy)
    /// and the floor; the median is reported. The cold apply runs once.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// Runs for SQLMesh's no-op plan and promotion [default: --runs].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    sqlmesh_runs: Option<u32>,
    /// efmesh executable [default: `efmesh` next to this binary, else on PATH].
    #[arg(long)]
    efmesh: Option<PathBuf>,
    /// SQLMesh executable [default: `sqlmesh` on PATH; SQLMesh is skipped if absent].
    #[arg(long)]
    sqlmesh: Option<PathBuf>,
    /// Do not run SQLMesh for sizes above N.
    #[arg(long, value_name = "N")]
    skip_sqlmesh_above: Option<usize>,
    /// Per-command limit in seconds; a command exceeding it is killed and
    /// recorded as timed out (and SQLMesh is not tried at larger sizes).
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    timeout_secs: u64,
    /// Directory for the generated projects [default: a temp dir, removed
    /// afterwards]; must not exist yet, and is kept.
    #[arg(long)]
    work_dir: Option<PathBuf>,
    /// Print one JSON object instead of the markdown tables.
    #[arg(long)]
    json: bool,
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
        Cmd::Compare(args) => cmd_compare(args),
        Cmd::Intervals(args) => cmd_intervals(args),
        Cmd::Eventlake(args) => cmd_eventlake(args),
        Cmd::ParquetWrite(args) => cmd_parquet_write(args),
        Cmd::Jobs(args) => cmd_jobs(args),
        Cmd::Postgres(args) => cmd_postgres(args),
        Cmd::Scale(args) => cmd_scale(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("efmesh-bench: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// `postgres`: the backfill with batch concurrency 1 and 4 on the PostgreSQL engine, then
/// no-op plan and promotion with PostgreSQL state next to SQLite state.
fn cmd_postgres(args: PostgresArgs) -> Result<()> {
    use pg_bench as pg;
    let efmesh = resolve_efmesh(args.efmesh.as_deref())?;
    let (_tmp, work) = work_dir(None, "efmesh-bench-pg-")?;
    let now = "2026-01-01T00:00:00Z";
    println!("365-day daily backfill on the PostgreSQL engine (pool_size 4), cold `apply dev`, median of {}", args.repeats);
    println!("| batch_concurrency | median | runs | rows |\n|---:|---:|---|---:|");
    for c in [1u32, 4] {
        let mut times = vec![];
        let mut rows = (0, 0);
        for r in 0..args.repeats {
            let url = pg::fresh_database(&args.server, &format!("efmesh_bench_c{c}_r{r}"))?;
            let dir = work.join(format!("backfill-c{c}-r{r}"));
            pg::write_backfill(&dir, &url, c)?;
            times.push(pg::timed(
                &efmesh,
                &dir,
                &["apply", "dev", "--yes", "--json"],
                now,
            )?);
            rows = pg::backfill_rows(&url)?;
            if rows != (8760, 8760) {
                bail!("batch_concurrency {c}: {rows:?} rows, expected 8760 distinct");
            }
        }
        let runs: Vec<String> = times.iter().map(|t| pg::show(*t)).collect();
        let m = pg::median(times);
        println!(
            "| {c} | {} | {} | {} |",
            pg::show(m),
            runs.join(", "),
            rows.0
        );
    }
    println!(
        "\n{} models: no-op plan and promotion (median of {}), state store only differs",
        args.models, args.runs
    );
    println!(
        "| state | cold apply dev | no-op plan dev | promotion to prod |\n|---|---:|---:|---:|"
    );
    for store in ["SQLite", "PostgreSQL"] {
        let dir = work.join(format!("models-{store}"));
        let url = match store {
            "PostgreSQL" => Some(pg::fresh_database(&args.server, "efmesh_bench_state")?),
            _ => None,
        };
        pg::write_models(&dir, args.models, url.as_deref())?;
        let cold = pg::timed(&efmesh, &dir, &["apply", "dev", "--yes"], now)?;
        let mut noop = vec![];
        for _ in 0..args.runs {
            noop.push(pg::timed(&efmesh, &dir, &["plan", "dev"], now)?);
        }
        let mut promote = vec![];
        for r in 0..args.runs {
            // promote to a fresh environment each time, so every run swaps every view
            let env = format!("prod{r}");
            promote.push(pg::timed(
                &efmesh,
                &dir,
                &["apply", env.as_str(), "--yes"],
                now,
            )?);
        }
        println!(
            "| {store} | {} | {} | {} |",
            pg::show(cold),
            pg::show(pg::median(noop)),
            pg::show(pg::median(promote))
        );
    }
    Ok(())
}

/// `scale`: `check`, one cold apply and the no-op plan at every size.
fn cmd_scale(args: ScaleArgs) -> Result<()> {
    let tool = Tool::efmesh(resolve_efmesh(args.efmesh.as_deref())?);
    let (_tmp, work) = work_dir(args.work_dir.as_deref(), "efmesh-bench-scale-")?;
    let timeout = std::time::Duration::from_secs(args.timeout_secs);
    let runs = args.runs as usize;
    let load_before = load_average();
    let mut rows = vec![];
    for &n in &args.models {
        eprintln!("== {n} models ==");
        let dir = work.join(format!("n{n}"));
        generate::write_project(&dir, n, false)?;
        let check = scale::measure(&tool, &dir, &["check"], 1, runs, "", timeout)?;
        eprintln!("  check {:?}", check.median);
        let apply = scale::measure(&tool, &dir, &["apply", "dev", "--yes"], 0, 1, "", timeout)?;
        eprintln!("  cold apply {:?}", apply.median);
        let noop = scale::measure(
            &tool,
            &dir,
            &["plan", "dev"],
            1,
            runs,
            "No changes.",
            timeout,
        )?;
        eprintln!("  no-op plan {:?}", noop.median);
        rows.push(scale::SizeFigures {
            models: n,
            check,
            apply,
            noop,
        });
        if args.work_dir.is_none() {
            std::fs::remove_dir_all(&dir).ok();
        }
    }
    println!("`{}`\n", std::env::args().collect::<Vec<_>>().join(" "));
    println!(
        "efmesh: {}. check and no-op plan: median of {runs} after one warm-up; peak memory is the largest of those runs. Load average before: {}; after: {}.\n",
        tool.program.display(),
        load_before.unwrap_or_else(|| "unknown".into()),
        load_average().unwrap_or_else(|| "unknown".into())
    );
    print!("{}", scale::markdown(&rows));
    Ok(())
}

/// `jobs`: time cold applies of a wide DAG at each `--jobs` setting, and SQLMesh's cold plan
/// of the same models at the same `concurrent_tasks`, in one run.
fn cmd_jobs(args: JobsArgs) -> Result<()> {
    let efmesh = Tool::efmesh(resolve_efmesh(args.efmesh.as_deref())?);
    let sqlmesh = args
        .sqlmesh
        .clone()
        .or_else(|| find_on_path("sqlmesh"))
        .map(Tool::sqlmesh);
    let (_tmp, work) = work_dir(None, "efmesh-bench-jobs-")?;
    let load_before = load_average();
    let timeout = std::time::Duration::from_secs(600);
    let mut rows: Vec<jobs::Row> = vec![];
    for &n in &args.jobs {
        let mut row = jobs::Row {
            jobs: n,
            efmesh: vec![],
            sqlmesh: vec![],
        };
        for r in 0..args.repeats {
            let dir = work.join(format!("efmesh-j{n}-r{r}"));
            jobs::write_project(&dir, args.width, args.rows)?;
            let j = n.to_string();
            let argv = ["apply", "prod", "--yes", "--json", "--jobs", j.as_str()];
            let run = jobs::finished(&efmesh, &dir, &argv, timeout)?;
            jobs::verify(&run.output.stdout, args.width)?;
            row.efmesh.push(run.elapsed.as_secs_f64());
            eprintln!("efmesh --jobs {n}: {:.2} s", run.elapsed.as_secs_f64());
            std::fs::remove_dir_all(&dir).ok();
            if let Some(sm) = &sqlmesh {
                let dir = work.join(format!("sqlmesh-j{n}-r{r}"));
                jobs::write_project(&dir, args.width, args.rows)?;
                jobs::write_sqlmesh_config(&dir, n)?;
                let argv = ["plan", "--auto-apply", "--no-prompts"];
                let run = jobs::finished(sm, &dir, &argv, timeout)?;
                jobs::verify_sqlmesh(&dir, args.width)?;
                row.sqlmesh.push(run.elapsed.as_secs_f64());
                eprintln!(
                    "sqlmesh concurrent_tasks {n}: {:.2} s",
                    run.elapsed.as_secs_f64()
                );
                std::fs::remove_dir_all(&dir).ok();
            }
        }
        rows.push(row);
    }
    println!("`{}`\n", std::env::args().collect::<Vec<_>>().join(" "));
    println!(
        "wide DAG: {} FULL branches x {} rows + 1 mart, cold apply to prod, median of {}; efmesh `apply prod --yes --jobs N`, SQLMesh {} `plan --auto-apply --no-prompts` with `concurrent_tasks: N` (load before: {}; after: {})\n",
        args.width,
        args.rows,
        args.repeats,
        sqlmesh
            .as_ref()
            .map(|t| t.program.display().to_string())
            .unwrap_or_else(|| "(not found, skipped)".into()),
        load_before.unwrap_or_else(|| "unknown".into()),
        load_average().unwrap_or_else(|| "unknown".into())
    );
    print!("{}", jobs::markdown(&rows));
    Ok(())
}

/// `eventlake`: write the example's fixture and say what a reader must find in it.
fn cmd_eventlake(args: EventlakeArgs) -> Result<()> {
    let landing = args.dir.join("landing");
    let s = eventlake::write(&landing).map_err(anyhow::Error::msg)?;
    println!(
        "wrote {} files ({} deliveries of {} events) to {}",
        s.files,
        s.raw_rows,
        s.events,
        landing.display()
    );
    println!(
        "core.events must hold {} rows; {} event(s) arrive again beyond the {}-day horizon (residual duplicates); `efmesh compact` drops {} same-day duplicates",
        s.canonical_rows,
        s.residual_duplicate_events,
        eventlake::HORIZON_DAYS,
        s.same_day_duplicates
    );
    Ok(())
}

/// `parquet-write`: time both parquet writers in a temp dir, print the table.
fn cmd_parquet_write(args: ParquetWriteArgs) -> Result<()> {
    let work = tempfile::Builder::new()
        .prefix("efmesh-bench-parquet-")
        .tempdir()
        .context("creating temp work dir")?;
    let load_before = load_average();
    let report = parquet_write::run(args.rows, args.small_files, args.runs as usize, work.path())?;
    let load_after = load_average();
    let command_line = std::env::args().collect::<Vec<_>>().join(" ");
    println!("`{command_line}`\n");
    println!(
        "{}; threads = {}; {} CPU(s) visible. Median of {} run(s) per method and case, \
         methods alternating first; files in {}. Source tables generated in {:.2} s (untimed).\n",
        report.duckdb_version,
        report.duckdb_threads,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        report.runs,
        work.path().display(),
        report.generate.as_secs_f64()
    );
    if let (Some(before), Some(after)) = (&load_before, &load_after) {
        println!("Load average (1/5/15 min) before: {before}; after: {after}.\n");
    }
    print!("{}", parquet_write::markdown(&report));
    Ok(())
}

/// A positive count.
fn parse_positive(s: &str) -> Result<usize, String> {
    match s.replace('_', "").parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("expected a positive integer, got {s:?}")),
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

/// `compare`: for every size, fresh projects per tool, time the three
/// operations for each tool plus the floor, then print tables (or JSON).
/// The benchmark's work directory: `--work-dir` (which must not exist yet), or a temp dir
/// removed when the returned guard drops.
fn work_dir(
    given: Option<&std::path::Path>,
    prefix: &str,
) -> Result<(Option<tempfile::TempDir>, PathBuf)> {
    match given {
        Some(dir) => {
            if dir.exists() {
                bail!("--work-dir {} already exists", dir.display());
            }
            std::fs::create_dir_all(dir)?;
            Ok((None, dir.to_path_buf()))
        }
        None => {
            let tmp = tempfile::Builder::new()
                .prefix(prefix)
                .tempdir()
                .context("creating temp work dir")?;
            let path = tmp.path().to_path_buf();
            Ok((Some(tmp), path))
        }
    }
}

fn cmd_compare(args: CompareArgs) -> Result<()> {
    use compare::{Options, SizeResult, ToolResult, Workload};

    let efmesh = resolve_efmesh(args.efmesh.as_deref())?;
    let sqlmesh = match &args.sqlmesh {
        Some(path) => Some(path.clone()),
        None => find_on_path("sqlmesh"),
    };
    let runs = args.runs as usize;
    let sqlmesh_runs = args.sqlmesh_runs.unwrap_or(args.runs) as usize;
    let opts = Options {
        timeout: std::time::Duration::from_secs(args.timeout_secs),
        floor_runs: runs,
    };
    let (_tmp, work) = work_dir(args.work_dir.as_deref(), "efmesh-bench-compare-")?;

    let load_before = load_average();
    let ef = Workload::efmesh(efmesh.clone(), runs);
    let sm = sqlmesh.clone().map(|p| Workload::sqlmesh(p, sqlmesh_runs));
    let mut sqlmesh_timed_out_at = None;
    let mut results = vec![];
    for &n in &args.models {
        eprintln!("== {n} models ==");
        let base = work.join(format!("n{n}"));
        let ef_dir = base.join("efmesh");
        compare::fresh_project(&ef_dir, n)?;
        let efmesh_result = compare::run_tool(&ef, &ef_dir, n, &opts)?;
        // the floors right after efmesh, before SQLMesh's long runs leave the disk busy
        let floor_file = compare::run_floor(n, opts.floor_runs, &base, false);
        let floor_memory = compare::run_floor(n, opts.floor_runs, &base, true);

        let sqlmesh_result = match compare::sqlmesh_gate(
            n,
            sm.is_some(),
            args.skip_sqlmesh_above,
            sqlmesh_timed_out_at,
        ) {
            Err(reason) => ToolResult::skipped(&reason),
            Ok(()) => {
                let sm = sm.as_ref().expect("gated on availability");
                let sm_dir = base.join("sqlmesh");
                compare::fresh_project(&sm_dir, n)?;
                let r = compare::run_tool(sm, &sm_dir, n, &opts)?;
                if compare::any_timed_out(&r) {
                    sqlmesh_timed_out_at = Some(n);
                }
                r
            }
        };

        results.push(SizeResult {
            models: n,
            efmesh: efmesh_result,
            sqlmesh: sqlmesh_result,
            floor_file,
            floor_memory,
        });
        if args.work_dir.is_none() {
            std::fs::remove_dir_all(&base).ok();
        }
    }

    let load_after = load_average();
    let command_line = std::env::args().collect::<Vec<_>>().join(" ");
    if args.json {
        let meta = serde_json::json!({
            "command": command_line,
            "efmesh": efmesh.display().to_string(),
            "sqlmesh": sqlmesh.as_ref().map(|p| p.display().to_string()),
            "runs": runs,
            "sqlmesh_runs": sqlmesh_runs,
            "timeout_s": args.timeout_secs,
            "loadavg_before": load_before,
            "loadavg_after": load_after,
        });
        println!("{}", compare::to_json(&results, meta));
    } else {
        println!("`{command_line}`\n");
        println!(
            "efmesh: {}; SQLMesh: {}. Cold apply: one run. No-op plan and promotion: median of {runs} \
             (SQLMesh: {sqlmesh_runs}); every promotion on a fresh copy of the post-dev project. \
             Floor: median of {runs}. Timeout {} s per command.\n",
            efmesh.display(),
            sqlmesh
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "not found".into()),
            args.timeout_secs
        );
        if let (Some(before), Some(after)) = (&load_before, &load_after) {
            println!("Load average (1/5/15 min) before: {before}; after: {after}.\n");
        }
        print!("{}", compare::markdown(&results));
        let notes = compare::notes(&results);
        if !notes.is_empty() {
            println!("\nNotes:\n");
            for note in notes {
                println!("- {}", note.replace('\n', "\n  "));
            }
        }
    }
    Ok(())
}

/// `intervals`: efmesh, SQLMesh (full and/or short range) and the floor on
/// fresh copies of one generated hourly project.
fn cmd_intervals(args: IntervalsArgs) -> Result<()> {
    use intervals::{Outcome, Row};
    use timing::Timed;

    let efmesh = resolve_efmesh(args.efmesh.as_deref())?;
    let sqlmesh = match &args.sqlmesh {
        Some(path) => Some(path.clone()),
        None => find_on_path("sqlmesh"),
    };
    let timeout = std::time::Duration::from_secs(args.timeout_secs);
    let hours = args.hours;
    let (_tmp, work) = work_dir(args.work_dir.as_deref(), "efmesh-bench-intervals-")?;
    let load_before = load_average();
    // efmesh reads "now" from the environment; the child inherits it. Set
    // before any thread is spawned.
    let now = intervals::efmesh_now(hours);
    std::env::set_var("EFMESH_NOW", &now);

    let mut rows = vec![];
    let mut notes: Vec<String> = vec![];

    // 1. efmesh
    eprintln!("== efmesh: {hours} intervals ==");
    let ef_dir = work.join("efmesh");
    intervals::write_project(&ef_dir, hours)?;
    let ef_tool = Tool::efmesh(efmesh.clone());
    let outcome = match ef_tool.run_timeout(&ef_dir, &intervals::EFMESH_ARGS, timeout)? {
        Timed::TimedOut(d) => Outcome::TimedOut(d, None),
        Timed::Done(run) if !run.output.status.success() => {
            let cmd = ef_tool.display_command(&ef_dir, &intervals::EFMESH_ARGS);
            let stderr = String::from_utf8_lossy(&run.output.stderr);
            let tail: Vec<&str> = stderr.lines().rev().take(20).collect();
            notes.push(format!(
                "efmesh failed: `EFMESH_NOW={now} {cmd}` exited {}; stderr tail:\n{}",
                run.output.status,
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            ));
            Outcome::Failed(format!("exit {}", run.output.status))
        }
        Timed::Done(run) => {
            let json: serde_json::Value = serde_json::from_slice(&run.output.stdout)
                .context("efmesh --json output is not JSON")?;
            let batches = json["batches"].as_array().map(|b| b.len()).unwrap_or(0);
            let (n, distinct, min, max) =
                intervals::row_stats(&ef_dir.join("efmesh.duckdb"), intervals::EFMESH_DEV_VIEW)?;
            notes.push(format!(
                "efmesh: {batches} batches in --json; {} has {n} rows, {distinct} distinct hours, {min} .. {max}",
                intervals::EFMESH_DEV_VIEW
            ));
            if batches == hours && n == hours as i64 && distinct == hours as i64 {
                Outcome::Done(run.elapsed)
            } else {
                Outcome::Failed(format!("verification: {batches} batches, {n} rows"))
            }
        }
    };
    rows.push(Row {
        tool: "efmesh".into(),
        intervals: hours,
        outcome,
    });

    // 2. SQLMesh, full range and/or short range
    let mut sm_runs = vec![];
    if !args.skip_sqlmesh_full {
        sm_runs.push(("SQLMesh".to_string(), hours));
    }
    if let Some(short) = args.sqlmesh_short_hours {
        sm_runs.push((format!("SQLMesh ({short} h range)"), short));
    }
    for (label, h) in sm_runs {
        let Some(program) = &sqlmesh else {
            rows.push(Row {
                tool: label,
                intervals: h,
                outcome: Outcome::Failed("sqlmesh not found".into()),
            });
            continue;
        };
        eprintln!("== {label}: {h} intervals ==");
        let dir = work.join(format!("sqlmesh-{h}"));
        intervals::write_project(&dir, hours)?;
        let tool = Tool::sqlmesh(program.clone());
        let argv = intervals::sqlmesh_args(h, hours);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let db = dir.join(generate::SQLMESH_DATABASE);
        let outcome = match tool.run_timeout(&dir, &argv, timeout)? {
            Timed::TimedOut(d) => {
                let done = intervals::sqlmesh_physical_rows(&db).ok();
                notes.push(format!(
                    "{label}: `{}` killed after {:.0} s; completed intervals (rows in its physical table): {}",
                    tool.display_command(&dir, &argv),
                    d.as_secs_f64(),
                    done.map(|n| n.to_string()).unwrap_or_else(|| "unknown".into())
                ));
                Outcome::TimedOut(d, done)
            }
            Timed::Done(run) if !run.output.status.success() => {
                let stderr = String::from_utf8_lossy(&run.output.stderr);
                notes.push(format!(
                    "{label} failed: `{}` exited {}:\n{}",
                    tool.display_command(&dir, &argv),
                    run.output.status,
                    stderr
                        .lines()
                        .rev()
                        .take(20)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect::<Vec<_>>()
                        .join("\n")
                ));
                Outcome::Failed(format!("exit {}", run.output.status))
            }
            Timed::Done(run) => {
                let (n, distinct, min, max) =
                    intervals::row_stats(&db, intervals::SQLMESH_DEV_VIEW)?;
                notes.push(format!(
                    "{label}: {} has {n} rows, {distinct} distinct hours, {min} .. {max}",
                    intervals::SQLMESH_DEV_VIEW
                ));
                if n == h as i64 && distinct == h as i64 {
                    Outcome::Done(run.elapsed)
                } else {
                    Outcome::Failed(format!("verification: {n} rows, expected {h}"))
                }
            }
        };
        rows.push(Row {
            tool: label,
            intervals: h,
            outcome,
        });
    }

    // 3. floor
    eprintln!("== floor: {hours} intervals ==");
    let outcome = match intervals::run_floor(hours, &work.join("floor.duckdb")) {
        Ok(d) => Outcome::Done(d),
        Err(e) => Outcome::Failed(format!("{e:#}")),
    };
    rows.push(Row {
        tool: "floor (raw DuckDB, file)".into(),
        intervals: hours,
        outcome,
    });
    let load_after = load_average();

    let floor = rows.last().expect("floor row");
    let over_floor = intervals::efmesh_over_floor(&rows[0], floor);
    let speedups: Vec<(String, Option<f64>)> = rows[1..rows.len() - 1]
        .iter()
        .map(|r| (r.tool.clone(), intervals::speedup(&rows[0], r)))
        .collect();
    let command_line = std::env::args().collect::<Vec<_>>().join(" ");
    if args.json {
        let value = serde_json::json!({
            "command": command_line,
            "efmesh_now": now,
            "timeout_s": args.timeout_secs,
            "loadavg_before": load_before,
            "loadavg_after": load_after,
            "rows": rows.iter().map(|r| serde_json::json!({
                "tool": r.tool,
                "intervals": r.intervals,
                "seconds": r.secs(),
                "intervals_per_s": r.rate(),
                "outcome": format!("{:?}", r.outcome),
            })).collect::<Vec<_>>(),
            "efmesh_over_floor": over_floor,
            "speedup_vs_sqlmesh": speedups.iter().map(|(t, s)| serde_json::json!({"vs": t, "speedup": s})).collect::<Vec<_>>(),
            "notes": notes,
        });
        println!("{value}");
    } else {
        println!("`{command_line}`\n");
        println!(
            "efmesh: {} (EFMESH_NOW={now}); SQLMesh: {}. One run each, whole processes; floor times only \
             the {hours} DELETE+INSERT transactions (setup untimed). Timeout {} s per command.\n",
            efmesh.display(),
            sqlmesh.as_ref().map(|p| p.display().to_string()).unwrap_or_else(|| "not found".into()),
            args.timeout_secs
        );
        if let (Some(b), Some(a)) = (&load_before, &load_after) {
            println!("Load average (1/5/15 min) before: {b}; after: {a}.\n");
        }
        print!("{}", intervals::markdown(&rows));
        println!();
        match over_floor {
            Some(r) => println!(
                "- efmesh / floor (time): {r:.2}× — target ≤ 1.2× (issue 19): {}",
                if r <= 1.2 { "MET" } else { "NOT MET" }
            ),
            None => println!("- efmesh / floor (time): n/a"),
        }
        for (t, s) in &speedups {
            match s {
                Some(s) => println!(
                    "- efmesh vs {t} (intervals/s): {s:.1}× faster — target ≥ 20×: {}",
                    if *s >= 20.0 { "MET" } else { "NOT MET" }
                ),
                None => println!("- efmesh vs {t}: n/a"),
            }
        }
        if !notes.is_empty() {
            println!("\nNotes:\n");
            for note in notes {
                println!("- {}", note.replace('\n', "\n  "));
            }
        }
    }
    Ok(())
}

/// `/proc/loadavg`'s 1/5/15-minute averages, where available: shows in the
/// report whether something else was competing for the CPU.
fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    Some(
        text.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// First `name` on `PATH`, if any.
fn find_on_path(name: &str) -> Option<PathBuf> {
    let exe_name = format!("{name}{}", std::env::consts::EXE_SUFFIX);
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(&exe_name))
        .find(|candidate| candidate.is_file())
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
    fn compare_args() {
        let cli = Cli::try_parse_from([
            "efmesh-bench",
            "compare",
            "--models",
            "100,500,2_000",
            "--sqlmesh",
            "/x/sqlmesh",
            "--skip-sqlmesh-above",
            "500",
            "--json",
        ])
        .unwrap();
        let Cmd::Compare(args) = cli.command else {
            panic!("expected compare")
        };
        assert_eq!(args.models, [100, 500, 2000]);
        assert_eq!(args.runs, 5);
        assert_eq!(args.sqlmesh_runs, None);
        assert_eq!(args.timeout_secs, 600);
        assert_eq!(args.sqlmesh, Some(PathBuf::from("/x/sqlmesh")));
        assert_eq!(args.skip_sqlmesh_above, Some(500));
        assert!(args.json);

        let cli = Cli::try_parse_from([
            "efmesh-bench",
            "compare",
            "--models",
            "7",
            "--runs",
            "3",
            "--timeout-secs",
            "5",
        ])
        .unwrap();
        let Cmd::Compare(args) = cli.command else {
            panic!("expected compare")
        };
        assert_eq!((args.models, args.runs, args.timeout_secs), (vec![7], 3, 5));
        assert!(!args.json);

        for bad in [
            &["efmesh-bench", "compare"][..],
            &["efmesh-bench", "compare", "--models", "0"],
            &["efmesh-bench", "compare", "--models", "100,x"],
            &["efmesh-bench", "compare", "--models", "100", "--runs", "0"],
            &[
                "efmesh-bench",
                "compare",
                "--models",
                "100",
                "--timeout-secs",
                "0",
            ],
        ] {
            assert!(Cli::try_parse_from(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn intervals_args() {
        let cli = Cli::try_parse_from(["efmesh-bench", "intervals"]).unwrap();
        let Cmd::Intervals(args) = cli.command else {
            panic!("expected intervals")
        };
        assert_eq!((args.hours, args.timeout_secs), (8760, 600));
        assert_eq!(args.sqlmesh_short_hours, None);
        assert!(!args.json && !args.skip_sqlmesh_full);
        let cli = Cli::try_parse_from([
            "efmesh-bench",
            "intervals",
            "--hours",
            "720",
            "--sqlmesh",
            "/x/sqlmesh",
            "--timeout-secs",
            "60",
            "--sqlmesh-short-hours",
            "48",
            "--json",
        ])
        .unwrap();
        let Cmd::Intervals(args) = cli.command else {
            panic!("expected intervals")
        };
        assert_eq!((args.hours, args.timeout_secs), (720, 60));
        assert_eq!(args.sqlmesh_short_hours, Some(48));
        assert_eq!(args.sqlmesh, Some(PathBuf::from("/x/sqlmesh")));
        assert!(args.json);
        for bad in [
            &["efmesh-bench", "intervals", "--hours", "25"][..],
            &["efmesh-bench", "intervals", "--hours", "0"],
            &["efmesh-bench", "intervals", "--timeout-secs", "0"],
        ] {
            assert!(Cli::try_parse_from(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn parquet_write_args() {
        let cli = Cli::try_parse_from(["efmesh-bench", "parquet-write"]).unwrap();
        let Cmd::ParquetWrite(args) = cli.command else {
            panic!("expected parquet-write")
        };
        assert_eq!(
            (args.rows, args.runs, args.small_files),
            (5_000_000, 5, 1_000)
        );
        let cli = Cli::try_parse_from([
            "efmesh-bench",
            "parquet-write",
            "--rows",
            "1000",
            "--runs",
            "3",
            "--small-files",
            "10",
        ])
        .unwrap();
        let Cmd::ParquetWrite(args) = cli.command else {
            panic!("expected parquet-write")
        };
        assert_eq!((args.rows, args.runs, args.small_files), (1000, 3, 10));
        for bad in [
            &["efmesh-bench", "parquet-write", "--rows", "0"][..],
            &["efmesh-bench", "parquet-write", "--runs", "0"],
            &["efmesh-bench", "parquet-write", "--small-files", "0"],
        ] {
            assert!(Cli::try_parse_from(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn explicit_efmesh_wins() {
        assert_eq!(
            resolve_efmesh(Some(Path::new("/bin/true"))).unwrap(),
            PathBuf::from("/bin/true")
        );
    }
}
