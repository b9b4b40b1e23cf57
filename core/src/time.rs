//! Instants and the time macros bound to them.
//!
//! efmesh works in UTC throughout. Model `start` values, CLI bounds and interval edges are
//! parsed here, and the `@start…`/`@end…` macros get their SQL literal from here, so the
//! renderer and (later) the interval ledger agree on every edge.

use chrono::{Duration, NaiveDate, NaiveDateTime};

/// Parse an ISO-ish UTC instant: `2026-01-01`, `2026-01-01 10:00[:00[.fff]]`,
/// `2026-01-01T10:00:00Z`.
pub fn parse_instant(s: &str) -> Result<NaiveDateTime, String> {
    let t = s.trim().trim_end_matches('Z').trim_end_matches("+00:00");
    if let Ok(d) = NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        return Ok(d.and_hms_opt(0, 0, 0).expect("midnight exists"));
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(v) = NaiveDateTime::parse_from_str(t, fmt) {
            return Ok(v);
        }
    }
    Err(format!(
        "`{s}` is not a UTC date or timestamp (expected e.g. 2026-01-01 or 2026-01-01T10:00:00Z)"
    ))
}

/// Whether `s` names a whole day (`2026-01-10`) rather than an instant: SQLMesh reads a
/// date-only `end` as "through the end of that day".
pub fn is_date_only(s: &str) -> bool {
    NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d").is_ok()
}

/// The time macros efmesh understands, as written after `@` (lower case).
pub const TIME_MACROS: &[&str] = &[
    "start",
    "end",
    "start_ds",
    "end_ds",
    "start_ts",
    "end_ts",
    "start_date",
    "end_date",
    "start_dt",
    "end_dt",
];

/// The SQL literal a time macro binds to for the half-open interval `[start, end)`.
///
/// `@start`/`@end` are efmesh's own and half-open timestamps. The SQLMesh spellings keep
/// SQLMesh's meaning, in which every `end_*` variant is *inclusive* (the last microsecond,
/// or the last day, inside the interval), so SQLMesh models written with `BETWEEN` keep
/// working unchanged.
pub fn bind_macro(name: &str, start: NaiveDateTime, end: NaiveDateTime) -> Option<String> {
    let incl_end = end - Duration::microseconds(1);
    let ts = |t: NaiveDateTime| t.format("%Y-%m-%d %H:%M:%S%.6f").to_string();
    let ds = |t: NaiveDateTime| t.format("%Y-%m-%d").to_string();
    Some(match name {
        "start" => format!("CAST('{}' AS TIMESTAMP)", ts(start)),
        "end" => format!("CAST('{}' AS TIMESTAMP)", ts(end)),
        "start_ds" => format!("'{}'", ds(start)),
        "end_ds" => format!("'{}'", ds(incl_end)),
        "start_ts" => format!("'{}'", ts(start)),
        "end_ts" => format!("'{}'", ts(incl_end)),
        "start_date" => format!("CAST('{}' AS DATE)", ds(start)),
        "end_date" => format!("CAST('{}' AS DATE)", ds(incl_end)),
        "start_dt" => format!("CAST('{}' AS TIMESTAMP)", ts(start)),
        "end_dt" => format!("CAST('{}' AS TIMESTAMP)", ts(incl_end)),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_dates_and_timestamps() {
        assert_eq!(
            parse_instant("2026-01-02").unwrap().to_string(),
            "2026-01-02 00:00:00"
        );
        assert_eq!(
            parse_instant("2026-01-02T03:04:05Z").unwrap().to_string(),
            "2026-01-02 03:04:05"
        );
        assert!(parse_instant("yesterday").is_err());
    }

    #[test]
    fn sqlmesh_end_macros_are_inclusive() {
        let s = parse_instant("2026-01-01").unwrap();
        let e = parse_instant("2026-01-02").unwrap();
        assert_eq!(bind_macro("end_ds", s, e).unwrap(), "'2026-01-01'");
        assert_eq!(
            bind_macro("end_ts", s, e).unwrap(),
            "'2026-01-01 23:59:59.999999'"
        );
        assert_eq!(
            bind_macro("end", s, e).unwrap(),
            "CAST('2026-01-02 00:00:00.000000' AS TIMESTAMP)"
        );
        assert_eq!(
            bind_macro("start_date", s, e).unwrap(),
            "CAST('2026-01-01' AS DATE)"
        );
        assert!(bind_macro("bogus", s, e).is_none());
    }
}
