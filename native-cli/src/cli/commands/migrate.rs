//! `efmesh migrate`: upgrade the state store, backing it up first.

use crate::cli::exit::Exit;
use crate::cli::output::{fail, print_json};
use std::path::Path;

/// Run `efmesh migrate`.
pub(crate) fn run(dir: &Path, json: bool) -> Exit {
    match crate::migrate(dir) {
        Err(e) => fail(e, json),
        Ok(r) => {
            if json {
                print_json(&r);
            } else if r.from == r.to {
                outln!("state store is at version {} already", r.to);
            } else {
                outln!(
                    "state store migrated from version {} to {} (backup: {})",
                    r.from,
                    r.to,
                    r.backup.as_deref().unwrap_or("-")
                );
            }
            Exit::Ok
        }
    }
}
