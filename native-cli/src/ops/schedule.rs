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
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

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

/// The cron macros efmesh accepts and the five fields each stands for. `@reboot` is not
/// among them: it is not a recurring tick.
const MACROS: &[(&str, &str)] = &[
    ("@yearly", "0 0 1 1 *"),
    ("@annually", "0 0 1 1 *"),
    ("@monthly", "0 0 1 * *"),
    ("@weekly", "0 0 * * 0"),
    ("@daily", "0 0 * * *"),
    ("@midnight", "0 0 * * *"),
    ("@hourly", "0 * * * *"),
];

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
const SYSTEMD_DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/// A validated cron expression: accepted both by `croner` (which computes the next runs) and
/// by the subset Debian's cron understands, so `crontab -` never refuses what efmesh wrote.
#[derive(Debug, Clone)]
pub struct CronExpr {
    /// The expression as it goes into the crontab (whitespace collapsed).
    text: String,
    /// The five fields (a macro expanded).
    fields: [String; 5],
    /// Each field parsed into its items, for the systemd translation.
    parsed: [Vec<Item>; 5],
    cron: croner::Cron,
}

/// One comma-separated item of a cron field: `*`, `*/n`, `a`, `a-b` or `a-b/n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Item {
    /// `*` (with or without a step).
    star: bool,
    lo: u32,
    hi: u32,
    step: u32,
}

/// The bounds of each field, and what it is called in errors.
const FIELDS: [(&str, u32, u32); 5] = [
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day of month", 1, 31),
    ("month", 1, 12),
    ("day of week", 0, 7),
];

