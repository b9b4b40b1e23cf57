//! SEED models: a file shipped with the project, loaded as text and cast to the declared
//! columns, so CSV, JSON and JSON lines seeds mean the same thing.

use super::{FileSql, SqlDialect};
use crate::model::ColumnDef;
use crate::project::Project;
use crate::seed::{self, SeedFormat};

/// The session-local table a seed's records are copied into when the engine cannot read the
/// file itself (PostgreSQL): one text column per file column, so [`select`] and
/// [`bad_values`] read it exactly as they read the file on DuckDB.
pub const STAGING: &str = "efmesh_seed_rows";

/// The statements that (re)create [`STAGING`] with one text column per file column.
pub fn staging_table(d: &dyn SqlDialect, file_columns: &[String]) -> String {
    let columns = file_columns
        .iter()
        .map(|c| format!("{} TEXT", d.ident(c)))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{}; CREATE TEMP TABLE {STAGING} ({columns})",
        d.drop(super::RelationKind::Table, STAGING, true)
    )
}

/// The relation that reads seed `i`'s file (`file`, project-relative) with every value as text.
pub fn source(files: &dyn FileSql, project: &Project, i: usize, file: &str) -> String {
    match SeedFormat::of(file) {
        SeedFormat::Csv => {
            files.read_csv_text(file, project.seed_columns[i].as_deref().unwrap_or_default())
        }
        format => files.read_json_text(
            file,
            format == SeedFormat::JsonLines,
            project.seed_columns[i].as_deref().unwrap_or_default(),
        ),
    }
}

/// Each declared column with the file column (as written) that holds it.
pub fn declared_columns(project: &Project, i: usize) -> Vec<(&str, &ColumnDef)> {
    let file_columns = project.seed_columns[i].as_deref().unwrap_or_default();
    project.models[i]
        .columns
        .iter()
        .flatten()
        .map(|c| {
            (
                seed::file_column(file_columns, &c.name).unwrap_or(&c.name),
                c,
            )
        })
        .collect()
}

/// The query that loads seed model `i` from `from` (its file through [`source`], or
/// [`STAGING`]): the declared columns cast to their types, or every column as text when none
/// are declared.
pub fn select(d: &dyn SqlDialect, project: &Project, i: usize, from: &str) -> String {
    let cols = declared_columns(project, i);
    let pandas = reads_like_pandas(project, i);
    let list = if cols.is_empty() {
        "*".to_string()
    } else {
        cols.iter()
            .map(|(k, c)| {
                let v = d.ident(k);
                let value = if pandas {
                    pandas_value(d, &v, c)
                } else {
                    format!("CAST({v} AS {})", c.sql_type)
                };
                format!("{value} AS {}", d.ident(&c.name))
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!("SELECT {list} FROM {from}")
}

/// Whether seed model `i` is read as SQLMesh reads it, through pandas: a CSV seed of a SQLMesh
/// project. There pandas' missing-value markers (`NULL`, `None`, `NA`, ...) are NULL in every
/// column, and a `DATE` or `TIMESTAMP` may be written month first (`1/4/2024`).
fn reads_like_pandas(project: &Project, i: usize) -> bool {
    let m = &project.models[i];
    let csv = match &m.kind {
        crate::model::Kind::Seed { path } => SeedFormat::of(path) == SeedFormat::Csv,
        _ => false,
    };
    csv && project.config.is_sqlmesh()
}

/// The text value `v`, with pandas' missing-value markers as NULL.
fn pandas_text(d: &dyn SqlDialect, v: &str) -> String {
    let markers = seed::PANDAS_NA
        .iter()
        .map(|m| d.literal(m))
        .collect::<Vec<_>>()
        .join(", ");
    format!("CASE WHEN {v} IN ({markers}) THEN NULL ELSE {v} END")
}

/// Whether a declared type is a date or a timestamp, which pandas also reads month first.
fn is_date_or_timestamp(sql_type: &str) -> bool {
    let t = sql_type.trim().to_ascii_uppercase();
    t.starts_with("DATE") || t.starts_with("TIMESTAMP")
}

/// The text value `v` as pandas gives column `c` to SQLMesh, or NULL where it does not fit.
fn pandas_try(d: &dyn SqlDialect, v: &str, c: &ColumnDef) -> String {
    let text = pandas_text(d, v);
    let plain = d.try_cast(&text, &c.sql_type);
    if is_date_or_timestamp(&c.sql_type) {
        let t = c.sql_type.trim().to_ascii_uppercase();
        // pandas reads a column of whole numbers as integers, which it turns into
        // nanoseconds since the epoch (a DATE or a TIMESTAMP without time zone)
        let nanos = if t == "DATE" || t == "TIMESTAMP" {
            format!(
                ", {}",
                d.try_cast(&d.try_epoch_nanos_timestamp(&text), &c.sql_type)
            )
        } else {
            String::new()
        };
        format!(
            "COALESCE({plain}, {}{nanos})",
            d.try_cast(&d.try_month_first_timestamp(&text), &c.sql_type)
        )
    } else {
        plain
    }
}

/// The text value `v` as pandas gives column `c` to SQLMesh; a value that fits nowhere fails
/// the cast (and [`bad_values`] has named it before).
fn pandas_value(d: &dyn SqlDialect, v: &str, c: &ColumnDef) -> String {
    if is_date_or_timestamp(&c.sql_type) {
        pandas_try(d, v, c)
    } else {
        format!("CAST({} AS {})", pandas_text(d, v), c.sql_type)
    }
}

/// A read-only query over seed `i`'s records (`from`, as in [`select`]) that finds up to `sample` records with values that
/// do not fit their declared column: `(row number, comma-separated indexes into
/// [`declared_columns`] of the values that do not fit, how many records do not fit, then every
/// declared column's value as text)`. `None` when no columns are declared.
pub fn bad_values(
    d: &dyn SqlDialect,
    project: &Project,
    i: usize,
    from: &str,
    sample: usize,
) -> Option<String> {
    let cols = declared_columns(project, i);
    if cols.is_empty() {
        return None;
    }
    let pandas = reads_like_pandas(project, i);
    let bad: Vec<String> = cols
        .iter()
        .map(|(k, c)| {
            let v = format!("s.{}", d.ident(k));
            if pandas {
                format!(
                    "({} IS NOT NULL AND {} IS NULL)",
                    pandas_text(d, &v),
                    pandas_try(d, &v, c)
                )
            } else {
                format!(
                    "({v} IS NOT NULL AND {} IS NULL)",
                    d.try_cast(&v, &c.sql_type)
                )
            }
        })
        .collect();
    let flags = bad
        .iter()
        .enumerate()
        .map(|(n, b)| format!("CASE WHEN {b} THEN '{n}' END"))
        .collect::<Vec<_>>()
        .join(", ");
    let values = cols
        .iter()
        .map(|(k, _)| format!("s.{}", d.ident(k)))
        .collect::<Vec<_>>()
        .join(", ");
    Some(format!(
        "SELECT s.__efmesh_row, concat_ws(',', {flags}), count(*) OVER (), {values} \
         FROM (SELECT row_number() OVER () AS __efmesh_row, * FROM {}) AS s \
         WHERE {} ORDER BY s.__efmesh_row LIMIT {sample}",
        from,
        bad.join(" OR ")
    ))
}
