//! `efmesh test`: SQLMesh-format unit tests on in-memory DuckDB.

use crate::cli::exit::Exit;
use crate::cli::output::{fail, print_json, stderr_color};
use crate::Efmesh;
use std::path::Path;

/// `efmesh test`: exit 0 when every test passed, 1 when some failed, 2 when they could not run.
pub(crate) fn run(dir: &Path, names: &[String], json: bool) -> Exit {
    let run = Efmesh::open(dir).and_then(|p| crate::testing::run_project(&p, names));
    let run = match run {
        Ok(r) => r,
        Err(e) => {
            fail(e, json);
            return Exit::Waiting;
        }
    };
    if json {
        print_json(&run);
    } else if !run.diagnostics.is_empty() {
        crate::testing::print_errors(&run.diagnostics, &run.files, stderr_color());
        eprintln!(
            "error: {} error(s) in the test files; no test was run",
            run.diagnostics.len()
        );
    } else {
        out!("{run}");
    }
    Exit::from_code(run.exit_code())
}
