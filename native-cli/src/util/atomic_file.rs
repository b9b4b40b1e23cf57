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
    // a file efmesh wrote itself is small; a device or a runaway file is not read at all
    let bytes = crate::util::bounded_read::read_bounded(path, READ_LIMIT).ok()?;
    String::from_utf8(bytes).ok()
}

/// The most [`read`] takes in: far above any file efmesh writes through this module.
const READ_LIMIT: u64 = 64 * 1024 * 1024;

/// Refuse `dest` as a place to [`write`] unless it is missing or a regular file: renaming over
/// `/dev/null` (as root) would replace the device. The error says what it is instead.
pub fn check_target(dest: &Path) -> Result<(), String> {
    match std::fs::metadata(dest) {
        Ok(m) if !m.is_file() => Err(format!(
            "`{}` is not a regular file (a directory, device or pipe); efmesh replaces the file it writes, so give it a file path",
            dest.display()
        )),
        _ => Ok(()),
    }
}

/// [`write`] `name` into `dir`, creating the directory (and its parents) first: for commands
/// that publish files into a directory the user names (`efmesh man --out-dir`).
pub fn write_in(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), (PathBuf, std::io::Error)> {
    std::fs::create_dir_all(dir).map_err(|e| (dir.to_path_buf(), e))?;
    write(&dir.join(name), bytes)
}

/// Replace `dest` with `bytes`. The error names the file that could not be written; the
/// temporary file is removed on failure.
pub fn write(dest: &Path, bytes: &[u8]) -> Result<(), (PathBuf, std::io::Error)> {
    check_target(dest).map_err(|e| {
        (
            dest.to_path_buf(),
            std::io::Error::new(std::io::ErrorKind::InvalidInput, e),
        )
    })?;
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

    #[test]
    fn devices_and_directories_are_never_replaced_or_read() {
        let dev = std::path::Path::new("/dev/null");
        assert!(super::check_target(dev)
            .unwrap_err()
            .contains("not a regular file"));
        let (path, e) = super::write(dev, b"x").unwrap_err();
        assert_eq!(path, dev);
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert!(std::fs::metadata(dev)
            .unwrap()
            .file_type()
            .is_char_device_like());
        assert_eq!(super::read(std::path::Path::new("/dev/zero")), None);
        let dir = tempfile::tempdir().unwrap();
        assert!(super::check_target(dir.path()).is_err());
        assert!(super::check_target(&dir.path().join("new.prom")).is_ok());
    }

    trait CharDevice {
        fn is_char_device_like(&self) -> bool;
    }
    impl CharDevice for std::fs::FileType {
        fn is_char_device_like(&self) -> bool {
            use std::os::unix::fs::FileTypeExt;
            self.is_char_device()
        }
    }
}
