//! How a batch's time range reaches an INCREMENTAL_BY_TIME_RANGE model's time column.
//!
//! SQLMesh projects keep days as text (`'2020-01-01'`, `'20200101'`) and as integers
//! (`20200101`) as often as in DATE columns, and SQLMesh compares each column in its own type:
//! a temporal column against the range's instants, a text column against the range's ends
//! written with the model's format (`time_column (ds, '%Y%m%d')`, by default `%Y-%m-%d`), and a
//! numeric column against those same strings read as numbers. For text and numbers the filter is
//! `column BETWEEN first AND last`, where `last` is the range's end less one microsecond, so a
//! daily batch over text days keeps exactly its day. Comparing a text column with a timestamp
//! instead would make the engine cast every value, which fails for `'20200101'` and for an
//! integer column, and silently keeps other rows than SQLMesh for the rest.

use super::SqlDialect;
use crate::interval::Range;
use crate::types::TypeFamily;
use chrono::format::{Item, StrftimeItems};
use chrono::{Duration, NaiveDateTime};

/// The format of a text or integer time column that declares none, as in SQLMesh (its
/// `time_column_format` setting's default).
pub const DEFAULT_FORMAT: &str = "%Y-%m-%d";

/// What a time column holds, which decides how a range's ends are written for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeColumnType {
    /// A date, a timestamp (with or without time zone): compared with instants.
    Temporal,
    /// A string: compared with the ends formatted as strings.
    Text,
    /// A number: compared with the ends formatted, as numbers.
    Numeric,
}

impl TimeColumnType {
    /// The kind of the time column whose engine type is `sql_type` (`VARCHAR`, `BIGINT`,
    /// `TIMESTAMP WITH TIME ZONE`); `None` for a type no range can be written in (a boolean,
    /// a list, a struct).
    pub fn of(sql_type: &str) -> Option<TimeColumnType> {
        match TypeFamily::of(sql_type) {
            TypeFamily::Temporal => Some(TimeColumnType::Temporal),
            TypeFamily::Text => Some(TimeColumnType::Text),
            TypeFamily::Numeric => Some(TimeColumnType::Numeric),
            TypeFamily::Boolean | TypeFamily::Any => None,
        }
    }
}

/// A model's time column as its batches filter it: the column, what it holds (the engine says
/// so once per apply) and the format of its text or numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeColumn {
    /// The column's name, lower-cased, as the model declares it.
    pub name: String,
    /// What it holds.
    pub ty: TimeColumnType,
    /// The format of its text or numbers, a strftime pattern as SQLMesh (Python) writes it.
    pub format: String,
}

/// Why a range cannot be written for a time column.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeColumnError {
    /// An integer time column whose format writes more than digits.
    #[error("time column `{column}` holds numbers, but its format '{format}' writes `{rendered}`, which is not one; declare a format of digits only, as in `time_column ({column}, '%Y%m%d')`")]
    NotANumber {
        /// The column.
        column: String,
        /// Its format.
        format: String,
        /// What the format wrote for an end of the range.
        rendered: String,
    },
    /// A column of a type no range can be compared with.
    #[error("time column `{column}` is {sql_type}; a time column must be a date, a timestamp, text or a number")]
    UnusableType {
        /// The column.
        column: String,
        /// Its type, as the engine names it.
        sql_type: String,
    },
}

impl TimeColumn {
    /// The time column `name` of engine type `sql_type`, with the model's `format` (or
    /// [`DEFAULT_FORMAT`]).
    pub fn new(
        name: &str,
        sql_type: &str,
        format: Option<&str>,
    ) -> Result<TimeColumn, TimeColumnError> {
        let ty = TimeColumnType::of(sql_type).ok_or_else(|| TimeColumnError::UnusableType {
            column: name.to_string(),
            sql_type: sql_type.to_string(),
        })?;
        Ok(TimeColumn {
            name: name.to_string(),
            ty,
            format: format.unwrap_or(DEFAULT_FORMAT).to_string(),
        })
    }

    /// The condition that keeps the rows of `range`, over `column` (the column as SQL, quoted
    /// and qualified by the caller).
    pub fn filter(
        &self,
        d: &dyn SqlDialect,
        column: &str,
        range: Range,
    ) -> Result<String, TimeColumnError> {
        match self.ty {
            TimeColumnType::Temporal => Ok(format!(
                "{column} >= {} AND {column} < {}",
                d.timestamp(range.start),
                d.timestamp(range.end)
            )),
            TimeColumnType::Text | TimeColumnType::Numeric => {
                let last = range.end - Duration::microseconds(1);
                Ok(format!(
                    "{column} BETWEEN {} AND {}",
                    self.end(d, range.start)?,
                    self.end(d, last)?
                ))
            }
        }
    }

