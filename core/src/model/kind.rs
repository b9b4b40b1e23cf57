//! Model kinds: how a model is materialized, with its parameters as SQLMesh spells them.

use super::block::Term;
use super::values::{key_value, span_of, Value};
use crate::diagnostic::{Diagnostic, Problem};
use crate::location::Location;
use serde::Serialize;

/// File formats an EXTERNAL model can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileFormat {
    /// Parquet files; the guess when neither path nor URL says otherwise.
    Parquet,
    /// CSV files, guessed when the path or URL contains `.csv`.
    Csv,
    /// JSON or newline-delimited JSON, guessed when the path or URL contains `.json`.
    Json,
}

/// Where an EXTERNAL model's rows come from. Only this definition is fingerprinted, never the
/// content behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExternalSource {
    /// A table that already exists in the engine.
    Table {
        /// The engine table's name, lower-cased (`schema.table`).
        table: String,
    },
    /// Files by path or glob.
    Files {
        /// The path or glob, as written.
        path: String,
        /// How to read the files: given by `format`, or guessed from the path.
        format: FileFormat,
        /// Match columns across files by name rather than position.
        union_by_name: bool,
        /// Read `key=value` directories in the path as partition columns.
        hive_partitioning: bool,
    },
    /// An http(s) URL.
    Url {
        /// The URL, as written.
        url: String,
        /// How to read the response: given by `format`, or guessed from the URL.
        format: FileFormat,
    },
}

/// How a model is materialized. Serialized into the fingerprint payload, so every field here
/// shapes the data; adding one is a `FINGERPRINT_VERSION` bump.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "name")]
pub enum Kind {
    /// Rebuilt from scratch on every run.
    #[serde(rename = "FULL")]
    Full,
    /// A view over the query, so it is always current and costs nothing to build.
    #[serde(rename = "VIEW")]
    View {
        /// Ask the engine for a materialized view instead of a plain one.
        materialized: bool,
    },
    /// Never stored: inlined as a subquery into the models that read it.
    #[serde(rename = "EMBEDDED")]
    Embedded,
    /// Built interval by interval, each run replacing only the rows of its time range.
    /// Its batching knobs live in [`Batching`], outside the fingerprint.
    #[serde(rename = "INCREMENTAL_BY_TIME_RANGE")]
    IncrementalByTimeRange {
        /// The output column that places each row in an interval, lower-cased.
        time_column: String,
        /// The column's format string, when it holds text rather than a temporal type.
        time_column_format: Option<String>,
        /// How many earlier intervals each run also recomputes, for late-arriving rows. It
        /// decides which late rows the table holds, so (as in SQLMesh) it shapes the data.
        lookback: u32,
    },
    /// Each run upserts the query's rows into the table, matched on a key.
    #[serde(rename = "INCREMENTAL_BY_UNIQUE_KEY")]
    IncrementalByUniqueKey {
        /// The columns that identify a row across runs.
        unique_key: Vec<String>,
        /// How many earlier intervals each run also recomputes, for late-arriving rows.
        lookback: u32,
    },
    /// SQLMesh's INCREMENTAL_BY_PARTITION: each refresh runs the whole query and its rows
    /// replace the table's rows of the partitions they hold; other partitions are kept.
    #[serde(rename = "INCREMENTAL_BY_PARTITION")]
    IncrementalByPartition {
        /// The columns whose values name a partition (the model's `partitioned_by`).
        partitioned_by: Vec<String>,
    },
    /// Slowly changing dimension that keeps every version of a row, detected by an update time.
    #[serde(rename = "SCD_TYPE_2")]
    ScdType2 {
        /// The columns that identify a row across versions.
        unique_key: Vec<String>,
        /// Name of the added column where a version starts to be valid.
        valid_from_name: String,
        /// Name of the added column where a version stops being valid (NULL while current).
        valid_to_name: String,
        /// The source column whose change marks a new version.
        updated_at_name: String,
        /// Give new rows their `updated_at` value as valid-from, instead of 1970-01-01.
        updated_at_as_valid_from: bool,
        /// Close the current version of rows that disappear from the source.
        invalidate_hard_deletes: bool,
    },
    /// Slowly changing dimension that keeps every version of a row, detected by comparing columns.
    #[serde(rename = "SCD_TYPE_2_BY_COLUMN")]
    ScdType2ByColumn {
        /// The columns that identify a row across versions.
        unique_key: Vec<String>,
        /// The compared columns; `["*"]` compares every column.
        columns: Vec<String>,
        /// Name of the added column where a version starts to be valid.
        valid_from_name: String,
        /// Name of the added column where a version stops being valid (NULL while current).
        valid_to_name: String,
        /// Give new rows the run's execution time as valid-from, instead of 1970-01-01.
        execution_time_as_valid_from: bool,
        /// Close the current version of rows that disappear from the source.
        invalidate_hard_deletes: bool,
    },
    /// A file shipped with the project (CSV, JSON array or JSON lines, by extension: see
    /// [`crate::seed`]); its content hash enters the fingerprint.
    #[serde(rename = "SEED")]
    Seed {
        /// The file, relative to the model file's directory as in SQLMesh.
        path: String,
    },
    /// Data efmesh reads but does not build: an engine table, files or a URL.
    #[serde(rename = "EXTERNAL")]
    External {
        /// Where the rows come from.
        source: ExternalSource,
    },
}

