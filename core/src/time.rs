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

/// The time macros efmesh understands, as written after `@` (lower case): efmesh's half-open
/// `@start`/`@end`, and SQLMesh's prefixes (`start`, `end`, `execution`, and the older
/// `latest`) with each of its postfixes.
pub const TIME_MACROS: &[&str] = &[
    "start",
    "end",
    "start_ds",
    "start_ts",
    "start_tstz",
    "start_date",
    "start_dt",
    "start_dtntz",
    "start_epoch",
    "start_millis",
    "start_hour",
    "end_ds",
    "end_ts",
    "end_tstz",
    "end_date",
    "end_dt",
    "end_dtntz",
    "end_epoch",
    "end_millis",
    "end_hour",
    "execution_ds",
    "execution_ts",
    "execution_tstz",
    "execution_date",
    "execution_dt",
    "execution_dtntz",
    "execution_epoch",
    "execution_millis",
    "execution_hour",
    "latest_ds",
    "latest_ts",
    "latest_tstz",
    "latest_date",
    "latest_dt",
    "latest_dtntz",
    "latest_epoch",
    "latest_millis",
    "latest_hour",
];

/// The instants time macros are bound to: the interval `[start, end)` being computed and the
/// execution time (the apply's or run's clock; SQLMesh's `execution_time`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MacroTimes {
    /// The interval's first instant.
    pub start: NaiveDateTime,
    /// The instant just past the interval.
    pub end: NaiveDateTime,
    /// When the work runs.
    pub execution: NaiveDateTime,
}

/// The SQL literal a time macro binds to.
///
/// `@start`/`@end` are efmesh's own and half-open timestamps. The SQLMesh spellings keep
/// SQLMesh's meaning and SQL, literal for literal: every `end_*` variant is *inclusive* (the
/// last microsecond inside the interval), so SQLMesh models written with `BETWEEN` keep
/// working unchanged; `_ts` is a string without a zero fraction, `_dt` a TIMESTAMPTZ, `_dtntz`
/// a TIMESTAMP, `_epoch` seconds as a float, `_millis` and `_hour` integers.
pub fn bind_macro(name: &str, t: &MacroTimes) -> Option<String> {
    if let Some(template) = name.strip_prefix(STRING_TEMPLATE) {
        return render_string_template(template, &|v| jinja_text(v, t));
    }
    match name {
        "start" => {
            return Some(format!(
                "CAST('{}' AS TIMESTAMP)",
                t.start.format("%Y-%m-%d %H:%M:%S%.6f")
            ))
        }
        "end" => {
            return Some(format!(
                "CAST('{}' AS TIMESTAMP)",
                t.end.format("%Y-%m-%d %H:%M:%S%.6f")
            ))
        }
        _ => {}
    }
    let (prefix, postfix) = name.split_once('_')?;
    let at = match prefix {
        "start" => t.start,
        "end" => t.end - Duration::microseconds(1),
        "execution" | "latest" => t.execution,
        _ => return None,
    };
    // Python's isoformat: the fraction only when there is one
    let ts = if at.and_utc().timestamp_subsec_micros() == 0 {
        at.format("%Y-%m-%d %H:%M:%S").to_string()
    } else {
        at.format("%Y-%m-%d %H:%M:%S%.6f").to_string()
    };
    let millis = at.and_utc().timestamp_millis();
    Some(match postfix {
        "ds" => format!("'{}'", at.format("%Y-%m-%d")),
        "ts" => format!("'{ts}'"),
        "tstz" => format!("'{ts}+00:00'"),
        "date" => format!("CAST('{}' AS DATE)", at.format("%Y-%m-%d")),
        "dt" => format!("CAST('{ts}+00:00' AS TIMESTAMPTZ)"),
        "dtntz" => format!("CAST('{ts}' AS TIMESTAMP)"),
        "epoch" => {
            let secs = millis as f64 / 1000.0;
            if secs.fract() == 0.0 {
                format!("{secs:.1}")
            } else {
                format!("{secs}")
            }
        }
        "millis" => millis.to_string(),
        "hour" => chrono::Timelike::hour(&at).to_string(),
        _ => return None,
    })
}

/// How a Jinja template marks a time variable it rendered (`__efmesh_jinja_start_ds__`), for
/// efmesh to bind afterwards.
pub const JINJA_MARK: &str = "__efmesh_jinja_";

