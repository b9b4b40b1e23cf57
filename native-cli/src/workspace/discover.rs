//! Finding a project on disk: `efmesh.toml` by walking up like Cargo, then its files by glob.

use crate::error::Error;
use efmesh_core::config::CONFIG_FILE;
use globset::{Glob, GlobSet, GlobSetBuilder};
use std::path::{Path, PathBuf};

/// The directory holding `efmesh.toml`, searching `start` and its ancestors.
pub fn find_root(start: &Path) -> Result<PathBuf, Error> {
    let start = std::fs::canonicalize(start).map_err(|e| Error::io(start, e))?;
    let mut dir = Some(start.as_path());
    while let Some(d) = dir {
        if d.join(CONFIG_FILE).is_file() {
            return Ok(d.to_path_buf());
        }
        dir = d.parent();
    }
    Err(Error::NoProject { start })
}

fn globset(globs: &[String]) -> Result<GlobSet, Error> {
    let mut b = GlobSetBuilder::new();
    for g in globs {
        let glob = Glob::new(g).map_err(|e| Error::Config {
            message: format!("`{g}` is not a valid glob: {e}"),
        })?;
        b.add(glob);
    }
    b.build().map_err(|e| Error::Config {
        message: e.to_string(),
    })
}

/// Project-relative paths (with `/`) of the files under `root` matching any of `globs`,
/// sorted. Hidden directories, `target` and `node_modules` are skipped.
pub fn matching_files(root: &Path, globs: &[String]) -> Result<Vec<String>, Error> {
    let set = globset(globs)?;
    let mut out = vec![];
    let walker = walkdir::WalkDir::new(root)
        .follow_links(true)
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            e.depth() == 0
                || !(name.starts_with('.')
                    || (e.file_type().is_dir() && (name == "target" || name == "node_modules")))
        });
    for entry in walker {
        let entry = entry.map_err(|e| Error::Io {
            path: root.to_path_buf(),
            message: e.to_string(),
        })?;
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
        let rel = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        if set.is_match(&rel) {
            out.push(rel);
        }
    }
    out.sort();
    Ok(out)
}

/// `path` with links and `..` resolved, or as given when it cannot be (what a crontab line
/// should call).
pub fn resolve(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The project's log folder (`.efmesh/logs`), created when missing: where scheduled ticks
/// append their output.
pub fn logs_dir(root: &Path) -> Result<PathBuf, Error> {
    let logs = root.join(".efmesh/logs");
    std::fs::create_dir_all(&logs).map_err(|e| Error::io(&logs, e))?;
    Ok(logs)
}