    /// One end of a range, written in the column's type.
    fn end(&self, d: &dyn SqlDialect, t: NaiveDateTime) -> Result<String, TimeColumnError> {
        let text = strftime(t, &self.format);
        match self.ty {
            TimeColumnType::Numeric => {
                if text.parse::<i64>().is_ok() || text.parse::<f64>().is_ok_and(f64::is_finite) {
                    Ok(text)
                } else {
                    Err(TimeColumnError::NotANumber {
                        column: self.name.clone(),
                        format: self.format.clone(),
                        rendered: text,
                    })
                }
            }
            _ => Ok(d.literal(&text)),
        }
    }
}

/// `format` as chrono spells it: Python's `%f` (microseconds, six digits) is chrono's `%6f`;
/// every other directive SQLMesh users write means the same in both.
fn chrono_format(format: &str) -> String {
    let mut out = String::with_capacity(format.len());
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '%' {
            match chars.next() {
                Some('f') => out.push_str("6f"),
                Some(n) => out.push(n),
                None => {}
            }
        }
    }
    out
}

/// `t` written with the strftime pattern `format` (checked by [`format_problem`] when the
/// model loaded).
fn strftime(t: NaiveDateTime, format: &str) -> String {
    t.format(&chrono_format(format)).to_string()
}

/// Why `format` is not a time column format efmesh can write, if it is not: a directive that
/// neither Python's strftime (as SQLMesh reads it) nor chrono knows, or a lone `%` at the end.
pub fn format_problem(format: &str) -> Option<String> {
    let chrono = chrono_format(format);
    if StrftimeItems::new(&chrono).any(|i| matches!(i, Item::Error)) {
        return Some(format!(
            "'{format}' is not a strftime format: each % must start a directive such as %Y, %m, %d, %H, %M, %S or %f (write %% for a literal %)"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::dialect::{DuckDb, Postgres};

    fn at(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").unwrap()
    }
    fn day(a: &str, b: &str) -> Range {
        Range::new(at(&format!("{a} 00:00:00")), at(&format!("{b} 00:00:00")))
    }

    #[test]
    fn a_text_column_is_compared_with_its_formatted_days_end_inclusive() {
        let t = TimeColumn::new("ds", "VARCHAR", None).unwrap();
        assert_eq!(
            t.filter(&DuckDb, "\"ds\"", day("2020-01-01", "2020-01-02"))
                .unwrap(),
            "\"ds\" BETWEEN '2020-01-01' AND '2020-01-01'"
        );
        let t = TimeColumn::new("ds", "TEXT", Some("%Y%m%d %H:%M:%S.%f")).unwrap();
        assert_eq!(
            t.filter(&Postgres, "ds", day("2020-01-01", "2020-01-03"))
                .unwrap(),
            "ds BETWEEN '20200101 00:00:00.000000' AND '20200102 23:59:59.999999'"
        );
    }

    #[test]
    fn a_numeric_column_is_compared_with_numbers_and_a_format_with_dashes_is_refused() {
        let t = TimeColumn::new("di", "INTEGER", Some("%Y%m%d")).unwrap();
        assert_eq!(
            t.filter(&DuckDb, "di", day("2020-01-01", "2020-01-06"))
                .unwrap(),
            "di BETWEEN 20200101 AND 20200105"
        );
        let t = TimeColumn::new("di", "BIGINT", None).unwrap();
        let e = t
            .filter(&DuckDb, "di", day("2020-01-01", "2020-01-02"))
            .unwrap_err();
        assert!(e.to_string().contains("writes `2020-01-01`"), "{e}");
    }

    #[test]
    fn a_temporal_column_keeps_the_half_open_instants() {
        let t = TimeColumn::new("ts", "TIMESTAMP WITH TIME ZONE", Some("%Y")).unwrap();
        assert_eq!(
            t.filter(&DuckDb, "ts", day("2020-01-01", "2020-01-02"))
                .unwrap(),
            "ts >= CAST('2020-01-01 00:00:00' AS TIMESTAMP) AND ts < CAST('2020-01-02 00:00:00' AS TIMESTAMP)"
        );
        assert_eq!(TimeColumnType::of("DATE"), Some(TimeColumnType::Temporal));
    }

    #[test]
    fn a_column_no_range_fits_and_a_broken_format_are_named() {
        let e = TimeColumn::new("flag", "BOOLEAN", None).unwrap_err();
        assert!(e.to_string().contains("`flag` is BOOLEAN"), "{e}");
        assert!(TimeColumn::new("l", "INTEGER[]", None).is_err());
        assert_eq!(format_problem("%Y-%m-%d"), None);
        assert_eq!(format_problem("%Y%m%d%H%M%S.%f"), None);
        assert!(format_problem("%Y-%Q").is_some());
        assert!(format_problem("%Y%").is_some());
    }
}
