//! `efmesh init`: scaffold a working project.

use crate::cli::exit::Exit;
use crate::cli::output::{fail, print_json};
use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(Serialize)]
struct InitJson<'a> {
    dir: String,
    files: &'a [String],
}

/// Run `efmesh init`.
pub(crate) fn run(dir: &Path, target: Option<PathBuf>, json: bool) -> Exit {
    let target = target.map(|t| dir.join(t)).unwrap_or(dir.to_path_buf());
    match crate::workspace::init::init(&target) {
        Err(e) => fail(e, json),
        Ok(files) => {
            if json {
                print_json(InitJson {
                    dir: target.display().to_string(),
                    files: &files,
                });
            } else {
                for f in &files {
                    outln!("created {}", target.join(f).display());
                }
                outln!(
                    "next: cd {} && efmesh plan dev && efmesh apply dev --yes",
                    target.display()
                );
            }
            Exit::Ok
        }
    }
}