impl Kind {
    /// The kind's name as written in a MODEL block.
    pub fn name(&self) -> &'static str {
        match self {
            Kind::Full => "FULL",
            Kind::View { .. } => "VIEW",
            Kind::Embedded => "EMBEDDED",
            Kind::IncrementalByTimeRange { .. } => "INCREMENTAL_BY_TIME_RANGE",
            Kind::IncrementalByUniqueKey { .. } => "INCREMENTAL_BY_UNIQUE_KEY",
            Kind::IncrementalByPartition { .. } => "INCREMENTAL_BY_PARTITION",
            Kind::ScdType2 { .. } => "SCD_TYPE_2",
            Kind::ScdType2ByColumn { .. } => "SCD_TYPE_2_BY_COLUMN",
            Kind::Seed { .. } => "SEED",
            Kind::External { .. } => "EXTERNAL",
        }
    }

    /// An SCD type 2 kind's validity columns (`valid_from`, `valid_to`), which efmesh adds to
    /// the query's own.
    pub fn validity_columns(&self) -> Option<(&str, &str)> {
        match self {
            Kind::ScdType2 {
                valid_from_name,
                valid_to_name,
                ..
            }
            | Kind::ScdType2ByColumn {
                valid_from_name,
                valid_to_name,
                ..
            } => Some((valid_from_name, valid_to_name)),
            _ => None,
        }
    }

    /// Whether models of this kind are defined by a query (SEED and EXTERNAL are not).
    pub fn has_query(&self) -> bool {
        !matches!(self, Kind::Seed { .. } | Kind::External { .. })
    }

    /// Whether a change can keep this kind's physics and apply forward only: VIEW, EMBEDDED,
    /// SEED and EXTERNAL models keep no data of their own to carry over.
    pub fn has_history(&self) -> bool {
        !matches!(
            self,
            Kind::View { .. } | Kind::Embedded | Kind::External { .. } | Kind::Seed { .. }
        )
    }
}

/// How a model's intervals are cut into batches and scheduled. These knobs change how the data
/// is computed, never what it is, so (as in SQLMesh) they are metadata: they stay out of the
/// fingerprint and changing one rebuilds nothing. SQLMesh writes them as kind parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Batching {
    /// `batch_size`: the most intervals one batch may hold; `None` means one batch per
    /// missing range.
    pub size: Option<u32>,
    /// `batch_concurrency`: how many of the model's batches may run at once; `None` leaves it
    /// to efmesh (one at a time). Only INCREMENTAL_BY_TIME_RANGE batches are independent.
    pub concurrency: Option<u32>,
    /// Where `batch_concurrency` is written, for diagnostics about it.
    #[serde(skip)]
    pub concurrency_location: Option<Location>,
}

