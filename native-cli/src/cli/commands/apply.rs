//! `efmesh apply <env>`: plan, confirm, build what is missing, swap the views.

use crate::cli::args::{ExecFlags, PlanFlags};
use crate::cli::exit::Exit;
use crate::cli::output::{confirm, fail, interactive, print_json, stdout_color};
use crate::Error;
use serde::Serialize;
use std::path::Path;

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

/// Run `efmesh apply`.
pub(crate) fn run(
    dir: &Path,
    env: &str,
    yes: bool,
    flags: &PlanFlags,
    json: bool,
    exec: &ExecFlags,
    logging: crate::cli::logging::Logging,
) -> Exit {
    let planned = flags
        .options()
        .and_then(|options| crate::plan_dir_checked(dir, env, &options, true));
    let (plan, project) = match planned {
        Ok(p) => p,
        Err(e) => return fail(e, json),
    };
    // every apply's plan, also one that stops for confirmation
    crate::exec::metrics::record_plan(&plan);
    if !json {
        out!(
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
        return Exit::Ok;
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
            return Exit::Waiting;
        }
        if let Some(p) = &project {
            p.release_engine();
        }
        if !confirm(env) {
            eprintln!("apply cancelled; nothing changed");
            return Exit::Failure;
        }
    }
    let Some(p) = project else {
        // a plan answered from the cache has no changes; this cannot be reached
        return fail(
            Error::Render("a cached plan cannot be applied".into()),
            json,
        );
    };
    // bars and a line per model, only for people: never under --json or off a terminal
    let view = crate::cli::progress_view::ProgressView::start(logging, json);
    let progress = view.as_ref().map(|v| v.hook());
    let applied = p.apply(
        &plan,
        crate::ApplyOptions {
            retries: exec.retries,
            progress,
            jobs: exec.jobs.into(),
            ..Default::default()
        },
    );
    if let Some(v) = &view {
        v.finish();
    }
    match applied {
        Ok(out) => {
            emit(true, Some(&out));
            if !json {
                for w in &out.audit_warnings {
                    outln!("warning: audit {w}");
                }
                let warned = match out.audit_warnings.len() {
                    0 => String::new(),
                    n => format!(", {n} with non-blocking violations"),
                };
                outln!(
                    "Applied to `{env}`: built {} physical table(s), ran {} audit(s){warned}, swapped views.",
                    out.built.len(),
                    out.audits_run
                );
            }
            Exit::Ok
        }
        Err(e) => fail(e, json),
    }
}
