//! `efmesh query <env> "SQL"`: rows from what an environment serves.

use crate::cli::args::QueryFormat;
use crate::cli::exit::Exit;
use crate::cli::output::{fail, print_json};
use crate::Efmesh;
use std::path::Path;

/// Run `efmesh query`.
pub(crate) fn run(dir: &Path, env: &str, sql: &str, format: QueryFormat) -> Exit {
    let json = format == QueryFormat::Json;
    match Efmesh::open(dir).and_then(|p| p.query(env, sql)) {
        Err(e) => fail(e, json),
        Ok(rows) => {
            match format {
                QueryFormat::Json => {
                    let objects: Vec<serde_json::Map<String, serde_json::Value>> = rows
                        .rows
                        .iter()
                        .map(|r| {
                            rows.columns
                                .iter()
                                .zip(r)
                                .map(|(c, v)| {
                                    (
                                        c.clone(),
                                        v.clone().map_or(
                                            serde_json::Value::Null,
                                            serde_json::Value::String,
                                        ),
                                    )
                                })
                                .collect()
                        })
                        .collect();
                    print_json(
                        serde_json::json!({ "env": env, "columns": rows.columns, "rows": objects }),
                    );
                }
                QueryFormat::Csv => {
                    let mut w = csv::Writer::from_writer(vec![]);
                    let _ = w.write_record(&rows.columns);
                    for r in &rows.rows {
                        let _ = w.write_record(r.iter().map(|v| v.as_deref().unwrap_or("")));
                    }
                    let bytes = w.into_inner().unwrap_or_default();
                    out!("{}", String::from_utf8_lossy(&bytes));
                }
                QueryFormat::Table => out!("{}", table(&rows.columns, &rows.rows)),
            }
            Exit::Ok
        }
    }
}

/// Aligned columns under a header and a rule; NULL shows as `NULL`, and the row count last.
fn table(columns: &[String], rows: &[Vec<Option<String>>]) -> String {
    let cell = |v: &Option<String>| v.clone().unwrap_or_else(|| "NULL".into());
    let mut widths: Vec<usize> = columns.iter().map(|c| c.chars().count()).collect();
    for r in rows {
        for (w, v) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell(v).chars().count());
        }
    }
    let line = |values: Vec<String>| {
        values
            .iter()
            .zip(&widths)
            .map(|(v, w)| format!("{v:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    let mut out = vec![line(columns.to_vec())];
    out.push(line(widths.iter().map(|w| "-".repeat(*w)).collect()));
    for r in rows {
        out.push(line(r.iter().map(cell).collect()));
    }
    out.push(format!(
        "({} row{})",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" }
    ));
    out.join("\n") + "\n"
}
