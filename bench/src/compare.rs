//! `compare`: efmesh vs SQLMesh vs raw DuckDB on plan and apply.
//!
//! For each project size the same generated project is written twice (one
//! copy per tool, so their state never mixes) and three whole-process
//! operations are timed per tool: a cold plan + apply into `dev`, a no-op plan
//! of `dev`, and the promotion of that build to `prod`. Every command runs
//! under a timeout; a command that exceeds it is killed and recorded as timed
//! out, never silently dropped. After each build or promotion the DuckDB file
//! is opened read-only and the environment's views are counted, so a command
//! that "succeeds" without doing the work is reported as a failure. The
//! floor (see [`crate::floor`]) is measured alongside.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use crate::floor;
use crate::generate;
use crate::promote;
use crate::timing::stats::{self, median};
use crate::timing::{Timed, Tool};

/// What one operation of one tool produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Measured {
    /// Completed successfully; `median` of the `samples`.
    Time {
        /// Median wall time.
        median: Duration,
        /// Every timed sample, in run order.
        samples: Vec<Duration>,
    },
    /// Killed after exceeding the limit.
    TimedOut {
        /// The limit that was exceeded.
        limit: Duration,
    },
    /// Exited non-zero, or its result failed verification.
    Failed {
        /// Command, exit status and captured output.
        error: String,
    },
    /// Not attempted.
    Skipped {
        /// Why not.
        reason: String,
    },
}

impl Measured {
    /// Median wall time when the operation completed.
    pub fn time(&self) -> Option<Duration> {
        match self {
            Measured::Time { median, .. } => Some(*median),
            _ => None,
        }
    }

    /// Measurement from samples; `Skipped` for none.
    pub fn from_samples(samples: Vec<Duration>) -> Measured {
        match median(&samples) {
            Some(median) => Measured::Time { median, samples },
            None => Measured::Skipped {
                reason: "no runs".into(),
            },
        }
    }

    fn to_json(&self) -> Value {
        let round = |d: Duration| (stats::ms(d) * 1000.0).round() / 1000.0;
        match self {
            Measured::Time { median, samples } => json!({
                "status": "ok",
                "median_ms": round(*median),
                "samples_ms": samples.iter().map(|d| round(*d)).collect::<Vec<_>>(),
            }),
            Measured::TimedOut { limit } => {
                json!({"status": "timed_out", "limit_s": limit.as_secs_f64()})
            }
            Measured::Failed { error } => json!({"status": "failed", "error": error}),
            Measured::Skipped { reason } => json!({"status": "skipped", "reason": reason}),
        }
    }
}

/// The three timed operations of one tool at one size.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// Cold plan + apply into `dev`.
    pub cold: Measured,
    /// No-op plan of `dev` right after.
    pub noop: Measured,
    /// Promotion of the `dev` build to `prod`.
    pub promote: Measured,
    /// Raw DuckDB running the same view swap on a copy of the same file (efmesh only).
    pub promote_floor: Measured,
    /// Promotion to `prod` after one leaf model changed in `dev` (efmesh only).
    pub one_model_promote: Measured,
    /// Raw DuckDB opening and closing the same file (efmesh only).
    pub open_floor: Measured,
    /// Raw DuckDB swapping the one changed view on the same file: open, DDL, commit, close
    /// (efmesh only).
    pub one_view_floor: Measured,
}

impl ToolResult {
    /// All three operations skipped for the same reason.
    pub fn skipped(reason: &str) -> ToolResult {
        let s = Measured::Skipped {
            reason: reason.into(),
        };
        ToolResult {
            cold: s.clone(),
            noop: s.clone(),
            promote: s.clone(),
            promote_floor: s.clone(),
            one_model_promote: s.clone(),
            open_floor: s.clone(),
            one_view_floor: s,
        }
    }

    fn to_json(&self) -> Value {
        json!({
            "cold_apply_dev": self.cold.to_json(),
            "noop_plan_dev": self.noop.to_json(),
            "promote_prod": self.promote.to_json(),
            "promote_floor": self.promote_floor.to_json(),
            "one_model_promote_prod": self.one_model_promote.to_json(),
            "open_floor": self.open_floor.to_json(),
            "one_view_floor": self.one_view_floor.to_json(),
        })
    }
}

