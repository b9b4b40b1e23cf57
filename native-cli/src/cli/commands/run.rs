//! `efmesh run <env>`: one unattended tick.

use crate::cli::args::ExecFlags;
use crate::cli::exit::Exit;
use crate::cli::output::{fail, print_json};
use std::path::Path;

/// Run `efmesh run`.
pub(crate) fn run(
    dir: &Path,
    env: &str,
    exec: &ExecFlags,
    json: bool,
    logging: crate::cli::logging::Logging,
) -> Exit {
    // the same view as apply: only for people, never under --json or off a terminal
    let view = crate::cli::progress_view::ProgressView::start(logging, json);
    let progress = view.as_ref().map(|v| v.hook());
    let opts = crate::ops::run::RunOptions {
        retries: exec.retries,
        jobs: exec.jobs.into(),
        progress,
    };
    let (report, error) = crate::ops::run::run_dir(dir, env, &opts);
    if let Some(v) = &view {
        v.finish();
    }
    // a project that does not load: the full diagnostic, with file and line
    if let (Some(crate::Error::Invalid(_)), false) = (&error, json) {
        return fail(error.expect("matched above"), false);
    }
    use crate::state::Outcome;
    let code = Exit::of_outcome(report.outcome);
    if json {
        print_json(&report);
    } else {
        match report.outcome {
            Outcome::Ok if report.processed.is_empty() && report.built.is_empty() => {
                outln!("`{env}`: nothing was due")
            }
            Outcome::Ok => {
                let n: usize = report.processed.iter().map(|p| p.batches.len()).sum();
                let rebuilt = match report.built.len() {
                    0 => String::new(),
                    k => format!(", rebuilt {k} model(s) on their cron"),
                };
                outln!(
                    "`{env}`: computed {n} batch(es) of {} model(s){rebuilt}",
                    report.processed.len()
                );
                for p in &report.processed {
                    outln!("  {} ({} batch(es))", p.model, p.batches.len());
                }
                for m in &report.built {
                    outln!("  {m} (rebuilt)");
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
    code
}
