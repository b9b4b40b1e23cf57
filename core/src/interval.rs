//! Interval arithmetic: the units, edges and ranges the interval ledger is made of.
//!
//! A time-range model's history is cut into intervals of one unit (minute, hour or day). The
//! ledger keeps the *done* intervals as sorted, merged half-open ranges, so a year of hourly
//! history that was computed without gaps is one range, and thousands of restatements do not
//! grow it without bound. Everything here is pure, so the planner, the executor and (through
//! the manifest) the browser agree on every edge.

use chrono::{Duration, NaiveDateTime, Timelike};
use serde::{Deserialize, Serialize};

/// The granularity of a time-range model's intervals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IntervalUnit {
    /// One minute (mostly for tests).
    Minute,
    /// One hour.
    Hour,
    /// One day.
    Day,
}

/// A half-open time range `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Range {
    /// The first instant inside the range.
    pub start: NaiveDateTime,
    /// The first instant after it.
    pub end: NaiveDateTime,
}

impl Range {
    /// `[start, end)`; empty when `end <= start`.
    pub fn new(start: NaiveDateTime, end: NaiveDateTime) -> Range {
        Range { start, end }
    }

    /// Whether the range holds no instant.
    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }

    /// How many whole intervals of `unit` it spans.
    pub fn intervals(&self, unit: IntervalUnit) -> i64 {
        if self.is_empty() {
            0
        } else {
            (self.end - self.start).num_seconds() / unit.step().num_seconds()
        }
    }
}

impl std::fmt::Display for Range {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let iso = |t: NaiveDateTime| t.format("%Y-%m-%dT%H:%M:%SZ").to_string();
        write!(f, "[{}, {})", iso(self.start), iso(self.end))
    }
}

impl IntervalUnit {
    /// The unit's name as written in `interval_unit`.
    pub fn label(self) -> &'static str {
        match self {
            IntervalUnit::Minute => "minute",
            IntervalUnit::Hour => "hour",
            IntervalUnit::Day => "day",
        }
    }

    /// The length of one interval.
    pub fn step(self) -> Duration {
        match self {
            IntervalUnit::Minute => Duration::minutes(1),
            IntervalUnit::Hour => Duration::hours(1),
            IntervalUnit::Day => Duration::days(1),
        }
    }

    /// The interval edge at or before `t`.
    pub fn floor(self, t: NaiveDateTime) -> NaiveDateTime {
        let day = t.date().and_hms_opt(0, 0, 0).expect("midnight exists");
        match self {
            IntervalUnit::Day => day,
            IntervalUnit::Hour => day + Duration::hours(t.hour() as i64),
            IntervalUnit::Minute => {
                day + Duration::hours(t.hour() as i64) + Duration::minutes(t.minute() as i64)
            }
        }
    }

    /// The interval edge at or after `t`.
    pub fn ceil(self, t: NaiveDateTime) -> NaiveDateTime {
        let f = self.floor(t);
        if f == t {
            t
        } else {
            f + self.step()
        }
    }

    /// Whether `t` is an interval edge.
    pub fn is_aligned(self, t: NaiveDateTime) -> bool {
        self.floor(t) == t
    }
}

/// The range a time-range model should have computed by `now`: from its start (floored to the
/// unit) to the last complete interval edge before `now`, and never past `end`, the exclusive
/// bound of a closed history (see `Model::history_end`). `None` when nothing is due.
pub fn expected(
    start: NaiveDateTime,
    end: Option<NaiveDateTime>,
    now: NaiveDateTime,
    unit: IntervalUnit,
) -> Option<Range> {
    let r = Range::new(unit.floor(start), complete_until(end, now, unit));
    (!r.is_empty()).then_some(r)
}

/// The last interval edge a build may render up to at `now`: the last complete edge before
/// `now`, or the end of a closed history when that comes first.
pub fn complete_until(
    end: Option<NaiveDateTime>,
    now: NaiveDateTime,
    unit: IntervalUnit,
) -> NaiveDateTime {
    match end {
        Some(e) => unit.floor(now).min(unit.ceil(e)),
        None => unit.floor(now),
    }
}

/// Done intervals as sorted, non-overlapping, non-adjacent ranges.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    ranges: Vec<Range>,
}

impl Ledger {
    /// A ledger of these done ranges (in any order, overlapping or not).
    pub fn from_ranges(ranges: impl IntoIterator<Item = Range>) -> Ledger {
        let mut l = Ledger::default();
        for r in ranges {
            l.insert(r);
        }
        l
    }

    /// The merged done ranges, oldest first.
    pub fn ranges(&self) -> &[Range] {
        &self.ranges
    }

