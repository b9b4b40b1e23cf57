//! The freshness verdict an edge function acts on: serve the data, or refuse it and say why.

use super::passport_view::passport_of;
use crate::manifest::{parse_instant, Manifest};
use chrono::NaiveDateTime;
use serde::Serialize;

/// Why data is or is not fresh, as a value a program can branch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FreshnessStatus {
    /// Complete to within the allowed lag, without holes.
    Fresh,
    /// Complete, but further behind than allowed.
    Stale,
    /// The history has holes or failed intervals, so a total would be partial.
    Gaps,
    /// A time-range model this data depends on has computed nothing yet.
    NoCoverage,
}

/// The answer to "may I show this data as current?".
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FreshnessVerdict {
    /// Serve it: `status` is `fresh`.
    pub fresh: bool,
    /// The verdict's reason as a value.
    pub status: FreshnessStatus,
    /// Seconds between the instant the data is complete through (or, with no time-range
    /// ancestor, when it was built) and `now`; `None` without coverage.
    pub lag_seconds: Option<i64>,
    /// The effective coverage claim, as in the passport.
    pub complete_through: Option<String>,
    /// The model that sets it.
    pub limited_by: Option<String>,
    /// One sentence for an operator or an HTTP 503 body.
    pub reason: String,
}

/// Judge `m` at `now`, allowing `max_lag_seconds` between the data's coverage and `now`.
///
/// Coverage is the effective `completeThrough`, so a mart is as stale as its stalest time-range
/// source. Data with no time-range ancestor makes no coverage claim; its age is measured from
/// when the manifest was generated instead.
pub fn check_freshness(m: &Manifest, now: NaiveDateTime, max_lag_seconds: i64) -> FreshnessVerdict {
    let p = passport_of(m);
    let by = |who: &Option<String>| match who {
        Some(w) if w != &m.model => format!(" (limited by {w})"),
        _ => String::new(),
    };
    let (anchor, anchor_word) = match (&p.complete_through, &p.limited_by) {
        (Some(t), _) => (parse_instant(t), "complete through"),
        (None, Some(_)) => (None, ""),
        (None, None) => (parse_instant(&m.generated_at), "built at"),
    };
    let lag = anchor.map(|t| (now - t).num_seconds());
    let verdict = |status: FreshnessStatus, reason: String| FreshnessVerdict {
        fresh: status == FreshnessStatus::Fresh,
        status,
        lag_seconds: lag,
        complete_through: p.complete_through.clone(),
        limited_by: p.limited_by.clone(),
        reason,
    };
    if p.has_gaps {
        let failed = &m.freshness.failed_intervals;
        let what = match failed.first() {
            Some(f) => format!(
                "{} failed interval(s), the first [{}, {})",
                failed.len(),
                f.start,
                f.end
            ),
            None => format!(
                "its done intervals have holes ({} separate ranges)",
                m.intervals.len()
            ),
        };
        let through = match &m.freshness.contiguous_through {
            Some(t) => format!("; complete only through {t}"),
            None => "; its first interval is not done".into(),
        };
        return verdict(
            FreshnessStatus::Gaps,
            format!("{} has gaps: {what}{through}", m.model),
        );
    }
    let Some(lag_s) = lag else {
        let who = p.limited_by.as_deref().unwrap_or(&m.model);
        return verdict(
            FreshnessStatus::NoCoverage,
            format!("no coverage yet: {who} has computed nothing"),
        );
    };
    let anchor_text = p
        .complete_through
        .clone()
        .unwrap_or_else(|| m.generated_at.clone());
    // a closed history (`end`) complete through its end has nothing left to compute
    let closed = m.freshness.history_end.as_deref().and_then(parse_instant);
    let own_limit = p.limited_by.as_deref().is_none_or(|w| w == m.model);
    if let (Some(end), Some(through), true) = (closed, anchor, own_limit) {
        if through >= end {
            return verdict(
                FreshnessStatus::Fresh,
                format!(
                    "fresh: complete through {anchor_text}, where its history ends ({} ago)",
                    human(lag_s.max(0))
                ),
            );
        }
    }
    if lag_s > max_lag_seconds {
        verdict(
            FreshnessStatus::Stale,
            format!(
                "stale: {anchor_word} {anchor_text}{}, {} behind (allowed {})",
                by(&p.limited_by),
                human(lag_s),
                human(max_lag_seconds)
            ),
        )
    } else {
        verdict(
            FreshnessStatus::Fresh,
            format!(
                "fresh: {anchor_word} {anchor_text}{}, {} behind (allowed {})",
                by(&p.limited_by),
                human(lag_s.max(0)),
                human(max_lag_seconds)
            ),
        )
    }
}