/// Everything measured for one project size.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeResult {
    /// Number of generated models (plus the root).
    pub models: usize,
    /// efmesh's operations.
    pub efmesh: ToolResult,
    /// SQLMesh's operations.
    pub sqlmesh: ToolResult,
    /// Raw DuckDB into a file.
    pub floor_file: Measured,
    /// Raw DuckDB in memory.
    pub floor_memory: Measured,
}

/// How a tool spells the three operations and where its results land.
#[derive(Debug, Clone)]
pub struct Workload {
    /// The program and its project flag.
    pub tool: Tool,
    /// Cold plan + apply into `dev`.
    pub cold: Vec<&'static str>,
    /// No-op plan of `dev`.
    pub noop: Vec<&'static str>,
    /// Text the no-op plan must print (stdout or stderr) to prove it found
    /// nothing to do; `None` to only require a zero exit.
    pub noop_marker: Option<&'static str>,
    /// Promotion to `prod`.
    pub promote: Vec<&'static str>,
    /// DuckDB file, relative to the project.
    pub database: &'static str,
    /// Schema of the generated models' views in `dev`.
    pub dev_schema: &'static str,
    /// Schema of the generated models' views in `prod`.
    pub prod_schema: &'static str,
    /// Timed runs of the no-op plan and of the promotion.
    pub runs: usize,
    /// Also time the promotion floors and a one-model promotion (efmesh's promotion is what
    /// the floors are measured against).
    pub promotion_floors: bool,
}

impl Workload {
    /// efmesh: `apply dev --yes`, `plan dev` (prints "No changes."),
    /// `apply prod --yes`.
    pub fn efmesh(program: PathBuf, runs: usize) -> Workload {
        Workload {
            tool: Tool::efmesh(program),
            cold: vec!["apply", "dev", "--yes"],
            noop: vec!["plan", "dev"],
            noop_marker: Some("No changes."),
            promote: vec!["apply", "prod", "--yes"],
            database: "efmesh.duckdb",
            dev_schema: "dev__bench",
            prod_schema: "bench",
            runs,
            promotion_floors: true,
        }
    }

    /// SQLMesh: `plan dev --auto-apply --no-prompts`, `plan dev --no-prompts`
    /// (which prints "No changes to plan" and exits 0 without prompting) and
    /// `plan --auto-apply --no-prompts` (prod; only the virtual layer is
    /// updated, no model batches run).
    pub fn sqlmesh(program: PathBuf, runs: usize) -> Workload {
        Workload {
            tool: Tool::sqlmesh(program),
            cold: vec!["plan", "dev", "--auto-apply", "--no-prompts"],
            noop: vec!["plan", "dev", "--no-prompts"],
            noop_marker: Some("No changes to plan"),
            promote: vec!["plan", "--auto-apply", "--no-prompts"],
            database: generate::SQLMESH_DATABASE,
            dev_schema: "bench__dev",
            prod_schema: "bench",
            runs,
            promotion_floors: false,
        }
    }
}

/// Options shared by every size.
#[derive(Debug, Clone)]
pub struct Options {
    /// Per-command limit.
    pub timeout: Duration,
    /// Floor repetitions (median).
    pub floor_runs: usize,
}

/// Outcome of one command under the timeout: its time, or the final
/// `Measured` to record instead.
fn time_once(
    w: &Workload,
    dir: &Path,
    args: &[&str],
    opts: &Options,
) -> Result<std::result::Result<(Duration, String), Measured>> {
    eprintln!("  $ {}", w.tool.display_command(dir, args));
    match w.tool.run_timeout(dir, args, opts.timeout)? {
        Timed::TimedOut(after) => {
            eprintln!("    timed out, killed after {}", fmt_duration(after));
            Ok(Err(Measured::TimedOut {
                limit: opts.timeout,
            }))
        }
        Timed::Done(run) => match w.tool.check_success(dir, args, run) {
            Ok(run) => {
                eprintln!("    {}", fmt_duration(run.elapsed));
                let mut text = String::from_utf8_lossy(&run.output.stdout).into_owned();
                text.push_str(&String::from_utf8_lossy(&run.output.stderr));
                Ok(Ok((run.elapsed, text)))
            }
            Err(err) => {
                eprintln!("    failed: {err:#}");
                Ok(Err(Measured::Failed {
                    error: format!("{err:#}"),
                }))
            }
        },
    }
}

