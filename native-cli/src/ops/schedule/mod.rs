//! `efmesh schedule <env>`: keep an environment fresh unattended by registering the tick
//! `efmesh run <env>` in the user's crontab, or by printing systemd units that do the same.
//!
//! efmesh does not run a daemon of its own: the machine's scheduler calls `efmesh run <env>`,
//! which applies whatever is due and exits. The crontab line is found again by its title
//! comment (`# efmesh schedule: <project>/<env> (<project dir>)`), so scheduling twice replaces
//! the line instead of adding a second one, and every other line of the crontab is left byte for
//! byte as it was. The crontab is read and written only through the `crontab` binary (or the
//! one `EFMESH_CRONTAB` names), never by editing the spool file behind cron's back.

use crate::error::Error;
use chrono::{DateTime, Local};
use efmesh_core::naming;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The environment variable naming the `crontab` binary, so a machine with cron somewhere
/// unusual (or a test) can point efmesh at it.
pub const CRONTAB_VAR: &str = "EFMESH_CRONTAB";

/// The cron expression used when `--cron` is not given: every hour, on the hour. Hourly is
/// the finest interval most models have, so a tick then finds every interval due.
pub const DEFAULT_CRON: &str = "0 * * * *";

/// The part of `efmesh schedule --help` that explains what the flags do not.
pub const AFTER_HELP: &str = "\
Without --cron the tick runs hourly (`0 * * * *`). The crontab line is found again by its title
comment `# efmesh schedule: <project>/<env> (<dir>)`, so scheduling again replaces it; every other
line of the crontab is kept as it was. --list shows this project's efmesh lines (every
environment, or only <env> when given) with their next run times in the machine's local time.
The crontab is read with `crontab -l` and written with `crontab -`; EFMESH_CRONTAB names another
binary. Cron runs in local time and does not catch up runs missed while the machine was off;
the systemd timer from --print-systemd does (Persistent=true).";

/// How many upcoming run times `--list` shows per entry.
pub const NEXT_RUNS: usize = 3;

/// What starts the title comment of every crontab line efmesh writes; it is how efmesh finds
/// its own lines again.
const TITLE_MARKER: &str = "# efmesh schedule: ";

mod cron;
mod crontab;
mod systemd;

pub use cron::CronExpr;
use crontab::{parse_line, rewrite, Crontab, ParsedLine};
pub use systemd::systemd_units;

/// One efmesh line of the crontab, as `--list` shows it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleEntry {
    /// The environment the tick runs.
    pub env: String,
    /// The cron expression.
    pub cron: String,
    /// The command cron runs, as written in the crontab.
    pub command: String,
    /// The project's name, as written in the title comment.
    pub project: String,
    /// The project's directory.
    pub dir: String,
    /// The next run times in the machine's local time zone (empty when the line's expression
    /// is not one efmesh understands, e.g. edited by hand).
    pub next_runs: Vec<String>,
}

/// What `efmesh schedule <env>` did to the crontab.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleReport {
    /// `added`, `replaced` or `unchanged`.
    pub action: &'static str,
    /// The expression of the line it replaced, when it replaced one.
    pub previous_cron: Option<String>,
    /// The line as it is now.
    pub entry: ScheduleEntry,
    /// Where the tick's output goes.
    pub log: String,
}

/// What `efmesh schedule <env> --remove` did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoveReport {
    /// The environment.
    pub env: String,
    /// Whether a line was removed (false: nothing was scheduled, nothing changed).
    pub removed: bool,
    /// The line that was removed.
    pub entry: Option<ScheduleEntry>,
}

/// `efmesh schedule --list`: the efmesh lines of the crontab that belong to this project.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListReport {
    /// The project directory the entries were selected by.
    pub dir: String,
    /// The entries, in crontab order.
    pub entries: Vec<ScheduleEntry>,
}

/// The project a schedule is for: its root, its name and the environment.
struct Target {
    root: PathBuf,
    name: String,
    env: String,
}

impl Target {
    fn find(dir: &Path, env: &str) -> Result<Target, Error> {
        naming::validate_env(env).map_err(|e| Error::Argument {
            message: e.to_string(),
            help: None,
        })?;
        let (root, config) = crate::workspace::read::read_config(dir)?;
        if root.to_string_lossy().contains(['\n', '\r']) {
            return Err(Error::Argument {
                message: format!(
                    "the project directory `{}` contains a line break, which a crontab line cannot hold",
                    root.display()
                ),
                help: Some("move the project to a directory without one".into()),
            });
        }
        Ok(Target {
            root,
            name: config.name,
            env: env.to_string(),
        })
    }

