//! The eventlake fixture: an at-least-once event archive, written as hive-partitioned parquet.
//!
//! Deterministic (no randomness, no clock, no network): the same files every time, on any
//! machine. Run it with `cargo run -p efmesh-bench -- eventlake examples/eventlake`; the
//! eventlake tests include this file and generate into a temporary copy of the example.
//!
//! The archive receives `EVENTS_PER_DAY` new events on each of `DAYS` days from
//! 2026-03-01. Each arrival lands in the partition of its arrival day,
//! `landing/day=YYYY-MM-DD/part-<k>.parquet`, one file per six-hour window (`FILES_PER_DAY`),
//! whose mtime is the end of that window. Some events are delivered again ([`REDELIVERIES`]):
//! the same row, a later `received_at`, possibly in a later day's partition. From 2026-03-04
//! 12:00 the writer is at schema generation 2: columns in another order plus `app_version`.
//!
//! [`Summary`] counts what a reader must find, by simulating the rule `core.events` applies.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Days of arrivals, from 2026-03-01.
pub const DAYS: i64 = 7;
/// New events per day.
pub const EVENTS_PER_DAY: i64 = 120;
/// Files per day partition: one per six-hour window.
pub const FILES_PER_DAY: i64 = 4;
/// Generation 2 starts with this (day index, file index): 2026-03-04, 12:00.
pub const GENERATION_2_FROM: (i64, i64) = (3, 2);
/// How many days of earlier arrivals `core.events` reads to recognise a redelivery. Must
/// agree with `models/core/events.sql`.
pub const HORIZON_DAYS: i64 = 2;
/// Event `n` of a day is delivered again when `n % modulus == remainder`, `days` days and
/// `seconds` seconds after its first arrival (when that is still within `DAYS`):
/// `(modulus, remainder, days, seconds)`.
pub const REDELIVERIES: &[(i64, i64, i64, i64)] = &[
    (10, 0, 0, 1800), // half an hour later, the same day
    (12, 5, 1, 600),  // the next day
    (30, 7, 2, 1200), // two days later: still within the horizon
    (40, 9, 4, 300),  // four days later: beyond the horizon, a residual duplicate
];

/// Seconds from the Unix epoch to 2026-03-01T00:00:00Z.
const EPOCH_2026_03_01: u64 = 1_772_323_200;
const DAY: i64 = 86_400;

/// One delivered copy of an event.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// `evt-MMDD-NNNN`, from the day the event first arrived.
    pub event_id: String,
    /// `view`, `click`, `purchase` or `signup`.
    pub event_type: &'static str,
    /// The user.
    pub user_id: i64,
    /// When it happened, seconds from 2026-03-01 00:00 UTC (may precede its arrival by hours).
    pub event_time: i64,
    /// When this copy arrived, seconds from 2026-03-01 00:00 UTC.
    pub received_at: i64,
    /// Set by generation-2 producers; `None` for events first sent at generation 1.
    pub app_version: Option<String>,
}

impl Delivery {
    /// The index of the day it arrived on (0 = 2026-03-01).
    pub fn day(&self) -> i64 {
        self.received_at.div_euclid(DAY)
    }
    /// The six-hour file it lands in.
    pub fn file(&self) -> i64 {
        self.received_at.rem_euclid(DAY) * FILES_PER_DAY / DAY
    }
}

/// What the fixture holds, and what a correct `core.events` must hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Parquet files written.
    pub files: usize,
    /// Rows in the landing zone: every delivery.
    pub raw_rows: usize,
    /// Distinct events.
    pub events: usize,
    /// Deliveries that repeat an earlier one the same day: what `efmesh compact` drops.
    pub same_day_duplicates: usize,
    /// Rows of `core.events`: each event once, plus every redelivery arriving more than
    /// `HORIZON_DAYS` days after all earlier copies.
    pub canonical_rows: usize,
    /// Events that occur more than once in `core.events`: what the residual audit reports.
    pub residual_duplicate_events: usize,
    /// Events first sent by a generation-2 producer (non-NULL `app_version`).
    pub generation_2_events: usize,
}

/// `2026-03-DD` for a day index.
pub fn day_name(day: i64) -> String {
    format!("2026-03-{:02}", day + 1)
}

