//! `efmesh schedule`: the tick `efmesh run <env>` in the real crontab (Debian's `crontab`),
//! found again by its title comment, and the systemd units printed instead.
//!
//! Only `crontab_lifecycle` touches the machine's crontab; it saves it first and puts it back
//! when it ends, panicking or not. The other tests point `EFMESH_CRONTAB` at a binary that does
//! not exist, so a mistake there cannot reach the real crontab either.

mod common;
use common::*;
use predicates::prelude::*;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// The instant (a Thursday) the tests compute next run times from, in UTC.
const NOW: &str = "2026-01-01T00:00:00Z";
const NO_CRONTAB: &str = "/nonexistent/efmesh-test/crontab";

/// efmesh in `dir` with the clock and time zone fixed, so next run times are known.
fn schedule(dir: &Path) -> assert_cmd::Command {
    let mut c = efmesh(dir);
    c.env("EFMESH_NOW", NOW).env("TZ", "UTC").arg("schedule");
    c
}

fn crontab_l() -> Option<String> {
    let out = Command::new("crontab")
        .arg("-l")
        .output()
        .expect("the tests need Debian's `crontab` (apt-get install cron)");
    if out.status.success() {
        return Some(String::from_utf8(out.stdout).unwrap());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no crontab for"),
        "crontab -l failed: {stderr}"
    );
    None
}

fn install(table: &str) {
    let mut child = Command::new("crontab")
        .arg("-")
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(table.as_bytes())
        .unwrap();
    assert!(
        child.wait().unwrap().success(),
        "crontab - refused {table:?}"
    );
}

/// Saves the user's crontab when made and puts it back when dropped, also on panic.
struct CrontabGuard {
    saved: Option<String>,
}

impl CrontabGuard {
    fn new() -> CrontabGuard {
        CrontabGuard { saved: crontab_l() }
    }
}

impl Drop for CrontabGuard {
    fn drop(&mut self) {
        match &self.saved {
            Some(table) => install(table),
            None => {
                let _ = Command::new("crontab")
                    .arg("-r")
                    .stderr(Stdio::null())
                    .status();
            }
        }
    }
}

fn efmesh_lines(table: &str) -> Vec<&str> {
    table
        .lines()
        .filter(|l| l.contains("# efmesh schedule: "))
        .collect()
}

fn canonical(p: &Path) -> String {
    std::fs::canonicalize(p)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// The whole life of a schedule against the real crontab, in one test so that nothing else in
/// this binary touches the crontab at the same time.
#[test]
fn crontab_lifecycle() {
    let _guard = CrontabGuard::new();
    let others = "MAILTO=\"\"\nSHELL=/bin/bash\n# a comment  with  spaces\n*/5 * * * * echo other  # not ours\n";
    install(others);
    let p = project(&[]);
    let q = project(&[]); // same project name and env, another directory
    let (pdir, qdir) = (canonical(p.path()), canonical(q.path()));
    let title = format!("# efmesh schedule: t/dev ({pdir})");

    // schedule adds exactly one line, after the others, which keep their bytes
    schedule(p.path())
        .args(["dev", "--cron", "*/15 * * * *"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "scheduled `efmesh run dev` at `*/15 * * * *`",
        ));
    let table = crontab_l().unwrap();
    assert!(table.starts_with(others), "{table}");
    let ours = efmesh_lines(&table);
    assert_eq!(ours.len(), 1, "{table}");
    let line = ours[0];
    assert!(line.starts_with("*/15 * * * * cd '"), "{line}");
    assert!(line.ends_with(&title), "{line}");
    let exe = canonical(Path::new(env!("CARGO_BIN_EXE_efmesh")));
    assert!(
        line.contains(&format!(
            "'{exe}' run dev --json >> '{pdir}/.efmesh/logs/run-dev.log' 2>&1"
        )),
        "{line}"
    );
    if let Ok(ld) = std::env::var("LD_LIBRARY_PATH") {
        if !ld.is_empty() {
            assert!(line.contains(&format!("LD_LIBRARY_PATH='{ld}' ")), "{line}");
        }
    }
    assert!(p.path().join(".efmesh/logs").is_dir());

    // another project with the same name and env gets its own line (hourly by default)
    schedule(q.path()).arg("dev").assert().success();
    let table = crontab_l().unwrap();
    let ours = efmesh_lines(&table);
    assert_eq!(ours.len(), 2, "{table}");
    let q_line = ours[1].to_string();
    assert!(q_line.starts_with("0 * * * * "), "{q_line}");
    assert!(q_line.ends_with(&format!("({qdir})")), "{q_line}");

    // scheduling again with another expression replaces the line in place
    schedule(p.path())
        .args(["dev", "--cron", "0 3 * * 1-5"])
        .assert()
        .success()
        .stdout(predicate::str::contains("(was `*/15 * * * *`)"));
    let table = crontab_l().unwrap();
    assert!(table.starts_with(others), "{table}");
    let ours = efmesh_lines(&table);
    assert_eq!(ours.len(), 2, "{table}");
    assert!(ours[0].starts_with("0 3 * * 1-5 cd '"), "{table}");
    assert!(ours[0].ends_with(&title), "{table}");
    assert_eq!(ours[1], q_line, "the other project's line is untouched");

    // the same expression again changes nothing
    schedule(p.path())
        .args(["dev", "--cron", "0 3 * * 1-5"])
        .assert()
        .success()
        .stdout(predicate::str::contains("already scheduled"));
    assert_eq!(crontab_l().unwrap(), table);

    // --list shows this project's line with its next runs
    schedule(p.path())
        .arg("--list")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "dev  `0 3 * * 1-5`  next: 2026-01-01T03:00:00+00:00, 2026-01-02T03:00:00+00:00, 2026-01-05T03:00:00+00:00",
        ));
    let out = schedule(p.path())
        .args(["dev", "--list", "--json"])
        .assert()
        .success();
    let v = json(&out.get_output().stdout);
    let entries = v["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{v}");
    let e = &entries[0];
    assert_eq!(e["env"], "dev");
    assert_eq!(e["cron"], "0 3 * * 1-5");
    assert_eq!(e["project"], "t");
    assert_eq!(e["dir"], pdir.as_str());
    assert!(
        e["command"].as_str().unwrap().contains("run dev --json"),
        "{e}"
    );
    assert_eq!(
        e["nextRuns"],
        serde_json::json!([
            "2026-01-01T03:00:00+00:00",
            "2026-01-02T03:00:00+00:00",
            "2026-01-05T03:00:00+00:00"
        ])
    );

    // --remove takes out exactly that line
    schedule(p.path())
        .args(["dev", "--remove"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "removed `efmesh run dev` (`0 3 * * 1-5`)",
        ));
    assert_eq!(crontab_l().unwrap(), format!("{others}{q_line}\n"));
    // removing it again is not an error
    schedule(p.path())
        .args(["dev", "--remove"])
        .assert()
        .success()
        .stdout(predicate::str::contains("nothing was scheduled for `dev`"));
    let out = schedule(p.path())
        .args(["--list", "--json"])
        .assert()
        .success();
    assert_eq!(
        json(&out.get_output().stdout)["entries"],
        serde_json::json!([])
    );
    schedule(q.path())
        .args(["dev", "--remove"])
        .assert()
        .success();
    assert_eq!(
        crontab_l().unwrap(),
        others,
        "every other line byte for byte"
    );
}

