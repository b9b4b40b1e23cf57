//! `jobs`: what `--jobs N` gains on a wide DAG.
//!
//! A project of `width` independent FULL models (each an aggregate over `rows` generated rows)
//! and one mart over all of them, applied from scratch to `prod` with `--jobs 1`, `2` and `4`,
//! `repeats` times each in fresh copies; the median wall time of the whole process is
//! reported, with the speed-up against `--jobs 1`. Each run is verified: the mart has one row
//! per branch.

use anyhow::{bail, Context, Result};
use std::path::Path;

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
