//! The manual (docs/, an mdBook) and the README must stay true to the binary: every command line
//! they show parses with efmesh's own grammar, every flag they name exists on the command they
//! name it for, every subcommand is documented, every page is in the book's table of contents,
//! and every link between pages reaches its page and heading. The book itself is built with
//! mdBook by `scripts/build-docs`, which this file runs too.

mod common;

use clap::{CommandFactory, Parser};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every markdown page: the book's sources and the README, as (path, text).
fn pages() -> Vec<(PathBuf, String)> {
    let root = common::repo();
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("docs/src"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    files.push(root.join("README.md"));
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

fn shown(path: &Path) -> String {
    path.strip_prefix(common::repo())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The lines inside fenced code blocks, with their 1-based line numbers.
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    let mut inside = false;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            inside = !inside;
        } else if inside {
            lines.push((i + 1, line));
        }
    }
    lines
}

/// A shell line cut to its first command: before a comment, a pipe, a redirection, `&&` or `;`.
fn first_command(line: &str) -> Vec<String> {
    let words = shlex::split(line).unwrap_or_default();
    words
        .into_iter()
        .take_while(|w| {
            !(w.starts_with('#') || w == "|" || w == "&&" || w == ";" || w.starts_with('>'))
        })
        .collect()
}

/// The `efmesh ...` invocations shown as commands in code blocks (`efmesh x` or `$ efmesh x`).
fn command_lines() -> Vec<(String, Vec<String>)> {
    let mut found = Vec::new();
    for (path, text) in pages() {
        for (n, line) in code_lines(&text) {
            let line = line.trim_start();
            let line = line.strip_prefix("$ ").unwrap_or(line);
            if line.starts_with("efmesh ") {
                found.push((format!("{}:{n}", shown(&path)), first_command(line)));
            }
        }
    }
    found
}