impl CronExpr {
    /// Validate `text` as a 5-field cron expression or an `@hourly`-style macro.
    pub fn parse(text: &str) -> Result<CronExpr, Error> {
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let bad = |message: String| Error::CronExpression {
            expr: text.clone(),
            message,
        };
        if text.is_empty() {
            return Err(bad("it is empty".into()));
        }
        let five = if text.starts_with('@') {
            let lower = text.to_ascii_lowercase();
            if lower == "@reboot" {
                return Err(bad(
                    "@reboot runs once at boot, not as a recurring tick".into()
                ));
            }
            MACROS
                .iter()
                .find(|(m, _)| *m == lower)
                .map(|(_, f)| f.to_string())
                .ok_or_else(|| {
                    bad(format!(
                        "unknown macro; use one of {}",
                        MACROS
                            .iter()
                            .map(|(m, _)| *m)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                })?
        } else {
            text.clone()
        };
        let fields: Vec<String> = five.split(' ').map(str::to_string).collect();
        if fields.len() != 5 {
            return Err(bad(format!(
                "it has {} field(s); cron needs 5: minute hour day-of-month month day-of-week",
                fields.len()
            )));
        }
        let parser = croner::parser::CronParser::builder()
            .seconds(croner::parser::Seconds::Disallowed)
            .year(croner::parser::Year::Disallowed)
            .build();
        let cron = parser.parse(&five).map_err(|e| bad(e.to_string()))?;
        let mut parsed: [Vec<Item>; 5] = Default::default();
        for (i, field) in fields.iter().enumerate() {
            parsed[i] = parse_field(i, field).map_err(bad)?;
        }
        // e.g. `0 0 30 2 *`: cron accepts it and never runs it
        if cron
            .find_next_occurrence(&crate::util::clock::now(), false)
            .is_err()
        {
            return Err(bad("it matches no date: it would never run".into()));
        }
        let fields: [String; 5] = fields.try_into().expect("five fields");
        Ok(CronExpr {
            text,
            fields,
            parsed,
            cron,
        })
    }

    /// The first run strictly after `t`, in UTC (how a model's `cron` is read).
    pub fn next_after_utc(&self, t: DateTime<chrono::Utc>) -> Option<DateTime<chrono::Utc>> {
        self.cron.find_next_occurrence(&t, false).ok()
    }

    /// The expression as written into the crontab.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The next `n` run times after `after`, in the machine's local time zone (cron's), as
    /// RFC 3339 with the offset.
    pub fn next_runs(&self, after: DateTime<Local>, n: usize) -> Vec<String> {
        self.cron
            .iter_after(after)
            .take(n)
            .map(|t| t.format("%Y-%m-%dT%H:%M:%S%:z").to_string())
            .collect()
    }

    /// The expression as a systemd `OnCalendar=` value, or an error when systemd's calendar
    /// syntax cannot say the same thing.
    pub fn on_calendar(&self) -> Result<String, Error> {
        let untranslatable = |reason: &str| Error::UntranslatableCron {
            expr: self.text.clone(),
            reason: reason.into(),
        };
        // cron fires when EITHER restricted day field matches (unless one starts with `*`);
        // systemd requires both, so the two cannot be written as one calendar event
        if !self.fields[2].starts_with('*') && !self.fields[4].starts_with('*') {
            return Err(untranslatable(
                "it restricts both the day of month and the day of week, which cron joins with OR and systemd with AND",
            ));
        }
        let [minute, hour, dom, month, dow] = &self.parsed;
        let days = weekdays(dow);
        let prefix = if days.len() == 7 {
            String::new()
        } else {
            let names: Vec<&str> = [1, 2, 3, 4, 5, 6, 0]
                .iter()
                .filter(|d| days.contains(d))
                .map(|&d| SYSTEMD_DAYS[d as usize])
                .collect();
            format!("{} ", names.join(","))
        };
        Ok(format!(
            "{prefix}*-{}-{} {}:{}:00",
            calendar_field(month, 1),
            calendar_field(dom, 1),
            calendar_field(hour, 0),
            calendar_field(minute, 0)
        ))
    }
}

/// Parse one field of a 5-field expression into items, refusing what Debian's cron would
/// refuse (croner accepts more: `L`, `W`, `#`, `?`).
fn parse_field(index: usize, field: &str) -> Result<Vec<Item>, String> {
    let (name, min, max) = FIELDS[index];
    let value = |s: &str| -> Result<u32, String> {
        let lower = s.to_ascii_lowercase();
        let named = match index {
            3 => MONTHS
                .iter()
                .position(|m| *m == lower)
                .map(|i| i as u32 + 1),
            4 => DAYS.iter().position(|d| *d == lower).map(|i| i as u32),
            _ => None,
        };
        let v = match named {
            Some(v) => v,
            None => s.parse::<u32>().map_err(|_| {
                format!("`{s}` in the {name} field is not a number (cron's `L`, `W`, `#` and `?` are not supported)")
            })?,
        };
        if v < min || v > max {
            return Err(format!("{v} in the {name} field is outside {min}-{max}"));
        }
        Ok(v)
    };
    field
        .split(',')
        .map(|item| {
            let (range, step) = match item.split_once('/') {
                Some((r, s)) => {
                    let step = s
                        .parse::<u32>()
                        .ok()
                        .filter(|&s| s > 0)
                        .ok_or_else(|| format!("step `{s}` in the {name} field is not a positive number"))?;
                    (r, step)
                }
                None => (item, 1),
            };
            if range == "*" {
                return Ok(Item {
                    star: true,
                    lo: min,
                    hi: max,
                    step,
                });
            }
            let (lo, hi) = match range.split_once('-') {
                Some((a, b)) => (value(a)?, value(b)?),
                None if step == 1 => {
                    let v = value(range)?;
                    (v, v)
                }
                None => {
                    return Err(format!(
                        "`{item}` in the {name} field: a step needs `*` or a range before it, like `*/{step}`"
                    ))
                }
            };
            if lo > hi {
                return Err(format!(
                    "range `{range}` in the {name} field runs backwards"
                ));
            }
            Ok(Item {
                star: false,
                lo,
                hi,
                step,
            })
        })
        .collect()
}

/// The days of the week (0 = Sunday) a day-of-week field matches.
fn weekdays(items: &[Item]) -> Vec<u32> {
    let mut days = vec![];
    for it in items {
        let mut d = it.lo;
        while d <= it.hi {
            let day = d % 7; // 7 is Sunday too
            if !days.contains(&day) {
                days.push(day);
            }
            d += it.step;
        }
    }
    days
}

/// One cron field in systemd calendar syntax: lists stay lists, `a-b` becomes `a..b`, and
/// `*/n` becomes `first/n` (systemd repeats from a value, cron from the field's start).
fn calendar_field(items: &[Item], first: u32) -> String {
    if items.iter().any(|i| i.star && i.step == 1) {
        return "*".into();
    }
    items
        .iter()
        .map(|i| match (i.star, i.lo == i.hi, i.step) {
            (true, _, step) => format!("{first:02}/{step}"),
            (false, true, _) => format!("{:02}", i.lo),
            (false, false, 1) => format!("{:02}..{:02}", i.lo, i.hi),
            (false, false, step) => format!("{:02}..{:02}/{step}", i.lo, i.hi),
        })
        .collect::<Vec<_>>()
        .join(",")
}

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

/// `efmesh schedule <env> --print-systemd`: the two units, for the user to install.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SystemdUnits {
    /// The service unit's file name.
    pub service_name: String,
    /// The timer unit's file name.
    pub timer_name: String,
    /// The service unit's text.
    pub service: String,
    /// The timer unit's text.
    pub timer: String,
    /// The timer's `OnCalendar=` value.
    pub on_calendar: String,
}

impl std::fmt::Display for SystemdUnits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "# Save these two units as")?;
        writeln!(f, "#   ~/.config/systemd/user/{}", self.service_name)?;
        writeln!(f, "#   ~/.config/systemd/user/{}", self.timer_name)?;
        writeln!(f, "# then start the timer with")?;
        writeln!(
            f,
            "#   systemctl --user daemon-reload && systemctl --user enable --now {}",
            self.timer_name
        )?;
        writeln!(
            f,
            "# A user timer runs only while you are logged in, unless you run `loginctl enable-linger`."
        )?;
        writeln!(f)?;
        writeln!(f, "# ---- {} ----", self.service_name)?;
        write!(f, "{}", self.service)?;
        writeln!(f)?;
        writeln!(f, "# ---- {} ----", self.timer_name)?;
        write!(f, "{}", self.timer)
    }
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