#[test]
fn a_bad_cron_expression_is_refused_by_name() {
    let p = project(&[]);
    for (expr, why) in [
        ("61 * * * *", "minute"),
        ("every hour", "5"),
        ("0 0 L * *", "day of month"),
    ] {
        schedule(p.path())
            .env("EFMESH_CRONTAB", NO_CRONTAB)
            .args(["dev", "--cron", expr])
            .assert()
            .code(1)
            .stderr(predicate::str::contains(format!(
                "invalid cron expression `{expr}`"
            )))
            .stderr(predicate::str::contains(why));
    }
    let out = schedule(p.path())
        .env("EFMESH_CRONTAB", NO_CRONTAB)
        .args(["dev", "--cron", "@reboot", "--json"])
        .assert()
        .code(1);
    assert_eq!(
        json(&out.get_output().stdout)["error"]["code"],
        "cron-expression"
    );
    assert!(!p.path().join(".efmesh").exists(), "nothing was created");
}

#[test]
fn a_missing_crontab_binary_says_to_install_cron() {
    let p = project(&[]);
    schedule(p.path())
        .env("EFMESH_CRONTAB", NO_CRONTAB)
        .arg("dev")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(NO_CRONTAB))
        .stderr(predicate::str::contains("apt-get install cron"))
        .stderr(predicate::str::contains("--print-systemd"));
}

#[test]
fn a_failing_crontab_is_shown_and_nothing_is_written() {
    let p = project(&[]);
    let fake = p.path().join("crontab");
    std::fs::write(&fake, "#!/bin/sh\n[ \"$1\" = - ] && touch \"$0.written\"\necho 'permission denied by the test' >&2\nexit 2\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    schedule(p.path())
        .env("EFMESH_CRONTAB", &fake)
        .arg("dev")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "-l` failed: exited with status 2: permission denied by the test",
        ));
    assert!(!p.path().join("crontab.written").exists());
}

#[test]
fn print_systemd_translates_common_expressions() {
    let p = project(&[]);
    let dir = canonical(p.path());
    let exe = canonical(Path::new(env!("CARGO_BIN_EXE_efmesh")));
    for (expr, calendar) in [
        ("*/15 * * * *", "*-*-* *:00/15:00"),
        ("0 3 * * 1-5", "Mon,Tue,Wed,Thu,Fri *-*-* 03:00:00"),
        ("@daily", "*-*-* 00:00:00"),
    ] {
        let out = schedule(p.path())
            .env("EFMESH_CRONTAB", NO_CRONTAB)
            .args(["dev", "--print-systemd", "--cron", expr])
            .assert()
            .success();
        let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        for want in [
            format!("OnCalendar={calendar}\n"),
            "Persistent=true\n".into(),
            "Type=oneshot\n".into(),
            format!("WorkingDirectory={dir}\n"),
            format!("ExecStart=\"{exe}\" run dev --json\n"),
            "efmesh-run-t-dev.service".into(),
            "systemctl --user enable --now efmesh-run-t-dev.timer".into(),
        ] {
            assert!(text.contains(&want), "{want:?} missing from:\n{text}");
        }
        // systemd itself agrees the value is a calendar event, where it is installed
        if let Ok(o) = Command::new("systemd-analyze")
            .args(["calendar", calendar])
            .output()
        {
            assert!(
                o.status.success(),
                "systemd-analyze refused {calendar}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
    assert!(
        !p.path().join(".efmesh").exists(),
        "printing installs nothing"
    );
}

#[test]
fn print_systemd_refuses_what_it_cannot_translate() {
    let p = project(&[]);
    schedule(p.path())
        .env("EFMESH_CRONTAB", NO_CRONTAB)
        .args(["dev", "--print-systemd", "--cron", "0 3 1 * 1"])
        .assert()
        .code(1)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains(
            "cannot translate cron expression `0 3 1 * 1`",
        ))
        .stderr(predicate::str::contains("day of week"));
}
