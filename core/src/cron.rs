//! Cron expressions as models and `efmesh schedule` write them: a 5-field expression or an
//! `@daily`-style macro, in the subset Debian's cron understands (so `crontab -` never refuses
//! what efmesh wrote), and matching at least one date. Pure, so `check` refuses a bad model
//! `cron` at its line; the native side adds `croner` to compute run times.

/// The cron macros efmesh accepts and the five fields each stands for. `@reboot` is not
/// among them: it is not a recurring tick.
pub const MACROS: &[(&str, &str)] = &[
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

/// A cron expression that passed [`parse`]: its normalized text, its five fields (a macro
/// expanded) and each field's items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CronFields {
    /// The expression with whitespace collapsed, as written into a crontab.
    pub text: String,
    /// The five fields, a macro expanded.
    pub fields: [String; 5],
    /// Each field parsed into its items.
    pub parsed: [Vec<Item>; 5],
}

/// One comma-separated item of a cron field: `*`, `*/n`, `a`, `a-b` or `a-b/n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item {
    /// `*` (with or without a step).
    pub star: bool,
    /// The first value the item matches.
    pub lo: u32,
    /// The last value the item matches (inclusive).
    pub hi: u32,
    /// Every how many values between them it matches (1: each).
    pub step: u32,
}

/// The bounds of each field, and what it is called in errors.
const FIELDS: [(&str, u32, u32); 5] = [
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day of month", 1, 31),
    ("month", 1, 12),
    ("day of week", 0, 7),
];

/// Validate `text` as a 5-field cron expression or an `@hourly`-style macro; the error says
/// why not, for a message that names the expression.
pub fn parse(text: &str) -> Result<CronFields, String> {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return Err("it is empty".into());
    }
    let five = if text.starts_with('@') {
        let lower = text.to_ascii_lowercase();
        if lower == "@reboot" {
            return Err("@reboot runs once at boot, not as a recurring tick".into());
        }
        MACROS
            .iter()
            .find(|(m, _)| *m == lower)
            .map(|(_, f)| f.to_string())
            .ok_or_else(|| {
                format!(
                    "unknown macro; use one of {}",
                    MACROS
                        .iter()
                        .map(|(m, _)| *m)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?
    } else {
        text.clone()
    };
    let fields: Vec<String> = five.split(' ').map(str::to_string).collect();
    if fields.len() != 5 {
        return Err(format!(
            "it has {} field(s); cron needs 5: minute hour day-of-month month day-of-week",
            fields.len()
        ));
    }
    let mut parsed: [Vec<Item>; 5] = Default::default();
    for (i, field) in fields.iter().enumerate() {
        parsed[i] = parse_field(i, field)?;
    }
    // e.g. `0 0 30 2 *`: cron accepts it and never runs it. With a restricted day of week,
    // cron runs on either field's days, so only a day of month alone can miss every month.
    if fields[4] == "*" && !matches_a_date(&parsed[2], &parsed[3]) {
        return Err("it matches no date: it would never run".into());
    }
    let fields: [String; 5] = fields.try_into().expect("five fields");
    Ok(CronFields {
        text,
        fields,
        parsed,
    })
}

/// Whether some month of `months` has some day of `days` (February has 29 in leap years).
fn matches_a_date(days: &[Item], months: &[Item]) -> bool {
    const LONGEST: [u32; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let values = |items: &[Item]| -> Vec<u32> {
        let mut out = vec![];
        for it in items {
            let mut v = it.lo;
            while v <= it.hi {
                out.push(v);
                v += it.step;
            }
        }
        out
    };
    let days = values(days);
    values(months)
        .iter()
        .any(|m| days.iter().any(|d| *d <= LONGEST[(*m as usize) - 1]))
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
pub fn weekdays(items: &[Item]) -> Vec<u32> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_and_macros_are_checked_as_debian_cron_reads_them() {
        assert_eq!(parse("@Daily").unwrap().fields[1], "0");
        assert_eq!(
            parse("  */15   *  * * 1-5 ").unwrap().text,
            "*/15 * * * 1-5"
        );
        for (bad, says) in [
            ("", "empty"),
            ("every tuesday", "2 field(s)"),
            ("@reboot", "once at boot"),
            ("@fortnightly", "unknown macro"),
            ("61 * * * *", "outside 0-59"),
            ("0 0 L * *", "not a number"),
            ("0 0 30 2 *", "matches no date"),
            ("5-1 * * * *", "runs backwards"),
            ("0/5 * * * *", "a step needs"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        // Feb 29 exists; with a day of week, cron runs on either
        assert!(parse("0 0 29 2 *").is_ok());
        assert!(parse("0 0 30 2 1").is_ok());
    }
}
