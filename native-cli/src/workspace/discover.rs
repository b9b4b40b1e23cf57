//! Finding a project on disk: `efmesh.toml` (or a SQLMesh `config.yaml`) by walking up like
//! Cargo, then its files by glob.

use crate::error::Error;
use efmesh_core::config::CONFIG_FILE;
use efmesh_core::sqlmesh_config::SQLMESH_CONFIG_FILES;
use globset::{Glob, GlobSet, GlobSetBuilder};
use std::path::{Path, PathBuf};

/// The directory holding `efmesh.toml`, or a SQLMesh project (`config.yaml` or `config.yml`
/// next to a `models/` directory), searching `start` and its ancestors.
pub fn find_root(start: &Path) -> Result<PathBuf, Error> {
    let start = std::fs::canonicalize(start).map_err(|e| Error::io(start, e))?;
    let mut dir = Some(start.as_path());
    while let Some(d) = dir {
        if d.join(CONFIG_FILE).is_file() || sqlmesh_config(d).is_some() {
            return Ok(d.to_path_buf());
        }
        if d.join("config.py").is_file() && d.join("models").is_dir() {
            return Err(Error::Config {
                message: format!(
                    "{} is a SQLMesh project configured in Python (`config.py`), which efmesh does not run; write its settings as `config.yaml` (or an `efmesh.toml`)",
                    d.display()
                ),
            });
        }
        dir = d.parent();
    }
    Err(Error::NoProject { start })
}

/// The name of the SQLMesh config in `dir`, if `dir` is a SQLMesh project. A `config.yaml`
/// alone is too common a name to claim a directory; with `models/` beside it, it is SQLMesh's.
pub fn sqlmesh_config(dir: &Path) -> Option<&'static str> {
    if !dir.join("models").is_dir() {
        return None;
    }
    SQLMESH_CONFIG_FILES
        .into_iter()
        .find(|n| dir.join(n).is_file())
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

/// Every file of a project tree, walked once: reading a project selects models, audits,
/// macros and more by glob, and walking thousands of files once per glob set cost a no-op
/// plan more than reading them.
pub struct ProjectFiles {
    /// Project-relative paths with `/`, sorted.
    paths: Vec<String>,
}

impl ProjectFiles {
    /// The files under `root`. Hidden directories, `target` and `node_modules` are skipped.
    pub fn walk(root: &Path) -> Result<Self, Error> {
        let mut paths = vec![];
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
            let mut text = String::with_capacity(rel.as_os_str().len());
            for (i, c) in rel.components().enumerate() {
                if i > 0 {
                    text.push('/');
                }
                text.push_str(&c.as_os_str().to_string_lossy());
            }
            paths.push(text);
        }
        paths.sort();
        Ok(ProjectFiles { paths })
    }

    /// The paths matching any of `globs`, sorted.
    pub fn matching(&self, globs: &[String]) -> Result<Vec<String>, Error> {
        let set = globset(globs)?;
        Ok(self
            .paths
            .iter()
            .filter(|p| set.is_match(p.as_str()))
            .cloned()
            .collect())
    }
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