/// The most intervals `lookback` may reach back: beyond this a typo, not a window.
pub const MAX_LOOKBACK: u32 = 100_000;
/// The most intervals one batch may hold (`batch_size`).
pub const MAX_BATCH_SIZE: u32 = 100_000;
/// The most batches of one model that may run at once (`batch_concurrency`).
pub const MAX_BATCH_CONCURRENCY: u32 = 64;

/// Every kind name efmesh accepts (including SQLMesh's aliases), for suggestions.
pub const KIND_NAMES: &[&str] = &[
    "FULL",
    "VIEW",
    "EMBEDDED",
    "INCREMENTAL_BY_TIME_RANGE",
    "INCREMENTAL_BY_UNIQUE_KEY",
    "INCREMENTAL_BY_PARTITION",
    "SCD_TYPE_2",
    "SCD_TYPE_2_BY_TIME",
    "SCD_TYPE_2_BY_COLUMN",
    "SEED",
    "EXTERNAL",
];

/// SQLMesh kind parameters that efmesh reads but does not act on: none changes a table here.
const IGNORED_KIND_PARAMS: &[&str] = &[
    // SQLMesh's default, `allow`, is what efmesh does: a forward-only change may add columns
    "on_additive_change",
    "partition_by_time_column",
    "time_data_type",
];

/// SQLMesh kind parameters that would change a table if ignored, with what to do instead.
const REFUSED_KIND_PARAMS: &[(&str, &str)] = &[
    ("when_matched", "efmesh's upsert replaces a matched row whole, as SQLMesh's DuckDB engine does: it fails such a model at run time (\"This engine does not support MERGE expressions\"); remove `when_matched`, or compute the merged values in the query"),
    ("merge_filter", "efmesh's upsert matches on the unique key alone, as SQLMesh's DuckDB engine does: it fails such a model at run time (\"This engine does not support MERGE expressions\"); remove `merge_filter`, or filter the query's rows"),
    ("csv_settings", "efmesh reads seed CSVs with a comma, double quotes and pandas' missing-value markers; rewrite the file in that form and remove `csv_settings`"),
];

/// How a model's changes and restatements are applied, from SQLMesh's kind parameters. Like
/// [`Batching`], metadata: out of the fingerprint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ChangePolicy {
    /// `forward_only true`: a change to the model keeps its physics and history and applies
    /// to new intervals only, as `--forward-only` does for one plan.
    pub forward_only: bool,
    /// `disable_restatement true`: `efmesh restate` refuses the model, so its history is never
    /// recomputed by hand.
    pub disable_restatement: bool,
    /// `on_destructive_change`: what a forward-only version that drops columns of the kept
    /// table does to them.
    pub on_destructive_change: DestructiveChange,
    /// `auto_restatement_cron` (with `auto_restatement_intervals`): `efmesh run` restates the
    /// model's latest intervals whenever this cron has fired since the last run.
    pub auto_restatement: Option<AutoRestatement>,
}

/// SQLMesh's scheduled restatement: late-arriving data is picked up by recomputing the latest
/// intervals (and the models downstream) on a schedule of its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AutoRestatement {
    /// When to restate (UTC), a cron expression or a macro such as `@weekly`.
    pub cron: String,
    /// How many of the latest intervals to restate; `None` restates the whole history.
    pub intervals: Option<u32>,
}

/// SQLMesh's `on_destructive_change`: a forward-only version keeps the table and its rows, so
/// a column the new query no longer returns is a choice between losing it and keeping it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DestructiveChange {
    /// Refuse the version (SQLMesh's default).
    #[default]
    Error,
    /// Drop the columns, and say so in the log.
    Warn,
    /// Drop the columns.
    Allow,
    /// Keep the columns; rows written from now on have NULL in them.
    Ignore,
}

