//! The `maintenance` property: how `efmesh compact` may rewrite an EXTERNAL model's files.
//!
//! ```sql
//! MODEL (
//!   name raw.events,
//!   kind EXTERNAL (path 'landing/**/*.parquet', format parquet, hive_partitioning true),
//!   columns (event_id VARCHAR, received_at TIMESTAMP, day DATE),
//!   maintenance (partition_key day, unique_key (event_id), order received_at, grace 10)
//! );
//! ```
//!
//! A policy is operations metadata, not data shape: it never enters the fingerprint (nor the
//! metadata hash), so adding or editing it plans nothing. Only an EXTERNAL model reading parquet
//! files may have one. This module also holds the pure rules compaction applies to one
//! partition (is it settled? is it already compact?), so every caller means the same thing.

use super::block::TermKind;
use super::values::{key_value, span_of, Value};
use crate::diagnostic::{Diagnostic, Problem};
use crate::location::Location;
use chrono::{NaiveDate, NaiveDateTime};
use serde::Serialize;

/// The keys a `maintenance (...)` policy accepts.
pub const MAINTENANCE_KEYS: &[&str] = &["partition_key", "unique_key", "order", "grace"];

/// Minutes a partition's newest file must have rested before it is compacted, when the policy
/// does not say.
pub const DEFAULT_GRACE_MINUTES: u32 = 10;

/// A model's maintenance policy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Maintenance {
    /// The hive key of a partition directory (`day` for `day=2026-03-01/`), lower-cased. Its
    /// value must be a date (or a timestamp) for the partition to be compacted.
    pub partition_key: String,
    /// The columns that identify a row: compaction keeps one row per key. Empty: the model's
    /// `grain` is used; when that is empty too, files are merged without deduplication.
    pub unique_key: Vec<String>,
    /// Which row of a key is kept: the first by these columns, ascending (NULLs last, then the
    /// file listed first). Empty: the first row of the first file, by file name.
    pub order: Vec<String>,
    /// Minutes the newest file of a partition must have rested (by its mtime) before the
    /// partition is compacted.
    pub grace_minutes: u32,
    /// Where the property is written, for diagnostics about it.
    #[serde(skip)]
    pub location: Location,
}

/// Parse the value of `maintenance`: `(key value, ...)` with the keys in [`MAINTENANCE_KEYS`].
pub fn parse_maintenance(v: &Value) -> Result<Maintenance, Diagnostic> {
    let mut partition_key = None;
    let mut unique_key = vec![];
    let mut order = vec![];
    let mut grace = None;
    let mut seen: Vec<String> = vec![];
    for item in v.items()? {
        let Some((k, rest)) = key_value(item) else {
            return Err(v.invalid(
                "`(partition_key column, unique_key (columns), order column, grace minutes)`",
            ));
        };
        let key = k.ident().unwrap_or_default().to_ascii_lowercase();
        let key_loc = Location::from_span(v.file, k.span);
        if !MAINTENANCE_KEYS.contains(&key.as_str()) {
            return Err(Diagnostic::at(
                Problem::UnknownProperty {
                    suggestion: crate::suggest::closest(&key, MAINTENANCE_KEYS.iter().copied()),
                    name: format!("maintenance {key}"),
                    known: MAINTENANCE_KEYS.to_vec(),
                },
                key_loc,
            ));
        }
        if seen.contains(&key) {
            return Err(Diagnostic::at(
                Problem::DuplicateProperty {
                    name: format!("maintenance {key}"),
                },
                key_loc,
            ));
        }
        seen.push(key.clone());
        let property = MAINTENANCE_KEYS
            .iter()
            .find(|x| **x == key)
            .copied()
            .unwrap_or("maintenance");
        let val = Value::new(property, rest, span_of(rest, k.span), v.file);
        match key.as_str() {
            "partition_key" => partition_key = Some(val.ident()?),
            "unique_key" => unique_key = val.ident_list()?,
            "order" => {
                // `order received_at` or `order (received_at, seq)`; only ascending
                if rest.iter().any(|t| {
                    matches!(&t.kind, TermKind::Ident(s, false) if s.eq_ignore_ascii_case("desc") || s.eq_ignore_ascii_case("asc"))
                }) {
                    return Err(val.invalid(
                        "column names only: the first row by them, ascending, is kept",
                    ));
                }
                order = val.ident_list()?
            }
            "grace" => grace = Some(val.u32()?),
            _ => unreachable!("every maintenance key is handled"),
        }
    }
    let Some(partition_key) = partition_key else {
        return Err(v.invalid(
            "a `partition_key` (the hive directory key of a partition, e.g. `partition_key day` for `day=2026-03-01/`)",
        ));
    };
    Ok(Maintenance {
        partition_key,
        unique_key,
        order,
        grace_minutes: grace.unwrap_or(DEFAULT_GRACE_MINUTES),
        location: v.location(),
    })
}

