//! `efmesh completions`: the shell completion script, generated from the same clap grammar the
//! binary parses, so a new flag completes the day it exists.

use crate::cli::exit::Exit;
use clap::CommandFactory;

/// Run `efmesh completions <shell>`: the script goes to stdout, for the user (or a package
/// such as the wheel) to put where the shell looks.
pub(crate) fn run(shell: clap_complete::Shell) -> Exit {
    let mut cmd = crate::cli::Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "efmesh", &mut script);
    out!("{}", String::from_utf8_lossy(&script));
    Exit::Ok
}