/// Every delivery of the archive, in arrival order.
pub fn deliveries() -> Vec<Delivery> {
    const TYPES: [&str; 4] = ["view", "click", "purchase", "signup"];
    let mut out = vec![];
    for d in 0..DAYS {
        for n in 0..EVENTS_PER_DAY {
            let received_at = d * DAY + n * 700 + (n * 37) % 300;
            // most events arrive seconds after they happen; every 15th is six hours late
            let latency = if n % 15 == 4 {
                6 * 3600 + n
            } else {
                5 + (n * 13) % 120
            };
            let gen2 = (d, received_at.rem_euclid(DAY) * FILES_PER_DAY / DAY) >= GENERATION_2_FROM;
            let first = Delivery {
                event_id: format!("evt-03{:02}-{n:04}", d + 1),
                event_type: TYPES[((n * 7 + d * 3) % 4) as usize],
                user_id: 1000 + (n * 7919 + d * 104_729) % 500,
                event_time: received_at - latency,
                received_at,
                app_version: gen2.then(|| format!("2.{}", n % 3)),
            };
            for &(modulus, remainder, days, seconds) in REDELIVERIES {
                if n % modulus == remainder && d + days < DAYS {
                    out.push(Delivery {
                        received_at: received_at + days * DAY + seconds,
                        ..first.clone()
                    });
                }
            }
            out.push(first);
        }
    }
    out.sort_by(|a, b| (a.received_at, &a.event_id).cmp(&(b.received_at, &b.event_id)));
    out
}

/// Count what the deliveries hold, applying `core.events`' rule: a copy is dropped when an
/// earlier copy of its event arrived on its own arrival day or up to `HORIZON_DAYS` before.
pub fn summarize(deliveries: &[Delivery]) -> Summary {
    let mut by_event: BTreeMap<&str, Vec<&Delivery>> = BTreeMap::new();
    for c in deliveries {
        by_event.entry(&c.event_id).or_default().push(c);
    }
    let (mut canonical, mut residual, mut same_day) = (0, 0, 0);
    for copies in by_event.values() {
        let kept = copies
            .iter()
            .filter(|c| {
                !copies
                    .iter()
                    .any(|o| o.received_at < c.received_at && o.day() >= c.day() - HORIZON_DAYS)
            })
            .count();
        canonical += kept;
        residual += usize::from(kept > 1);
        same_day += copies
            .iter()
            .filter(|c| {
                copies
                    .iter()
                    .any(|o| o.received_at < c.received_at && o.day() == c.day())
            })
            .count();
    }
    let files: std::collections::BTreeSet<(i64, i64)> =
        deliveries.iter().map(|c| (c.day(), c.file())).collect();
    Summary {
        files: files.len(),
        raw_rows: deliveries.len(),
        events: by_event.len(),
        same_day_duplicates: same_day,
        canonical_rows: canonical,
        residual_duplicate_events: residual,
        generation_2_events: by_event
            .values()
            .filter(|c| c[0].app_version.is_some())
            .count(),
    }
}

/// Write the archive under `landing` (which must not exist yet) and return its summary.
pub fn write(landing: &Path) -> Result<Summary, String> {
    if landing.exists() {
        return Err(format!(
            "{} exists already; remove it first to regenerate the fixture",
            landing.display()
        ));
    }
    let all = deliveries();
    let mut files: BTreeMap<(i64, i64), Vec<&Delivery>> = BTreeMap::new();
    for c in &all {
        files.entry((c.day(), c.file())).or_default().push(c);
    }
    let db = duckdb::Connection::open_in_memory().map_err(|e| e.to_string())?;
    // one thread: the same bytes on every machine
    db.execute_batch("SET threads = 1")
        .map_err(|e| e.to_string())?;
    for ((day, file), rows) in &files {
        let dir = landing.join(format!("day={}", day_name(*day)));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let path: PathBuf = dir.join(format!("part-{file}.parquet"));
        let values = rows
            .iter()
            .map(|c| {
                format!(
                    "('{}', '{}', {}, {}, {}, {})",
                    c.event_id,
                    c.event_type,
                    c.user_id,
                    c.event_time,
                    c.received_at,
                    c.app_version
                        .as_ref()
                        .map(|v| format!("'{v}'"))
                        .unwrap_or_else(|| "NULL".into())
                )
            })
            .collect::<Vec<_>>()
            .join(",\n");
        let ts =
            |c: &str| format!("TIMESTAMP '2026-03-01 00:00:00' + to_seconds(CAST({c} AS BIGINT))");
        let select = if (*day, *file) >= GENERATION_2_FROM {
            // generation 2: another column order, and `app_version`
            format!(
                "SELECT {} AS received_at, event_id, CAST(user_id AS BIGINT) AS user_id, event_type, {} AS event_time, CAST(app_version AS VARCHAR) AS app_version",
                ts("ra"),
                ts("et")
            )
        } else {
            format!(
                "SELECT event_id, event_type, CAST(user_id AS BIGINT) AS user_id, {} AS event_time, {} AS received_at",
                ts("et"),
                ts("ra")
            )
        };
        db.execute_batch(&format!(
            "COPY ({select} FROM (VALUES {values}) AS t(event_id, event_type, user_id, et, ra, app_version)) TO '{}' (FORMAT parquet)",
            path.display().to_string().replace('\'', "''")
        ))
        .map_err(|e| format!("writing {}: {e}", path.display()))?;
        // the writer closes each file at the end of its six-hour window
        let closed = EPOCH_2026_03_01 as i64 + day * DAY + (file + 1) * DAY / FILES_PER_DAY;
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|f| {
                f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(closed as u64))
            })
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(summarize(&all))
}
