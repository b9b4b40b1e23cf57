//! `efmesh man`: manual pages in roff, rendered from the clap grammar (every subcommand's
//! options and doc comments), so `man efmesh-plan` says exactly what `efmesh plan --help` says.

use crate::cli::exit::Exit;
use crate::cli::output::fail;
use crate::Error;
use clap::CommandFactory;
use std::path::Path;

/// The pages: `efmesh.1` first, then `efmesh-<subcommand>.1` for each subcommand, as git and
/// cargo name theirs, each as (file name, roff text).
pub(crate) fn pages() -> Vec<(String, Vec<u8>)> {
    let mut top = crate::cli::Cli::command();
    top.build();
    let mut pages = vec![render(top.clone())];
    for sub in top.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("efmesh-{}", sub.get_name());
        // the page is titled and cross-referenced as efmesh-<sub>(1); its synopsis shows the
        // command as it is typed
        let typed = format!("efmesh {}", sub.get_name());
        let sub = sub
            .clone()
            .name(name.clone())
            .display_name(name)
            .bin_name(typed);
        pages.push(render(sub));
    }
    pages
}

fn render(cmd: clap::Command) -> (String, Vec<u8>) {
    let file = format!("{}.1", cmd.get_name());
    let mut roff = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut roff)
        .expect("rendering into memory cannot fail");
    (file, roff)
}

/// Run `efmesh man`: print `efmesh(1)`, or with `--out-dir` write every page there (each
/// through a temporary file and a rename) and name each file written.
pub(crate) fn run(out_dir: Option<&Path>) -> Exit {
    let pages = pages();
    let Some(dir) = out_dir else {
        out!("{}", String::from_utf8_lossy(&pages[0].1));
        return Exit::Ok;
    };
    let written = pages
        .iter()
        .try_for_each(|(file, roff)| crate::util::atomic_file::write_in(dir, file, roff));
    match written {
        Ok(()) => {
            for (file, _) in &pages {
                outln!("wrote {}", dir.join(file).display());
            }
            Exit::Ok
        }
        Err((path, e)) => fail(
            Error::Argument {
                message: format!("cannot write `{}`: {e}", path.display()),
                help: Some("pass --out-dir a directory you can write to, such as `~/.local/share/man/man1`".into()),
            },
            false,
        ),
    }
}
