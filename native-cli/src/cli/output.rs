//! What commands print: one JSON object on stdout with `apiVersion`, or text for people;
//! errors as diagnostics on stderr.

use crate::cli::exit::Exit;
use crate::Error;
use efmesh_core::{Diagnostic, API_VERSION};
use serde::Serialize;
use std::io::IsTerminal;

/// Write command output to stdout (through [`outln!`] and [`out!`]). A reader that went away
/// (`EPIPE`) ends the process with success, as `head` expects of a producer; any other
/// failure (`/dev/full`) is reported once on stderr and exits 1. Either way no panic, and the
/// work the command did (an apply's state) is already committed before its report prints.
pub(crate) fn write_stdout(args: std::fmt::Arguments<'_>, newline: bool) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let written = out.write_fmt(args).and_then(|()| {
        if newline {
            out.write_all(b"\n")
        } else {
            out.flush()
        }
    });
    if let Err(e) = written {
        stdout_failed(&e)
    }
}

/// Flush stdout at the end of a command, with [`write_stdout`]'s handling of failures.
pub(crate) fn flush_stdout() {
    use std::io::Write;
    if let Err(e) = std::io::stdout().flush() {
        stdout_failed(&e)
    }
}

fn stdout_failed(e: &std::io::Error) -> ! {
    use std::io::Write;
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0)
    }
    let _ = writeln!(
        std::io::stderr(),
        "error: cannot write to standard output: {e}\n  help: write to a file or a pipe with room; the command's work (if any) is done, only its report was lost"
    );
    std::process::exit(1)
}

#[derive(Serialize)]
struct Envelope<T: Serialize> {
    #[serde(rename = "apiVersion")]
    api_version: u32,
    #[serde(flatten)]
    body: T,
}

pub(crate) fn print_json<T: Serialize>(body: T) {
    let v = Envelope {
        api_version: API_VERSION,
        body,
    };
    outln!(
        "{}",
        serde_json::to_string_pretty(&v).expect("JSON output serializes")
    );
}

#[derive(Serialize)]
pub(crate) struct CheckJson<'a> {
    pub ok: bool,
    pub models: usize,
    pub errors: usize,
    pub warnings: usize,
    pub diagnostics: &'a [Diagnostic],
}

#[derive(Serialize)]
struct ErrorJson<'a> {
    ok: bool,
    error: ErrorBody,
    diagnostics: &'a [Diagnostic],
}

#[derive(Serialize)]
struct ErrorBody {
    code: &'static str,
    message: String,
    help: Option<String>,
}

pub(crate) fn stdout_color() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

pub(crate) fn stderr_color() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Report a fatal error in the requested format and return exit code 1.
pub(crate) fn fail(err: Error, json: bool) -> Exit {
    let empty = vec![];
    let (diags, files) = match &err {
        Error::Invalid(f) => (&f.diagnostics, Some(&f.files)),
        _ => (&empty, None),
    };
    if json {
        print_json(ErrorJson {
            ok: false,
            error: ErrorBody {
                code: err.code(),
                message: err.to_string(),
                help: err.help(),
            },
            diagnostics: diags,
        });
    } else {
        if let Some(files) = files {
            crate::cli::report::print_diagnostics(diags, files, stderr_color());
        }
        eprintln!("error: {err}");
        if let Some(h) = err.help() {
            eprintln!("  help: {h}");
        }
    }
    Exit::of_error(&err)
}

pub(crate) fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

pub(crate) fn confirm(env: &str) -> bool {
    use std::io::Write;
    out!("Apply this plan to `{env}`? [y/N] ");
    let _ = std::io::stdout().flush();
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer).is_ok() && matches!(answer.trim(), "y" | "Y" | "yes")
}