/// `w.runs` timed promotions in `dir`, each but the first on a fresh, flushed copy of `saved`
/// (at the same path: tools may remember absolute paths), each checked by `verify`.
fn promote_on_copies(
    w: &Workload,
    dir: &Path,
    saved: &Path,
    opts: &Options,
    verify: impl Fn(&Path) -> Result<(), Measured>,
) -> Result<Measured> {
    let mut samples = vec![];
    while samples.len() < w.runs {
        if !samples.is_empty() {
            fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
            copy_dir(saved, dir)?;
            settle(dir)?;
        }
        match time_once(w, dir, &w.promote, opts)? {
            Ok((elapsed, _)) => {
                if let Err(m) = verify(dir) {
                    return Ok(m);
                }
                samples.push(elapsed);
            }
            Err(m) => return Ok(m),
        }
    }
    Ok(Measured::from_samples(samples))
}

/// Count the non-internal views in `schema` of the DuckDB file `db`,
/// opened read-only (the tools have exited, so nothing holds the lock).
pub fn count_views(db: &Path, schema: &str) -> Result<i64> {
    let config = duckdb::Config::default()
        .access_mode(duckdb::AccessMode::ReadOnly)
        .context("duckdb config")?;
    let conn = duckdb::Connection::open_with_flags(db, config)
        .with_context(|| format!("opening {} read-only", db.display()))?;
    conn.query_row(
        "SELECT count(*) FROM duckdb_views() WHERE schema_name = ? AND NOT internal",
        [schema],
        |r| r.get(0),
    )
    .with_context(|| format!("counting views in {schema} of {}", db.display()))
}

/// `Ok(())` when `schema` of the tool's database holds exactly `n` views.
fn verify_views(
    w: &Workload,
    dir: &Path,
    schema: &str,
    n: usize,
    after: &str,
) -> Result<(), Measured> {
    let db = dir.join(w.database);
    match count_views(&db, schema) {
        Ok(count) if count == n as i64 => Ok(()),
        Ok(count) => Err(Measured::Failed {
            error: format!(
                "{} {after} exited 0 but {} holds {count} views in `{schema}`, expected {n}",
                w.tool.name,
                db.display()
            ),
        }),
        Err(err) => Err(Measured::Failed {
            error: format!("{} {after}: verification failed: {err:#}", w.tool.name),
        }),
    }
}

/// Run the three operations of `w` on the fresh project in `dir`.
pub fn run_tool(w: &Workload, dir: &Path, n: usize, opts: &Options) -> Result<ToolResult> {
    let mut result = ToolResult::skipped("cold apply did not complete");

    // 1. cold plan + apply into dev
    let cold = match time_once(w, dir, &w.cold, opts)? {
        Ok((elapsed, _)) => elapsed,
        Err(m) => {
            result.cold = m;
            return Ok(result);
        }
    };
    if let Err(m) = verify_views(w, dir, w.dev_schema, n, "cold apply") {
        result.cold = m;
        return Ok(result);
    }
    result.cold = Measured::from_samples(vec![cold]);

    // 2. no-op plan, `runs` times
    let mut samples = vec![];
    result.noop = loop {
        if samples.len() == w.runs {
            break Measured::from_samples(samples);
        }
        match time_once(w, dir, &w.noop, opts)? {
            Ok((elapsed, text)) => {
                if let Some(marker) = w.noop_marker {
                    if !text.contains(marker) {
                        break Measured::Failed {
                            error: format!(
                                "`{}` did not report `{marker}`; output:\n{}",
                                w.tool.display_command(dir, &w.noop),
                                text.trim_end()
                            ),
                        };
                    }
                }
                samples.push(elapsed);
            }
            Err(m) => break m,
        }
    };

    // 3. promotion: each run on a restored copy of the post-dev project, at
    // the same path (tools may remember absolute paths)
    let pristine = sibling(dir, "pristine");
    copy_dir(dir, &pristine)?;
    settle(&pristine)?;
    result.promote = promote_on_copies(w, dir, &pristine, opts, |dir| {
        verify_views(w, dir, w.prod_schema, n, "promotion")
    })?;
    if w.promotion_floors && result.promote.time().is_some() {
        promotion_floors(w, dir, &pristine, n, opts, &mut result)?;
    }
    fs::remove_dir_all(&pristine).ok();
    Ok(result)
}