/// `3d 4h`, `2h 5m`, `40s`: a lag an operator reads at a glance.
fn human(secs: i64) -> String {
    let (d, h, m, s) = (
        secs / 86_400,
        secs % 86_400 / 3600,
        secs % 3600 / 60,
        secs % 60,
    );
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, _) => format!("{m}m {s}s"),
        (0, _, _) => format!("{h}h {m}m"),
        _ => format!("{d}d {h}h"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::passport_view::tests::{iv, manifest};

    fn at(s: &str) -> NaiveDateTime {
        parse_instant(s).unwrap()
    }

    #[test]
    fn fresh_stale_gaps_and_no_coverage() {
        let m = manifest(vec![iv("01", "03")], vec![]);
        let ok = check_freshness(&m, at("2026-01-03T06:00:00Z"), 6 * 3600);
        assert!(ok.fresh, "{ok:?}");
        assert_eq!(ok.lag_seconds, Some(6 * 3600));
        let stale = check_freshness(&m, at("2026-01-03T06:00:01Z"), 6 * 3600);
        assert_eq!(stale.status, FreshnessStatus::Stale);
        assert!(
            stale
                .reason
                .contains("complete through 2026-01-03T00:00:00Z"),
            "{}",
            stale.reason
        );
        assert!(stale.reason.contains("6h 0m behind"), "{}", stale.reason);

        let gaps = manifest(vec![iv("01", "03"), iv("04", "05")], vec![iv("03", "04")]);
        let v = check_freshness(&gaps, at("2026-01-03T01:00:00Z"), 86_400);
        assert_eq!(v.status, FreshnessStatus::Gaps);
        assert!(!v.fresh);
        assert!(
            v.reason
                .contains("1 failed interval(s), the first [2026-01-03T00:00:00Z"),
            "{}",
            v.reason
        );

        let none = manifest(vec![], vec![]);
        let v = check_freshness(&none, at("2026-01-03T01:00:00Z"), 86_400);
        assert_eq!(
            (v.status, v.lag_seconds),
            (FreshnessStatus::NoCoverage, None)
        );
        assert_eq!(v.reason, "no coverage yet: raw.feed has computed nothing");
    }

    #[test]
    fn a_closed_history_complete_through_its_end_never_goes_stale() {
        let mut m = manifest(vec![iv("01", "03")], vec![]);
        m.freshness.history_end = Some("2026-01-03T00:00:00Z".into());
        let v = check_freshness(&m, at("2026-06-01T00:00:00Z"), 3600);
        assert!(v.fresh, "{v:?}");
        assert!(v.reason.contains("where its history ends"), "{}", v.reason);
        // not yet complete through its end: judged by lag as usual
        m.freshness.history_end = Some("2026-01-05T00:00:00Z".into());
        let v = check_freshness(&m, at("2026-06-01T00:00:00Z"), 3600);
        assert_eq!(v.status, FreshnessStatus::Stale);
    }

    #[test]
    fn without_time_semantics_the_age_is_the_build_time() {
        let mut m = manifest(vec![], vec![]);
        m.kind = "FULL".into();
        let v = check_freshness(&m, at("2026-01-05T00:10:00Z"), 3600);
        assert_eq!((v.fresh, v.lag_seconds), (true, Some(600)));
        assert!(
            v.reason.starts_with("fresh: built at 2026-01-05T00:00:00Z"),
            "{}",
            v.reason
        );
    }
}