    /// Mark `r` done.
    pub fn insert(&mut self, r: Range) {
        if r.is_empty() {
            return;
        }
        let mut merged = r;
        let mut out = Vec::with_capacity(self.ranges.len() + 1);
        for &x in &self.ranges {
            if x.end < merged.start || x.start > merged.end {
                out.push(x);
            } else {
                merged = Range::new(merged.start.min(x.start), merged.end.max(x.end));
            }
        }
        out.push(merged);
        out.sort();
        self.ranges = out;
    }

    /// Mark `r` not done (a restatement).
    pub fn remove(&mut self, r: Range) {
        if r.is_empty() {
            return;
        }
        let mut out = Vec::with_capacity(self.ranges.len() + 1);
        for &x in &self.ranges {
            if x.end <= r.start || x.start >= r.end {
                out.push(x);
                continue;
            }
            if x.start < r.start {
                out.push(Range::new(x.start, r.start));
            }
            if x.end > r.end {
                out.push(Range::new(r.end, x.end));
            }
        }
        self.ranges = out;
    }

    /// The parts of `within` that are not done, oldest first.
    pub fn missing(&self, within: Range) -> Vec<Range> {
        let mut out = vec![];
        let mut cursor = within.start;
        for x in &self.ranges {
            if x.end <= cursor || x.start >= within.end {
                continue;
            }
            if x.start > cursor {
                out.push(Range::new(cursor, x.start.min(within.end)));
            }
            cursor = cursor.max(x.end);
        }
        if cursor < within.end {
            out.push(Range::new(cursor, within.end));
        }
        out
    }

    /// How far the history is complete without a gap, starting at `from`: the end of the done
    /// range that covers `from`. Later ranges after a gap do not count, so a consumer never
    /// presents a partial total as complete.
    pub fn contiguous_through(&self, from: NaiveDateTime) -> Option<NaiveDateTime> {
        self.ranges
            .iter()
            .find(|r| r.start <= from && from < r.end)
            .map(|r| r.end)
    }

    /// [`Ledger::contiguous_through`] for a history that ends at `end` (exclusive; `None` when
    /// open): a claim never reaches past the end, even when intervals beyond it were computed
    /// before the model declared its `end`.
    pub fn covered_through(
        &self,
        from: NaiveDateTime,
        end: Option<NaiveDateTime>,
    ) -> Option<NaiveDateTime> {
        let t = self.contiguous_through(from)?;
        Some(end.map_or(t, |e| t.min(e)))
    }

    /// The end of the newest done interval.
    pub fn latest(&self) -> Option<NaiveDateTime> {
        self.ranges.last().map(|r| r.end)
    }
}

/// The ranges an apply or run computes: what is missing from `expected`, where the newest
/// missing range (the new intervals at the end) is widened back by `lookback` intervals
/// (clamped to the start), so rows that arrived late for recent intervals are picked up.
/// Gaps in the middle (restated or failed intervals) are recomputed exactly, and nothing
/// missing means nothing to compute: lookback never makes a settled model dirty.
pub fn to_compute(
    ledger: &Ledger,
    expected: Range,
    unit: IntervalUnit,
    lookback: u32,
) -> Vec<Range> {
    let mut missing = ledger.missing(expected);
    if let Some(tail) = missing.last_mut().filter(|r| r.end == expected.end) {
        // `check` bounds lookback; past the calendar's range it reaches back to the start
        let back = i32::try_from(lookback)
            .ok()
            .and_then(|n| unit.step().checked_mul(n))
            .and_then(|d| tail.start.checked_sub_signed(d));
        tail.start = back.map_or(expected.start, |s| s.max(expected.start));
    }
    Ledger::from_ranges(missing).ranges().to_vec()
}