/// The promotion floors and the one-model promotion, from the post-dev copy `pristine`.
fn promotion_floors(
    w: &Workload,
    dir: &Path,
    pristine: &Path,
    n: usize,
    opts: &Options,
    result: &mut ToolResult,
) -> Result<()> {
    let failed = |e: anyhow::Error| Measured::Failed {
        error: format!("{e:#}"),
    };
    // raw DuckDB swapping the same views on a copy of the same post-dev file
    let db = pristine.join(w.database);
    let scratch = sibling(dir, "floor.duckdb");
    result.promote_floor = match promote::swap_sql(&db) {
        Err(e) => failed(e),
        Ok(sql) => on_copies(&db, &scratch, w.runs, |f| promote::floor_swap(f, &sql))?,
    };
    eprintln!("  promotion floor: {}", fmt_measured(&result.promote_floor));
    // one leaf model changed and built in dev, then promoted: exactly one view moves
    fs::remove_dir_all(dir)?;
    copy_dir(pristine, dir)?;
    settle(dir)?;
    let setup = |args: &[&str]| -> Result<()> {
        let run = w.tool.run_ok(dir, args)?;
        drop(run);
        Ok(())
    };
    setup(&w.promote)?;
    fs::write(
        dir.join(generate::model_path(promote::CHANGED_MODEL)),
        promote::changed_model_sql(),
    )?;
    setup(&w.cold)?;
    let changed = sibling(dir, "changed");
    copy_dir(dir, &changed)?;
    settle(&changed)?;
    result.one_model_promote = promote_on_copies(w, dir, &changed, opts, |dir| {
        match promote::max_v(&dir.join(w.database), w.prod_schema) {
            Ok(v) if v == promote::changed_max_v() => {}
            Ok(v) => {
                return Err(Measured::Failed {
                    error: format!(
                        "after the one-model promotion, prod's changed model has max(v) = {v}, expected {}",
                        promote::changed_max_v()
                    ),
                })
            }
            Err(e) => return Err(failed(e)),
        }
        verify_views(w, dir, w.prod_schema, n, "one-model promotion")
    })?;
    // what opening that file costs raw DuckDB
    let db = changed.join(w.database);
    result.open_floor = on_copies(&db, &scratch, w.runs, promote::floor_open)?;
    eprintln!("  open + close floor: {}", fmt_measured(&result.open_floor));
    // and what swapping just that one view costs raw DuckDB on it
    result.one_view_floor = match promote::swap_sql(&db) {
        Err(e) => failed(e),
        Ok(all) => {
            let sql = promote::one_view(&all);
            on_copies(&db, &scratch, w.runs, |f| promote::floor_swap(f, &sql))?
        }
    };
    eprintln!(
        "  one-view swap floor: {}",
        fmt_measured(&result.one_view_floor)
    );
    fs::remove_file(&scratch).ok();
    fs::remove_file(sibling(dir, "floor.duckdb.wal")).ok();
    fs::remove_dir_all(&changed).ok();
    Ok(())
}

/// `runs` raw-DuckDB measurements of `floor`, each on a fresh, flushed copy of `db` at
/// `scratch`; the first failure is the result.
fn on_copies(
    db: &Path,
    scratch: &Path,
    runs: usize,
    floor: impl Fn(&Path) -> Result<Duration>,
) -> Result<Measured> {
    let mut samples = vec![];
    for _ in 0..runs {
        fs::copy(db, scratch)?;
        settle(scratch)?;
        match floor(scratch) {
            Ok(d) => samples.push(d),
            Err(e) => {
                return Ok(Measured::Failed {
                    error: format!("{e:#}"),
                })
            }
        }
    }
    Ok(Measured::from_samples(samples))
}

/// `dir` with `.suffix` appended to its file name.
fn sibling(dir: &Path, suffix: &str) -> PathBuf {
    let mut name = dir.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{suffix}"));
    dir.with_file_name(name)
}

/// Flush `path` (a file, or every file under a directory) to disk. A timed command that
/// fsyncs a file copied a moment before would otherwise also pay for writing back the whole
/// copy, which no real promotion does; every copy is settled before the clock starts.
pub fn settle(path: &Path) -> Result<()> {
    if path.is_dir() {
        for entry in fs::read_dir(path).with_context(|| format!("reading {}", path.display()))? {
            settle(&entry?.path())?;
        }
        Ok(())
    } else {
        fs::File::open(path)
            .and_then(|f| f.sync_all())
            .with_context(|| format!("flushing {}", path.display()))
    }
}

