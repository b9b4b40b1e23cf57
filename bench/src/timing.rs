//! Timing whole CLI processes.
//!
//! The benchmarks measure what a user waits for: process start, project load,
//! the work itself and process exit. So every sample is the wall time of one
//! complete child process, spawned fresh, never an in-process function call.
//! [`Tool`] is the seam that lets the same loop time efmesh today and SQLMesh
//! (or efmesh `plan`/`apply`) later.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};

/// A command-line program that operates on a project directory, e.g. efmesh
/// or SQLMesh. It exists so subcommands describe *what* to run
/// (`check`, `plan ...`) and the harness owns *how* it is spawned and timed.
#[derive(Debug, Clone)]
pub struct Tool {
    /// Short label used in reports and error messages (`efmesh`, `sqlmesh`).
    pub name: String,
    /// Executable to spawn: a path, or a bare name resolved through `PATH`.
    pub program: PathBuf,
    /// Flag that points the tool at the project (`-C` for efmesh, `-p` for
    /// SQLMesh), inserted as `FLAG DIR` before the subcommand arguments.
    /// `None` for tools that only look at their working directory. The
    /// working directory is set to the project either way, so relative
    /// database paths in the configs always land inside the project.
    pub project_flag: Option<String>,
}

impl Tool {
    /// The efmesh CLI at `program`, pointed at projects with `-C DIR`.
    pub fn efmesh(program: impl Into<PathBuf>) -> Self {
        Tool {
            name: "efmesh".to_string(),
            program: program.into(),
            project_flag: Some("-C".to_string()),
        }
    }

    /// The SQLMesh CLI at `program`, pointed at projects with `-p DIR`.
    pub fn sqlmesh(program: impl Into<PathBuf>) -> Self {
        Tool {
            name: "sqlmesh".to_string(),
            program: program.into(),
            project_flag: Some("-p".to_string()),
        }
    }

    /// The argument list (without the program) for running `args` on
    /// `project`; public so reports can show exactly what was timed.
    pub fn argv(&self, project: &Path, args: &[&str]) -> Vec<OsString> {
        let mut argv = Vec::with_capacity(args.len() + 2);
        if let Some(flag) = &self.project_flag {
            argv.push(OsString::from(flag));
            argv.push(project.as_os_str().to_owned());
        }
        argv.extend(args.iter().map(OsString::from));
        argv
    }

    /// Human-readable command line, for reports and failure messages.
    pub fn display_command(&self, project: &Path, args: &[&str]) -> String {
        std::iter::once(self.program.as_os_str().to_owned())
            .chain(self.argv(project, args))
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Run the tool once on `project` and time the whole process. stdin is
    /// closed so an unexpected prompt fails fast instead of hanging a
    /// benchmark; stdout/stderr are captured for failure reports. A non-zero
    /// exit is *not* an error here (see [`Tool::run_ok`]); failing to spawn is.
    pub fn run(&self, project: &Path, args: &[&str]) -> Result<Run> {
        let mut cmd = Command::new(&self.program);
        cmd.args(self.argv(project, args))
            .current_dir(project)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let start = Instant::now();
        let child = cmd.spawn().with_context(|| {
            format!("failed to start `{}`", self.display_command(project, args))
        })?;
        let (output, max_rss_kib) = wait_collect(child)
            .with_context(|| format!("waiting for `{}`", self.display_command(project, args)))?;
        let elapsed = start.elapsed();
        Ok(Run {
            elapsed,
            output,
            max_rss_kib,
        })
    }

    /// Like [`Tool::run`], but gives up after `timeout`: the child (started
    /// in its own process group, so helpers it spawned go too) is killed and
    /// [`Timed::TimedOut`] returned. The clock is read by a thread that
    /// blocks on the child, so a normal exit is timed as precisely as
    /// [`Tool::run`] (no polling interval).
    pub fn run_timeout(&self, project: &Path, args: &[&str], timeout: Duration) -> Result<Timed> {
        let mut cmd = Command::new(&self.program);
        cmd.args(self.argv(project, args))
            .current_dir(project)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        let start = Instant::now();
        let child = cmd.spawn().with_context(|| {
            format!("failed to start `{}`", self.display_command(project, args))
        })?;
        let pid = child.id();
        let (tx, rx) = mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let output = wait_collect(child);
            let _ = tx.send((output, start.elapsed()));
        });
        match rx.recv_timeout(timeout) {
            Ok((output, elapsed)) => {
                let _ = waiter.join();
                let (output, max_rss_kib) = output.with_context(|| {
                    format!("waiting for `{}`", self.display_command(project, args))
                })?;
                Ok(Timed::Done(Run {
                    elapsed,
                    output,
                    max_rss_kib,
                }))
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                kill_process_group(pid);
                let _ = rx.recv();
                let _ = waiter.join();
                Ok(Timed::TimedOut(start.elapsed()))
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(anyhow!(
                "lost the waiter thread of `{}`",
                self.display_command(project, args)
            )),
        }
    }

