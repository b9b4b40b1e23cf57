//! `efmesh check`: load the project and report every problem; changes nothing.

use crate::cli::exit::Exit;
use crate::cli::output::{fail, print_json, stderr_color, CheckJson};
use std::path::Path;

/// Run `efmesh check`.
pub(crate) fn run(dir: &Path, json: bool) -> Exit {
    match crate::check(dir) {
        Err(e) => fail(e, json),
        Ok(report) => {
            let ok = report.errors() == 0;
            let models = report.project.as_ref().map(|p| p.models.len()).unwrap_or(0);
            if json {
                print_json(CheckJson {
                    ok,
                    models,
                    errors: report.errors(),
                    warnings: report.warnings(),
                    diagnostics: &report.diagnostics,
                });
            } else {
                crate::cli::report::print_diagnostics(
                    &report.diagnostics,
                    &report.files,
                    stderr_color(),
                );
                if ok {
                    outln!(
                        "ok: {models} models checked, {} warning(s)",
                        report.warnings()
                    );
                } else {
                    eprintln!(
                        "error: {} error(s), {} warning(s); nothing was run",
                        report.errors(),
                        report.warnings()
                    );
                }
            }
            if ok {
                Exit::Ok
            } else {
                Exit::Failure
            }
        }
    }
}