impl DestructiveChange {
    fn parse(word: &str) -> Option<DestructiveChange> {
        Some(match word {
            "error" => DestructiveChange::Error,
            "warn" => DestructiveChange::Warn,
            "allow" => DestructiveChange::Allow,
            "ignore" => DestructiveChange::Ignore,
            _ => return None,
        })
    }
}

/// The value of `on_destructive_change` (a kind parameter, or a model property).
pub fn destructive_change(v: &Value) -> Result<DestructiveChange, Diagnostic> {
    let word = v.ident()?.to_ascii_lowercase();
    DestructiveChange::parse(&word).ok_or_else(|| v.invalid("`error`, `warn`, `allow` or `ignore`"))
}

/// Parse the value of `kind`: `NAME` or `NAME (param value, ...)`, with the batching knobs
/// SQLMesh writes among the kind's parameters.
pub fn parse_kind(
    v: &Value,
    warnings: &mut Vec<Diagnostic>,
) -> Result<(Kind, Batching, ChangePolicy), Diagnostic> {
    let (name_t, params) = match v.terms {
        [n] => (n, None),
        [n, p] if p.list().is_some() => (n, p.list()),
        _ => return Err(v.invalid("a kind name, optionally followed by (parameters)")),
    };
    let Some(raw_name) = name_t.ident() else {
        return Err(v.invalid("a kind name"));
    };
    let name = raw_name.to_ascii_uppercase();
    let mut p = Params::new(&name, v.file);
    for item in params.unwrap_or(&[]) {
        let Some((k, rest)) = key_value(item) else {
            return Err(Diagnostic::at(
                Problem::InvalidValue {
                    property: format!("kind {name}"),
                    expected: "`parameter value` pairs".into(),
                },
                Location::from_span(v.file, item.span),
            ));
        };
        p.entries
            .push((k.ident().unwrap_or_default().to_ascii_lowercase(), k, rest));
    }
    let mut batching = Batching::default();
    let kind = match name.as_str() {
        "FULL" => Kind::Full,
        "VIEW" => Kind::View {
            materialized: p.bool("materialized")?.unwrap_or(false),
        },
        "EMBEDDED" => Kind::Embedded,
        "INCREMENTAL_BY_TIME_RANGE" => {
            let (time_column, time_column_format) = match p.take("time_column") {
                None => return Err(p.missing("time_column", v)),
                Some((_, terms)) => {
                    let tv = Value::new("time_column", terms, span_of(terms, v.span), v.file);
                    match terms {
                        [t] if t.list().is_some() => {
                            let items = t.list().unwrap_or(&[]);
                            let col = items
                                .first()
                                .and_then(|i| i.terms.first())
                                .and_then(|t| t.ident());
                            let fmt = items
                                .get(1)
                                .and_then(|i| i.terms.first())
                                .and_then(|t| t.scalar());
                            if let Some(problem) =
                                fmt.and_then(crate::materialize::time_column::format_problem)
                            {
                                return Err(tv.invalid(&format!(
                                    "(column, 'format') with a format of its text or numbers: {problem}"
                                )));
                            }
                            match col {
                                Some(c) => (c.to_ascii_lowercase(), fmt.map(str::to_string)),
                                None => {
                                    return Err(tv.invalid("a column name or (column, 'format')"))
                                }
                            }
                        }
                        _ => (tv.ident()?, None),
                    }
                }
            };
            batching = p.batching()?;
            Kind::IncrementalByTimeRange {
                time_column,
                time_column_format,
                lookback: p.bounded("lookback", 0, MAX_LOOKBACK)?.unwrap_or(0),
            }
        }
        "INCREMENTAL_BY_UNIQUE_KEY" => {
            let unique_key = p.required_list("unique_key", v)?;
            batching = p.batching()?;
            Kind::IncrementalByUniqueKey {
                unique_key,
                lookback: p.bounded("lookback", 0, MAX_LOOKBACK)?.unwrap_or(0),
            }
        }
        "SCD_TYPE_2" | "SCD_TYPE_2_BY_TIME" => Kind::ScdType2 {
            unique_key: p.required_list("unique_key", v)?,
            valid_from_name: p
                .ident("valid_from_name")?
                .unwrap_or_else(|| "valid_from".into()),
            valid_to_name: p
                .ident("valid_to_name")?
                .unwrap_or_else(|| "valid_to".into()),
            updated_at_name: p
                .ident("updated_at_name")?
                .unwrap_or_else(|| "updated_at".into()),
            updated_at_as_valid_from: p.bool("updated_at_as_valid_from")?.unwrap_or(false),
            invalidate_hard_deletes: p.bool("invalidate_hard_deletes")?.unwrap_or(false),
        },
        "SCD_TYPE_2_BY_COLUMN" => Kind::ScdType2ByColumn {
            unique_key: p.required_list("unique_key", v)?,
            columns: match p.take("columns") {
                None => return Err(p.missing("columns", v)),
                Some((_, [t])) if matches!(&t.kind, super::block::TermKind::Op(s) if s == "*") => {
                    vec!["*".into()]
                }
                Some((_, terms)) => {
                    Value::new("columns", terms, span_of(terms, v.span), v.file).ident_list()?
                }
            },
            valid_from_name: p
                .ident("valid_from_name")?
                .unwrap_or_else(|| "valid_from".into()),
            valid_to_name: p
                .ident("valid_to_name")?
                .unwrap_or_else(|| "valid_to".into()),
            execution_time_as_valid_from: p.bool("execution_time_as_valid_from")?.unwrap_or(false),
            invalidate_hard_deletes: p.bool("invalidate_hard_deletes")?.unwrap_or(false),
        },
        // its partition columns are the model's `partitioned_by`, filled in by the model parser
        "INCREMENTAL_BY_PARTITION" => Kind::IncrementalByPartition {
            partitioned_by: vec![],
        },
        "SEED" => Kind::Seed {
            path: match p.take("path") {
                Some((_, terms)) => {
                    Value::new("path", terms, span_of(terms, v.span), v.file).text()?
                }
                None => return Err(p.missing("path", v)),
            },
        },
        "EXTERNAL" => Kind::External {
            source: external_source(&mut p, v)?,
        },
        _ => {
            return Err(Diagnostic::at(
                Problem::UnknownKind {
                    name: raw_name.into(),
                    suggestion: crate::suggest::closest(&name, KIND_NAMES.iter().copied()),
                },
                Location::from_span(v.file, name_t.span),
            ))
        }
    };
    let mut policy = ChangePolicy {
        forward_only: p.bool("forward_only")?.unwrap_or(false),
        disable_restatement: p.bool("disable_restatement")?.unwrap_or(false),
        on_destructive_change: DestructiveChange::Error,
        auto_restatement: None,
    };
    let restate_intervals = p.bounded("auto_restatement_intervals", 1, 1_000_000)?;
    if let Some(v) = p.value("auto_restatement_cron") {
        let cron = v.text()?;
        if let Err(why) = crate::cron::parse(&cron) {
            return Err(v.invalid(&format!(
                "a 5-field cron expression or a macro such as @weekly; `{cron}`: {why}"
            )));
        }
        if !matches!(kind, Kind::IncrementalByTimeRange { .. }) {
            return Err(Diagnostic::at(
                Problem::UnsupportedProperty {
                    name: format!("{} auto_restatement_cron", kind.name()),
                    why: "efmesh restates INCREMENTAL_BY_TIME_RANGE models only, whose history is time intervals; remove it, or rebuild the model with a breaking change".into(),
                },
                v.location(),
            ));
        }
        policy.auto_restatement = Some(AutoRestatement {
            cron,
            intervals: restate_intervals,
        });
    }
    if policy.forward_only && !kind.has_history() {
        return Err(Diagnostic::at(
            Problem::UnsupportedProperty {
                name: format!("{} forward_only", kind.name()),
                why: format!("a {} model is rebuilt whole, so it has no history to keep; remove `forward_only`", kind.name()),
            },
            v.location(),
        ));
    }
    if let Some(d) = p.value("on_destructive_change") {
        policy.on_destructive_change = destructive_change(&d)?;
    }
    p.finish(&kind, warnings)?;
    Ok((kind, batching, policy))
}