/// Recursive copy of `from` into the not-yet-existing `to` (files and
/// directories only; the generated projects contain no symlinks).
pub fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for entry in fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target).with_context(|| {
                format!("copying {} to {}", entry.path().display(), target.display())
            })?;
        }
    }
    Ok(())
}

/// Median of `runs` floor builds into `target_for(run)`.
pub fn run_floor(n: usize, runs: usize, work: &Path, memory: bool) -> Measured {
    let mut samples = vec![];
    for k in 0..runs {
        let path = work.join(format!("floor-{n}-{k}.duckdb"));
        let target = if memory {
            floor::Target::Memory
        } else {
            floor::Target::File(&path)
        };
        match floor::run(n, target) {
            Ok(d) => samples.push(d),
            Err(err) => {
                return Measured::Failed {
                    error: format!("{err:#}"),
                }
            }
        }
        if !memory {
            fs::remove_file(&path).ok();
            fs::remove_file(path.with_extension("duckdb.wal")).ok();
        }
    }
    let m = Measured::from_samples(samples);
    eprintln!(
        "  floor ({}): {}",
        if memory { "memory" } else { "file" },
        fmt_measured(&m)
    );
    m
}

/// Parse `--models`: comma-separated positive sizes, accepting `_` as a
/// digit separator (`2_000`), not larger than the generator allows.
pub fn parse_models(s: &str) -> Result<usize, String> {
    let digits: String = s.trim().chars().filter(|&c| c != '_').collect();
    let n: usize = digits
        .parse()
        .map_err(|_| format!("`{s}` is not a model count"))?;
    if n == 0 {
        return Err("model counts must be at least 1".into());
    }
    if n > generate::MAX_MODELS {
        return Err(format!("at most {} models", generate::MAX_MODELS));
    }
    Ok(n)
}

/// Human duration: `12.3 ms`, `4.56 s`.
pub fn fmt_duration(d: Duration) -> String {
    let ms = stats::ms(d);
    if ms < 10.0 {
        format!("{ms:.2} ms")
    } else if ms < 1000.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{:.2} s", d.as_secs_f64())
    }
}

/// Table cell for a measurement.
pub fn fmt_measured(m: &Measured) -> String {
    match m {
        Measured::Time { median, .. } => fmt_duration(*median),
        Measured::TimedOut { limit } => format!("timed out (> {} s)", limit.as_secs()),
        Measured::Failed { .. } => "failed (see notes)".into(),
        Measured::Skipped { .. } => "—".into(),
    }
}

/// Ratio cell `num ÷ den`: a plain ratio when both completed, a lower bound
/// when the numerator timed out, `—` otherwise.
pub fn fmt_ratio(num: &Measured, den: &Measured) -> String {
    let Some(d) = den.time().filter(|d| !d.is_zero()) else {
        return "—".into();
    };
    let show = |r: f64| {
        if r >= 100.0 {
            format!("{r:.0}×")
        } else if r >= 10.0 {
            format!("{r:.1}×")
        } else {
            format!("{r:.2}×")
        }
    };
    match num {
        Measured::Time { median, .. } => show(median.as_secs_f64() / d.as_secs_f64()),
        Measured::TimedOut { limit } => {
            format!("> {}", show(limit.as_secs_f64() / d.as_secs_f64()))
        }
        _ => "—".into(),
    }
}

