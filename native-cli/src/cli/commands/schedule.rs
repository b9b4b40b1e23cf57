//! `efmesh schedule <env>`: the tick in the crontab, or as systemd units.

use crate::cli::exit::Exit;
use crate::cli::output::{fail, print_json};
use std::path::Path;

/// `efmesh schedule`: one of scheduling, `--remove`, `--list` or `--print-systemd`.
pub(crate) fn run(
    dir: &Path,
    env: Option<&str>,
    cron: Option<&str>,
    remove: bool,
    list: bool,
    print_systemd: bool,
    json: bool,
) -> Exit {
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
                Exit::Ok
            }
            Ok(r) => {
                if r.entries.is_empty() {
                    outln!("nothing is scheduled for the project in `{}`", r.dir);
                }
                for e in &r.entries {
                    outln!("{}  `{}`  next: {}", e.env, e.cron, runs(e));
                    outln!("    {}", e.command);
                }
                Exit::Ok
            }
        };
    }
    if print_systemd {
        return match crate::ops::schedule::systemd_units(dir, env_of(), cron) {
            Err(e) => fail(e, json),
            Ok(u) if json => {
                print_json(&u);
                Exit::Ok
            }
            Ok(u) => {
                out!("{u}");
                Exit::Ok
            }
        };
    }
    if remove {
        return match crate::ops::schedule::remove(dir, env_of()) {
            Err(e) => fail(e, json),
            Ok(r) if json => {
                print_json(&r);
                Exit::Ok
            }
            Ok(r) => {
                match &r.entry {
                    Some(e) => outln!(
                        "removed `efmesh run {}` (`{}`) from your crontab",
                        r.env, e.cron
                    ),
                    None => outln!(
                        "nothing was scheduled for `{}` in this project; the crontab was not changed",
                        r.env
                    ),
                }
                Exit::Ok
            }
        };
    }
    match crate::ops::schedule::schedule(dir, env_of(), cron) {
        Err(e) => fail(e, json),
        Ok(r) if json => {
            print_json(&r);
            Exit::Ok
        }
        Ok(r) => {
            let e = &r.entry;
            match (r.action, &r.previous_cron) {
                ("unchanged", _) => outln!(
                    "`efmesh run {}` is already scheduled at `{}`; the crontab was not changed",
                    e.env,
                    e.cron
                ),
                (_, Some(was)) => outln!(
                    "rescheduled `efmesh run {}` at `{}` (was `{was}`) in your crontab",
                    e.env,
                    e.cron
                ),
                _ => outln!(
                    "scheduled `efmesh run {}` at `{}` in your crontab",
                    e.env,
                    e.cron
                ),
            }
            outln!("  next runs (local time): {}", runs(e));
            outln!("  log: {}", r.log);
            Exit::Ok
        }
    }
}
