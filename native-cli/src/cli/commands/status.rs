//! `efmesh status <env>`: is the environment healthy?

use crate::cli::exit::Exit;
use crate::cli::output::{fail, print_json};
use crate::Efmesh;
use std::path::Path;

/// Run `efmesh status`.
pub(crate) fn run(dir: &Path, env: &str, check: bool, deep: bool, json: bool) -> Exit {
    match Efmesh::open(dir).and_then(|p| p.status(env, deep)) {
        Err(e) => fail(e, json),
        Ok(r) => {
            let code = if check && !r.healthy {
                Exit::Failure
            } else {
                Exit::Ok
            };
            if json {
                print_json(&r);
            } else {
                out!("{r}");
            }
            code
        }
    }
}