/// Thousands separator for the models column (`2,000`).
fn fmt_count(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The two markdown tables: tool comparison, then efmesh vs the floor.
pub fn markdown(results: &[SizeResult]) -> String {
    let mut out = String::new();
    out.push_str("| models | operation | efmesh | SQLMesh | SQLMesh ÷ efmesh |\n");
    out.push_str("|---:|---|---:|---:|---:|\n");
    for r in results {
        let ops: [(&str, &Measured, &Measured); 3] = [
            ("cold plan + apply (dev)", &r.efmesh.cold, &r.sqlmesh.cold),
            ("no-op plan (dev)", &r.efmesh.noop, &r.sqlmesh.noop),
            ("promotion to prod", &r.efmesh.promote, &r.sqlmesh.promote),
        ];
        for (label, e, s) in ops {
            out.push_str(&format!(
                "| {} | {label} | {} | {} | {} |\n",
                fmt_count(r.models),
                fmt_measured(e),
                fmt_measured(s),
                fmt_ratio(s, e)
            ));
        }
    }
    out.push('\n');
    out.push_str(
        "| models | efmesh cold plan + apply | floor: DuckDB file | floor: in memory | efmesh ÷ floor (file) |\n",
    );
    out.push_str("|---:|---:|---:|---:|---:|\n");
    for r in results {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            fmt_count(r.models),
            fmt_measured(&r.efmesh.cold),
            fmt_measured(&r.floor_file),
            fmt_measured(&r.floor_memory),
            fmt_ratio(&r.efmesh.cold, &r.floor_file)
        ));
    }
    if results
        .iter()
        .any(|r| !matches!(r.efmesh.promote_floor, Measured::Skipped { .. }))
    {
        out.push('\n');
        out.push_str(
            "| models | efmesh promotion | floor: DuckDB view swap | efmesh ÷ floor | efmesh one-model promotion | floor: DuckDB one-view swap | efmesh ÷ floor | floor: open + close | efmesh ÷ open |\n",
        );
        out.push_str("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for r in results {
            let e = &r.efmesh;
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                fmt_count(r.models),
                fmt_measured(&e.promote),
                fmt_measured(&e.promote_floor),
                fmt_ratio(&e.promote, &e.promote_floor),
                fmt_measured(&e.one_model_promote),
                fmt_measured(&e.one_view_floor),
                fmt_ratio(&e.one_model_promote, &e.one_view_floor),
                fmt_measured(&e.open_floor),
                fmt_ratio(&e.one_model_promote, &e.open_floor),
            ));
        }
    }
    out
}

/// Failures and skips worth reading after the tables. A tool whose three
/// operations were all skipped for the same reason gets one line.
pub fn notes(results: &[SizeResult]) -> Vec<String> {
    let mut notes = vec![];
    for r in results {
        for (tool, t) in [("efmesh", &r.efmesh), ("SQLMesh", &r.sqlmesh)] {
            if let Measured::Skipped { reason } = &t.cold {
                if t.noop == t.cold && t.promote == t.cold {
                    notes.push(format!("{} models, {tool}: not run ({reason})", r.models));
                    continue;
                }
            }
            for (what, m) in [
                ("cold apply", &t.cold),
                ("no-op plan", &t.noop),
                ("promotion", &t.promote),
            ] {
                push_note(&mut notes, r.models, &format!("{tool} {what}"), m);
            }
            // the promotion floors are efmesh's alone: only their failures are news
            for (what, m) in [
                ("promotion floor", &t.promote_floor),
                ("one-model promotion", &t.one_model_promote),
                ("open floor", &t.open_floor),
                ("one-view swap floor", &t.one_view_floor),
            ] {
                if matches!(m, Measured::Failed { .. }) {
                    push_note(&mut notes, r.models, &format!("{tool} {what}"), m);
                }
            }
        }
        push_note(&mut notes, r.models, "floor (file)", &r.floor_file);
        push_note(&mut notes, r.models, "floor (memory)", &r.floor_memory);
    }
    notes
}

fn push_note(notes: &mut Vec<String>, models: usize, what: &str, m: &Measured) {
    match m {
        Measured::Failed { error } => {
            notes.push(format!("{models} models, {what}: FAILED: {error}"))
        }
        Measured::Skipped { reason } => {
            notes.push(format!("{models} models, {what}: not run ({reason})"))
        }
        _ => {}
    }
}

/// Whole result as one JSON object.
pub fn to_json(results: &[SizeResult], meta: Value) -> Value {
    json!({
        "meta": meta,
        "results": results.iter().map(|r| json!({
            "models": r.models,
            "efmesh": r.efmesh.to_json(),
            "sqlmesh": r.sqlmesh.to_json(),
            "floor_file": r.floor_file.to_json(),
            "floor_memory": r.floor_memory.to_json(),
        })).collect::<Vec<_>>(),
    })
}

/// Decide whether SQLMesh runs at size `n`: `Err(reason)` if not.
pub fn sqlmesh_gate(
    n: usize,
    available: bool,
    skip_above: Option<usize>,
    timed_out_at: Option<usize>,
) -> Result<(), String> {
    if !available {
        return Err("SQLMesh not found; pass --sqlmesh PATH".into());
    }
    if let Some(limit) = skip_above.filter(|&l| n > l) {
        return Err(format!("--skip-sqlmesh-above {limit}"));
    }
    if let Some(smaller) = timed_out_at.filter(|&s| s <= n) {
        return Err(format!("SQLMesh already timed out at {smaller} models"));
    }
    Ok(())
}

