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
        SeedFormat::Csv => files.read_csv_text(file),
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
    let list = if cols.is_empty() {
        "*".to_string()
    } else {
        cols.iter()
            .map(|(k, c)| {
                format!(
                    "CAST({} AS {}) AS {}",
                    d.ident(k),
                    c.sql_type,
                    d.ident(&c.name)
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!("SELECT {list} FROM {from}")
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
    let bad: Vec<String> = cols
        .iter()
        .map(|(k, c)| {
            let v = format!("s.{}", d.ident(k));
            format!(
                "({v} IS NOT NULL AND {} IS NULL)",
                d.try_cast(&v, &c.sql_type)
            )
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