/// Check a model's policy against the rest of its definition: only an EXTERNAL model reading
/// parquet files may have one, and its key and order columns must be declared columns.
pub fn check(model: &super::Model) -> Vec<Diagnostic> {
    use super::{ExternalSource, FileFormat, Kind};
    let Some(p) = &model.maintenance else {
        return vec![];
    };
    let source = match &model.kind {
        Kind::External {
            source:
                ExternalSource::Files {
                    format: FileFormat::Parquet,
                    ..
                },
        } => None,
        Kind::External {
            source: ExternalSource::Files { format, .. },
        } => Some(match format {
            FileFormat::Csv => "EXTERNAL csv files".into(),
            _ => "EXTERNAL json files".into(),
        }),
        Kind::External {
            source: ExternalSource::Table { .. },
        } => Some("an EXTERNAL engine table".into()),
        Kind::External {
            source: ExternalSource::Url { .. },
        } => Some("an EXTERNAL URL".into()),
        k => Some(format!("a {} model", k.name())),
    };
    if let Some(source) = source {
        return vec![Diagnostic::at(
            Problem::MaintenanceUnsupported { what: source },
            p.location.clone(),
        )];
    }
    let Some(columns) = &model.columns else {
        return vec![];
    };
    let names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
    p.unique_key
        .iter()
        .map(|c| ("maintenance unique_key", c))
        .chain(p.order.iter().map(|c| ("maintenance order", c)))
        .filter(|(_, c)| !names.contains(c))
        .map(|(property, column)| {
            Diagnostic::at(
                Problem::KeyColumnMissing {
                    property: property.into(),
                    column: column.clone(),
                    available: names.clone(),
                },
                p.location.clone(),
            )
        })
        .collect()
}

/// Why compaction leaves a partition as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeftAlone {
    /// The directory is not `<partition_key>=<value>`.
    NotAPartition {
        /// The partition key the policy names.
        key: String,
    },
    /// The partition's value is not a date or timestamp, so it cannot be known to be settled.
    NotADate {
        /// The value as written in the directory name.
        value: String,
    },
    /// The partition is dated today or later: data may still arrive.
    TodayOrLater {
        /// The partition's date.
        date: NaiveDate,
        /// Today, by efmesh's clock (UTC).
        today: NaiveDate,
    },
    /// The newest file is younger than the grace period: a writer may still be busy.
    WithinGrace {
        /// Age of the newest file in whole minutes (0 when its mtime is in the future).
        age_minutes: i64,
        /// The grace period in minutes.
        grace_minutes: u32,
    },
    /// One file and no duplicate keys: there is nothing to merge.
    AlreadyCompact,
}

impl LeftAlone {
    /// A stable, kebab-case identifier for `--json` consumers.
    pub fn code(&self) -> &'static str {
        match self {
            LeftAlone::NotAPartition { .. } => "not-a-partition",
            LeftAlone::NotADate { .. } => "not-a-date",
            LeftAlone::TodayOrLater { .. } => "today-or-later",
            LeftAlone::WithinGrace { .. } => "within-grace",
            LeftAlone::AlreadyCompact => "already-compact",
        }
    }
}

