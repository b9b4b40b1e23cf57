//! The `efmesh` binary: parse arguments, run, exit with the documented code.

use clap::Parser;

fn main() -> std::process::ExitCode {
    efmesh::cli::run(efmesh::cli::Cli::parse())
}