    fn dir(&self) -> String {
        self.root.to_string_lossy().into_owned()
    }

    fn log(&self) -> PathBuf {
        self.root
            .join(".efmesh/logs")
            .join(format!("run-{}.log", self.env))
    }

    /// The title comment's text after the marker: `<project>/<env> (<dir>)`.
    fn title(&self) -> String {
        format!("{}/{} ({})", title_name(&self.name), self.env, self.dir())
    }

    /// The whole crontab line (without its newline).
    fn line(&self, cron: &CronExpr, exe: &Path) -> String {
        // cron starts commands with a minimal environment: no LD_LIBRARY_PATH. An efmesh
        // linked against a prebuilt libduckdb.so (see scripts/duckdb-env) finds it only
        // through that variable, so the value in force when scheduling goes into the line.
        let ld = match std::env::var("LD_LIBRARY_PATH") {
            Ok(v) if !v.is_empty() => format!("LD_LIBRARY_PATH={} ", shell_quote(&v)),
            _ => String::new(),
        };
        let command = format!(
            "cd {} && {ld}{} run {} --json >> {} 2>&1 {TITLE_MARKER}{}",
            shell_quote(&self.dir()),
            shell_quote(&exe.to_string_lossy()),
            self.env,
            shell_quote(&self.log().to_string_lossy()),
            self.title()
        );
        // cron turns an unescaped `%` of the command into a newline
        format!("{} {}", cron.as_str(), command.replace('%', "\\%"))
    }

    fn owns(&self, entry: &ParsedLine) -> bool {
        entry.env == self.env && entry.dir == self.dir()
    }
}

/// The project name as it goes into a title comment: without the characters that delimit the
/// title (`/`, `(`, `)`), cron's `%`, or line breaks.
fn title_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if matches!(c, '/' | '(' | ')' | '%') || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// `s` as one single-quoted shell word.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn now_local() -> DateTime<Local> {
    crate::util::clock::now().with_timezone(&Local)
}

/// The path of the running efmesh, which the scheduled command calls.
fn current_exe() -> Result<PathBuf, Error> {
    let exe = std::env::current_exe().map_err(|e| Error::Argument {
        message: format!("cannot tell where this efmesh executable is: {e}"),
        help: None,
    })?;
    Ok(crate::workspace::discover::resolve(&exe))
}

/// Register `efmesh run <env>` for the project at (or above) `dir` in the user's crontab at
/// `cron` (default [`DEFAULT_CRON`]), replacing the line an earlier call wrote.
pub fn schedule(dir: &Path, env: &str, cron: Option<&str>) -> Result<ScheduleReport, Error> {
    let cron = CronExpr::parse(cron.unwrap_or(DEFAULT_CRON))?;
    let target = Target::find(dir, env)?;
    crate::workspace::discover::logs_dir(&target.root)?;
    let line = target.line(&cron, &current_exe()?);
    let crontab = Crontab::new();
    let table = crontab.read()?;
    let previous = table
        .lines()
        .filter_map(parse_line)
        .find(|p| target.owns(p));
    let owned = |l: &str| parse_line(l).is_some_and(|p| target.owns(&p));
    let new = rewrite(&table, owned, Some(&line));
    let action = match &previous {
        _ if new == table => "unchanged",
        Some(_) => "replaced",
        None => "added",
    };
    if new != table {
        crontab.write(&new)?;
    }
    let entry = parse_line(&line)
        .expect("efmesh parses the lines it writes")
        .entry(now_local());
    Ok(ScheduleReport {
        action,
        previous_cron: previous.map(|p| p.cron),
        entry,
        log: target.log().to_string_lossy().into_owned(),
    })
}

/// Take the line [`schedule`] wrote for `env` out of the user's crontab. Removing what is not
/// there changes nothing and is not an error.
pub fn remove(dir: &Path, env: &str) -> Result<RemoveReport, Error> {
    let target = Target::find(dir, env)?;
    let crontab = Crontab::new();
    let table = crontab.read()?;
    let previous = table
        .lines()
        .filter_map(parse_line)
        .find(|p| target.owns(p));
    if previous.is_some() {
        let owned = |l: &str| parse_line(l).is_some_and(|p| target.owns(&p));
        crontab.write(&rewrite(&table, owned, None))?;
    }
    let now = now_local();
    Ok(RemoveReport {
        env: env.to_string(),
        removed: previous.is_some(),
        entry: previous.map(|p| p.entry(now)),
    })
}

