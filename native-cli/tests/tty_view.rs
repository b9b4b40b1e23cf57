//! The terminal view of `apply` and `run` through the real binary, its stdout and stderr on a
//! pseudo-terminal this test opens itself (`openpty`): one line per model when it finishes, a
//! live bar per running model, a closing summary, and no per-batch log lines unless the level
//! is `debug`. Off a terminal (a pipe) the logs stay logfmt, with no bars.
//!
//! What the terminal shows is read back through a small terminal model (carriage return, line
//! feed, cursor up and down, erase line and screen), so the assertions see the screen a person
//! sees, not the redraws in between.

mod common;
use common::*;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The clock of every hospital apply: `med.moves` has 48 weekly batches,
/// `med.patient_history` 336 and `mart.latest_department` 1.
const HOSPITAL_NOW: &str = "2026-12-03T00:00:00Z";

/// The terminal's width, given both as the pty's window size and as `COLUMNS`.
const COLUMNS: u16 = 160;

/// One test at a time: a process another test spawns while a pty is open could inherit its
/// slave (before it is marked close-on-exec) and keep the master from ever seeing the end.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A copy of `examples/hospital` without the state, database and lake of earlier runs.
fn hospital() -> tempfile::TempDir {
    copy_example("hospital")
}

/// A FULL root and a day-interval child: 28 batches of one day at 2026-01-29.
fn small() -> tempfile::TempDir {
    project(&[
        (
            "models/raw.sql",
            "MODEL (name raw.events, kind FULL, columns (id BIGINT, ts TIMESTAMP));\nSELECT range AS id, TIMESTAMP '2026-01-01' + to_hours(range) AS ts FROM range(2400)",
        ),
        (
            "models/daily.sql",
            "MODEL (name m.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, batch_size 1), start '2026-01-01', columns (id BIGINT, ts TIMESTAMP));\nSELECT id, ts FROM raw.events WHERE ts >= @start AND ts < @end",
        ),
    ])
}

const SMALL_NOW: &str = "2026-01-29T00:00:00Z";

/// Mark `fd` close-on-exec, so only the child it is handed to holds it.
fn cloexec(fd: &OwnedFd) {
    // SAFETY: fcntl on a descriptor we own
    let rc = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) };
    assert_eq!(
        rc,
        0,
        "fcntl(FD_CLOEXEC): {}",
        std::io::Error::last_os_error()
    );
}

/// What a run at the terminal left: its exit code and every byte it wrote there.
struct AtTty {
    code: Option<i32>,
    raw: String,
}

/// Run efmesh with `args` in `dir`, stdout and stderr on a fresh pseudo-terminal
/// (`TERM=xterm`, [`COLUMNS`] wide), stdin closed; read the terminal until the process exits.
fn at_a_tty(dir: &Path, args: &[&str], now: &str) -> AtTty {
    let (mut master, mut slave) = (-1, -1);
    let size = libc::winsize {
        ws_row: 50,
        ws_col: COLUMNS,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes two descriptors; no name buffer, default terminal settings
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &size,
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened and belong to nothing else
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    cloexec(&master);
    cloexec(&slave);
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("efmesh"));
    cmd.current_dir(dir)
        .args(args)
        .env_remove("NO_COLOR")
        .env_remove("EFMESH_LOG_FORMAT")
        .env_remove("RUST_LOG")
        .env("EFMESH_NOW", now)
        .env("TERM", "xterm")
        .env("COLUMNS", COLUMNS.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave));
    let mut child = cmd.spawn().expect("efmesh starts");
    // the child holds the slave now: once it exits, reading the master ends (EIO)
    drop(cmd);
    let reader = std::thread::spawn(move || {
        let mut file = std::fs::File::from(master);
        let mut out = vec![];
        let mut buf = [0u8; 8192];
        loop {
            match file.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
        }
        out
    });
    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("efmesh {args:?} did not finish within 300s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let raw = reader.join().unwrap();
    AtTty {
        code: status.code(),
        raw: String::from_utf8_lossy(&raw).into_owned(),
    }
}

