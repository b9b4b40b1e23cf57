//! Cron expressions: validated against what both `croner` and Debian's cron accept.

use crate::error::Error;
use chrono::{DateTime, Local};

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

/// A validated cron expression: accepted both by `croner` (which computes the next runs) and
/// by the subset Debian's cron understands, so `crontab -` never refuses what efmesh wrote.
#[derive(Debug, Clone)]
pub struct CronExpr {
    /// The expression as it goes into the crontab (whitespace collapsed).
    pub(super) text: String,
    /// The five fields (a macro expanded).
    pub(super) fields: [String; 5],
    /// Each field parsed into its items, for the systemd translation.
    pub(super) parsed: [Vec<Item>; 5],
    cron: croner::Cron,
}

/// One comma-separated item of a cron field: `*`, `*/n`, `a`, `a-b` or `a-b/n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Item {
    /// `*` (with or without a step).
    pub(super) star: bool,
    pub(super) lo: u32,
    pub(super) hi: u32,
    pub(super) step: u32,
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
pub(super) fn weekdays(items: &[Item]) -> Vec<u32> {
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
