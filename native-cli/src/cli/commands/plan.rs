//! `efmesh plan <env>`: what applying would change; changes nothing.

use crate::cli::args::PlanFlags;
use crate::cli::exit::Exit;
use crate::cli::output::{fail, print_json, stdout_color};
use std::path::Path;

/// Run `efmesh plan`.
pub(crate) fn run(dir: &Path, env: &str, flags: &PlanFlags, json: bool) -> Exit {
    match flags
        .options()
        .and_then(|options| crate::plan_dir(dir, env, &options))
    {
        Err(e) => fail(e, json),
        Ok((plan, _)) => {
            if json {
                print_json(crate::cli::plan_view::PlanJson::of(&plan));
            } else {
                out!(
                    "{}",
                    crate::cli::plan_view::render(&plan, flags.explain, stdout_color())
                );
            }
            Exit::Ok
        }
    }
}
