//! Loading SEED files into the engine.
//!
//! Every value is read as text (CSV through `read_csv(all_varchar)`, JSON through `read_json`
//! with every key declared `VARCHAR`), then cast to the declared columns, so CSV, JSON and JSON
//! lines seeds mean the same thing. Before the cast, one read-only query finds the values that
//! would not fit (`TRY_CAST` is NULL where the value is not), so a bad value is reported by file,
//! row, line and column instead of as the engine's bare conversion error.

use crate::engine::{Engine, EngineError};
use crate::error::{Error, SeedBadValue};
use efmesh_core::materialize::seed as seed_sql;
use efmesh_core::model::{Kind, Model};
use efmesh_core::project::{seed_path, Project};
use efmesh_core::seed::{self, SeedFormat};

/// How many bad values a refused seed reports.
const SAMPLE: usize = 5;
/// Longer values are shortened in reports.
const VALUE_CHARS: usize = 60;

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
    let d = engine.dialect();
    let Some(files) = d.files() else {
        return Ok(());
    };
    let file = seed_path(&m.file, path);
    let Some(sql) = seed_sql::bad_values(d, files, project, i, &file, SAMPLE) else {
        return Ok(());
    };
    let cols = seed_sql::declared_columns(project, i);
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
    let read = engine.dialect().files()?.read_text(file);
    let text = engine
        .query(context, &format!("SELECT content FROM {read}"), Some(1))
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