    /// Turn a finished [`Run`] of `args` into an error if it exited non-zero.
    pub fn check_success(&self, project: &Path, args: &[&str], run: Run) -> Result<Run> {
        if run.output.status.success() {
            Ok(run)
        } else {
            Err(RunFailed {
                command: self.display_command(project, args),
                status: run.output.status,
                stdout: String::from_utf8_lossy(&run.output.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&run.output.stderr).into_owned(),
            }
            .into())
        }
    }

    /// Like [`Tool::run`], but a non-zero exit becomes a [`RunFailed`] error
    /// carrying the captured output, since a benchmark of a failing command
    /// measures nothing useful.
    pub fn run_ok(&self, project: &Path, args: &[&str]) -> Result<Run> {
        let run = self.run(project, args)?;
        self.check_success(project, args, run)
    }

    /// Run `warmup` untimed then `runs` timed successful executions and
    /// return the timed wall times. Warm-up runs absorb one-off costs (page
    /// cache, first-run state creation) that would otherwise skew the min.
    pub fn bench(
        &self,
        project: &Path,
        args: &[&str],
        warmup: usize,
        runs: usize,
    ) -> Result<Vec<Duration>> {
        for _ in 0..warmup {
            self.run_ok(project, args).context("warm-up run failed")?;
        }
        (0..runs)
            .map(|i| {
                self.run_ok(project, args)
                    .map(|r| r.elapsed)
                    .with_context(|| format!("timed run {} of {runs} failed", i + 1))
            })
            .collect()
    }
}

/// Result of [`Tool::run_timeout`].
#[derive(Debug)]
pub enum Timed {
    /// The process exited (successfully or not) within the limit.
    Done(Run),
    /// The process was killed after this long.
    TimedOut(Duration),
}

/// SIGKILL the process group led by `pid` (our own child, started with
/// `process_group(0)`, so the group id is its pid).
fn kill_process_group(pid: u32) {
    #[cfg(unix)]
    {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{pid}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    #[cfg(not(unix))]
    {
        let _ = Command::new("taskkill")
            .args(["/F", "/T", "/PID", &pid.to_string()])
            .status();
    }
}

/// Wait for `child`, collecting its piped stdout and stderr, and its peak resident memory
/// where the platform reports it: the scale benchmark states memory next to time, and only
/// the waiting parent can read a finished child's peak.
fn wait_collect(mut child: std::process::Child) -> std::io::Result<(Output, Option<u64>)> {
    use std::io::Read;
    fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut bytes = vec![];
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            bytes
        })
    }
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let (status, rss) = wait_peak(&mut child)?;
    Ok((
        Output {
            status,
            stdout: out.join().unwrap_or_default(),
            stderr: err.join().unwrap_or_default(),
        },
        rss,
    ))
}

/// The exit status and peak resident set (KiB) of `child`, reaped with `wait4`.
#[cfg(unix)]
fn wait_peak(child: &mut std::process::Child) -> std::io::Result<(ExitStatus, Option<u64>)> {
    use std::os::unix::process::ExitStatusExt;
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill in
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: pid is our own unreaped child; both pointers outlive the call
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    // ru_maxrss is in KiB on Linux (bytes on macOS)
    let kib = if cfg!(target_os = "macos") {
        usage.ru_maxrss as u64 / 1024
    } else {
        usage.ru_maxrss as u64
    };
    Ok((ExitStatus::from_raw(status), Some(kib)))
}

#[cfg(not(unix))]
fn wait_peak(child: &mut std::process::Child) -> std::io::Result<(ExitStatus, Option<u64>)> {
    Ok((child.wait()?, None))
}

/// One completed process: its wall time and everything it printed. Kept
/// whole so later subcommands can also inspect output (e.g. plan summaries).
#[derive(Debug)]
pub struct Run {
    /// Wall time from spawn to exit, including output collection.
    pub elapsed: Duration,
    /// Exit status and captured stdout/stderr.
    pub output: Output,
    /// Peak resident memory of the process in KiB (`None` where the platform has no `wait4`).
    pub max_rss_kib: Option<u64>,
}

/// A timed command exited unsuccessfully. A dedicated error type so the
/// report shows the tool's own stderr verbatim rather than a generic message.
#[derive(Debug)]
pub struct RunFailed {
    /// The command line that failed.
    pub command: String,
    /// How it exited.
    pub status: ExitStatus,
    /// Its captured stdout (shown only if stderr is empty).
    pub stdout: String,
    /// Its captured stderr.
    pub stderr: String,
}

