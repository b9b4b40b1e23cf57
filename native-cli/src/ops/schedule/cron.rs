//! Cron expressions: validated by `efmesh_core::cron` (the subset both `croner` and Debian's
//! cron accept), with `croner` computing the next runs.

use crate::error::Error;
use chrono::{DateTime, Local};
pub(super) use efmesh_core::cron::{weekdays, Item};

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

impl CronExpr {
    /// Validate `text` as a 5-field cron expression or an `@hourly`-style macro.
    pub fn parse(text: &str) -> Result<CronExpr, Error> {
        let bad = |message: String| Error::CronExpression {
            expr: text.split_whitespace().collect::<Vec<_>>().join(" "),
            message,
        };
        let f = efmesh_core::cron::parse(text).map_err(bad)?;
        let parser = croner::parser::CronParser::builder()
            .seconds(croner::parser::Seconds::Disallowed)
            .year(croner::parser::Year::Disallowed)
            .build();
        let cron = parser
            .parse(&f.fields.join(" "))
            .map_err(|e| bad(e.to_string()))?;
        Ok(CronExpr {
            text: f.text,
            fields: f.fields,
            parsed: f.parsed,
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