impl std::fmt::Display for LeftAlone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LeftAlone::NotAPartition { key } => {
                write!(f, "not a `{key}=<date>` directory")
            }
            LeftAlone::NotADate { value } => write!(
                f,
                "partition value `{value}` is not a date (YYYY-MM-DD, YYYYMMDD or a timestamp)"
            ),
            LeftAlone::TodayOrLater { date, today } => {
                write!(f, "dated {date}, today or later (today is {today} UTC)")
            }
            LeftAlone::WithinGrace {
                age_minutes,
                grace_minutes,
            } => write!(
                f,
                "newest file is {age_minutes} min old, within the grace period of {grace_minutes} min"
            ),
            LeftAlone::AlreadyCompact => f.write_str("already compact: one file, no duplicates"),
        }
    }
}

/// The date of a partition value: `2026-03-01`, `20260301`, or a timestamp (its date).
pub fn partition_date(value: &str) -> Option<NaiveDate> {
    let v = value.trim();
    if v.len() == 8 && v.bytes().all(|b| b.is_ascii_digit()) {
        return NaiveDate::parse_from_str(v, "%Y%m%d").ok();
    }
    // hive writers escape `:` and spaces in directory names
    let unescaped = v
        .replace("%3A", ":")
        .replace("%3a", ":")
        .replace("%20", " ");
    crate::time::parse_instant(&unescaped)
        .ok()
        .map(|t| t.date())
}

/// Whether a partition `<key>=<value>` may be compacted yet, by its name and the mtime of its
/// newest file: settled means dated before today and quiet for the grace period.
pub fn settled(
    value: &str,
    newest_mtime: NaiveDateTime,
    now: NaiveDateTime,
    grace_minutes: u32,
) -> Result<(), LeftAlone> {
    let Some(date) = partition_date(value) else {
        return Err(LeftAlone::NotADate {
            value: value.to_string(),
        });
    };
    let today = now.date();
    if date >= today {
        return Err(LeftAlone::TodayOrLater { date, today });
    }
    let age = now - newest_mtime;
    if age < chrono::Duration::minutes(i64::from(grace_minutes)) {
        return Err(LeftAlone::WithinGrace {
            age_minutes: age.num_minutes().max(0),
            grace_minutes,
        });
    }
    Ok(())
}

