//! `efmesh completions` and `efmesh man`: the scripts complete in a real bash (and parse in a
//! real zsh), and the pages render with man-db's `man`, one per subcommand, with its flags.

mod common;

use std::process::Command;

fn efmesh_out(args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    common::efmesh(dir.path()).args(args).output().unwrap()
}

fn stdout(args: &[&str]) -> String {
    let out = efmesh_out(args);
    assert!(
        out.status.success(),
        "efmesh {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// What bash's programmable completion offers for `words` (the last one being completed), from
/// the script `efmesh completions bash` prints.
fn bash_completes(words: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("efmesh.bash");
    std::fs::write(&script, stdout(&["completions", "bash"])).unwrap();
    let line = words.join(" ");
    let program = format!(
        "source {script}\nCOMP_WORDS=({line})\nCOMP_CWORD={cword}\nCOMP_LINE='{line}'\nCOMP_POINT=${{#COMP_LINE}}\n\
         $(complete -p efmesh | sed -n 's/.*-F \\([^ ]*\\).*/\\1/p') efmesh '{cur}' '{prev}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script = script.display(),
        cword = words.len() - 1,
        cur = words[words.len() - 1],
        prev = words[words.len().saturating_sub(2)],
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(&program)
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "bash: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn bash_completes_subcommands_and_their_flags() {
    let subs = bash_completes(&["efmesh", "pl"]);
    assert_eq!(subs, ["plan"], "subcommands for `efmesh pl`");
    let all = bash_completes(&["efmesh", ""]);
    for sub in [
        "apply",
        "check",
        "completions",
        "man",
        "run",
        "status",
        "test",
    ] {
        assert!(all.iter().any(|s| s == sub), "`{sub}` not offered: {all:?}");
    }
    let flags = bash_completes(&["efmesh", "apply", "dev", "--fo"]);
    assert_eq!(
        flags,
        ["--forward-only"],
        "flags for `efmesh apply dev --fo`"
    );
    let shells = bash_completes(&["efmesh", "completions", "z"]);
    assert_eq!(shells, ["zsh"]);
}

#[test]
fn every_shell_gets_a_script_naming_every_subcommand() {
    use clap::CommandFactory;
    let subs: Vec<String> = efmesh::cli::Cli::command()
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = stdout(&["completions", shell]);
        for sub in &subs {
            assert!(
                script.contains(sub.as_str()),
                "{shell} script lacks `{sub}`"
            );
        }
    }
    // zsh parses what it is given (zsh is installed by .ci/run)
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("_efmesh");
    std::fs::write(&file, stdout(&["completions", "zsh"])).unwrap();
    let z = Command::new("zsh")
        .arg("-n")
        .arg(&file)
        .output()
        .expect("zsh is installed");
    assert!(
        z.status.success(),
        "zsh -n: {}",
        String::from_utf8_lossy(&z.stderr)
    );
}

#[test]
fn an_unknown_shell_is_refused_with_the_ones_there_are() {
    let out = efmesh_out(&["completions", "tcsh"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tcsh") && err.contains("bash") && err.contains("zsh"),
        "{err}"
    );
}

/// A page as man-db renders it for a terminal 100 columns wide, without formatting escapes.
fn rendered(page: &std::path::Path) -> String {
    let out = Command::new("man")
        .args(["--no-hyphenation", "--no-justification", "-l"])
        .arg(page)
        .env("MANWIDTH", "100")
        .env("MAN_KEEP_FORMATTING", "0")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .output()
        .expect("man-db's man is installed (.ci/run installs it)");
    assert!(
        out.status.success(),
        "man -l {}: {}",
        page.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    // man's overstrike bold and underline (`x\bx`, `_\bx`) off a terminal
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut plain = String::new();
    for c in text.chars() {
        if c == '\u{8}' {
            plain.pop();
        } else {
            plain.push(c);
        }
    }
    plain
}

#[test]
fn man_writes_one_rendering_page_per_subcommand_with_its_flags() {
    use clap::CommandFactory;
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("man1");
    let report = stdout(&["man", "--out-dir", out_dir.to_str().unwrap()]);
    let cli = efmesh::cli::Cli::command();
    let subs: Vec<&clap::Command> = cli.get_subcommands().collect();
    let mut files: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files.len(),
        subs.len() + 1,
        "efmesh.1 and one page per subcommand: {files:?}"
    );
    assert_eq!(
        report.lines().count(),
        files.len(),
        "one line per file written: {report}"
    );
    // no temporary file is left behind
    assert!(
        files
            .iter()
            .all(|f| f.ends_with(".1") && !f.starts_with('.')),
        "{files:?}"
    );

    let top = rendered(&out_dir.join("efmesh.1"));
    assert!(top.contains("efmesh - SQL models"), "NAME section: {top}");
    for s in &subs {
        assert!(
            top.contains(&format!("efmesh-{}(1)", s.get_name())),
            "efmesh(1) lacks efmesh-{}(1)",
            s.get_name()
        );
    }
    for s in &subs {
        let page = rendered(&out_dir.join(format!("efmesh-{}.1", s.get_name())));
        for arg in s.get_arguments().filter_map(|a| a.get_long()) {
            assert!(
                page.contains(&format!("--{arg}")),
                "efmesh-{}(1) lacks --{arg}:\n{page}",
                s.get_name()
            );
        }
    }
    let apply = rendered(&out_dir.join("efmesh-apply.1"));
    assert!(
        apply.contains("efmesh-apply - Plan, confirm, build"),
        "{apply}"
    );
}

#[test]
fn man_prints_the_top_page_and_refuses_a_directory_it_cannot_create() {
    let page = stdout(&["man"]);
    assert!(
        page.starts_with(".ie") || page.contains(".TH efmesh 1"),
        "{}",
        &page[..page.len().min(300)]
    );
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "not a directory").unwrap();
    let out = efmesh_out(&["man", "--out-dir", blocker.join("man1").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot write") && err.contains("man1"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}
