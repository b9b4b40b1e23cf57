//! Logs through the real binary: one logfmt line per event off a terminal, colored text and a
//! backfill progress bar at one (util-linux `script` gives efmesh a pseudo-terminal).
//! `EFMESH_NOW` pins the clock, so the daily model below backfills 28 days in batches of 7.

mod common;
use common::*;
use std::path::Path;

const RAW: (&str, &str) = (
    "models/raw.sql",
    "MODEL (name raw.events, kind FULL, columns (id BIGINT, ts TIMESTAMP));\nSELECT range AS id, TIMESTAMP '2026-01-01' + to_hours(range) AS ts FROM range(2400)",
);

/// A day-interval model backfilled in batches of `batch_size` days, with a non-blocking audit
/// that finds violations (so there are warn lines too).
fn daily(batch_size: u32) -> (&'static str, String) {
    (
        "models/daily.sql",
        format!(
            "MODEL (name m.daily, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, batch_size {batch_size}), start '2026-01-01', audits (forall(criteria := (id < 10), blocking := false, scope := 'per_interval')), columns (id BIGINT, ts TIMESTAMP));\nSELECT id, ts FROM raw.events WHERE ts >= @start AND ts < @end"
        ),
    )
}

const NOW: &str = "2026-01-29T00:00:00Z";

fn backfill_project(batch_size: u32) -> tempfile::TempDir {
    let (path, text) = daily(batch_size);
    project(&[RAW, (path, &text)])
}

/// Run `apply dev --yes` with `args` off a terminal; (stdout, stderr).
fn apply(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (String, String) {
    let mut cmd = efmesh(dir);
    cmd.env("EFMESH_NOW", NOW).env_remove("EFMESH_LOG_FORMAT");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .args(["apply", "dev", "--yes"])
        .args(args)
        .assert()
        .success();
    let o = out.get_output();
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A strict logfmt parser: `key=value` pairs separated by single spaces, keys bare, values
/// bare (no space, `"` or `=`) or double-quoted with `\"`, `\\`, `\n`, `\r`, `\t`, `\uXXXX`.
fn logfmt(line: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = vec![];
    let mut it = line.chars().peekable();
    loop {
        let mut key = String::new();
        while let Some(&c) = it.peek() {
            if c == '=' {
                break;
            }
            if c <= ' ' || c == '"' || c == '\\' {
                return Err(format!("bad key character {c:?} in {line:?}"));
            }
            key.push(c);
            it.next();
        }
        if key.is_empty() || it.next() != Some('=') {
            return Err(format!("expected key= in {line:?}"));
        }
        let mut value = String::new();
        if it.peek() == Some(&'"') {
            it.next();
            loop {
                match it.next() {
                    None => return Err(format!("unterminated quote in {line:?}")),
                    Some('"') => break,
                    Some('\\') => match it.next() {
                        Some('"') => value.push('"'),
                        Some('\\') => value.push('\\'),
                        Some('n') => value.push('\n'),
                        Some('r') => value.push('\r'),
                        Some('t') => value.push('\t'),
                        Some('u') => {
                            let hex: String = it.by_ref().take(4).collect();
                            let c = u32::from_str_radix(&hex, 16)
                                .ok()
                                .and_then(char::from_u32)
                                .ok_or_else(|| format!("bad \\u escape in {line:?}"))?;
                            value.push(c);
                        }
                        other => return Err(format!("bad escape {other:?} in {line:?}")),
                    },
                    Some(c) if c.is_control() => {
                        return Err(format!("raw control character in {line:?}"))
                    }
                    Some(c) => value.push(c),
                }
            }
        } else {
            while let Some(&c) = it.peek() {
                if c == ' ' {
                    break;
                }
                if c < ' ' || c == '"' || c == '=' || c.is_control() {
                    return Err(format!("bad bare value character {c:?} in {line:?}"));
                }
                value.push(c);
                it.next();
            }
            if value.is_empty() {
                return Err(format!("empty bare value in {line:?}"));
            }
        }
        out.push((key, value));
        match it.next() {
            None => return Ok(out),
            Some(' ') if it.peek().is_some_and(|&c| c != ' ') => {}
            other => return Err(format!("expected one space, found {other:?} in {line:?}")),
        }
    }
}

/// Every stderr line as logfmt (panicking on one that is not), with `ts`, `level`, `msg` first.
fn events(stderr: &str) -> Vec<Vec<(String, String)>> {
    stderr
        .lines()
        .map(|l| {
            let f = logfmt(l).unwrap_or_else(|e| panic!("not logfmt: {e}\n{stderr}"));
            let keys: Vec<&str> = f.iter().take(3).map(|(k, _)| k.as_str()).collect();
            assert_eq!(keys, ["ts", "level", "msg"], "{l}");
            f
        })
        .collect()
}

fn get<'a>(e: &'a [(String, String)], key: &str) -> Option<&'a str> {
    e.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

fn with_msg<'a>(evs: &'a [Vec<(String, String)>], msg: &str) -> Vec<&'a Vec<(String, String)>> {
    evs.iter().filter(|e| get(e, "msg") == Some(msg)).collect()
}

