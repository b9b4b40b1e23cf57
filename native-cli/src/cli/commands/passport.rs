//! `efmesh passport <env>`: declared and effective passports.

use crate::cli::exit::Exit;
use crate::cli::output::{fail, print_json};
use crate::Efmesh;
use std::path::Path;

/// Run `efmesh passport`.
pub(crate) fn run(dir: &Path, env: &str, json: bool) -> Exit {
    match Efmesh::open(dir).and_then(|p| p.passport(env)) {
        Err(e) => fail(e, json),
        Ok(r) => {
            if json {
                print_json(&r);
            } else {
                out!("{r}");
            }
            Exit::Ok
        }
    }
}