/// The prefix of the macro a string literal holding Jinja time variables becomes.
pub const STRING_TEMPLATE: &str = "jinja_string:";

/// A string literal's value holding time variables left inside it by a Jinja template
/// (`'{{ start_ds }} 00:00'`), as the macro that renders it (`jinja_string:` and the text,
/// the variables marked): bound per batch by [`bind_macro`], so the literal reads
/// as SQLMesh renders it for that batch.
pub fn string_template(value: &str) -> Option<String> {
    value
        .contains(JINJA_MARK)
        .then(|| format!("{STRING_TEMPLATE}{value}"))
}

/// The literal a string template renders to: each marked time variable replaced by its text.
fn render_string_template(template: &str, text: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(k) = rest.find(JINJA_MARK) {
        out.push_str(&rest[..k]);
        let after = &rest[k + JINJA_MARK.len()..];
        let end = after.find("__")?;
        out.push_str(&text(&after[..end])?);
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Some(crate::quote::literal(&out))
}

/// What SQLMesh's Jinja writes for time variable `name` (Python's `str()` of its value): the
/// text inside a string literal such as `'{{ start_ds }} 00:00'`.
pub fn jinja_text(name: &str, t: &MacroTimes) -> Option<String> {
    if !name.contains('_') {
        return None;
    }
    let sql = bind_macro(name, t)?;
    Some(match sql.split_once('\'') {
        // `'text'` or `CAST('text' AS type)`
        Some((_, rest)) => rest.split_once('\'')?.0.to_string(),
        None => sql,
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
    fn sqlmesh_time_macros_bind_as_sqlmesh_renders_them() {
        // what `sqlmesh render --start 2026-12-01 --end 2026-12-01 --execution-time
        // "2026-12-03 10:30:00"` writes (SQLMesh 0.236.4, DuckDB)
        let t = MacroTimes {
            start: parse_instant("2026-12-01").unwrap(),
            end: parse_instant("2026-12-02").unwrap(),
            execution: parse_instant("2026-12-03 10:30:00").unwrap(),
        };
        let b = |n: &str| bind_macro(n, &t).unwrap();
        assert_eq!(b("start_ds"), "'2026-12-01'");
        assert_eq!(b("end_ds"), "'2026-12-01'");
        assert_eq!(b("start_ts"), "'2026-12-01 00:00:00'");
        assert_eq!(b("end_ts"), "'2026-12-01 23:59:59.999999'");
        assert_eq!(b("start_tstz"), "'2026-12-01 00:00:00+00:00'");
        assert_eq!(b("end_tstz"), "'2026-12-01 23:59:59.999999+00:00'");
        assert_eq!(b("end_date"), "CAST('2026-12-01' AS DATE)");
        assert_eq!(
            b("start_dt"),
            "CAST('2026-12-01 00:00:00+00:00' AS TIMESTAMPTZ)"
        );
        assert_eq!(
            b("end_dtntz"),
            "CAST('2026-12-01 23:59:59.999999' AS TIMESTAMP)"
        );
        assert_eq!(b("start_epoch"), "1796083200.0");
        assert_eq!(b("end_epoch"), "1796169599.999");
        assert_eq!(b("start_millis"), "1796083200000");
        assert_eq!(b("end_millis"), "1796169599999");
        assert_eq!((b("start_hour"), b("end_hour")), ("0".into(), "23".into()));
        assert_eq!(b("execution_ds"), "'2026-12-03'");
        assert_eq!(b("execution_ts"), "'2026-12-03 10:30:00'");
        assert_eq!(
            b("execution_dt"),
            "CAST('2026-12-03 10:30:00+00:00' AS TIMESTAMPTZ)"
        );
        assert_eq!(b("execution_epoch"), "1796293800.0");
        assert_eq!(b("execution_hour"), "10");
        assert_eq!(b("latest_ds"), "'2026-12-03'");
        assert_eq!(b("end"), "CAST('2026-12-02 00:00:00.000000' AS TIMESTAMP)");
        assert!(bind_macro("bogus", &t).is_none());
        assert!(bind_macro("start_bogus", &t).is_none());
        for m in TIME_MACROS {
            assert!(bind_macro(m, &t).is_some(), "{m}");
        }
    }
}
