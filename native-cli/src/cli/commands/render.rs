//! `efmesh render <model>`: the final SQL of a model, as it would run.

use crate::cli::exit::Exit;
use crate::cli::output::{fail, print_json};
use crate::{Efmesh, RenderOptions};
use std::path::Path;

/// Run `efmesh render`.
pub(crate) fn run(
    dir: &Path,
    model: &str,
    env: Option<String>,
    start: Option<String>,
    end: Option<String>,
    json: bool,
) -> Exit {
    let opts = RenderOptions {
        env,
        start,
        end,
        pretty: !json,
    };
    let r = Efmesh::open(dir).and_then(|p| p.render(model, &opts));
    match r {
        Err(e) => fail(e, json),
        Ok(r) => {
            if json {
                print_json(&r);
            } else {
                outln!("-- {} in {} for [{}, {})", r.model, r.env, r.start, r.end);
                outln!("{}", r.sql);
            }
            Exit::Ok
        }
    }
}