/// The efmesh lines of the user's crontab for the project at (or above) `dir`, only those of
/// `env` when given, each with its next run times.
pub fn list(dir: &Path, env: Option<&str>) -> Result<ListReport, Error> {
    if let Some(env) = env {
        naming::validate_env(env).map_err(|e| Error::Argument {
            message: e.to_string(),
            help: None,
        })?;
    }
    let (root, _) = crate::workspace::read::read_config(dir)?;
    let root = root.to_string_lossy().into_owned();
    let table = Crontab::new().read()?;
    let now = now_local();
    let entries = table
        .lines()
        .filter_map(parse_line)
        .filter(|p| p.dir == root && env.is_none_or(|e| p.env == e))
        .map(|p| p.entry(now))
        .collect();
    Ok(ListReport { dir: root, entries })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cal(expr: &str) -> String {
        CronExpr::parse(expr).unwrap().on_calendar().unwrap()
    }

    #[test]
    fn translates_the_common_subset_to_systemd() {
        assert_eq!(cal("*/15 * * * *"), "*-*-* *:00/15:00");
        assert_eq!(cal("0 3 * * 1-5"), "Mon,Tue,Wed,Thu,Fri *-*-* 03:00:00");
        assert_eq!(cal("5,35 0-6/2 */2 * *"), "*-*-01/2 00..06/2:05,35:00");
        assert_eq!(cal("0 0 * jan-mar sun,7"), "Sun *-01..03-* 00:00:00");
        assert_eq!(cal("@hourly"), "*-*-* *:00:00");
        assert_eq!(cal("@weekly"), "Sun *-*-* 00:00:00");
        assert_eq!(cal("0 12 1 * *"), "*-*-01 12:00:00");
        let e = CronExpr::parse("0 3 1 * 1").unwrap().on_calendar();
        assert!(matches!(e, Err(Error::UntranslatableCron { .. })), "{e:?}");
    }

    #[test]
    fn refuses_what_debian_cron_refuses() {
        for bad in [
            "* * * *",
            "60 * * * *",
            "* * L * *",
            "0 0 * * 5#3",
            "@reboot",
            "@often",
            "5/10 * * * *",
            "0 0 30 2 *",
            "",
        ] {
            let e = CronExpr::parse(bad);
            assert!(
                matches!(&e, Err(Error::CronExpression { .. })),
                "{bad:?} was accepted"
            );
        }
        assert_eq!(
            CronExpr::parse("  */5   *  * * *").unwrap().as_str(),
            "*/5 * * * *"
        );
    }

    #[test]
    fn parses_the_lines_it_writes() {
        let t = Target {
            root: PathBuf::from("/srv/it's 100% (x)"),
            name: "a/b (c)".into(),
            env: "dev".into(),
        };
        let line = t.line(
            &CronExpr::parse("@daily").unwrap(),
            Path::new("/bin/efmesh"),
        );
        assert!(line.contains("100\\%"), "{line}");
        let p = parse_line(&line).unwrap();
        assert_eq!(p.cron, "@daily");
        assert_eq!(p.env, "dev");
        assert_eq!(p.dir, "/srv/it's 100% (x)");
        assert_eq!(p.project, "a_b _c_");
        assert!(t.owns(&p));
        assert!(parse_line("# 0 * * * * x # efmesh schedule: a/dev (/x)").is_none());
    }

    #[test]
    fn rewrite_keeps_other_lines_byte_for_byte() {
        let ours = |l: &str| l.ends_with("# mine");
        let table = "MAILTO=\"\"\r\n# note\n0 * * * * a # mine\n1 * * * * b\n2 * * * * c # mine\n";
        assert_eq!(
            rewrite(table, ours, Some("5 * * * * z # mine")),
            "MAILTO=\"\"\r\n# note\n5 * * * * z # mine\n1 * * * * b\n"
        );
        assert_eq!(
            rewrite(table, ours, None),
            "MAILTO=\"\"\r\n# note\n1 * * * * b\n"
        );
        assert_eq!(rewrite("x", ours, Some("y # mine")), "x\ny # mine\n");
        assert_eq!(rewrite("", ours, Some("y # mine")), "y # mine\n");
    }
}
