//! `efmesh restate <env>`: clear a past range so the next apply recomputes it.

use crate::cli::exit::Exit;
use crate::cli::output::{fail, print_json};
use crate::Efmesh;
use std::path::Path;

/// Run `efmesh restate`.
pub(crate) fn run(
    dir: &Path,
    env: &str,
    model: &str,
    from: &str,
    to: &str,
    dry_run: bool,
    json: bool,
) -> Exit {
    match Efmesh::open(dir).and_then(|p| p.restate(env, model, from, to, dry_run)) {
        Err(e) => fail(e, json),
        Ok(r) => {
            if json {
                print_json(&r);
            } else {
                let verb = if r.dry_run { "would clear" } else { "cleared" };
                for x in &r.restated {
                    let note = if x.was_done {
                        ""
                    } else {
                        " (nothing there was done yet)"
                    };
                    outln!("{verb} {} [{}, {}){note}", x.model, x.start, x.end);
                }
                if !r.dry_run {
                    outln!("the next `efmesh apply {}` recomputes these ranges", r.env);
                }
            }
            Exit::Ok
        }
    }
}