/// An efmesh line of a crontab, taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ParsedLine {
    cron: String,
    command: String,
    project: String,
    env: String,
    dir: String,
}

impl ParsedLine {
    fn entry(&self, now: DateTime<Local>) -> ScheduleEntry {
        ScheduleEntry {
            env: self.env.clone(),
            cron: self.cron.clone(),
            command: self.command.clone(),
            project: self.project.clone(),
            dir: self.dir.clone(),
            next_runs: CronExpr::parse(&self.cron)
                .map(|c| c.next_runs(now, NEXT_RUNS))
                .unwrap_or_default(),
        }
    }
}

/// Take a crontab line apart when it is one efmesh wrote (found by its title comment).
fn parse_line(line: &str) -> Option<ParsedLine> {
    let trimmed = line.trim();
    if trimmed.starts_with('#') {
        return None;
    }
    let at = trimmed.rfind(TITLE_MARKER)?;
    let title = trimmed[at + TITLE_MARKER.len()..].trim_end();
    let body = trimmed[..at].trim_end();
    let (head, dir) = title.strip_suffix(')')?.split_once(" (")?;
    let (project, env) = head.rsplit_once('/')?;
    let fields = if body.starts_with('@') { 1 } else { 5 };
    let mut rest = body;
    let mut cron = vec![];
    for _ in 0..fields {
        rest = rest.trim_start();
        let end = rest.find(char::is_whitespace)?;
        cron.push(&rest[..end]);
        rest = &rest[end..];
    }
    Some(ParsedLine {
        cron: cron.join(" "),
        command: rest.trim().to_string(),
        project: project.to_string(),
        env: env.to_string(),
        dir: dir.replace("\\%", "%"),
    })
}

/// `table` with every line `owned` selects taken out, and `line` (when given) in place of the
/// first of them, or appended. Every other line keeps its bytes, line ending included.
fn rewrite(table: &str, owned: impl Fn(&str) -> bool, line: Option<&str>) -> String {
    let mut out = String::with_capacity(table.len() + 256);
    let mut placed = false;
    for raw in table.split_inclusive('\n') {
        let text = raw.strip_suffix('\n').unwrap_or(raw);
        let text = text.strip_suffix('\r').unwrap_or(text);
        if owned(text) {
            if let (Some(l), false) = (line, placed) {
                out.push_str(l);
                out.push('\n');
                placed = true;
            }
        } else {
            out.push_str(raw);
        }
    }
    if let (Some(l), false) = (line, placed) {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// The `crontab` binary efmesh talks to.
struct Crontab {
    program: String,
}

impl Crontab {
    fn new() -> Crontab {
        Crontab {
            program: std::env::var(CRONTAB_VAR)
                .ok()
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| "crontab".into()),
        }
    }

    fn spawn_error(&self, args: &str, e: std::io::Error) -> Error {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::CrontabMissing {
                program: self.program.clone(),
            }
        } else {
            Error::Crontab {
                command: format!("{} {args}", self.program),
                message: e.to_string(),
            }
        }
    }

    /// The current table; a user without one has an empty table.
    fn read(&self) -> Result<String, Error> {
        let out = Command::new(&self.program)
            .arg("-l")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| self.spawn_error("-l", e))?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.success() {
            return String::from_utf8(out.stdout).map_err(|_| Error::Crontab {
                command: format!("{} -l", self.program),
                message: "the crontab is not UTF-8 text; efmesh will not rewrite it".into(),
            });
        }
        if out.status.code() == Some(1) && stderr.contains("no crontab for") {
            return Ok(String::new());
        }
        Err(Error::Crontab {
            command: format!("{} -l", self.program),
            message: exit_message(&out.status, &stderr),
        })
    }

    /// Install `table` as the whole crontab.
    fn write(&self, table: &str) -> Result<(), Error> {
        let mut child = Command::new(&self.program)
            .arg("-")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| self.spawn_error("-", e))?;
        let written = child
            .stdin
            .take()
            .expect("stdin is piped")
            .write_all(table.as_bytes());
        let out = child
            .wait_with_output()
            .map_err(|e| self.spawn_error("-", e))?;
        if !out.status.success() {
            return Err(Error::Crontab {
                command: format!("{} -", self.program),
                message: exit_message(&out.status, &String::from_utf8_lossy(&out.stderr)),
            });
        }
        written.map_err(|e| Error::Crontab {
            command: format!("{} -", self.program),
            message: e.to_string(),
        })
    }
}

