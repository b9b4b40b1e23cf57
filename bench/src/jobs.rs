//! `jobs`: what `--jobs N` gains on a wide DAG, next to what SQLMesh's `concurrent_tasks`
//! gains on the same models.
//!
//! A project of `width` independent FULL models (each an aggregate over `rows` generated rows)
//! and one mart over all of them, applied from scratch to `prod` with each `--jobs` setting,
//! `repeats` times each in fresh copies; the median wall time of the whole process is
//! reported, with the speed-up against the first setting. SQLMesh runs the same model files
//! with its DuckDB connection's `concurrent_tasks` at the same setting. Each run is verified:
//! every model built (efmesh's `--json`), and the mart has one row per branch (SQLMesh's file).

use crate::timing::{Run, Timed, Tool};
use anyhow::{bail, Context, Result};
use std::path::Path;
use std::time::Duration;

/// The SQLMesh database file of a `jobs` project.
pub const SQLMESH_DATABASE: &str = "wide.duckdb";

/// The wall times of one setting, seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// `--jobs` (efmesh) and `concurrent_tasks` (SQLMesh).
    pub jobs: usize,
    /// efmesh's runs.
    pub efmesh: Vec<f64>,
    /// SQLMesh's runs (empty when it was not run).
    pub sqlmesh: Vec<f64>,
}

/// SQLMesh's config for the wide project: the DuckDB gateway with `concurrent_tasks` set.
pub fn write_sqlmesh_config(dir: &Path, concurrent_tasks: usize) -> Result<()> {
    std::fs::write(
        dir.join("config.yaml"),
        format!(
            "gateways:\n  local:\n    connection:\n      type: duckdb\n      database: {SQLMESH_DATABASE}\n      concurrent_tasks: {concurrent_tasks}\n\ndefault_gateway: local\n\nmodel_defaults:\n  dialect: duckdb\n  start: '2026-01-01'\n"
        ),
    )?;
    Ok(())
}

/// Run `args` and insist it finished successfully within `timeout`.
pub fn finished(tool: &Tool, dir: &Path, args: &[&str], timeout: Duration) -> Result<Run> {
    match tool.run_timeout(dir, args, timeout)? {
        Timed::Done(run) => tool.check_success(dir, args, run),
        Timed::TimedOut(d) => bail!(
            "`{}` timed out after {d:?}",
            tool.display_command(dir, args)
        ),
    }
}

/// After SQLMesh's apply: prod's mart holds one row per branch.
pub fn verify_sqlmesh(dir: &Path, width: usize) -> Result<()> {
    let conn = duckdb::Connection::open_with_flags(
        dir.join(SQLMESH_DATABASE),
        duckdb::Config::default().access_mode(duckdb::AccessMode::ReadOnly)?,
    )?;
    let n: i64 = conn.query_row("SELECT count(*) FROM w.mart", [], |r| r.get(0))?;
    if n as usize != width {
        bail!("SQLMesh's w.mart has {n} rows, expected {width}");
    }
    Ok(())
}

fn median(times: &[f64]) -> Option<f64> {
    let mut t = times.to_vec();
    t.sort_by(f64::total_cmp);
    t.get(t.len() / 2).copied()
}

/// The markdown table: per setting, each tool's median (and runs) and speed-up against the
/// first setting.
pub fn markdown(rows: &[Row]) -> String {
    let mut out = String::from(
        "| jobs | efmesh median | efmesh runs | efmesh speed-up | SQLMesh median | SQLMesh runs | SQLMesh speed-up | SQLMesh ÷ efmesh |\n|---:|---:|---|---:|---:|---|---:|---:|\n",
    );
    let base_e = rows.first().and_then(|r| median(&r.efmesh));
    let base_s = rows.first().and_then(|r| median(&r.sqlmesh));
    let runs = |t: &[f64]| {
        t.iter()
            .map(|x| format!("{x:.2}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for r in rows {
        let e = median(&r.efmesh);
        let s = median(&r.sqlmesh);
        let secs = |m: Option<f64>| m.map(|m| format!("{m:.2} s")).unwrap_or_else(|| "–".into());
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => format!("{:.2}×", a / b),
            _ => "–".into(),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.jobs,
            secs(e),
            runs(&r.efmesh),
            ratio(base_e, e),
            secs(s),
            runs(&r.sqlmesh),
            ratio(base_s, s),
            ratio(s, e),
        ));
    }
    out
}

/// The wide project: `width` branches and a mart.
pub fn write_project(dir: &Path, width: usize, rows: u64) -> Result<()> {
    std::fs::create_dir_all(dir.join("models"))?;
    std::fs::write(
        dir.join("efmesh.toml"),
        "[project]\nname = \"wide\"\nstart = \"2026-01-01\"\n",
    )?;
    for k in 0..width {
        std::fs::write(
            dir.join(format!("models/b{k}.sql")),
            format!("MODEL (name w.b{k}, kind FULL);\nSELECT {k} AS branch, count(*) AS n, sum(hash(x + {k}) % 1000) AS s FROM range({rows}) t(x)"),
        )?;
    }
    let all: Vec<String> = (0..width)
        .map(|k| format!("SELECT branch, n, s FROM w.b{k}"))
        .collect();
    std::fs::write(
        dir.join("models/mart.sql"),
        format!(
            "MODEL (name w.mart, kind FULL);\n{}",
            all.join("\nUNION ALL\n")
        ),
    )?;
    Ok(())
}

/// Check a finished apply's `--json`: every model built.
pub fn verify(stdout: &[u8], width: usize) -> Result<()> {
    let v: serde_json::Value = serde_json::from_slice(stdout).context("apply --json")?;
    let built = v["built"].as_array().map(|b| b.len()).unwrap_or(0);
    if built != width + 1 {
        bail!("built {built} models, expected {}", width + 1);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speed_ups_are_against_the_first_setting() {
        let rows = [
            Row {
                jobs: 1,
                efmesh: vec![2.0, 1.0, 3.0],
                sqlmesh: vec![10.0],
            },
            Row {
                jobs: 2,
                efmesh: vec![1.0],
                sqlmesh: vec![8.0],
            },
            Row {
                jobs: 4,
                efmesh: vec![0.5],
                sqlmesh: vec![],
            },
        ];
        let md = markdown(&rows);
        assert!(
            md.contains(
                "| 1 | 2.00 s | 2.00, 1.00, 3.00 | 1.00× | 10.00 s | 10.00 | 1.00× | 5.00× |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| 2 | 1.00 s | 1.00 | 2.00× | 8.00 s | 8.00 | 1.25× | 8.00× |"),
            "{md}"
        );
        assert!(
            md.contains("| 4 | 0.50 s | 0.50 | 4.00× | – |  | – | – |"),
            "{md}"
        );
    }

    #[test]
    fn the_sqlmesh_config_sets_concurrent_tasks() {
        let dir = tempfile::tempdir().unwrap();
        write_sqlmesh_config(dir.path(), 4).unwrap();
        let text = std::fs::read_to_string(dir.path().join("config.yaml")).unwrap();
        assert!(text.contains("concurrent_tasks: 4"), "{text}");
        assert!(text.contains(SQLMESH_DATABASE), "{text}");
    }
}