/// The terminal after `raw` was written to it: one string per line, trailing blanks dropped,
/// and the most bar lines (`| model [...]`, `/ model building, ...`) it ever showed at once.
fn screen(raw: &str) -> (Vec<String>, usize) {
    let mut rows: Vec<Vec<char>> = vec![vec![]];
    let (mut row, mut col) = (0usize, 0usize);
    let mut most_bars = 0;
    let mut it = raw.chars().peekable();
    let bars_from = |rows: &[Vec<char>], row: usize| {
        rows[row..]
            .iter()
            .take_while(|r| is_bar(&r.iter().collect::<String>()))
            .count()
    };
    while let Some(c) = it.next() {
        match c {
            '\u{1b}' => match it.next() {
                Some('[') => {
                    let mut params = String::new();
                    let mut fin = None;
                    for c in it.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&c) {
                            fin = Some(c);
                            break;
                        }
                        params.push(c);
                    }
                    let n = |default: usize| {
                        params
                            .trim_start_matches('?')
                            .split(';')
                            .next()
                            .and_then(|p| p.parse().ok())
                            .unwrap_or(default)
                    };
                    // any cursor movement or erase cancels a pending wrap
                    col = col.min(usize::from(COLUMNS) - 1);
                    match fin {
                        Some('A') => {
                            // a redraw of several bars starts by going back up over them
                            most_bars = most_bars.max(bars_from(&rows, row.saturating_sub(n(1))));
                            row = row.saturating_sub(n(1));
                        }
                        Some('B') => row += n(1),
                        Some('C') => col += n(1),
                        Some('D') => col = col.saturating_sub(n(1)),
                        Some('G') => col = n(1).saturating_sub(1),
                        Some('K') => {
                            while rows.len() <= row {
                                rows.push(vec![]);
                            }
                            let r = &mut rows[row];
                            match n(0) {
                                0 => r.truncate(col),
                                1 => r.iter_mut().take(col + 1).for_each(|c| *c = ' '),
                                _ => r.clear(),
                            }
                        }
                        Some('J') => {
                            rows.truncate(row + 1);
                            if let Some(r) = rows.get_mut(row) {
                                r.truncate(col);
                            }
                        }
                        _ => {} // colors, cursor visibility
                    }
                }
                Some(']') => {
                    // an OSC string, up to BEL or ESC \
                    while let Some(c) = it.next() {
                        if c == '\u{7}' || (c == '\u{1b}' && it.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\r' => col = 0,
            '\n' => {
                most_bars = most_bars.max(bars_from(&rows, row.min(rows.len() - 1)));
                row += 1;
            }
            '\u{8}' => col = col.saturating_sub(1),
            c if c.is_control() => {}
            c => {
                // the wrap a terminal defers after its last column happens on the next glyph
                if col >= usize::from(COLUMNS) {
                    row += 1;
                    col = 0;
                }
                while rows.len() <= row {
                    rows.push(vec![]);
                }
                let r = &mut rows[row];
                while r.len() < col {
                    r.push(' ');
                }
                if col < r.len() {
                    r[col] = c;
                } else {
                    r.push(c);
                }
                col += 1;
            }
        }
        while rows.len() <= row {
            rows.push(vec![]);
        }
    }
    let lines = rows
        .into_iter()
        .map(|r| r.into_iter().collect::<String>().trim_end().to_string())
        .collect();
    (lines, most_bars)
}

/// A running model's bar: its spinner, the model, then its batches or the time it builds.
fn is_bar(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let (Some(spinner), Some(model), Some(next)) = (words.next(), words.next(), words.next())
    else {
        return false;
    };
    spinner.chars().count() == 1
        && "|/-\\".contains(spinner)
        && model.contains('.')
        && (next.starts_with('[') || next == "building,")
}

/// Everything written to the terminal, escapes removed, redraws left in: what was ever shown.
fn stripped(raw: &str) -> String {
    let mut out = String::new();
    let mut it = raw.chars();
    while let Some(c) = it.next() {
        if c == '\u{1b}' {
            if it.next() == Some('[') {
                for c in it.by_ref() {
                    if ('\u{40}'..='\u{7e}').contains(&c) {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// A model's closing line: its status, the model, its batches if any, how long it took.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ModelLine {
    status: String,
    model: String,
    batches: Option<u64>,
    took: Option<String>,
}

fn is_duration(s: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    if let Some(ms) = s.strip_suffix("ms") {
        return digits(ms);
    }
    if let Some((m, sec)) = s.strip_suffix('s').and_then(|r| r.split_once('m')) {
        return digits(m) && sec.len() == 2 && digits(sec);
    }
    match s.strip_suffix('s').and_then(|r| r.split_once('.')) {
        Some((whole, tenth)) => digits(whole) && tenth.len() == 1 && digits(tenth),
        None => false,
    }
}

fn model_line(line: &str) -> Option<ModelLine> {
    let w: Vec<&str> = line.split_whitespace().collect();
    let status = *w.first()?;
    if !["built", "backfilled", "reused", "failed"].contains(&status) {
        return None;
    }
    // a reused model took no time of this run's: its line is the word and the model
    let (batches, took) = match w.len() {
        2 if status == "reused" => (None, None),
        3 => (None, Some(w[2])),
        5 if ["batch", "batches"].contains(&w[3]) => (Some(w[2].parse().ok()?), Some(w[4])),
        _ => return None,
    };
    (w[1].contains('.') && took.is_none_or(is_duration)).then(|| ModelLine {
        status: status.into(),
        model: w[1].into(),
        batches,
        took: took.map(str::to_string),
    })
}

/// The closing summary: (built, backfilled, reused, failed).
fn summary(line: &str) -> Option<(u64, u64, u64, u64)> {
    let (counts, took) = line.rsplit_once(" in ")?;
    if !is_duration(took) {
        return None;
    }
    let mut n = [None; 4];
    for part in counts.split(", ") {
        let (k, what) = part.split_once(' ')?;
        let slot = ["built", "backfilled", "reused", "failed"]
            .iter()
            .position(|w| *w == what)?;
        n[slot] = Some(k.parse().ok()?);
    }
    Some((n[0]?, n[1].unwrap_or(0), n[2]?, n[3]?))
}

/// What one run at the terminal showed.
struct View {
    lines: Vec<String>,
    models: Vec<ModelLine>,
    summaries: Vec<(u64, u64, u64, u64)>,
    most_bars: usize,
    stripped: String,
}

fn view(run: &AtTty) -> View {
    let (lines, most_bars) = screen(&run.raw);
    View {
        models: lines.iter().filter_map(|l| model_line(l)).collect(),
        summaries: lines.iter().filter_map(|l| summary(l)).collect(),
        most_bars,
        stripped: stripped(&run.raw),
        lines,
    }
}

impl View {
    /// The models with `status`, sorted.
    fn with(&self, status: &str) -> Vec<&str> {
        let mut m: Vec<&str> = self
            .models
            .iter()
            .filter(|l| l.status == status)
            .map(|l| l.model.as_str())
            .collect();
        m.sort();
        m
    }

    fn text(&self) -> String {
        self.lines.join("\n")
    }

    /// No log line of a model's or a batch's progress: the view says it instead.
    fn assert_no_progress_logs(&self) {
        for l in self.lines.iter().filter(|l| model_line(l).is_none()) {
            assert!(
                !l.contains("batch=\"")
                    && !l.contains("backfilling")
                    && !l.contains("backfilled ")
                    && !l.contains(" INFO building")
                    && !l.contains(" INFO built"),
                "a progress log line at the default level: {l}\n{}",
                self.text()
            );
        }
    }
}

/// The ten hospital models with physics (`med.patient_age` is EMBEDDED: inlined, never built).
const HOSPITAL_BUILT: [&str; 10] = [
    "mart.daily_admissions",
    "mart.department_load",
    "mart.latest_department",
    "mart.stays",
    "med.moves",
    "med.moves_enriched",
    "med.patient_history",
    "raw.movements",
    "raw.patients",
    "ref.departments",
];

#[test]
fn apply_at_a_terminal_shows_a_line_per_model_bars_and_a_summary() {
    let _one = serial();
    let p = hospital();

    // 1. the first apply to dev builds the ten models with physics
    let run = at_a_tty(p.path(), &["apply", "dev", "--yes"], HOSPITAL_NOW);
    assert_eq!(run.code, Some(0), "{}", run.raw);
    let v = view(&run);
    assert_eq!(v.with("built"), HOSPITAL_BUILT, "{}", v.text());
    assert_eq!(v.models.len(), 10, "one line per model:\n{}", v.text());
    let batches = |m: &str| v.models.iter().find(|l| l.model == m).unwrap().batches;
    assert_eq!(batches("med.patient_history"), Some(336), "{}", v.text());
    assert_eq!(batches("med.moves"), Some(48), "{}", v.text());
    assert_eq!(batches("mart.latest_department"), Some(1), "{}", v.text());
    assert_eq!(batches("mart.stays"), None, "built whole:\n{}", v.text());
    assert_eq!(v.summaries, [(10, 0, 0, 0)], "{}", v.text());
    v.assert_no_progress_logs();
    // a bar was drawn for the long backfill, and moved
    assert!(
        v.stripped.contains("med.patient_history [") && v.stripped.contains("/336 batches"),
        "{}",
        v.stripped
    );
    assert!(
        (1..336).any(|k| v.stripped.contains(&format!("] {k}/336 batches"))),
        "the bar advances:\n{}",
        v.stripped
    );
    // and taken off the screen: what stays is the lines, the other logs and the report
    assert!(
        v.lines.iter().all(|l| !is_bar(l)),
        "no bar left behind:\n{}",
        v.text()
    );
    assert!(
        v.lines.iter().any(|l| l.contains("INFO promoted")),
        "other logs still show:\n{}",
        v.text()
    );
    let summary_at = v.lines.iter().position(|l| summary(l).is_some()).unwrap();
    let last_model = v
        .lines
        .iter()
        .rposition(|l| model_line(l).is_some())
        .unwrap();
    assert!(last_model < summary_at, "the summary closes:\n{}", v.text());
    assert!(
        v.lines[summary_at + 1..]
            .iter()
            .any(|l| l.starts_with("Applied to `dev`: built 10 physical table(s)")),
        "{}",
        v.text()
    );

    // 2. prod gets the same versions: nothing is computed, all ten are reused
    let run = at_a_tty(p.path(), &["apply", "prod", "--yes"], HOSPITAL_NOW);
    assert_eq!(run.code, Some(0), "{}", run.raw);
    let v = view(&run);
    assert_eq!(v.with("reused"), HOSPITAL_BUILT, "{}", v.text());
    assert_eq!(v.models.len(), 10, "{}", v.text());
    assert_eq!(v.summaries, [(0, 0, 10, 0)], "{}", v.text());
    assert!(
        v.models
            .iter()
            .all(|l| l.batches.is_none() && l.took.is_none()),
        "a reused model computed nothing and took no time:\n{}",
        v.text()
    );

    // 3. dev again, nothing changed: no work, so no model line and no summary
    let run = at_a_tty(p.path(), &["apply", "dev", "--yes"], HOSPITAL_NOW);
    assert_eq!(run.code, Some(0), "{}", run.raw);
    let v = view(&run);
    assert!(v.lines.iter().any(|l| l == "No changes."), "{}", v.text());
    assert!(
        v.models.is_empty() && v.summaries.is_empty(),
        "{}",
        v.text()
    );

    // 4. a column added to mart.stays: a non-breaking change, so it is rebuilt and its two
    // FULL children keep their physics (the plan says `indirect`, no `[build]`)
    let stays = p.path().join("models/mart/stays.sql");
    let text = std::fs::read_to_string(&stays).unwrap();
    let text = text
        .replace(
            "    is_current BOOLEAN\n",
            "    is_current BOOLEAN,\n    stay_days DOUBLE\n",
        )
        .replace(
            "  o.left_at IS NULL AS is_current\n",
            "  o.left_at IS NULL AS is_current,\n  date_diff('minute', o.entered_at, COALESCE(o.left_at, o.feed_end)) / 1440.0 AS stay_days\n",
        );
    std::fs::write(&stays, text).unwrap();
    let plan = efmesh(p.path())
        .env("EFMESH_NOW", HOSPITAL_NOW)
        .args(["plan", "dev", "--json"])
        .output()
        .unwrap();
    let plan = json(&plan.stdout);
    let build: Vec<&str> = plan["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["build"] == true)
        .map(|a| a["model"].as_str().unwrap())
        .collect();
    assert_eq!(build, ["mart.stays"], "{plan}");
    let run = at_a_tty(p.path(), &["apply", "dev", "--yes"], HOSPITAL_NOW);
    assert_eq!(run.code, Some(0), "{}", run.raw);
    let v = view(&run);
    assert_eq!(v.with("built"), ["mart.stays"], "{}", v.text());
    assert_eq!(
        v.with("reused"),
        ["mart.daily_admissions", "mart.department_load"],
        "{}",
        v.text()
    );
    assert_eq!(v.models.len(), 3, "{}", v.text());
    assert_eq!(v.summaries, [(1, 0, 2, 0)], "{}", v.text());
    v.assert_no_progress_logs();
}

#[test]
fn with_jobs_2_bars_run_side_by_side_and_every_model_gets_its_line() {
    let _one = serial();
    let p = hospital();
    let run = at_a_tty(
        p.path(),
        &["apply", "dev", "--yes", "--jobs", "2"],
        HOSPITAL_NOW,
    );
    assert_eq!(run.code, Some(0), "{}", run.raw);
    let v = view(&run);
    assert_eq!(v.with("built"), HOSPITAL_BUILT, "{}", v.text());
    assert_eq!(v.models.len(), 10, "{}", v.text());
    assert_eq!(v.summaries, [(10, 0, 0, 0)], "{}", v.text());
    v.assert_no_progress_logs();
    assert!(
        v.most_bars >= 2,
        "two models building at once show two bars (at most {} seen):\n{}",
        v.most_bars,
        v.stripped
    );
    assert!(v.lines.iter().all(|l| !is_bar(l)), "{}", v.text());
}

#[test]
fn log_level_debug_shows_the_batch_lines_under_the_view() {
    let _one = serial();
    let p = small();
    let run = at_a_tty(
        p.path(),
        &["--log-level", "debug", "apply", "dev", "--yes"],
        SMALL_NOW,
    );
    assert_eq!(run.code, Some(0), "{}", run.raw);
    let v = view(&run);
    let batch_lines: Vec<&String> = v
        .lines
        .iter()
        .filter(|l| l.contains("backfilling") && l.contains("batch=\""))
        .collect();
    assert_eq!(batch_lines.len(), 28, "{}", v.text());
    assert!(
        // under debug the event sits in its `model` span: `INFO model: built model="…"`
        v.lines
            .iter()
            .any(|l| l.contains(" INFO ") && l.contains(" built model=\"")),
        "{}",
        v.text()
    );
    // the view is there too
    assert_eq!(v.with("built"), ["m.daily", "raw.events"], "{}", v.text());
    assert_eq!(v.summaries, [(2, 0, 0, 0)], "{}", v.text());

    // the same apply at the default level: the view alone
    let p = small();
    let run = at_a_tty(p.path(), &["apply", "dev", "--yes"], SMALL_NOW);
    let v = view(&run);
    assert_eq!(v.with("built"), ["m.daily", "raw.events"], "{}", v.text());
    v.assert_no_progress_logs();
}

#[test]
fn a_run_tick_at_a_terminal_shows_backfilled_models() {
    let _one = serial();
    let p = small();
    efmesh(p.path())
        .env("EFMESH_NOW", SMALL_NOW)
        .args(["apply", "dev", "--yes"])
        .assert()
        .success();
    // a week later: m.daily has 7 new days; raw.events (FULL, `@daily`) is due and rebuilt
    let run = at_a_tty(p.path(), &["run", "dev"], "2026-02-05T00:00:00Z");
    assert_eq!(run.code, Some(0), "{}", run.raw);
    let v = view(&run);
    assert_eq!(v.with("backfilled"), ["m.daily"], "{}", v.text());
    assert_eq!(v.with("built"), ["raw.events"], "{}", v.text());
    let daily = v.models.iter().find(|l| l.model == "m.daily").unwrap();
    assert_eq!(daily.batches, Some(7), "{}", v.text());
    assert_eq!(v.summaries, [(1, 1, 0, 0)], "{}", v.text());
    v.assert_no_progress_logs();
    assert!(
        v.lines
            .iter()
            .any(|l| l
                == "`dev`: computed 7 batch(es) of 1 model(s), rebuilt 1 model(s) on their cron"),
        "{}",
        v.text()
    );
}

#[test]
fn a_failed_model_is_named_and_counted() {
    let _one = serial();
    let p = project(&[
        (
            "models/a.sql",
            "MODEL (name s.a, kind FULL, columns (id INT));\nSELECT 1 AS id",
        ),
        (
            "models/b.sql",
            "MODEL (name s.b, kind FULL, columns (id INT));\nSELECT CAST('x' AS INT) AS id FROM s.a",
        ),
    ]);
    let run = at_a_tty(p.path(), &["apply", "dev", "--yes"], SMALL_NOW);
    assert_eq!(run.code, Some(1), "{}", run.raw);
    let v = view(&run);
    assert_eq!(v.with("built"), ["s.a"], "{}", v.text());
    assert_eq!(v.with("failed"), ["s.b"], "{}", v.text());
    assert_eq!(v.summaries, [(1, 0, 0, 1)], "{}", v.text());
    assert!(
        v.lines.iter().any(|l| l.starts_with("error:")),
        "{}",
        v.text()
    );
}

#[test]
fn off_a_terminal_the_logs_stay_logfmt_without_bars() {
    let _one = serial();
    let p = small();
    let out = efmesh(p.path())
        .env("EFMESH_NOW", SMALL_NOW)
        .env_remove("EFMESH_LOG_FORMAT")
        .args(["apply", "dev", "--yes"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.is_empty());
    for l in stderr.lines() {
        assert!(
            l.starts_with("ts=") && l.contains(" level=") && l.contains(" msg="),
            "not logfmt: {l}\n{stderr}"
        );
    }
    let msgs = |m: &str| {
        stderr
            .lines()
            .filter(|l| l.contains(&format!(" msg={m} ")))
            .count()
    };
    assert_eq!(msgs("backfilling"), 28, "{stderr}");
    assert_eq!(msgs("backfilled"), 28, "{stderr}");
    assert_eq!(msgs("building"), 2, "{stderr}");
    assert_eq!(msgs("built"), 2, "{stderr}");
    assert!(
        !stderr.contains('\r') && !stderr.contains('\u{1b}'),
        "no redraws, no escapes:\n{stderr}"
    );
    assert!(
        !stderr.contains("batches, ETA") && !stderr.contains("building,"),
        "no bar:\n{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    for text in [&stderr, &stdout] {
        assert!(
            text.lines()
                .all(|l| model_line(l).is_none() && summary(l).is_none()),
            "no view off a terminal:\n{text}"
        );
    }
}

#[test]
fn the_terminal_model_reads_redraws_as_a_person_sees_them() {
    let raw = "one\r\n| a.b [==>  ] 1/4 batches, ETA 1s\r\n/ c.d building, 0s\u{1b}[1A\r\u{1b}[2Kbuilt      a.b   4 batches   1.2s\r\n\u{1b}[2K\u{1b}[32mdone\u{1b}[0m\r\n";
    let (lines, most) = screen(raw);
    assert_eq!(
        lines,
        ["one", "built      a.b   4 batches   1.2s", "done", ""]
    );
    assert_eq!(most, 2);
    assert_eq!(
        model_line(&lines[1]),
        Some(ModelLine {
            status: "built".into(),
            model: "a.b".into(),
            batches: Some(4),
            took: Some("1.2s".into()),
        })
    );
    // a line as wide as the terminal leaves the cursor at its end: the next glyph wraps, a
    // carriage return or a cursor move does not
    let w = usize::from(COLUMNS);
    let full = format!("| a.b building, 0s{}", " ".repeat(w - 18));
    let (lines, _) = screen(&format!("{full}/ a.b building, 0s{}", " ".repeat(w - 18)));
    assert_eq!(lines, ["| a.b building, 0s", "/ a.b building, 0s"]);
    let (lines, _) = screen(&format!("{full}\r\u{1b}[2Kbuilt      a.b   1ms\r\n"));
    assert_eq!(lines, ["built      a.b   1ms", ""]);
    assert_eq!(
        summary("3 built, 2 reused, 0 failed in 2m05s"),
        Some((3, 0, 2, 0))
    );
    assert_eq!(
        summary("3 built, 1 backfilled, 2 reused, 0 failed in 40ms"),
        Some((3, 1, 2, 0))
    );
    assert_eq!(summary("Applied to `dev` in 3s"), None);
}
