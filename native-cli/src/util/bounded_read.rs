//! Reading a file the user named, with a ceiling: a seed `path '/dev/zero'` or a runaway
//! generated file must end in a clear error, not in gigabytes of memory.

use std::io::Read;
use std::path::Path;

/// The most a seed file may hold. Seeds are small reference tables shipped with the project;
/// anything larger belongs in an EXTERNAL model the engine reads itself.
pub const SEED_LIMIT: u64 = 256 * 1024 * 1024;

/// The most a project text file (a model, an audit, `efmesh.toml`, a unit test) may hold: a
/// model file of 16 MiB is already generated beyond reading.
pub const TEXT_LIMIT: u64 = 16 * 1024 * 1024;

/// A project text file, read as [`read_bounded`] does with [`TEXT_LIMIT`], as an I/O error the
/// caller reports with the path: `NotFound` stays `NotFound`; a device, an oversized file or
/// text that is not UTF-8 is `InvalidData` saying so.
pub fn read_text(path: &Path) -> std::io::Result<String> {
    read_text_stat(path).map(|(text, _)| text)
}

/// [`read_text`], with the file's metadata as it was before the read: what the project cache
/// remembers to know later, from a stat alone, that the file has not changed.
pub fn read_text_stat(path: &Path) -> std::io::Result<(String, std::fs::Metadata)> {
    let (bytes, meta) = read_limited_stat(path, TEXT_LIMIT)?;
    let text = String::from_utf8(bytes).map_err(|_| invalid("it is not UTF-8 text".into()))?;
    Ok((text, meta))
}

/// The content of the regular file at `path`, refused when it is not a regular file (a device,
/// a FIFO, a directory) or holds more than `limit` bytes. The error says which, for a message
/// that names the file.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    read_bounded_stat(path, limit).map(|(bytes, _)| bytes)
}

/// [`read_bounded`], with the metadata as [`read_text_stat`] gives it.
pub fn read_bounded_stat(path: &Path, limit: u64) -> Result<(Vec<u8>, std::fs::Metadata), String> {
    read_limited_stat(path, limit).map_err(|e| e.to_string())
}

/// The one reading loop behind both: open, refuse what is not a regular file, read at most one
/// byte past `limit` so an oversized file is known without reading all of it.
fn read_limited_stat(path: &Path, limit: u64) -> std::io::Result<(Vec<u8>, std::fs::Metadata)> {
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(invalid("it is not a regular file".into()));
    }
    let mut bytes = Vec::with_capacity(meta.len().min(limit) as usize);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(invalid(format!(
            "it holds more than {} MiB, the most efmesh reads for it",
            limit / (1024 * 1024)
        )));
    }
    Ok((bytes, meta))
}

fn invalid(message: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_oversized_files_are_refused() {
        assert_eq!(
            read_bounded(Path::new("/dev/zero"), 10).unwrap_err(),
            "it is not a regular file"
        );
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.csv");
        std::fs::write(&f, vec![b'x'; 2 * 1024 * 1024 + 1]).unwrap();
        let e = read_bounded(&f, 2 * 1024 * 1024).unwrap_err();
        assert!(e.contains("more than 2 MiB"), "{e}");
        assert_eq!(
            read_bounded(&f, 3 * 1024 * 1024).unwrap().len(),
            2 * 1024 * 1024 + 1
        );
        assert!(read_bounded(dir.path(), 10).is_err());
    }
}