impl fmt::Display for RunFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` exited with {}", self.command, self.status)?;
        let (label, text) = if self.stderr.trim().is_empty() {
            ("stdout", self.stdout.trim_end())
        } else {
            ("stderr", self.stderr.trim_end())
        };
        if !text.is_empty() {
            write!(f, "\n--- {label} ---\n{text}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RunFailed {}

/// Summary statistics over timing samples, kept apart from process handling
/// so they are trivially unit-testable and shared by every subcommand.
pub mod stats {
    use std::time::Duration;

    /// Min / median / max / mean of a non-empty set of samples; the numbers
    /// every benchmark report prints.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct Summary {
        /// Number of samples summarised.
        pub count: usize,
        /// Fastest sample: the least noisy estimate of intrinsic cost.
        pub min: Duration,
        /// Median sample: the headline number, robust to outliers.
        pub median: Duration,
        /// Slowest sample: shows jitter / outliers.
        pub max: Duration,
        /// Arithmetic mean, for completeness in machine-readable output.
        pub mean: Duration,
    }

    impl Summary {
        /// Summarise `samples`; `None` when there are none, since a median of
        /// nothing is meaningless.
        pub fn from_samples(samples: &[Duration]) -> Option<Summary> {
            let mut sorted = samples.to_vec();
            sorted.sort();
            let min = *sorted.first()?;
            let max = *sorted.last()?;
            let total: Duration = sorted.iter().sum();
            Some(Summary {
                count: sorted.len(),
                min,
                median: median(samples)?,
                max,
                mean: total / sorted.len() as u32,
            })
        }
    }

    /// Median of unsorted samples (mean of the two middle values for an even
    /// count); `None` for no samples.
    pub fn median(samples: &[Duration]) -> Option<Duration> {
        let mut sorted = samples.to_vec();
        sorted.sort();
        median_of_sorted(&sorted)
    }

    fn median_of_sorted(sorted: &[Duration]) -> Option<Duration> {
        let n = sorted.len();
        match n {
            0 => None,
            _ if n % 2 == 1 => Some(sorted[n / 2]),
            _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2),
        }
    }

    /// Duration as fractional milliseconds, the unit all reports use.
    pub fn ms(d: Duration) -> f64 {
        d.as_secs_f64() * 1000.0
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn ms_list(v: &[u64]) -> Vec<Duration> {
            v.iter().map(|&m| Duration::from_millis(m)).collect()
        }

        #[test]
        fn median_odd_even_empty() {
            assert_eq!(median(&ms_list(&[3, 1, 2])), Some(Duration::from_millis(2)));
            assert_eq!(
                median(&ms_list(&[4, 1, 3, 2])),
                Some(Duration::from_micros(2500))
            );
            assert_eq!(median(&[]), None);
        }

        #[test]
        fn summary() {
            let s = Summary::from_samples(&ms_list(&[10, 30, 20, 40, 100])).unwrap();
            assert_eq!(s.count, 5);
            assert_eq!(s.min, Duration::from_millis(10));
            assert_eq!(s.median, Duration::from_millis(30));
            assert_eq!(s.max, Duration::from_millis(100));
            assert_eq!(s.mean, Duration::from_millis(40));
            assert!(Summary::from_samples(&[]).is_none());
            assert_eq!(ms(Duration::from_micros(1500)), 1.5);
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn efmesh_argv_puts_project_flag_first() {
        let tool = Tool::efmesh("/x/efmesh");
        let argv = tool.argv(Path::new("/p"), &["check"]);
        assert_eq!(argv, ["-C", "/p", "check"].map(OsString::from));
        assert_eq!(
            tool.display_command(Path::new("/p"), &["check"]),
            "/x/efmesh -C /p check"
        );
    }

    #[test]
    fn bench_runs_and_reports_failure() {
        let dir = tempfile::tempdir().unwrap();
        let ok = Tool {
            name: "true".into(),
            program: "true".into(),
            project_flag: None,
        };
        let samples = ok.bench(dir.path(), &[], 1, 3).unwrap();
        assert_eq!(samples.len(), 3);

        let bad = Tool {
            name: "sh".into(),
            program: "sh".into(),
            project_flag: None,
        };
        let err = bad
            .bench(dir.path(), &["-c", "echo boom >&2; exit 3"], 0, 2)
            .unwrap_err();
        let failed = err.downcast_ref::<RunFailed>().expect("RunFailed in chain");
        assert_eq!(failed.status.code(), Some(3));
        assert!(failed.to_string().contains("boom"), "{failed}");
    }

    #[test]
    fn run_timeout_finishes_or_kills() {
        let dir = tempfile::tempdir().unwrap();
        let sh = Tool {
            name: "sh".into(),
            program: "sh".into(),
            project_flag: None,
        };
        match sh
            .run_timeout(dir.path(), &["-c", "echo hi"], Duration::from_secs(10))
            .unwrap()
        {
            Timed::Done(run) => {
                assert_eq!(String::from_utf8_lossy(&run.output.stdout), "hi\n");
                assert!(run.max_rss_kib.is_some_and(|k| k > 0));
            }
            Timed::TimedOut(_) => panic!("echo timed out"),
        }
        let started = Instant::now();
        // the grandchild `sleep` holds the pipes open: killing only `sh` would hang
        match sh
            .run_timeout(
                dir.path(),
                &["-c", "sleep 30 | cat"],
                Duration::from_millis(200),
            )
            .unwrap()
        {
            Timed::TimedOut(after) => assert!(after >= Duration::from_millis(200)),
            Timed::Done(_) => panic!("sleep finished"),
        }
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn sqlmesh_argv() {
        let tool = Tool::sqlmesh("sqlmesh");
        assert_eq!(
            tool.display_command(Path::new("/p"), &["plan", "dev"]),
            "sqlmesh -p /p plan dev"
        );
    }
}