#[test]
fn off_a_terminal_every_log_line_is_logfmt_with_structured_fields() {
    let p = backfill_project(7);
    let (_, stderr) = apply(p.path(), &[], &[]);
    assert!(!stderr.contains('\u{1b}'), "no ANSI escapes:\n{stderr}");
    assert!(!stderr.contains('\r'), "no bar redraws:\n{stderr}");
    assert!(!stderr.contains("ETA"), "no progress bar:\n{stderr}");
    let evs = events(&stderr);
    for e in &evs {
        let ts = get(e, "ts").unwrap();
        assert!(
            ts.len() == 24 && ts.ends_with('Z') && ts.as_bytes()[10] == b'T',
            "{ts}"
        );
        assert!(
            ["error", "warn", "info", "debug", "trace"].contains(&get(e, "level").unwrap()),
            "{e:?}"
        );
    }
    // builds: start and finish, with model, env and a duration
    let built = with_msg(&evs, "built");
    assert_eq!(built.len(), 2, "raw.events and m.daily:\n{stderr}");
    for e in &built {
        assert!(get(e, "model").is_some(), "{e:?}");
        assert_eq!(get(e, "env"), Some("dev"), "{e:?}");
        get(e, "duration_ms").unwrap().parse::<u64>().unwrap();
    }
    for e in with_msg(&evs, "building") {
        assert_eq!(get(e, "env"), Some("dev"), "{e:?}");
    }
    // batches: 28 days in batches of 7, numbered k/n, each with its interval
    let batches = with_msg(&evs, "backfilling");
    assert_eq!(batches.len(), 4, "{stderr}");
    for (k, e) in batches.iter().enumerate() {
        assert_eq!(get(e, "model"), Some("m.daily"));
        assert_eq!(get(e, "env"), Some("dev"));
        assert_eq!(get(e, "batch"), Some(format!("{}/4", k + 1).as_str()));
        let interval = get(e, "interval").unwrap();
        assert!(
            interval.starts_with("[2026-01-") && interval.ends_with("Z)"),
            "{interval}"
        );
    }
    assert_eq!(
        get(batches[0], "interval"),
        Some("[2026-01-01T00:00:00Z, 2026-01-08T00:00:00Z)")
    );
    // the non-blocking audit: warn, with model, audit and interval
    let warned = with_msg(&evs, "audit found violations (non-blocking)");
    assert!(!warned.is_empty(), "{stderr}");
    for e in warned {
        assert_eq!(get(e, "level"), Some("warn"));
        assert_eq!(get(e, "model"), Some("m.daily"));
        assert!(get(e, "audit").unwrap().starts_with("forall"));
        assert!(get(e, "interval").unwrap().starts_with('['), "{e:?}");
    }
    // promotion
    let promoted = with_msg(&evs, "promoted");
    assert_eq!(promoted.len(), 1, "{stderr}");
    assert_eq!(get(promoted[0], "env"), Some("dev"));
    assert!(get(promoted[0], "views").unwrap().parse::<u64>().unwrap() > 0);
}

