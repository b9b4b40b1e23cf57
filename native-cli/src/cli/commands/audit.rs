//! `efmesh audit <env>`: audit what an environment serves now.

use crate::cli::exit::Exit;
use crate::cli::output::{fail, print_json};
use crate::Efmesh;
use std::path::Path;

/// Run `efmesh audit`.
pub(crate) fn run(dir: &Path, env: &str, model: &[String], json: bool) -> Exit {
    let only: Vec<String> = model
        .iter()
        .map(|m| m.trim().to_ascii_lowercase())
        .filter(|m| !m.is_empty())
        .collect();
    match Efmesh::open(dir).and_then(|p| p.audit(env, &only)) {
        Err(e) => fail(e, json),
        Ok(r) => {
            if json {
                print_json(&r);
            } else {
                for x in &r.results {
                    outln!("{x}");
                }
                for m in &r.stale {
                    outln!("note: `{env}` serves an older version of {m}; it was audited with the project's current audits");
                }
                outln!(
                    "{} audit(s) on `{env}`: {} passed, {} failed, {} warning(s), {} skipped",
                    r.results.len(),
                    r.passed,
                    r.failed,
                    r.warned,
                    r.skipped
                );
            }
            if r.has_failures() {
                Exit::Failure
            } else {
                Exit::Ok
            }
        }
    }
}