/// True when any operation of `t` timed out.
pub fn any_timed_out(t: &ToolResult) -> bool {
    [&t.cold, &t.noop, &t.promote]
        .iter()
        .any(|m| matches!(m, Measured::TimedOut { .. }))
}

/// Ensure `dir` does not exist yet and write an `n`-model project there.
pub fn fresh_project(dir: &Path, n: usize) -> Result<()> {
    if dir.exists() {
        bail!("{} already exists", dir.display());
    }
    generate::write_project(dir, n, false)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> Measured {
        Measured::from_samples(vec![Duration::from_millis(ms)])
    }

    #[test]
    fn models_parsing() {
        assert_eq!(parse_models("2000"), Ok(2000));
        assert_eq!(parse_models(" 2_000 "), Ok(2000));
        assert!(parse_models("0").is_err());
        assert!(parse_models("abc").is_err());
        assert!(parse_models("100001").is_err());
    }

    #[test]
    fn durations_and_ratios() {
        assert_eq!(fmt_duration(Duration::from_micros(4_321)), "4.32 ms");
        assert_eq!(fmt_duration(Duration::from_micros(25_250)), "25.2 ms");
        assert_eq!(fmt_duration(Duration::from_millis(4_567)), "4.57 s");
        assert_eq!(fmt_ratio(&t(3000), &t(20)), "150×");
        assert_eq!(fmt_ratio(&t(300), &t(20)), "15.0×");
        assert_eq!(fmt_ratio(&t(26), &t(20)), "1.30×");
        let timed_out = Measured::TimedOut {
            limit: Duration::from_secs(600),
        };
        assert_eq!(fmt_ratio(&timed_out, &t(2000)), "> 300×");
        assert_eq!(fmt_ratio(&t(20), &timed_out), "—");
        assert_eq!(fmt_measured(&timed_out), "timed out (> 600 s)");
        assert_eq!(fmt_measured(&Measured::Skipped { reason: "x".into() }), "—");
        assert_eq!(fmt_count(100), "100");
        assert_eq!(fmt_count(2000), "2,000");
        assert_eq!(fmt_count(1234567), "1,234,567");
    }

    #[test]
    fn median_of_samples() {
        let m = Measured::from_samples(
            [30, 10, 20]
                .iter()
                .map(|&x| Duration::from_millis(x))
                .collect(),
        );
        assert_eq!(m.time(), Some(Duration::from_millis(20)));
        assert!(matches!(
            Measured::from_samples(vec![]),
            Measured::Skipped { .. }
        ));
    }

    #[test]
    fn table_layout() {
        let results = vec![SizeResult {
            models: 2000,
            efmesh: ToolResult {
                cold: t(2000),
                noop: t(25),
                promote: t(150),
                promote_floor: t(100),
                one_model_promote: t(60),
                open_floor: t(50),
                one_view_floor: t(40),
            },
            sqlmesh: ToolResult {
                cold: Measured::TimedOut {
                    limit: Duration::from_secs(600),
                },
                ..ToolResult::skipped("cold apply did not complete")
            },
            floor_file: t(1600),
            floor_memory: t(800),
        }];
        let md = markdown(&results);
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(
            lines[0],
            "| models | operation | efmesh | SQLMesh | SQLMesh ÷ efmesh |"
        );
        assert_eq!(
            lines[2],
            "| 2,000 | cold plan + apply (dev) | 2.00 s | timed out (> 600 s) | > 300× |"
        );
        assert_eq!(lines[3], "| 2,000 | no-op plan (dev) | 25.0 ms | — | — |");
        assert_eq!(lines[4], "| 2,000 | promotion to prod | 150.0 ms | — | — |");
        assert_eq!(lines[5], "");
        assert_eq!(lines[8], "| 2,000 | 2.00 s | 1.60 s | 800.0 ms | 1.25× |");
        assert_eq!(
            lines[12],
            "| 2,000 | 150.0 ms | 100.0 ms | 1.50× | 60.0 ms | 40.0 ms | 1.50× | 50.0 ms | 1.20× |"
        );
        // every row of a table has the same number of cells as its header
        for block in md.split("\n\n") {
            let cells: Vec<usize> = block.lines().map(|l| l.matches('|').count()).collect();
            assert!(cells.iter().all(|&c| c == cells[0]), "{block}");
        }
        let notes = notes(&results);
        assert_eq!(notes.len(), 2);
        assert!(notes[0].contains("SQLMesh no-op plan: not run"));
        let mut all_skipped = results.clone();
        all_skipped[0].sqlmesh = ToolResult::skipped("--skip-sqlmesh-above 500");
        assert_eq!(
            super::notes(&all_skipped),
            ["2000 models, SQLMesh: not run (--skip-sqlmesh-above 500)"]
        );
        let j = to_json(&results, json!({}));
        assert_eq!(
            j["results"][0]["sqlmesh"]["cold_apply_dev"]["status"],
            "timed_out"
        );
        assert_eq!(
            j["results"][0]["efmesh"]["noop_plan_dev"]["median_ms"],
            25.0
        );
    }

    #[test]
    fn sqlmesh_gating() {
        assert!(sqlmesh_gate(100, true, None, None).is_ok());
        assert!(sqlmesh_gate(100, false, None, None).is_err());
        assert!(sqlmesh_gate(500, true, Some(500), None).is_ok());
        assert!(sqlmesh_gate(2000, true, Some(500), None).is_err());
        assert!(sqlmesh_gate(2000, true, None, Some(500)).is_err());
        assert!(sqlmesh_gate(100, true, None, Some(500)).is_ok());
    }

    #[test]
    fn copy_dir_copies_tree() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("a");
        generate::write_project(&src, 3, false).unwrap();
        fs::write(src.join("state.bin"), [0u8, 1, 2]).unwrap();
        let dst = sibling(&src, "pristine");
        assert_eq!(dst, tmp.path().join("a.pristine"));
        copy_dir(&src, &dst).unwrap();
        assert_eq!(fs::read(dst.join("state.bin")).unwrap(), [0u8, 1, 2]);
        assert_eq!(
            fs::read_to_string(dst.join("models/bench/m_00002.sql")).unwrap(),
            generate::model_sql(2)
        );
    }

    #[test]
    fn fake_tool_workload_runs_and_verifies() {
        // A shell "tool" that builds the expected views with the floor's
        // schemas stands in for efmesh/SQLMesh: exercises timing, the no-op
        // marker, promotion copies and view verification without either tool.
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("proj");
        fresh_project(&dir, 2).unwrap();
        let db = dir.join("fake.duckdb");
        {
            let conn = duckdb::Connection::open(&db).unwrap();
            conn.execute_batch(
                "CREATE SCHEMA d; CREATE SCHEMA p; CREATE VIEW d.a AS SELECT 1; CREATE VIEW d.b AS SELECT 2; CREATE VIEW p.a AS SELECT 1; CREATE VIEW p.b AS SELECT 2;",
            )
            .unwrap();
        }
        let w = Workload {
            tool: Tool {
                name: "sh".into(),
                program: "sh".into(),
                project_flag: None,
            },
            cold: vec!["-c", "true"],
            noop: vec!["-c", "echo nothing to do"],
            noop_marker: Some("nothing to do"),
            promote: vec!["-c", "true"],
            database: "fake.duckdb",
            dev_schema: "d",
            prod_schema: "p",
            runs: 2,
            promotion_floors: false,
        };
        let opts = Options {
            timeout: Duration::from_secs(30),
            floor_runs: 1,
        };
        let r = run_tool(&w, &dir, 2, &opts).unwrap();
        assert!(r.cold.time().is_some(), "{r:?}");
        assert!(matches!(&r.noop, Measured::Time { samples, .. } if samples.len() == 2));
        assert!(matches!(&r.promote, Measured::Time { samples, .. } if samples.len() == 2));
        assert!(!sibling(&dir, "pristine").exists());

        // wrong view count -> failed, later steps skipped
        let r = run_tool(&w, &dir, 3, &opts).unwrap();
        assert!(matches!(&r.cold, Measured::Failed { error } if error.contains("expected 3")));
        assert!(matches!(r.noop, Measured::Skipped { .. }));

        // missing no-op marker -> failed
        let w2 = Workload {
            noop: vec!["-c", "echo will change"],
            ..w.clone()
        };
        let r = run_tool(&w2, &dir, 2, &opts).unwrap();
        assert!(matches!(&r.noop, Measured::Failed { error } if error.contains("nothing to do")));
    }
}
