//! Replacing a file so that a reader sees the old content or the new, never half of either:
//! write a temporary file beside it, make it durable, rename it over the destination.
//!
//! Manifests, the metrics textfile, the project cache and `efmesh init`'s files all go through
//! here; a killed process leaves at most a dot-named temporary file behind.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The temporary name for `dest`: hidden, in the same folder (so the rename is atomic), and
/// per process (so concurrent writers never share one).
fn temp_for(dest: &Path) -> PathBuf {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dest.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// The current content of a file written through [`write`], or `None` when there is none:
/// readers of such files (the metrics textfile's previous samples) come here too.
pub fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// Replace `dest` with `bytes`. The error names the file that could not be written; the
/// temporary file is removed on failure.
pub fn write(dest: &Path, bytes: &[u8]) -> Result<(), (PathBuf, std::io::Error)> {
    let tmp = temp_for(dest);
    let written = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
        .map_err(|e| (tmp.clone(), e))
        .and_then(|()| std::fs::rename(&tmp, dest).map_err(|e| (dest.to_path_buf(), e)));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    #[test]
    fn replaces_the_file_and_leaves_no_temporary_behind() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("m.json");
        std::fs::write(&dest, "old").unwrap();
        super::write(&dest, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let missing = dir.path().join("no/such/dir/m.json");
        let (path, _) = super::write(&missing, b"x").unwrap_err();
        assert!(path.ends_with(".m.json.tmp-".to_string() + &std::process::id().to_string()));
    }
}
