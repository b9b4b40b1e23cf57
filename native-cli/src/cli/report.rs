//! Showing diagnostics: rustc-style text for people, structured JSON for machines.

use efmesh_core::{Diagnostic, Severity};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{
    self,
    termcolor::{ColorChoice, StandardStream},
};

/// How many warnings of one kind are shown in full before the rest are counted.
const WARNINGS_SHOWN_PER_CODE: usize = 3;

/// Byte offset of a 1-based line/column in `text`.
pub(crate) fn offset(text: &str, line: u64, col: u64) -> usize {
    let mut off = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i as u64 + 1 == line {
            let within: usize = l
                .chars()
                .take(col.saturating_sub(1) as usize)
                .map(char::len_utf8)
                .sum();
            return (off + within).min(text.len());
        }
        off += l.len();
    }
    text.len()
}

/// Print diagnostics to stderr, rustc-style, collapsing floods of one warning kind.
pub fn print_diagnostics(diags: &[Diagnostic], files_text: &BTreeMap<String, String>, color: bool) {
    let mut files = SimpleFiles::new();
    let mut ids = HashMap::new();
    for (name, text) in files_text {
        ids.insert(name.clone(), files.add(name.clone(), text.clone()));
    }
    let writer = StandardStream::stderr(if color {
        ColorChoice::Auto
    } else {
        ColorChoice::Never
    });
    let config = term::Config::default();
    let mut per_code: HashMap<&str, usize> = HashMap::new();
    let mut hidden: BTreeMap<&str, usize> = BTreeMap::new();
    // errors first, then warnings
    let ordered = diags
        .iter()
        .filter(|d| d.is_error())
        .chain(diags.iter().filter(|d| !d.is_error()));
    for d in ordered {
        let code = d.problem.code();
        if d.severity() == Severity::Warning {
            let n = per_code.entry(code).or_default();
            *n += 1;
            if *n > WARNINGS_SHOWN_PER_CODE {
                *hidden.entry(code).or_default() += 1;
                continue;
            }
        }
        let mut cs = match d.severity() {
            Severity::Error => CsDiagnostic::error(),
            Severity::Warning => CsDiagnostic::warning(),
        }
        .with_message(d.problem.to_string())
        .with_code(code);
        let mut notes = vec![];
        if let Some(loc) = &d.location {
            match (ids.get(&loc.file), loc.has_position()) {
                (Some(&id), true) => {
                    let text = &files_text[&loc.file];
                    let s = offset(text, loc.line, loc.column);
                    let e = offset(text, loc.end_line, loc.end_column).max(s);
                    cs = cs.with_labels(vec![Label::primary(id, s..e)]);
                }
                _ => notes.push(format!("in {}", loc)),
            }
        }
        notes.extend(d.notes.iter().cloned());
        if let Some(h) = d.problem.help() {
            notes.push(format!("help: {h}"));
        }
        cs = cs.with_notes(notes);
        let _ = term::emit_to_write_style(&mut writer.lock(), &config, &files, &cs);
    }
    if !hidden.is_empty() {
        let mut err = std::io::stderr().lock();
        for (code, n) in hidden {
            let _ = writeln!(
                err,
                "note: {n} more `{code}` warning(s) not shown (`--json` lists all)"
            );
        }
    }
}
