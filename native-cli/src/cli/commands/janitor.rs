//! `efmesh janitor`: drop physics no environment has used for the ttl.

use crate::cli::exit::Exit;
use crate::cli::output::{fail, print_json};
use crate::Efmesh;
use std::path::Path;

/// Run `efmesh janitor`.
pub(crate) fn run(dir: &Path, ttl: f64, dry_run: bool, json: bool) -> Exit {
    let opts = crate::JanitorOptions {
        ttl_days: ttl,
        dry_run,
        ..Default::default()
    };
    match Efmesh::open(dir).and_then(|p| p.janitor(opts)) {
        Err(e) => fail(e, json),
        Ok(r) => {
            if json {
                print_json(&r);
            } else {
                let verb = if r.dry_run { "would drop" } else { "dropped" };
                for c in &r.dropped {
                    match &c.files {
                        Some(files) => {
                            outln!("{verb} {} ({}) and its files {files}", c.table, c.model)
                        }
                        None => outln!("{verb} {} ({})", c.table, c.model),
                    }
                }
                for c in &r.skipped {
                    outln!(
                        "skipped {} ({}): referenced again or claimed by another janitor",
                        c.table,
                        c.model
                    );
                }
                outln!("janitor: {verb} {} physical table(s)", r.dropped.len());
            }
            Exit::Ok
        }
    }
}
