//! The lake's storage seam: everything the lake writes or reads goes through [`LakeStore`],
//! so an object store (S3-compatible) is one new implementation, not a change to publishing.
//!
//! Keys are `/`-separated paths relative to the store's root. Why not the `object_store`
//! crate's trait directly: it is async (the executor is not), and publishing needs one thing
//! it does not offer, a scratch location the *engine* can write a file to before efmesh names
//! it by its content. An S3 implementation can wrap `object_store` behind this trait.

use crate::Error;
use std::path::PathBuf;

/// A file the engine writes before it is published: a local path, with the folder (key) it
/// will be published in.
#[derive(Debug)]
pub struct Scratch {
    /// Where the engine writes it.
    pub path: PathBuf,
    /// The folder (key) it is published in.
    pub dir: String,
}

/// One stored file, as a listing shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its key.
    pub key: String,
    /// Its size in bytes.
    pub size: u64,
    /// When it was last written.
    pub modified: std::time::SystemTime,
}

/// Where lake files live.
pub trait LakeStore: Send + Sync {
    /// The store, for messages (a folder or a bucket URL).
    fn describe(&self) -> String;
    /// What the engine reads for `key`.
    fn url(&self, key: &str) -> String;
    /// How the engine's physical views name `key`: [`LakeStore::url`] unless the store can
    /// say it relative to the project root (a local lake inside the project), so a moved or
    /// copied project keeps reading its files.
    fn sql_path(&self, key: &str) -> String {
        self.url(key)
    }
    /// A fresh scratch file for a file to be published in folder `dir`. Its name matches no
    /// `*.parquet` glob, so a reader never picks up a half-written file.
    fn scratch(&self, dir: &str) -> Result<Scratch, Error>;
    /// Publish a scratch file under its content address in its folder, durably; the file
    /// name and its size. Publishing the same bytes twice is a no-op.
    fn publish(&self, scratch: Scratch) -> Result<(String, u64), Error>;
    /// Drop a scratch file that will not be published.
    fn discard(&self, scratch: Scratch);
    /// The content of `key`, or `None` when there is none.
    fn read(&self, key: &str) -> Result<Option<Vec<u8>>, Error>;
    /// Replace `key`'s content atomically: readers see the old bytes or the new, never part.
    fn write(&self, key: &str, bytes: &[u8]) -> Result<(), Error>;
    /// The files directly in folder `dir` (none when it does not exist).
    fn list(&self, dir: &str) -> Result<Vec<Entry>, Error>;
    /// Every file under folder `dir`, at any depth (one listing on an object store, so a
    /// plan checks a version's files with one request, not one per file).
    fn list_all(&self, dir: &str) -> Result<Vec<Entry>, Error>;
    /// Whether `key` exists.
    fn exists(&self, key: &str) -> bool;
    /// Delete `key`; gone already is fine.
    fn delete(&self, key: &str) -> Result<(), Error>;
    /// Delete folder `dir` and everything in it; gone already is fine.
    fn delete_dir(&self, dir: &str) -> Result<(), Error>;
}

/// The content address of a data file: a name that always means the same bytes.
pub fn content_name(bytes: &[u8]) -> String {
    format!(
        "data-{}.parquet",
        &efmesh_core::fingerprint::content_hash(bytes)[..8]
    )
}

/// `dir/name`, or `name` at the root.
pub fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{}/{name}", dir.trim_end_matches('/'))
    }
}