/// Split a directory name `key=value`, when its key is `partition_key` (case-insensitive).
pub fn partition_value<'a>(dir_name: &'a str, partition_key: &str) -> Option<&'a str> {
    let (k, v) = dir_name.split_once('=')?;
    k.eq_ignore_ascii_case(partition_key).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::parse_model_file;
    use crate::sql::Dialect;

    const EXTERNAL: &str = "kind EXTERNAL (path 'landing/**/*.parquet', format parquet, hive_partitioning true),\n  columns (event_id VARCHAR, received_at TIMESTAMP, day DATE)";

    fn parse(props: &str) -> (Option<crate::model::Model>, Vec<Diagnostic>) {
        parse_model_file(
            "models/raw/events.sql",
            &format!("MODEL (\n  name raw.events,\n  {props}\n);\n"),
            Dialect::DuckDb,
            &Default::default(),
        )
    }

    fn first_error(props: &str) -> Diagnostic {
        let (_, d) = parse(props);
        d.into_iter()
            .find(|d| d.is_error())
            .expect("an error is reported")
    }

    fn t(s: &str) -> NaiveDateTime {
        crate::time::parse_instant(s).unwrap()
    }

    #[test]
    fn a_policy_parses_with_defaults() {
        let (m, d) = parse(&format!(
            "{EXTERNAL},\n  maintenance (partition_key day, unique_key (event_id), order received_at, grace 5)"
        ));
        assert!(d.is_empty(), "{d:?}");
        let p = m.unwrap().maintenance.unwrap();
        assert_eq!(p.partition_key, "day");
        assert_eq!(p.unique_key, ["event_id"]);
        assert_eq!(p.order, ["received_at"]);
        assert_eq!(p.grace_minutes, 5);
        let (m, d) = parse(&format!("{EXTERNAL},\n  maintenance (partition_key DAY)"));
        assert!(d.is_empty(), "{d:?}");
        let p = m.unwrap().maintenance.unwrap();
        assert_eq!(p.partition_key, "day");
        assert!(p.unique_key.is_empty() && p.order.is_empty());
        assert_eq!(p.grace_minutes, DEFAULT_GRACE_MINUTES);
    }

    #[test]
    fn unknown_keys_are_refused_with_a_suggestion_at_their_position() {
        let d = first_error(&format!(
            "{EXTERNAL},\n  maintenance (partition_key day, unique_kye (event_id))"
        ));
        assert!(
            matches!(&d.problem, Problem::UnknownProperty { name, suggestion: Some(s), .. } if name == "maintenance unique_kye" && s == "unique_key"),
            "{d:?}"
        );
        let loc = d.location.unwrap();
        assert_eq!(
            (loc.file.as_str(), loc.line, loc.column),
            ("models/raw/events.sql", 5, 35)
        );
        assert!(d
            .problem
            .help()
            .unwrap()
            .contains("partition_key, unique_key, order, grace"));
    }

    #[test]
    fn shape_errors_are_reported() {
        let missing = first_error(&format!("{EXTERNAL},\n  maintenance (grace 5)"));
        assert!(
            matches!(&missing.problem, Problem::InvalidValue { property, expected } if property == "maintenance" && expected.contains("partition_key")),
            "{missing:?}"
        );
        let grace = first_error(&format!(
            "{EXTERNAL},\n  maintenance (partition_key day, grace 'soon')"
        ));
        assert!(
            matches!(&grace.problem, Problem::InvalidValue { property, .. } if property == "grace")
        );
        assert_eq!(grace.location.unwrap().line, 5);
        let desc = first_error(&format!(
            "{EXTERNAL},\n  maintenance (partition_key day, order received_at DESC)"
        ));
        assert!(
            matches!(&desc.problem, Problem::InvalidValue { property, .. } if property == "order")
        );
        let twice = first_error(&format!(
            "{EXTERNAL},\n  maintenance (partition_key day, grace 1, grace 2)"
        ));
        assert!(
            matches!(&twice.problem, Problem::DuplicateProperty { name } if name == "maintenance grace")
        );
        let not_a_list = first_error(&format!("{EXTERNAL},\n  maintenance day"));
        assert!(
            matches!(&not_a_list.problem, Problem::InvalidValue { property, .. } if property == "maintenance")
        );
    }

    #[test]
    fn only_external_parquet_files_may_have_a_policy() {
        for (props, what) in [
            ("kind FULL", "a FULL model"),
            (
                "kind EXTERNAL (table raw.t),\n  columns (day DATE)",
                "an EXTERNAL engine table",
            ),
            (
                "kind EXTERNAL (url 'https://x.invalid/a.parquet'),\n  columns (day DATE)",
                "an EXTERNAL URL",
            ),
            (
                "kind EXTERNAL (path 'landing/**/*.csv'),\n  columns (day DATE)",
                "EXTERNAL csv files",
            ),
        ] {
            let (_, d) = parse(&format!("{props},\n  maintenance (partition_key day)"));
            let e = d
                .iter()
                .find(|d| d.problem.code() == "maintenance-unsupported")
                .unwrap_or_else(|| panic!("{props}: {d:?}"));
            assert!(
                matches!(&e.problem, Problem::MaintenanceUnsupported { what: w } if w == what),
                "{e:?}"
            );
            assert!(e.problem.help().unwrap().contains("kind EXTERNAL (path"));
            assert_eq!(
                e.location.as_ref().unwrap().line,
                3 + props.lines().count() as u64
            );
        }
    }

    #[test]
    fn key_columns_must_be_declared() {
        let d = first_error(&format!(
            "{EXTERNAL},\n  maintenance (partition_key day, unique_key (event_idd), order received_at)"
        ));
        assert!(
            matches!(&d.problem, Problem::KeyColumnMissing { property, column, .. } if property == "maintenance unique_key" && column == "event_idd"),
            "{d:?}"
        );
        let d = first_error(&format!(
            "{EXTERNAL},\n  maintenance (partition_key day, order (received, event_id))"
        ));
        assert!(
            matches!(&d.problem, Problem::KeyColumnMissing { property, column, .. } if property == "maintenance order" && column == "received")
        );
    }

    #[test]
    fn the_policy_is_metadata_and_never_changes_the_fingerprint() {
        let plain = parse(EXTERNAL).0.unwrap();
        let with = parse(&format!(
            "{EXTERNAL},\n  maintenance (partition_key day, unique_key (event_id), order received_at, grace 30)"
        ))
        .0
        .unwrap();
        let other = parse(&format!("{EXTERNAL},\n  maintenance (partition_key day)"))
            .0
            .unwrap();
        for m in [&with, &other] {
            assert_eq!(
                crate::fingerprint::fingerprint(m, None, &[]),
                crate::fingerprint::fingerprint(&plain, None, &[])
            );
            assert_eq!(
                crate::fingerprint::metadata_hash(m),
                crate::fingerprint::metadata_hash(&plain)
            );
            assert_eq!(
                crate::fingerprint::payload_json(m, None, &[]),
                crate::fingerprint::payload_json(&plain, None, &[])
            );
        }
    }

    #[test]
    fn partition_dates() {
        let d = NaiveDate::from_ymd_opt(2026, 3, 1).unwrap();
        assert_eq!(partition_date("2026-03-01"), Some(d));
        assert_eq!(partition_date("20260301"), Some(d));
        assert_eq!(partition_date("2026-03-01 10:00:00"), Some(d));
        assert_eq!(partition_date("2026-03-01%2010%3A00%3A00"), Some(d));
        assert_eq!(partition_date("eu-west"), None);
        assert_eq!(partition_date("2026-13-01"), None);
        assert_eq!(partition_value("day=2026-03-01", "day"), Some("2026-03-01"));
        assert_eq!(partition_value("DAY=x", "day"), Some("x"));
        assert_eq!(partition_value("region=eu", "day"), None);
        assert_eq!(partition_value("day", "day"), None);
    }

    #[test]
    fn settled_means_before_today_and_quiet_for_the_grace_period() {
        let now = t("2026-03-08T10:00:00");
        assert_eq!(
            settled("2026-03-07", t("2026-03-08T09:00:00"), now, 10),
            Ok(())
        );
        assert_eq!(
            settled("2026-03-08", t("2026-03-01T00:00:00"), now, 0),
            Err(LeftAlone::TodayOrLater {
                date: NaiveDate::from_ymd_opt(2026, 3, 8).unwrap(),
                today: NaiveDate::from_ymd_opt(2026, 3, 8).unwrap()
            })
        );
        assert!(matches!(
            settled("2026-03-09", t("2026-03-01T00:00:00"), now, 0),
            Err(LeftAlone::TodayOrLater { .. })
        ));
        assert_eq!(
            settled("2026-03-07", t("2026-03-08T09:55:30"), now, 10),
            Err(LeftAlone::WithinGrace {
                age_minutes: 4,
                grace_minutes: 10
            })
        );
        // exactly the grace period old is settled
        assert_eq!(
            settled("2026-03-07", t("2026-03-08T09:50:00"), now, 10),
            Ok(())
        );
        // an mtime in the future (a clock pinned in the past) is never settled
        assert_eq!(
            settled("2026-03-07", t("2026-03-09T00:00:00"), now, 10),
            Err(LeftAlone::WithinGrace {
                age_minutes: 0,
                grace_minutes: 10
            })
        );
        assert!(settled("2026-03-07", t("2026-03-09T00:00:00"), now, 0).is_err());
        assert!(matches!(
            settled("latest", t("2026-03-01T00:00:00"), now, 0),
            Err(LeftAlone::NotADate { .. })
        ));
        assert_eq!(
            LeftAlone::WithinGrace {
                age_minutes: 4,
                grace_minutes: 10
            }
            .to_string(),
            "newest file is 4 min old, within the grace period of 10 min"
        );
    }
}
