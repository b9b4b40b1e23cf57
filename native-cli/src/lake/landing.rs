//! EXTERNAL models' landing zones on the local file system, as `efmesh compact` rewrites them:
//! listing the files a glob matches, publishing a merged file under its content address
//! (durably, never overwriting different bytes), and removing what it replaced.

use crate::lake::local::{sync_dir, TMP_PREFIX, TMP_SUFFIX};
use crate::Error;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// One file of a partition, as listed before a merge.
#[derive(Debug, Clone)]
pub struct Listed {
    /// The file.
    pub path: PathBuf,
    /// When it was last written.
    pub mtime: SystemTime,
}

/// The files under `base` that `glob` matches (relative to `root` unless `absolute`), grouped
/// by directory, each group sorted.
pub fn matching(
    base: &Path,
    root: &Path,
    absolute: bool,
    glob: &globset::GlobMatcher,
) -> Result<BTreeMap<PathBuf, Vec<Listed>>, Error> {
    let mut groups: BTreeMap<PathBuf, Vec<Listed>> = BTreeMap::new();
    if !base.is_dir() {
        return Ok(groups);
    }
    for entry in walkdir::WalkDir::new(base).follow_links(true) {
        let entry = entry.map_err(|e| Error::Io {
            path: e.path().unwrap_or(base).to_path_buf(),
            message: e.to_string(),
        })?;
        if !entry.file_type().is_file() {
            continue;
        }
        let candidate = if absolute {
            entry.path().to_string_lossy().replace('\\', "/")
        } else {
            let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
            rel.components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/")
        };
        if !glob.is_match(&candidate) {
            continue;
        }
        let mtime = std::fs::metadata(entry.path())
            .and_then(|m| m.modified())
            .map_err(|e| Error::io(entry.path(), e))?;
        let dir = entry.path().parent().unwrap_or(base).to_path_buf();
        groups.entry(dir).or_default().push(Listed {
            path: entry.path().to_path_buf(),
            mtime,
        });
    }
    for files in groups.values_mut() {
        files.sort_by(|a, b| a.path.cmp(&b.path));
    }
    Ok(groups)
}

/// Drop a temporary file that will not be published.
pub fn discard(tmp: &Path) {
    let _ = std::fs::remove_file(tmp);
}

/// Remove a file a merge replaced; gone already is fine.
pub fn remove(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// fsync `tmp`, give it the newest mtime of the files it replaces, and rename it to its
/// content address. Returns the published name.
pub fn publish(tmp: &Path, mtime: SystemTime, listed: &[Listed]) -> Result<String, Error> {
    fn io(p: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
        move |e| Error::io(p, e)
    }
    let bytes = std::fs::read(tmp).map_err(io(tmp))?;
    let name = crate::lake::store::content_name(&bytes);
    let dest = tmp.with_file_name(&name);
    if dest.exists() && !listed.iter().any(|f| f.path == dest) {
        // the same address must mean the same bytes; a different file is never overwritten
        let existing = std::fs::read(&dest).map_err(io(&dest))?;
        if existing != bytes {
            return Err(Error::Io {
                path: dest,
                message: "a different file already has the merged file's content address; move it away and run compact again".into(),
            });
        }
    }
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(tmp)
        .map_err(io(tmp))?;
    f.set_modified(mtime).map_err(io(tmp))?;
    f.sync_all().map_err(io(tmp))?;
    drop(f);
    std::fs::rename(tmp, &dest).map_err(io(&dest))?;
    sync_dir(dest.parent().unwrap_or(Path::new(".")))?;
    Ok(name)
}

/// Remove temporary files a killed run left in `dir`, once they are an hour old.
pub fn remove_stale_tmps(dir: &Path, stale: std::time::Duration) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > stale);
        if name.starts_with(TMP_PREFIX) && name.ends_with(TMP_SUFFIX) && old {
            tracing::info!(file = %e.path().display(), "removing a temporary file of an earlier compaction");
            let _ = std::fs::remove_file(e.path());
        }
    }
}
