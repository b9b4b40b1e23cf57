//! PostgreSQL: a 365-day daily backfill on the PostgreSQL engine with `batch_concurrency` 1
//! and 4, and no-op plan and promotion at N models with the state store on PostgreSQL next to
//! the SQLite store, all as whole CLI processes against one server (a superuser URL, so each
//! run gets a fresh database).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::generate;

/// The backfill's first day; 365 daily intervals follow.
const START: &str = "2025-01-01";

/// A fresh database on the server at `server`, its URL returned.
pub fn fresh_database(server: &str, name: &str) -> Result<String> {
    let mut c = postgres::Client::connect(server, postgres::NoTls)
        .with_context(|| "connecting to the benchmark server")?;
    c.batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))?;
    c.batch_execute(&format!("CREATE DATABASE {name}"))?;
    match server.rsplit_once('/') {
        Some((base, _)) => Ok(format!("{base}/{name}")),
        None => bail!("the server URL must be postgres://.../db"),
    }
}

/// One whole efmesh process in `dir`, timed; a failure is an error with its stderr.
pub fn timed(efmesh: &Path, dir: &Path, args: &[&str], now: &str) -> Result<Duration> {
    let t = Instant::now();
    let out = Command::new(efmesh)
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("EFMESH_NOW", now)
        .output()
        .with_context(|| format!("running {}", efmesh.display()))?;
    let elapsed = t.elapsed();
    if !out.status.success() {
        bail!(
            "efmesh {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(elapsed)
}

/// The backfill project: one daily INCREMENTAL_BY_TIME_RANGE model of 24 rows a day, one
/// batch per day, built on the PostgreSQL engine at `url`.
pub fn write_backfill(dir: &Path, url: &str, concurrency: u32) -> Result<()> {
    std::fs::create_dir_all(dir.join("models"))?;
    std::fs::write(
        dir.join("efmesh.toml"),
        format!(
            "[project]\nname = \"pgbench\"\nstart = \"{START}\"\n\n[engine]\npostgres = \"{url}\"\npool_size = 4\n\n[state]\nsqlite = \"efmesh.state.sqlite\"\n"
        ),
    )?;
    std::fs::write(
        dir.join("models/daily.sql"),
        format!(
            "MODEL (
  name bench.daily,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ts, batch_size 1, batch_concurrency {concurrency}),
  cron '@daily',
  start '{START}',
  end '2025-12-31',
  columns (id BIGINT, ts TIMESTAMP, v DOUBLE PRECISION)
);

SELECT g.i AS id, TIMESTAMP '{START}' + g.i * INTERVAL '1 hour' AS ts, g.i * 1.5 AS v
FROM generate_series(0, 365 * 24 - 1) AS g(i)
WHERE TIMESTAMP '{START}' + g.i * INTERVAL '1 hour' BETWEEN @start_ts AND @end_ts
"
        ),
    )?;
    Ok(())
}

/// Rows and distinct ids the backfill left in its dev view: each must be 8,760.
pub fn backfill_rows(url: &str) -> Result<(i64, i64)> {
    let mut c = postgres::Client::connect(url, postgres::NoTls)?;
    let r = c.query_one(
        "SELECT count(*), count(DISTINCT id) FROM dev__bench.daily",
        &[],
    )?;
    Ok((r.get(0), r.get(1)))
}

/// The N-model project of `generate`, with its state store moved to `state_url` when given.
pub fn write_models(dir: &Path, models: usize, state_url: Option<&str>) -> Result<()> {
    generate::write_project(dir, models, false)?;
    if let Some(url) = state_url {
        let toml = generate::EFMESH_TOML.replace(
            "sqlite = \"efmesh.state.sqlite\"",
            &format!("postgres = \"{url}\""),
        );
        std::fs::write(dir.join("efmesh.toml"), toml)?;
    }
    Ok(())
}

/// The median of `samples`.
pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Seconds or milliseconds, whichever reads better.
pub fn show(d: Duration) -> String {
    if d.as_secs_f64() >= 1.0 {
        format!("{:.2} s", d.as_secs_f64())
    } else {
        format!("{:.1} ms", d.as_secs_f64() * 1000.0)
    }
}
