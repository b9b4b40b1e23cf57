//! `scale`: how `check` and a no-op `plan` grow with the number of models.
//!
//! A plan must feel instant on thousands of models, and a project ten or fifty times larger
//! must cost ten or fifty times as much, not more: a quadratic step hides at 2,000 models and
//! dominates at 50,000. For every size the generated project (the `compare` one) is checked,
//! applied once to `dev`, and planned again with nothing to do; each row states the median wall
//! time, the time per model and the peak resident memory of the process, so growth in either
//! shows as a per-model figure that rises with the size.

use crate::timing::{Timed, Tool};
use anyhow::{bail, Result};
use std::path::Path;
use std::time::Duration;

/// One timed command at one size.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// Median wall time of the timed runs.
    pub median: Duration,
    /// Largest peak resident memory over the runs, KiB.
    pub peak_kib: u64,
}

/// The figures of one size.
#[derive(Debug, Clone, Copy)]
pub struct SizeFigures {
    /// Generated models (the root `src.events` comes on top).
    pub models: usize,
    /// `efmesh check`.
    pub check: Sample,
    /// The cold `efmesh apply dev --yes` that sets up the no-op plan (one run).
    pub apply: Sample,
    /// `efmesh plan dev` with nothing to do.
    pub noop: Sample,
}

/// Run `args` `warmup + runs` times on `dir` and summarise the timed runs. `expect` must occur
/// in stdout of every run, so a command that exits 0 without doing the work fails the bench.
pub fn measure(
    tool: &Tool,
    dir: &Path,
    args: &[&str],
    warmup: usize,
    runs: usize,
    expect: &str,
    timeout: Duration,
) -> Result<Sample> {
    let mut times = vec![];
    let mut peak_kib = 0;
    for i in 0..warmup + runs {
        let run = match tool.run_timeout(dir, args, timeout)? {
            Timed::Done(run) => tool.check_success(dir, args, run)?,
            Timed::TimedOut(after) => bail!(
                "`{}` timed out after {after:?}",
                tool.display_command(dir, args)
            ),
        };
        let stdout = String::from_utf8_lossy(&run.output.stdout);
        if !stdout.contains(expect) {
            bail!(
                "`{}` did not print `{expect}`:\n{stdout}",
                tool.display_command(dir, args)
            );
        }
        if i >= warmup {
            times.push(run.elapsed);
            peak_kib = peak_kib.max(run.max_rss_kib.unwrap_or(0));
        }
    }
    let median = crate::timing::stats::median(&times).expect("at least one timed run");
    Ok(Sample { median, peak_kib })
}

/// Microseconds per model.
pub fn per_model_us(d: Duration, models: usize) -> f64 {
    d.as_secs_f64() * 1e6 / models as f64
}

/// The markdown table: per size, each command's median, time per model, growth of the time
/// per model against the smallest size (1.00 is linear) and peak memory.
pub fn markdown(rows: &[SizeFigures]) -> String {
    let Some(first) = rows.first() else {
        return String::new();
    };
    let mut out = String::from(
        "| models | command | median | µs per model | per model vs smallest | peak memory |\n|---:|---|---:|---:|---:|---:|\n",
    );
    for r in rows {
        for (label, s, base) in [
            ("check", r.check, first.check),
            ("no-op plan dev", r.noop, first.noop),
            ("cold apply dev (one run)", r.apply, first.apply),
        ] {
            let us = per_model_us(s.median, r.models);
            let growth = us / per_model_us(base.median, first.models);
            out.push_str(&format!(
                "| {} | {label} | {} | {us:.1} | {growth:.2}× | {:.1} MiB |\n",
                r.models,
                crate::compare::fmt_duration(s.median),
                s.peak_kib as f64 / 1024.0
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(ms: u64, kib: u64) -> Sample {
        Sample {
            median: Duration::from_millis(ms),
            peak_kib: kib,
        }
    }

    #[test]
    fn growth_is_per_model_time_against_the_smallest_size() {
        let rows = [
            SizeFigures {
                models: 1000,
                check: sample(100, 2048),
                apply: sample(1000, 4096),
                noop: sample(20, 1024),
            },
            SizeFigures {
                models: 10_000,
                check: sample(2000, 20480),
                apply: sample(10_000, 40960),
                noop: sample(200, 10240),
            },
        ];
        let md = markdown(&rows);
        // check: 100 µs per model, then 200 µs per model: twice the smallest size's
        assert!(
            md.contains("| 10000 | check | 2.00 s | 200.0 | 2.00× | 20.0 MiB |"),
            "{md}"
        );
        // no-op plan grew exactly linearly
        assert!(
            md.contains("| 10000 | no-op plan dev | 200.0 ms | 20.0 | 1.00× | 10.0 MiB |"),
            "{md}"
        );
        assert!(
            md.contains("| 1000 | check | 100.0 ms | 100.0 | 1.00× | 2.0 MiB |"),
            "{md}"
        );
    }

    #[test]
    fn a_command_that_does_not_print_what_is_expected_fails() {
        let dir = tempfile::tempdir().unwrap();
        let sh = Tool {
            name: "sh".into(),
            program: "sh".into(),
            project_flag: None,
        };
        let ok = measure(
            &sh,
            dir.path(),
            &["-c", "echo No changes."],
            1,
            3,
            "No changes.",
            Duration::from_secs(10),
        )
        .unwrap();
        assert!(ok.peak_kib > 0);
        let err = measure(
            &sh,
            dir.path(),
            &["-c", "echo built"],
            0,
            1,
            "No changes.",
            Duration::from_secs(10),
        )
        .unwrap_err();
        assert!(err.to_string().contains("did not print"), "{err}");
    }
}
