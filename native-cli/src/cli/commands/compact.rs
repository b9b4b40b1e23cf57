//! `efmesh compact`: merge settled partitions of EXTERNAL landing zones.

use crate::cli::exit::Exit;
use crate::cli::output::{fail, print_json};
use crate::Efmesh;
use std::path::Path;

/// Run `efmesh compact`.
pub(crate) fn run(
    dir: &Path,
    model: Vec<String>,
    dry_run: bool,
    grace: Option<u32>,
    json: bool,
) -> Exit {
    let opts = crate::CompactOptions {
        models: model.into_iter().filter(|m| !m.trim().is_empty()).collect(),
        dry_run,
        grace_minutes: grace,
        now: None,
    };
    match Efmesh::open(dir).and_then(|p| p.compact(&opts)) {
        Err(e) => fail(e, json),
        Ok(r) if json => {
            print_json(&r);
            Exit::Ok
        }
        Ok(r) => {
            out!("{r}");
            Exit::Ok
        }
    }
}