fn external_source(p: &mut Params, v: &Value) -> Result<ExternalSource, Diagnostic> {
    let format = match p.take("format") {
        Some((_, terms)) => {
            let fv = Value::new("format", terms, span_of(terms, v.span), v.file);
            Some(match fv.ident()?.as_str() {
                "parquet" => FileFormat::Parquet,
                "csv" => FileFormat::Csv,
                "json" | "ndjson" => FileFormat::Json,
                _ => return Err(fv.invalid("parquet, csv or json")),
            })
        }
        None => None,
    };
    let table = match p.value("table") {
        Some(v) => {
            let t = v.ident()?;
            if !crate::naming::plain_relation(&t) {
                return Err(v.invalid(
                    "an existing table's name: `schema.table` (or `catalog.schema.table`), each part a plain identifier",
                ));
            }
            Some(t)
        }
        None => None,
    };
    let path = p.text("path")?;
    let url = p.text("url")?;
    let union_by_name = p.bool("union_by_name")?.unwrap_or(false);
    let hive_partitioning = p.bool("hive_partitioning")?.unwrap_or(false);
    let guess = |s: &str| {
        let l = s.to_ascii_lowercase();
        if l.contains(".csv") {
            FileFormat::Csv
        } else if l.contains(".json") {
            FileFormat::Json
        } else {
            FileFormat::Parquet
        }
    };
    match (table, path, url) {
        (Some(table), None, None) => Ok(ExternalSource::Table { table }),
        (None, Some(path), None) => {
            let format = format.unwrap_or_else(|| guess(&path));
            Ok(ExternalSource::Files {
                path,
                format,
                union_by_name,
                hive_partitioning,
            })
        }
        (None, None, Some(url)) => {
            let format = format.unwrap_or_else(|| guess(&url));
            Ok(ExternalSource::Url { url, format })
        }
        _ => Err(v.invalid("exactly one source: `table schema.name`, `path '...'` or `url '...'`")),
    }
}

