//! `efmesh graph`: the models in topological order, as text, JSON or one HTML page.

use crate::cli::exit::Exit;
use crate::cli::output::{fail, print_json};
use crate::Efmesh;
use std::path::Path;

/// Run `efmesh graph`.
pub(crate) fn run(dir: &Path, json: bool) -> Exit {
    match Efmesh::open(dir) {
        Err(e) => fail(e, json),
        Ok(p) => {
            let g = p.graph();
            if json {
                print_json(&g);
            } else {
                let width = g.models.iter().map(|m| m.name.len()).max().unwrap_or(0);
                for m in &g.models {
                    let deps = if m.deps.is_empty() {
                        String::new()
                    } else {
                        format!("  <- {}", m.deps.join(", "))
                    };
                    outln!(
                        "{:width$}  {:<25}  {}{}",
                        m.name,
                        m.kind,
                        efmesh_core::naming::fp8(&m.fingerprint),
                        deps
                    );
                }
            }
            Exit::Ok
        }
    }
}

/// Run `efmesh graph --html [--env E]`: the page on stdout.
pub(crate) fn html(dir: &Path, env: Option<&str>) -> Exit {
    match Efmesh::open(dir).and_then(|p| p.graph_html(env)) {
        Err(e) => fail(e, false),
        Ok(page) => {
            out!("{page}");
            Exit::Ok
        }
    }
}
