//! Loading SEED files into the engine.
//!
//! Every value is read as text (CSV through `read_csv(all_varchar)`, JSON through `read_json`
//! with every key declared `VARCHAR`), then cast to the declared columns, so CSV, JSON and JSON
//! lines seeds mean the same thing. An engine that cannot read files (PostgreSQL) is handed
//! the file's records instead: efmesh parses the file, copies its records as text into a
//! session-local table ([`seed_sql::STAGING`]) with `COPY ... FROM STDIN`, and the same cast
//! and checks read that table. Before the cast, one read-only query finds the values that
//! would not fit (`TRY_CAST` is NULL where the value is not), so a bad value is reported by file,
//! row, line and column instead of as the engine's bare conversion error.

use crate::engine::{Engine, EngineError};
use crate::error::{Error, SeedBadValue};
use efmesh_core::materialize::seed as seed_sql;
use efmesh_core::model::{Kind, Model};
use efmesh_core::project::{seed_path, Project};
use efmesh_core::seed::{self, SeedFormat};
use std::path::Path;

/// How many bad values a refused seed reports.
const SAMPLE: usize = 5;
/// Longer values are shortened in reports.
const VALUE_CHARS: usize = 60;

/// Where seed model `i`'s records are read from, as a relation with every value as text: its
/// file, read by the engine, or, for an engine that cannot read files, [`seed_sql::STAGING`]
/// filled here from the file under `root`. `None` for other kinds.
pub(crate) fn source(
    project: &Project,
    i: usize,
    root: &Path,
    engine: &mut dyn Engine,
) -> Result<Option<Seed>, Error> {
    let m = &project.models[i];
    let Kind::Seed { path } = &m.kind else {
        return Ok(None);
    };
    let file = seed_path(&m.file, path);
    let d = engine.dialect();
    let unreadable = |reason: String| Error::Seed {
        model: m.name.clone(),
        file: file.clone(),
        reason,
    };
    let read = || {
        crate::util::bounded_read::read_bounded(
            &root.join(&file),
            crate::util::bounded_read::SEED_LIMIT,
        )
        .map_err(unreadable)
    };
    let columns = project.seed_columns[i].clone().unwrap_or_default();
    if let Some(files) = d.files() {
        // the engine reads the file, padding a short row: a ragged one is refused here first
        if SeedFormat::of(&file) == SeedFormat::Csv {
            seed::records(SeedFormat::Csv, &read()?, &columns).map_err(unreadable)?;
        }
        return Ok(Some(Seed {
            from: seed_sql::source(files, project, i, &file),
            bytes: None,
            file,
        }));
    }
    let bytes = read()?;
    let records = seed::records(SeedFormat::of(&file), &bytes, &columns).map_err(unreadable)?;
    let context = format!("loading seed {}", m.name);
    engine
        .execute(&context, &seed_sql::staging_table(d, &columns))
        .map_err(|e| build_error(m, e))?;
    engine
        .copy_rows(&context, seed_sql::STAGING, &columns, &records)
        .map_err(|e| build_error(m, e))?;
    Ok(Some(Seed {
        from: seed_sql::STAGING.to_string(),
        bytes: Some(bytes),
        file,
    }))
}

/// A seed's records, ready to be checked and cast.
pub(crate) struct Seed {
    /// The relation holding them as text.
    pub(crate) from: String,
    /// The file's content, when efmesh read it (rather than the engine).
    bytes: Option<Vec<u8>>,
    /// The file, project-relative.
    file: String,
}

/// Refuse seed model `i` when a value of its file does not fit its declared column type,
/// naming the file, row, line, column, value and type of the first few. Read-only; a no-op for
/// seeds without declared columns.
pub(crate) fn check_values(
    project: &Project,
    i: usize,
    seed: &Seed,
    engine: &mut dyn Engine,
) -> Result<(), Error> {
    let m = &project.models[i];
    let d = engine.dialect();
    let file = seed.file.clone();
    let Some(sql) = seed_sql::bad_values(d, project, i, &seed.from, SAMPLE) else {
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
    let lines = match &seed.bytes {
        Some(bytes) => seed::record_lines(SeedFormat::of(&file), bytes),
        None => file_lines(engine, &context, &file),
    };
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