#[test]
fn log_level_debug_shows_each_statement_and_warn_hides_info() {
    let p = backfill_project(7);
    let (_, stderr) = apply(p.path(), &["--log-level", "debug"], &[]);
    let evs = events(&stderr);
    let sql: Vec<_> = evs.iter().filter(|e| get(e, "sql").is_some()).collect();
    assert!(
        sql.iter().any(|e| get(e, "model") == Some("m.daily")
            && get(e, "sql").unwrap().starts_with("INSERT INTO")),
        "a debug line carries each statement a model runs, with the model:\n{stderr}"
    );
    assert!(sql.iter().all(|e| get(e, "level") == Some("debug")));

    let p = backfill_project(7);
    let (_, stderr) = apply(p.path(), &["--log-level", "warn"], &[]);
    let evs = events(&stderr);
    assert!(!evs.is_empty(), "the audit warns:\n{stderr}");
    assert!(
        evs.iter()
            .all(|e| matches!(get(e, "level"), Some("warn" | "error"))),
        "{stderr}"
    );
}

#[test]
fn json_prints_one_object_and_logs_stay_on_stderr() {
    let p = backfill_project(7);
    let (stdout, stderr) = apply(p.path(), &["--json"], &[]);
    let v = json(stdout.as_bytes());
    assert_eq!(v["batches"].as_array().unwrap().len(), 4);
    assert_eq!(with_msg(&events(&stderr), "backfilling").len(), 4);
}

#[test]
fn efmesh_log_format_forces_a_format() {
    let p = backfill_project(7);
    let (_, stderr) = apply(p.path(), &[], &[("EFMESH_LOG_FORMAT", "pretty")]);
    assert!(
        stderr.lines().any(|l| l.contains("backfilling")),
        "{stderr}"
    );
    assert!(
        stderr.lines().all(|l| logfmt(l).is_err()),
        "pretty is not logfmt:\n{stderr}"
    );
    assert!(!stderr.contains('\u{1b}'), "no color off a terminal");

    let p = backfill_project(7);
    let (_, stderr) = apply(p.path(), &[], &[("EFMESH_LOG_FORMAT", "yaml")]);
    let evs = events(&stderr);
    let unknown = &evs[0];
    assert_eq!(get(unknown, "level"), Some("warn"), "{stderr}");
    assert_eq!(get(unknown, "value"), Some("yaml"), "{stderr}");
}

