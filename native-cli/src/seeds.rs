//! Loading SEED files into the engine.
//!
//! Every value is read as text (CSV through `read_csv(all_varchar)`, JSON through `read_json`
//! with every key declared `VARCHAR`), then cast to the declared columns, so CSV, JSON and JSON
//! lines seeds mean the same thing. Before the cast, one read-only query finds the values that
//! would not fit (`TRY_CAST` is NULL where the value is not), so a bad value is reported by file,
//! row, line and column instead of as the engine's bare conversion error.

use crate::engine::{Engine, EngineError};
use crate::error::{Error, SeedBadValue};
use efmesh_core::model::{ColumnDef, Kind, Model};
use efmesh_core::project::{seed_path, Project};
use efmesh_core::seed::{self, SeedFormat};

/// How many bad values a refused seed reports.
const SAMPLE: usize = 5;
/// Longer values are shortened in reports.
const VALUE_CHARS: usize = 60;

use efmesh_core::quote::{ident, literal};

/// The relation that reads seed `i`'s file (`file`, project-relative) with every value as text.
fn source(project: &Project, i: usize, file: &str) -> String {
    let lit = literal(file);
    let format = SeedFormat::of(file);
    if format == SeedFormat::Csv {
        return format!("read_csv({lit}, header = true, all_varchar = true)");
    }
    let keys = project.seed_columns[i].as_deref().unwrap_or_default();
    let columns = keys
        .iter()
        .map(|k| format!("{}: 'VARCHAR'", literal(k)))
        .collect::<Vec<_>>()
        .join(", ");
    let layout = match format {
        SeedFormat::JsonLines => "newline_delimited",
        _ => "array",
    };
    format!("read_json({lit}, format = '{layout}', columns = {{{columns}}})")
}

/// Each declared column with the file column (as written) that holds it.
fn declared_columns(project: &Project, i: usize) -> Vec<(&str, &ColumnDef)> {
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

/// The query that loads seed model `i` from `file` (project-relative): the declared columns
/// cast to their types, or every column as text when none are declared.
pub(crate) fn select(project: &Project, i: usize, file: &str) -> String {
    let cols = declared_columns(project, i);
    let list = if cols.is_empty() {
        "*".to_string()
    } else {
        cols.iter()
            .map(|(k, c)| format!("CAST({} AS {}) AS {}", ident(k), c.sql_type, ident(&c.name)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!("SELECT {list} FROM {}", source(project, i, file))
}

/// Refuse seed model `i` when a value of its file does not fit its declared column type,
/// naming the file, row, line, column, value and type of the first few. Read-only; a no-op for
/// other kinds and for seeds without declared columns.
pub(crate) fn check_values(
    project: &Project,
    i: usize,
    engine: &mut dyn Engine,
) -> Result<(), Error> {
    let m = &project.models[i];
    let Kind::Seed { path } = &m.kind else {
        return Ok(());
    };
    let cols = declared_columns(project, i);
    if cols.is_empty() {
        return Ok(());
    }
    let file = seed_path(&m.file, path);
    let bad: Vec<String> = cols
        .iter()
        .map(|(k, c)| {
            let v = format!("s.{}", ident(k));
            format!(
                "({v} IS NOT NULL AND TRY_CAST({v} AS {}) IS NULL)",
                c.sql_type
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
        .map(|(k, _)| format!("s.{}", ident(k)))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "SELECT s.__efmesh_row, concat_ws(',', {flags}), count(*) OVER (), {values} \
         FROM (SELECT row_number() OVER () AS __efmesh_row, * FROM {}) AS s \
         WHERE {} ORDER BY s.__efmesh_row LIMIT {SAMPLE}",
        source(project, i, &file),
        bad.join(" OR ")
    );
    let context = format!("checking the values of seed {}", m.name);
    let found = engine
        .query(&context, &sql, None)
        .map_err(|e| build_error(m, e))?;
    if found.rows.is_empty() {
        return Ok(());
    }
    let lines = file_lines(engine, &context, &file);
    let number = |v: &Option<String>| v.as_deref().and_then(|s| s.parse::<u64>().ok());
    let rows = found.rows.first().and_then(|r| number(&r[2])).unwrap_or(0);
    let mut report = vec![];
    for r in &found.rows {
        let row = number(&r[0]).unwrap_or(0);
        let line = lines
            .as_ref()
            .and_then(|l| l.get((row as usize).checked_sub(1)?).copied());
        for n in r[1].as_deref().unwrap_or_default().split(',') {
            let Ok(n) = n.parse::<usize>() else { continue };
            let (Some((_, c)), Some(value)) = (cols.get(n), r.get(3 + n)) else {
                continue;
            };
            report.push(SeedBadValue {
                file: file.clone(),
                row,
                line,
                column: c.name.clone(),
                value: shorten(value.as_deref().unwrap_or_default()),
                sql_type: c.sql_type.clone(),
            });
        }
    }
    report.truncate(SAMPLE);
    Err(Error::SeedValues {
        model: m.name.clone(),
        file,
        rows,
        values: report,
    })
}

/// The line each record of `file` starts on, read through the engine (which resolves the
/// project-relative path); `None` for a JSON array or when the file cannot be read as text.
fn file_lines(engine: &mut dyn Engine, context: &str, file: &str) -> Option<Vec<u64>> {
    let format = SeedFormat::of(file);
    if format == SeedFormat::Json {
        return None;
    }
    let text = engine
        .query(
            context,
            &format!("SELECT content FROM read_text({})", literal(file)),
            Some(1),
        )
        .ok()?;
    let content = text.rows.first()?.first()?.as_deref()?;
    seed::record_lines(format, content.as_bytes())
}

fn shorten(value: &str) -> String {
    if value.chars().count() <= VALUE_CHARS {
        value.to_string()
    } else {
        let head: String = value.chars().take(VALUE_CHARS).collect();
        format!("{head}...")
    }
}

fn build_error(m: &Model, e: EngineError) -> Error {
    match e {
        EngineError::Statement { message, sql, .. } => Error::Build {
            model: m.name.clone(),
            message,
            sql,
        },
        other => Error::Engine(other),
    }
}
