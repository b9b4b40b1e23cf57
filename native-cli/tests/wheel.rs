//! `pip install efmesh`: the wheel `scripts/build-wheel` builds installs into a fresh venv with
//! nothing but pip, puts one static `efmesh` on the venv's PATH (DuckDB inside, no libduckdb.so),
//! brings its manual pages and completions, and builds the hospital example, parquet lake
//! included, with no DuckDB library or extension anywhere in reach.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The wheel under test: `EFMESH_WHEEL`, which `./scripts/test` sets after running
/// `scripts/build-wheel`. Without it the test fails saying how to run it; it never passes by
/// skipping.
fn wheel() -> PathBuf {
    let path = std::env::var("EFMESH_WHEEL").unwrap_or_else(|_| {
        panic!("EFMESH_WHEEL is not set: run the suite with ./scripts/test, which builds the wheel with scripts/build-wheel, or build it yourself and point EFMESH_WHEEL at the .whl")
    });
    let path = PathBuf::from(path);
    assert!(
        path.is_file(),
        "EFMESH_WHEEL `{}` is not a file",
        path.display()
    );
    path
}

fn ok(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The installed binary, run with an environment that holds no trace of the development build:
/// no LD_LIBRARY_PATH, a HOME without `~/.duckdb/extensions`, a PATH of the venv and the system.
fn installed(venv: &Path, home: &Path, cwd: &Path) -> Command {
    let mut c = Command::new(venv.join("bin/efmesh"));
    c.current_dir(cwd)
        .env_clear()
        .env("HOME", home)
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", venv.join("bin").display()),
        )
        .env("NO_COLOR", "1");
    c
}

#[test]
fn the_wheel_installs_with_pip_into_a_fresh_venv_and_builds_a_lake_on_its_own() {
    let wheel = wheel();
    let tmp = tempfile::tempdir().unwrap();
    let venv = tmp.path().join("venv");
    ok(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    // --no-index: the wheel needs nothing from an index, not even to install
    ok(Command::new(venv.join("bin/python"))
        .args([
            "-m",
            "pip",
            "install",
            "--no-index",
            "--no-deps",
            "--disable-pip-version-check",
            "--quiet",
        ])
        .arg(&wheel));
    let show = ok(Command::new(venv.join("bin/python")).args(["-m", "pip", "show", "efmesh"]));
    assert!(
        show.contains(&format!("Version: {}", env!("CARGO_PKG_VERSION"))),
        "{show}"
    );

    let bin = venv.join("bin/efmesh");
    assert!(bin.is_file(), "pip put no efmesh on the venv's PATH");
    // static DuckDB: the binary needs only the C and C++ runtimes
    let ldd = ok(Command::new("ldd").arg(&bin));
    let allowed = [
        "linux-vdso",
        "libc.so",
        "libm.so",
        "libstdc++.so",
        "libgcc_s.so",
        "ld-linux",
        "libpthread.so",
        "libdl.so",
        "librt.so",
    ];
    for line in ldd.lines().map(str::trim).filter(|l| !l.is_empty()) {
        assert!(
            allowed.iter().any(|a| line.contains(a)),
            "the wheel's binary links `{line}`:\n{ldd}"
        );
    }

    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let version = ok(installed(&venv, &home, tmp.path()).arg("--version"));
    assert_eq!(
        version.trim(),
        format!("efmesh {}", env!("CARGO_PKG_VERSION"))
    );

    // the hospital example, end to end: check, its unit tests, a build with its parquet lake
    let project = common::copy_example("hospital");
    let p = project.path();
    ok(installed(&venv, &home, p).arg("check"));
    ok(installed(&venv, &home, p).arg("test"));
    ok(installed(&venv, &home, p).args(["apply", "prod", "--yes"]));
    let parquet = common::walk(&p.join("lake"))
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "parquet"))
        .count();
    assert!(parquet > 0, "the lake holds no parquet file");
    let rows = ok(installed(&venv, &home, p).args([
        "query",
        "prod",
        "SELECT count(*) AS n FROM med.moves",
        "--format",
        "csv",
    ]));
    let n: u64 = rows.lines().nth(1).unwrap().parse().unwrap();
    assert!(n > 0, "{rows}");
    // nothing was fetched: DuckDB's extension directory under HOME was never created
    assert!(
        !home.join(".duckdb/extensions").exists(),
        "the binary installed a DuckDB extension"
    );

    // the manual pages and completions pip put under the venv's share/
    let share = venv.join("share");
    for file in [
        "man/man1/efmesh.1",
        "man/man1/efmesh-plan.1",
        "man/man1/efmesh-apply.1",
        "bash-completion/completions/efmesh",
        "zsh/site-functions/_efmesh",
        "fish/vendor_completions.d/efmesh.fish",
    ] {
        assert!(
            share.join(file).is_file(),
            "the wheel did not install share/{file}"
        );
    }
    let found = ok(Command::new("man")
        .arg("-w")
        .arg("efmesh-plan")
        .env("MANPATH", share.join("man")));
    assert!(found.trim().ends_with("efmesh-plan.1"), "{found}");
}
