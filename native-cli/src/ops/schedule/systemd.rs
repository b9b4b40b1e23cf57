//! systemd units for the tick: a oneshot service and a `Persistent=true` timer, with the
//! cron expression translated to `OnCalendar=` (or refused when systemd cannot say the same).

use super::cron::{weekdays, CronExpr, Item};
use super::{current_exe, title_name, Target, DEFAULT_CRON};
use crate::error::Error;
use serde::Serialize;
use std::path::Path;

const SYSTEMD_DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

impl CronExpr {
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