#[test]
fn every_command_line_in_the_manual_parses_with_the_binarys_grammar() {
    let lines = command_lines();
    assert!(lines.len() >= 15, "too few command lines found: {lines:?}");
    let mut wrong = Vec::new();
    for (at, words) in &lines {
        if let Err(e) = efmesh::cli::Cli::try_parse_from(words) {
            use clap::error::ErrorKind::{DisplayHelp, DisplayVersion};
            if !matches!(e.kind(), DisplayHelp | DisplayVersion) {
                wrong.push(format!("{at}: `{}`: {}", words.join(" "), e.kind()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "command lines efmesh would refuse:\n{}",
        wrong.join("\n")
    );
}

/// The long flags each subcommand accepts, global ones included.
fn flags_by_command() -> BTreeMap<String, BTreeSet<String>> {
    let mut cli = efmesh::cli::Cli::command();
    cli.build();
    let long = |c: &clap::Command| -> BTreeSet<String> {
        c.get_arguments()
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .chain(["--help".to_string(), "--version".to_string()])
            .collect()
    };
    cli.get_subcommands()
        .map(|s| (s.get_name().to_string(), long(s)))
        .collect()
}

/// `efmesh sub ...` spans in prose, in usage notation (`<env>`, `[--json]`, `a | b`), as
/// (where, subcommand, the flags the span names for it). A span listing several subcommands
/// (`efmesh check | graph [--html] | ...`) yields one entry per subcommand.
fn usage_spans() -> Vec<(String, String, Vec<String>)> {
    let known = flags_by_command();
    let mut found = Vec::new();
    for (path, text) in pages() {
        for (n, line) in text.lines().enumerate() {
            for span in line.split('`').skip(1).step_by(2) {
                let Some(rest) = span.strip_prefix("efmesh ") else {
                    continue;
                };
                for (i, piece) in rest.split(" | ").enumerate() {
                    let mut words = piece.split_whitespace();
                    let Some(sub) = words.next() else { break };
                    if !known.contains_key(sub) {
                        // `efmesh man | man -l -` pipes into another program; `efmesh ...` and
                        // `efmesh <command>` name no subcommand
                        if i == 0 && !sub.starts_with(['<', '.', '-']) {
                            found.push((format!("{}:{}", shown(&path), n + 1), sub.into(), vec![]));
                        }
                        break;
                    }
                    let flags = words
                        .flat_map(|w| w.split(['[', ']', '|', '=']))
                        .filter(|w| w.starts_with("--"))
                        .map(String::from)
                        .collect();
                    found.push((format!("{}:{}", shown(&path), n + 1), sub.into(), flags));
                }
            }
        }
    }
    found
}

#[test]
fn every_flag_the_prose_names_exists_on_its_command() {
    let known = flags_by_command();
    let spans = usage_spans();
    assert!(
        spans.len() >= 30,
        "too few `efmesh ...` spans found: {spans:?}"
    );
    let mut wrong = Vec::new();
    for (at, sub, flags) in &spans {
        match known.get(sub) {
            None => wrong.push(format!("{at}: `efmesh {sub}` is not a subcommand")),
            Some(accepted) => {
                for f in flags.iter().filter(|f| !accepted.contains(*f)) {
                    wrong.push(format!("{at}: `efmesh {sub}` has no flag `{f}`"));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "the manual names what the CLI does not have:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_subcommand_is_documented_in_the_manual() {
    let book: String = pages()
        .iter()
        .filter(|(p, _)| p.starts_with(common::repo().join("docs")))
        .map(|(_, t)| t.as_str())
        .collect();
    let missing: Vec<String> = flags_by_command()
        .into_keys()
        .filter(|s| s != "help" && !book.contains(&format!("efmesh {s}")))
        .collect();
    assert!(
        missing.is_empty(),
        "subcommands the manual never shows: {missing:?}"
    );
}

/// mdBook's (and GitHub's) anchor for a heading: lower case, spaces to `-`, other punctuation gone.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(text: &str) -> BTreeSet<String> {
    let mut inside = false;
    let mut set = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            inside = !inside;
        } else if !inside && line.starts_with('#') {
            set.insert(slug(line.trim_start_matches('#')));
        }
    }
    set
}

/// `[text](target)` links outside code, as (line, target).
fn links(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut inside = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            inside = !inside;
            continue;
        }
        if inside {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            found.push((i + 1, after[..end].to_string()));
            rest = &after[end..];
        }
    }
    found
}

#[test]
fn every_link_between_pages_reaches_its_page_and_heading() {
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (path, text) in pages() {
        for (n, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let dest = if file.is_empty() {
                path.clone()
            } else {
                path.parent().unwrap().join(file)
            };
            let at = format!("{}:{n}", shown(&path));
            let Ok(dest_text) = std::fs::read_to_string(&dest) else {
                if !dest.is_dir() {
                    wrong.push(format!("{at}: `{target}`: no such file"));
                }
                continue;
            };
            if let Some(a) = anchor {
                if !anchors(&dest_text).contains(a) {
                    wrong.push(format!(
                        "{at}: `{target}`: `{}` has no heading `#{a}`",
                        shown(&dest)
                    ));
                }
            }
        }
    }
    assert!(checked >= 20, "too few links checked ({checked})");
    assert!(wrong.is_empty(), "broken links:\n{}", wrong.join("\n"));
}

#[test]
fn every_page_of_the_book_is_in_its_table_of_contents() {
    let src = common::repo().join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<String> = links(&summary).into_iter().map(|(_, t)| t).collect();
    let pages: BTreeSet<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md") && n != "SUMMARY.md")
        .collect();
    let unlisted: Vec<_> = pages.difference(&listed).collect();
    let missing: Vec<_> = listed.difference(&pages).collect();
    assert!(
        unlisted.is_empty() && missing.is_empty(),
        "pages not in SUMMARY.md: {unlisted:?}; listed but missing: {missing:?}"
    );
}

#[test]
fn the_book_builds_with_mdbook() {
    let out = tempfile::tempdir().unwrap();
    let run = std::process::Command::new(common::repo().join("scripts/build-docs"))
        .arg(out.path())
        .output()
        .expect("scripts/build-docs runs");
    assert!(
        run.status.success(),
        "scripts/build-docs failed:\n{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    // one HTML page per chapter, and the reference pages carry what the sources say
    for page in [
        "index.html",
        "install.html",
        "sqlmesh.html",
        "cli.html",
        "print.html",
    ] {
        assert!(
            out.path().join(page).is_file(),
            "{page} missing from the built book"
        );
    }
    let install = std::fs::read_to_string(out.path().join("install.html")).unwrap();
    assert!(
        install.contains("efmesh completions bash"),
        "install.html lacks its content"
    );
}

#[test]
fn every_chapter_a_message_points_to_exists() {
    let root = common::repo();
    let mut pointed = 0;
    let mut wrong = Vec::new();
    for dir in ["core/src", "native-cli/src"] {
        for file in common::walk(&root.join(dir))
            .into_iter()
            .filter(|f| f.extension().is_some_and(|e| e == "rs"))
        {
            let text = std::fs::read_to_string(&file).unwrap();
            for (at, _) in text.match_indices("docs/src/") {
                let name: String = text[at..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || "/-_.".contains(*c))
                    .collect();
                let name = name.trim_end_matches('.');
                pointed += 1;
                if !root.join(name).is_file() {
                    wrong.push(format!("{}: `{name}`", shown(&file)));
                }
            }
        }
    }
    assert!(
        pointed >= 5,
        "too few pointers into the manual found ({pointed})"
    );
    assert!(
        wrong.is_empty(),
        "messages point to chapters that do not exist:\n{}",
        wrong.join("\n")
    );
}