fn exit_message(status: &std::process::ExitStatus, stderr: &str) -> String {
    let stderr = stderr.trim();
    match (status.code(), stderr.is_empty()) {
        (Some(c), true) => format!("exited with status {c}"),
        (Some(c), false) => format!("exited with status {c}: {stderr}"),
        (None, _) => format!("was killed ({status})"),
    }
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
    Ok(std::fs::canonicalize(&exe).unwrap_or(exe))
}

/// Register `efmesh run <env>` for the project at (or above) `dir` in the user's crontab at
/// `cron` (default [`DEFAULT_CRON`]), replacing the line an earlier call wrote.
pub fn schedule(dir: &Path, env: &str, cron: Option<&str>) -> Result<ScheduleReport, Error> {
    let cron = CronExpr::parse(cron.unwrap_or(DEFAULT_CRON))?;
    let target = Target::find(dir, env)?;
    let logs = target.root.join(".efmesh/logs");
    std::fs::create_dir_all(&logs).map_err(|e| Error::io(&logs, e))?;
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

/// The systemd service and timer units that run `efmesh run <env>` at `cron`; printed for the
/// user to install, for machines without cron or to catch up runs missed while off.
pub fn systemd_units(dir: &Path, env: &str, cron: Option<&str>) -> Result<SystemdUnits, Error> {
    let cron = CronExpr::parse(cron.unwrap_or(DEFAULT_CRON))?;
    let on_calendar = cron.on_calendar()?;
    let target = Target::find(dir, env)?;
    let exe = current_exe()?;
    let unit = format!("efmesh-run-{}-{}", unit_name(&target.name), target.env);
    let description = format!(
        "efmesh run {} (project {}, {})",
        target.env,
        title_name(&target.name),
        target.dir()
    )
    .replace('%', "%%");
    let environment = match std::env::var("LD_LIBRARY_PATH") {
        // the prebuilt libduckdb.so is found only through LD_LIBRARY_PATH, which a unit
        // does not inherit from the shell that printed it
        Ok(v) if !v.is_empty() => format!(
            "Environment={}\n",
            systemd_quote(&format!("LD_LIBRARY_PATH={v}"))
        ),
        _ => String::new(),
    };
    let service = format!(
        "[Unit]\nDescription={description}\n\n[Service]\nType=oneshot\nWorkingDirectory={}\n{environment}ExecStart={} run {} --json\n",
        target.dir().replace('%', "%%"),
        systemd_quote(&exe.to_string_lossy()),
        target.env
    );
    let timer = format!(
        "[Unit]\nDescription=Timer for {description} ({})\n\n[Timer]\nOnCalendar={on_calendar}\nPersistent=true\n\n[Install]\nWantedBy=timers.target\n",
        cron.as_str().replace('%', "%%")
    );
    Ok(SystemdUnits {
        service_name: format!("{unit}.service"),
        timer_name: format!("{unit}.timer"),
        service,
        timer,
        on_calendar,
    })
}

/// The project name as part of a unit file name: characters systemd does not allow there
/// become `-`.
fn unit_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// `s` as one double-quoted word of a unit file, `%` escaped from specifier expansion.
fn systemd_quote(s: &str) -> String {
    format!(
        "\"{}\"",
        s.replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('%', "%%")
    )
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