/// The parameters of one kind, consumed by name so leftovers can be reported.
struct Params<'a> {
    kind: String,
    file: &'a str,
    entries: Vec<(String, &'a Term, &'a [Term])>,
}

impl<'a> Params<'a> {
    fn new(kind: &str, file: &'a str) -> Self {
        Params {
            kind: kind.into(),
            file,
            entries: vec![],
        }
    }

    fn take(&mut self, key: &str) -> Option<(&'a Term, &'a [Term])> {
        let i = self.entries.iter().position(|(k, _, _)| k == key)?;
        let (_, k, v) = self.entries.remove(i);
        Some((k, v))
    }

    fn value(&mut self, key: &'a str) -> Option<Value<'a>> {
        let (k, terms) = self.take(key)?;
        Some(Value::new(key, terms, span_of(terms, k.span), self.file))
    }

    fn bounded(&mut self, key: &'a str, min: u32, max: u32) -> Result<Option<u32>, Diagnostic> {
        self.value(key).map(|v| v.u32_in(min, max)).transpose()
    }
    fn bool(&mut self, key: &'a str) -> Result<Option<bool>, Diagnostic> {
        self.value(key).map(|v| v.bool()).transpose()
    }
    fn ident(&mut self, key: &'a str) -> Result<Option<String>, Diagnostic> {
        self.value(key).map(|v| v.ident()).transpose()
    }
    fn text(&mut self, key: &'a str) -> Result<Option<String>, Diagnostic> {
        self.value(key).map(|v| v.text()).transpose()
    }

    /// `batch_size` and `batch_concurrency`, where the kind takes them.
    fn batching(&mut self) -> Result<Batching, Diagnostic> {
        let size = self.bounded("batch_size", 1, MAX_BATCH_SIZE)?;
        let (concurrency, concurrency_location) = match self.value("batch_concurrency") {
            Some(v) => (
                Some(v.u32_in(1, MAX_BATCH_CONCURRENCY)?),
                Some(v.location()),
            ),
            None => (None, None),
        };
        Ok(Batching {
            size,
            concurrency,
            concurrency_location,
        })
    }

    fn required_list(&mut self, key: &'static str, v: &Value) -> Result<Vec<String>, Diagnostic> {
        match self.value(key) {
            Some(val) => {
                let list = val.ident_list()?;
                if list.is_empty() {
                    return Err(val.invalid("at least one column"));
                }
                Ok(list)
            }
            None => Err(self.missing(key, v)),
        }
    }

    fn missing(&self, param: &'static str, v: &Value) -> Diagnostic {
        Diagnostic::at(
            Problem::MissingKindParameter {
                kind: self.kind.clone(),
                param,
            },
            v.location(),
        )
    }

    /// Report parameters nobody consumed: SQLMesh's ignored ones warn, others fail.
    fn finish(self, kind: &Kind, warnings: &mut Vec<Diagnostic>) -> Result<(), Diagnostic> {
        for (key, k, _) in self.entries {
            let loc = Location::from_span(self.file, k.span);
            if let Some((_, why)) = REFUSED_KIND_PARAMS.iter().find(|(k, _)| *k == key) {
                return Err(Diagnostic::at(
                    Problem::UnsupportedProperty {
                        name: format!("{} {key}", kind.name()),
                        why: why.to_string(),
                    },
                    loc,
                ));
            }
            if IGNORED_KIND_PARAMS.contains(&key.as_str()) {
                warnings.push(Diagnostic::at(
                    Problem::IgnoredProperty { name: format!("{} {key}", kind.name()), why: "a SQLMesh kind parameter efmesh does not act on; it is read and ignored" },
                    loc,
                ));
            } else if key == "batch_size" && matches!(kind, Kind::Seed { .. }) {
                warnings.push(Diagnostic::at(
                    Problem::IgnoredProperty { name: "SEED batch_size".into(), why: "it sets how many rows SQLMesh inserts at a time; efmesh loads the whole file in one statement, with the same rows" },
                    loc,
                ));
            } else {
                return Err(Diagnostic::at(
                    Problem::UnknownKindParameter {
                        kind: self.kind.clone(),
                        param: key,
                        known: known_params(kind),
                    },
                    loc,
                ));
            }
        }
        Ok(())
    }
}

fn known_params(kind: &Kind) -> Vec<&'static str> {
    match kind {
        Kind::Full | Kind::Embedded | Kind::IncrementalByPartition { .. } => vec![],
        Kind::View { .. } => vec!["materialized"],
        Kind::IncrementalByTimeRange { .. } => {
            vec!["time_column", "batch_size", "lookback", "batch_concurrency"]
        }
        Kind::IncrementalByUniqueKey { .. } => {
            vec!["unique_key", "batch_size", "lookback", "batch_concurrency"]
        }
        Kind::ScdType2 { .. } => vec![
            "unique_key",
            "valid_from_name",
            "valid_to_name",
            "updated_at_name",
            "updated_at_as_valid_from",
            "invalidate_hard_deletes",
        ],
        Kind::ScdType2ByColumn { .. } => vec![
            "unique_key",
            "columns",
            "valid_from_name",
            "valid_to_name",
            "execution_time_as_valid_from",
            "invalidate_hard_deletes",
        ],
        Kind::Seed { .. } => vec!["path"],
        Kind::External { .. } => vec![
            "table",
            "path",
            "url",
            "format",
            "union_by_name",
            "hive_partitioning",
        ],
    }
}
