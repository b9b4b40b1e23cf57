//! The user's crontab, read and written only through the `crontab` binary, and efmesh's own
//! lines in it, found again by their title comment.

use super::{CronExpr, ScheduleEntry, CRONTAB_VAR, NEXT_RUNS, TITLE_MARKER};
use crate::error::Error;
use chrono::{DateTime, Local};
use std::io::Write;
use std::process::{Command, Stdio};

/// An efmesh line of a crontab, taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ParsedLine {
    pub(super) cron: String,
    pub(super) command: String,
    pub(super) project: String,
    pub(super) env: String,
    pub(super) dir: String,
}

impl ParsedLine {
    pub(super) fn entry(&self, now: DateTime<Local>) -> ScheduleEntry {
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
pub(super) fn parse_line(line: &str) -> Option<ParsedLine> {
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
pub(super) fn rewrite(table: &str, owned: impl Fn(&str) -> bool, line: Option<&str>) -> String {
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
pub(super) struct Crontab {
    program: String,
}

impl Crontab {
    pub(super) fn new() -> Crontab {
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
                variable: CRONTAB_VAR,
            }
        } else {
            Error::Crontab {
                command: format!("{} {args}", self.program),
                message: e.to_string(),
            }
        }
    }

    /// The current table; a user without one has an empty table.
    pub(super) fn read(&self) -> Result<String, Error> {
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
    pub(super) fn write(&self, table: &str) -> Result<(), Error> {
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