/// Run efmesh under a pseudo-terminal; everything it wrote to the terminal (stdout and
/// stderr both).
fn at_a_terminal(dir: &Path, args: &str, env: &[(&str, &str)]) -> String {
    let bin = assert_cmd::cargo::cargo_bin("efmesh");
    let mut cmd = std::process::Command::new("script");
    cmd.current_dir(dir)
        .args(["-qec", &format!("{} {args}", bin.display()), "/dev/null"])
        .env_remove("NO_COLOR")
        .env_remove("EFMESH_LOG_FORMAT")
        .env_remove("RUST_LOG")
        .env("EFMESH_NOW", NOW)
        .env("TERM", "xterm-256color")
        .stdin(std::process::Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .output()
        .expect("util-linux `script` runs efmesh under a terminal");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// An SGR (color or bold) escape: `ESC [ digits ; ... m`.
fn has_sgr(text: &str) -> bool {
    text.split('\u{1b}').skip(1).any(|s| {
        s.strip_prefix('[').is_some_and(|rest| {
            let params: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == ';')
                .collect();
            rest[params.len()..].starts_with('m')
        })
    })
}

#[test]
fn at_a_terminal_logs_are_colored_text_and_a_backfill_draws_a_bar() {
    let p = backfill_project(1);
    let out = at_a_terminal(p.path(), "apply dev --yes", &[]);
    assert!(has_sgr(&out), "colored at a terminal:\n{out}");
    let logs: Vec<&str> = out.lines().filter(|l| l.contains("promoted")).collect();
    assert_eq!(logs.len(), 1, "{out}");
    assert!(
        logs.iter()
            .all(|l| !l.contains("ts=") && !l.contains("level=")),
        "not logfmt:\n{out}"
    );
    // the progress view says what the batch lines would (tests/tty_view.rs reads its screen)
    assert!(!out.contains("backfilling"), "{out}");
    assert!(
        out.contains("m.daily [") && out.contains("/28 batches, ETA"),
        "a bar for the 28-batch backfill:\n{out}"
    );
    assert!(
        (1..=28).any(|k| out.contains(&format!("] {k}/28 batches"))),
        "the bar advances:\n{out}"
    );
}

#[test]
fn at_a_terminal_no_color_and_json_are_respected() {
    let p = backfill_project(1);
    let out = at_a_terminal(p.path(), "apply dev --yes", &[("NO_COLOR", "1")]);
    assert!(
        out.contains("promoted") && out.contains("/28 batches"),
        "{out}"
    );
    assert!(!has_sgr(&out), "NO_COLOR turns color off:\n{out}");

    let p = backfill_project(1);
    let out = at_a_terminal(p.path(), "apply dev --yes --json", &[]);
    // no view under --json, so the batch lines are logged as without a terminal
    assert_eq!(out.matches("backfilling").count(), 28, "{out}");
    assert!(!out.contains("batches, ETA"), "no bar under --json:\n{out}");
}

#[test]
fn a_run_tick_at_a_terminal_draws_the_same_bar() {
    let p = backfill_project(1);
    // prod serves the model through 2026-01-02; the tick at NOW has 27 days to compute
    efmesh(p.path())
        .env("EFMESH_NOW", "2026-01-02T00:00:00Z")
        .args(["apply", "prod", "--yes"])
        .assert()
        .success();
    let out = at_a_terminal(p.path(), "run prod", &[]);
    assert!(
        out.contains("m.daily [") && out.contains("/27 batches, ETA"),
        "a bar for the tick's 27-batch backfill:\n{out}"
    );
    assert!(out.contains("computed 27 batch(es)"), "{out}");
    let out = at_a_terminal(
        p.path(),
        "run prod --json",
        &[("EFMESH_NOW", "2026-02-10T00:00:00Z")],
    );
    assert!(out.contains("\"outcome\": \"ok\""), "{out}");
    assert_eq!(
        out.matches("backfilling").count(),
        12,
        "a multi-batch tick: {out}"
    );
    assert!(!out.contains("batches, ETA"), "no bar under --json:\n{out}");
}

#[test]
fn engine_setting_values_never_reach_logs_json_or_errors() {
    // a setting that takes any string, as a secret would be
    let secret = "tok-s3cr3t-42";
    let config = format!(
        "[project]\nname = \"t\"\nstart = \"2026-01-01\"\n[engine.settings]\nthreads = 2\ntemp_directory = \"/tmp/{secret}\"\n"
    );
    let (path, text) = daily(7);
    let p = project(&[("efmesh.toml", &config), RAW, (path, &text)]);
    let (stdout, stderr) = apply(
        p.path(),
        &["--log-level", "trace", "--json", "--jobs", "2"],
        &[],
    );
    assert!(
        !stdout.contains(secret) && !stderr.contains(secret),
        "a setting value leaked:\n{stderr}\n{stdout}"
    );
    let settings: Vec<String> = events(&stderr)
        .iter()
        .filter_map(|e| get(e, "setting").map(str::to_string))
        .collect();
    assert!(
        settings.contains(&"threads".to_string())
            && settings.contains(&"temp_directory".to_string()),
        "each setting is logged by name: {settings:?}\n{stderr}"
    );

    // a setting the engine refuses (and whose value it echoes) is reported by name alone
    let config = format!("[project]\nname = \"t\"\n[engine.settings]\nthreads = \"{secret}\"\n");
    let p = project(&[("efmesh.toml", &config), RAW]);
    for args in [
        &["apply", "dev", "--yes", "--json"][..],
        &["apply", "dev", "--yes", "--log-level", "trace"][..],
    ] {
        let out = efmesh(p.path()).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        let (o, e) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            e.contains("setting `threads`") || o.contains("setting `threads`"),
            "{e}{o}"
        );
        assert!(
            !o.contains(secret) && !e.contains(secret),
            "a setting value leaked:\n{e}\n{o}"
        );
    }
}