/// Cut ranges into batches of at most `batch_size` intervals each (`None`: each range is one
/// batch). Each batch renders one `[start, end)` and is written in one transaction.
pub fn batches(ranges: &[Range], unit: IntervalUnit, batch_size: Option<u32>) -> Vec<Range> {
    let mut out = vec![];
    for r in ranges {
        match batch_size {
            None | Some(0) => out.push(*r),
            Some(n) => {
                // `check` bounds batch_size; a step past the calendar's range is one batch
                let step = i32::try_from(n)
                    .ok()
                    .and_then(|n| unit.step().checked_mul(n));
                let mut s = r.start;
                while s < r.end {
                    let e = step
                        .and_then(|d| s.checked_add_signed(d))
                        .map_or(r.end, |e| e.min(r.end));
                    out.push(Range::new(s, e));
                    s = e;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::parse_instant;

    fn t(s: &str) -> NaiveDateTime {
        parse_instant(s).unwrap()
    }

    fn r(a: &str, b: &str) -> Range {
        Range::new(t(a), t(b))
    }

    #[test]
    fn units_floor_and_align() {
        let x = t("2026-03-04T05:06:07");
        assert_eq!(IntervalUnit::Day.floor(x), t("2026-03-04"));
        assert_eq!(IntervalUnit::Hour.floor(x), t("2026-03-04T05:00:00"));
        assert_eq!(IntervalUnit::Minute.floor(x), t("2026-03-04T05:06:00"));
        assert!(
            IntervalUnit::Hour.is_aligned(t("2026-03-04T05:00:00"))
                && !IntervalUnit::Day.is_aligned(t("2026-03-04T05:00:00"))
        );
    }

    #[test]
    fn a_90_day_backfill_in_batches_of_7_is_13_batches() {
        let exp = expected(
            t("2026-01-01"),
            None,
            t("2026-04-01T10:30:00"),
            IntervalUnit::Day,
        )
        .unwrap();
        assert_eq!(exp, r("2026-01-01", "2026-04-01"));
        assert_eq!(exp.intervals(IntervalUnit::Day), 90);
        let b = batches(
            &to_compute(&Ledger::default(), exp, IntervalUnit::Day, 0),
            IntervalUnit::Day,
            Some(7),
        );
        assert_eq!(b.len(), 13);
        assert_eq!(b[0], r("2026-01-01", "2026-01-08"));
        assert_eq!(
            b[12],
            r("2026-03-26", "2026-04-01"),
            "the last batch is the remainder"
        );
        assert_eq!(
            batches(&[exp], IntervalUnit::Day, None),
            vec![exp],
            "no batch_size: one batch"
        );
    }

    #[test]
    fn the_ledger_merges_and_restates() {
        let mut l = Ledger::from_ranges([
            r("2026-01-03", "2026-01-05"),
            r("2026-01-01", "2026-01-02"),
            r("2026-01-02", "2026-01-03"),
        ]);
        assert_eq!(
            l.ranges(),
            &[r("2026-01-01", "2026-01-05")],
            "adjacent ranges become one row"
        );
        l.remove(r("2026-01-02", "2026-01-03"));
        assert_eq!(
            l.ranges(),
            &[r("2026-01-01", "2026-01-02"), r("2026-01-03", "2026-01-05")]
        );
        assert_eq!(
            l.missing(r("2026-01-01", "2026-01-07")),
            vec![r("2026-01-02", "2026-01-03"), r("2026-01-05", "2026-01-07")]
        );
        assert_eq!(
            l.contiguous_through(t("2026-01-01")),
            Some(t("2026-01-02")),
            "stops at the first gap"
        );
        assert_eq!(l.latest(), Some(t("2026-01-05")));
        l.insert(r("2026-01-02", "2026-01-03"));
        assert_eq!(l.ranges(), &[r("2026-01-01", "2026-01-05")]);
        // a year of hourly history with one restated hour is two rows, not 8,760
        let mut year = Ledger::from_ranges([r("2026-01-01", "2027-01-01")]);
        year.remove(r("2026-06-01T03:00:00", "2026-06-01T04:00:00"));
        assert_eq!(year.ranges().len(), 2);
    }

    #[test]
    fn huge_counts_never_overflow_or_wrap() {
        let expected = r("2026-01-01", "2026-01-05");
        let ledger = Ledger::from_ranges(vec![r("2026-01-01", "2026-01-03")]);
        for lookback in [100_000_000, u32::MAX] {
            assert_eq!(
                to_compute(&ledger, expected, IntervalUnit::Day, lookback),
                vec![expected],
                "{lookback}"
            );
        }
        for size in [95_000_000, u32::MAX] {
            assert_eq!(
                batches(&[expected], IntervalUnit::Minute, Some(size)),
                vec![expected]
            );
        }
    }

    #[test]
    fn lookback_widens_new_work_backwards_but_never_creates_work() {
        let exp = r("2026-01-01", "2026-01-10");
        let done = Ledger::from_ranges([exp]);
        assert_eq!(
            to_compute(&done, exp, IntervalUnit::Day, 2),
            vec![],
            "a settled model stays settled"
        );
        let partial = Ledger::from_ranges([r("2026-01-01", "2026-01-08")]);
        assert_eq!(
            to_compute(&partial, exp, IntervalUnit::Day, 0),
            vec![r("2026-01-08", "2026-01-10")]
        );
        assert_eq!(
            to_compute(&partial, exp, IntervalUnit::Day, 2),
            vec![r("2026-01-06", "2026-01-10")]
        );
        assert_eq!(
            to_compute(&Ledger::default(), exp, IntervalUnit::Day, 30),
            vec![exp],
            "lookback never reaches before the start"
        );
    }
}
