//! The lake on the local file system: a folder, files written under a temporary name and
//! renamed into place, directory entries synced, so a killed process never leaves a partial
//! file under a published name.

use super::store::{content_name, Entry, LakeStore, Scratch};
use crate::Error;
use std::path::{Path, PathBuf};

/// The prefix of temporary data files; with [`TMP_SUFFIX`], a name no `*.parquet` glob
/// matches, so readers of a folder never pick up a half-written file.
pub const TMP_PREFIX: &str = ".data-";
/// The suffix of temporary data files.
pub const TMP_SUFFIX: &str = ".parquet.tmp";

/// A lake rooted at a local folder.
#[derive(Debug, Clone)]
pub struct LocalFs {
    root: PathBuf,
    /// The lake's folder relative to the project root, when it lies inside it: engine views
    /// name files by it, and the engine resolves it against the project root.
    relative: Option<PathBuf>,
}

impl LocalFs {
    /// The lake in `root` (absolute).
    pub fn new(root: PathBuf) -> LocalFs {
        LocalFs {
            root,
            relative: None,
        }
    }

    /// The lake in `root` (absolute), named in engine SQL relative to `project` when inside
    /// it (the engine's file search path is the project root).
    pub fn in_project(root: PathBuf, project: &Path) -> LocalFs {
        let relative = root
            .strip_prefix(project)
            .ok()
            .filter(|r| !r.as_os_str().is_empty())
            .map(Path::to_path_buf);
        LocalFs { root, relative }
    }

    fn path(&self, key: &str) -> PathBuf {
        if key.is_empty() {
            self.root.clone()
        } else {
            self.root.join(key)
        }
    }
}

/// A fresh temporary file name in `dir` (process id and clock, so concurrent writers differ).
pub fn temp_path(dir: &Path) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    dir.join(format!(
        "{TMP_PREFIX}{}-{nanos}{TMP_SUFFIX}",
        std::process::id()
    ))
}

/// Make a directory's entries (a rename, deletions) durable.
pub fn sync_dir(dir: &Path) -> Result<(), Error> {
    #[cfg(unix)]
    {
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| Error::io(dir, e))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

impl LakeStore for LocalFs {
    fn describe(&self) -> String {
        self.root.display().to_string()
    }

    fn url(&self, key: &str) -> String {
        self.path(key).display().to_string()
    }

    fn sql_path(&self, key: &str) -> String {
        match &self.relative {
            Some(rel) if key.is_empty() => rel.display().to_string(),
            Some(rel) => rel.join(key).display().to_string(),
            None => self.url(key),
        }
    }

    fn scratch(&self, dir: &str) -> Result<Scratch, Error> {
        let folder = self.path(dir);
        std::fs::create_dir_all(&folder).map_err(|e| Error::io(&folder, e))?;
        Ok(Scratch {
            path: temp_path(&folder),
            dir: dir.to_string(),
        })
    }

    fn publish(&self, scratch: Scratch) -> Result<(String, u64), Error> {
        let io = |p: &Path| {
            let p = p.to_path_buf();
            move |e| Error::io(&p, e)
        };
        let bytes = std::fs::read(&scratch.path).map_err(io(&scratch.path))?;
        let name = content_name(&bytes);
        let dest = scratch.path.with_file_name(&name);
        std::fs::File::open(&scratch.path)
            .and_then(|f| f.sync_all())
            .map_err(io(&scratch.path))?;
        std::fs::rename(&scratch.path, &dest).map_err(io(&dest))?;
        sync_dir(dest.parent().unwrap_or(Path::new(".")))?;
        Ok((name, bytes.len() as u64))
    }

    fn discard(&self, scratch: Scratch) {
        let _ = std::fs::remove_file(scratch.path);
    }

    fn read(&self, key: &str) -> Result<Option<Vec<u8>>, Error> {
        let p = self.path(key);
        match std::fs::read(&p) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(&p, e)),
        }
    }

    fn write(&self, key: &str, bytes: &[u8]) -> Result<(), Error> {
        let p = self.path(key);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        crate::util::atomic_file::write(&p, bytes).map_err(|(path, e)| Error::io(&path, e))
    }

    fn list(&self, dir: &str) -> Result<Vec<Entry>, Error> {
        let folder = self.path(dir);
        let Ok(entries) = std::fs::read_dir(&folder) else {
            return Ok(vec![]);
        };
        let mut out = vec![];
        for e in entries.flatten() {
            let Ok(meta) = e.metadata() else { continue };
            if !meta.is_file() {
                continue;
            }
            out.push(Entry {
                key: super::store::join(dir, &e.file_name().to_string_lossy()),
                size: meta.len(),
                modified: meta.modified().unwrap_or(std::time::UNIX_EPOCH),
            });
        }
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }

    fn list_all(&self, dir: &str) -> Result<Vec<Entry>, Error> {
        let folder = self.path(dir);
        let mut out = vec![];
        for e in walkdir::WalkDir::new(&folder).into_iter().flatten() {
            let Ok(meta) = e.metadata() else { continue };
            if !meta.is_file() {
                continue;
            }
            let Ok(rel) = e.path().strip_prefix(&self.root) else {
                continue;
            };
            out.push(Entry {
                key: rel
                    .to_string_lossy()
                    .replace(std::path::MAIN_SEPARATOR, "/"),
                size: meta.len(),
                modified: meta.modified().unwrap_or(std::time::UNIX_EPOCH),
            });
        }
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }

    fn exists(&self, key: &str) -> bool {
        self.path(key).exists()
    }

    fn delete(&self, key: &str) -> Result<(), Error> {
        let p = self.path(key);
        match std::fs::remove_file(&p) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io(&p, e)),
        }
    }

    fn delete_dir(&self, dir: &str) -> Result<(), Error> {
        let p = self.path(dir);
        match std::fs::remove_dir_all(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(Error::io(&p, e)),
        }
        if let Some(parent) = p.parent() {
            sync_dir(parent)?;
        }
        Ok(())
    }
}
