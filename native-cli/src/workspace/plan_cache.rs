//! The project cache: the fingerprints of the last full load, keyed by the content of every
//! file that shapes them, so a plan with nothing to do answers without parsing a model.
//!
//! The key hashes this efmesh build, the config (`efmesh.toml` or `config.yaml`), every model,
//! audit, macro and `external_models.yaml` text (with their paths) and every seed file's content. Any change
//! misses the cache and the plan is computed in full; the cache only ever answers "nothing
//! changed", and only when the environment serves exactly the cached versions.
//!
//! Before reading a file, a plan asks the cheaper question git asks of its index: does every
//! selected file still have the size, inode, and modification and change times it had when
//! its text was read? Then nothing was written to it since. A write in the same clock tick as
//! the one before it can leave the times as they were, so a file touched shortly before the
//! read that stamped it is never trusted by its stat ("racily clean"): the texts decide, and
//! the cache takes stamps again once that file has aged.

use efmesh_core::fingerprint::{content_hash, FINGERPRINT_VERSION};
use efmesh_core::model::Kind;
use efmesh_core::plan::{Action, Category, Plan};
use efmesh_core::project::{seed_path, Project, ProjectSources};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where the cache lives, relative to the project root (hidden, so globs skip it).
pub const CACHE_PATH: &str = ".efmesh/project-cache.json";

/// One model as the cache remembers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedModel {
    /// The model name.
    pub name: String,
    /// The kind's name.
    pub kind: String,
    /// Its fingerprint.
    pub fingerprint: String,
    /// Its metadata hash.
    pub metadata_hash: String,
    /// Whether it is computed interval by interval (then only a full plan knows what is due).
    #[serde(default)]
    pub intervals: bool,
    /// Whether it is published to the lake (then only a full plan checks its manifest).
    #[serde(default)]
    pub parquet: bool,
}

#[derive(Serialize, Deserialize)]
struct Cache {
    key: String,
    /// Project-relative seed files whose content is part of the key.
    seeds: Vec<String>,
    models: Vec<CachedModel>,
    /// What the files of the key looked like when they were read, when every one came from a
    /// file (a model defined in code has none).
    #[serde(default)]
    stamped: Option<Stamped>,
}

/// The files of a cache key by their stat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Stamped {
    /// The hash of this efmesh build and the config's text, which is always read.
    config: String,
    /// When the read that took the stamps began (ns since the epoch).
    since_ns: i64,
    /// Every selected file and seed, project-relative, sorted.
    files: Vec<(String, Stamp)>,
}

/// How long before a read a file must have been last written for its stat to be trusted: two
/// seconds covers the coarsest file system clocks (FAT's).
const RACY_NS: i64 = 2_000_000_000;

impl Stamped {
    /// Whether a file was written so shortly before the read that a later write in the same
    /// clock tick could have kept its stamp.
    fn racy(&self) -> bool {
        self.files
            .iter()
            .any(|(_, s)| s.last_touched_ns() >= self.since_ns - RACY_NS)
    }
}

/// A file as a stat sees it, taken before its text was read: if none of this changed, no
/// write reached the file since (a write sets the change time, which no tool can set back).
/// Kept as `[len, ino, mtime_ns, ctime_ns]`, since a plan parses one per file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "[i64; 4]", into = "[i64; 4]")]
pub struct Stamp {
    len: u64,
    ino: u64,
    mtime_ns: i64,
    ctime_ns: i64,
}

impl From<[i64; 4]> for Stamp {
    fn from([len, ino, mtime_ns, ctime_ns]: [i64; 4]) -> Stamp {
        Stamp {
            len: len as u64,
            ino: ino as u64,
            mtime_ns,
            ctime_ns,
        }
    }
}

impl From<Stamp> for [i64; 4] {
    fn from(s: Stamp) -> [i64; 4] {
        [s.len as i64, s.ino as i64, s.mtime_ns, s.ctime_ns]
    }
}

impl Stamp {
    /// The stamp of a file's metadata (`None` where the platform has no change time).
    pub fn of(meta: &std::fs::Metadata) -> Option<Stamp> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            // nanoseconds since the epoch fit an i64 until 2262
            let ns = |s: i64, n: i64| s.saturating_mul(1_000_000_000).saturating_add(n);
            Some(Stamp {
                len: meta.len(),
                ino: meta.ino(),
                mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
                ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
            })
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            None
        }
    }

    fn last_touched_ns(&self) -> i64 {
        self.mtime_ns.max(self.ctime_ns)
    }
}

/// The stamps one read of a project took.
#[derive(Debug, Clone)]
pub struct Stamps {
    since_ns: i64,
    files: BTreeMap<String, Stamp>,
}

impl Stamps {
    /// Stamps for a read beginning now: call it before the first file is opened.
    pub fn start() -> Stamps {
        let since_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as i64)
            .unwrap_or(0);
        Stamps {
            since_ns,
            files: BTreeMap::new(),
        }
    }

    /// Record `path` (project-relative) as its stat showed it before its read.
    pub fn insert(&mut self, path: String, stamp: Stamp) {
        self.files.insert(path, stamp);
    }

    /// How many files are stamped.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.files.len()
    }
}

/// Something that changes whenever the efmesh binary does, so a rebuilt efmesh never trusts
/// an old cache.
fn build_identity() -> String {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::metadata(p).ok());
    let stamp = exe
        .map(|m| format!("{}:{:?}", m.len(), m.modified().ok()))
        .unwrap_or_default();
    format!(
        "{}|{FINGERPRINT_VERSION}|{stamp}",
        env!("CARGO_PKG_VERSION")
    )
}

fn key(config_text: &str, sources: &ProjectSources, seeds: &[(String, String)]) -> String {
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut put = |label: &str, bytes: &[u8]| {
        buf.extend_from_slice(label.as_bytes());
        buf.push(0);
        buf.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        buf.extend_from_slice(bytes);
    };
    put("build", build_identity().as_bytes());
    put("config", config_text.as_bytes());
    for f in sources
        .models
        .iter()
        .chain(&sources.audits)
        .chain(&sources.macros)
        .chain(&sources.external_models)
    {
        put(&f.path, f.text.as_bytes());
    }
    for (path, hash) in seeds {
        put(path, hash.as_bytes());
    }
    content_hash(&buf)
}

fn cache_file(root: &Path) -> PathBuf {
    root.join(CACHE_PATH)
}

fn config_key(config_text: &str) -> String {
    let mut buf = build_identity().into_bytes();
    buf.push(0);
    buf.extend_from_slice(config_text.as_bytes());
    content_hash(&buf)
}

/// The stamps of every file of the key, when each has one.
fn stamped(
    config_text: &str,
    sources: &ProjectSources,
    seeds: &[(String, String)],
    stamps: &Stamps,
) -> Option<Stamped> {
    let all_stamped = sources
        .models
        .iter()
        .chain(&sources.audits)
        .chain(&sources.macros)
        .chain(&sources.external_models)
        .map(|f| &f.path)
        .chain(seeds.iter().map(|(p, _)| p))
        .all(|p| stamps.files.contains_key(p));
    all_stamped.then(|| Stamped {
        config: config_key(config_text),
        since_ns: stamps.since_ns,
        files: stamps.files.iter().map(|(p, s)| (p.clone(), *s)).collect(),
    })
}

/// Whether `fresh` stamps should replace the cache's: they differ, or the cache's could not
/// be trusted yet.
fn restamp(cached: &Option<Stamped>, fresh: &Option<Stamped>) -> bool {
    match (cached, fresh) {
        (Some(c), Some(f)) => c.files != f.files || c.config != f.config || c.racy(),
        (c, f) => c.is_some() != f.is_some(),
    }
}

/// Remember a freshly loaded project, with the stamps its files had before they were read.
/// Failures only cost speed, so they are logged, not raised.
pub fn remember(
    root: &Path,
    config_text: &str,
    sources: &ProjectSources,
    project: &Project,
    stamps: &Stamps,
) {
    let seeds: Vec<(String, String)> = project
        .models
        .iter()
        .zip(&project.seed_hashes)
        .filter_map(|(m, h)| match (&m.kind, h) {
            (Kind::Seed { path }, Some(h)) => Some((seed_path(&m.file, path), h.clone())),
            _ => None,
        })
        .collect();
    let cache = Cache {
        key: key(config_text, sources, &seeds),
        stamped: stamped(config_text, sources, &seeds, stamps),
        seeds: seeds.into_iter().map(|(p, _)| p).collect(),
        models: project
            .models
            .iter()
            .zip(&project.fingerprints)
            .map(|(m, fp)| CachedModel {
                name: m.name.clone(),
                kind: m.kind.name().to_string(),
                fingerprint: fp.clone(),
                metadata_hash: efmesh_core::fingerprint::metadata_hash(m),
                intervals: efmesh_core::plan::has_intervals(&m.kind),
                parquet: m.target == efmesh_core::model::Target::Parquet,
            })
            .collect(),
    };
    let path = cache_file(root);
    if read(&path).is_some_and(|c| c.key == cache.key && !restamp(&c.stamped, &cache.stamped)) {
        return;
    }
    write(&path, &cache);
}

fn write(path: &Path, cache: &Cache) {
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(path.parent().expect("cache path has a parent"))?;
        crate::util::atomic_file::write(path, &serde_json::to_vec(cache).expect("cache serializes"))
            .map_err(|(_, e)| e)
    };
    if let Err(e) = write() {
        tracing::debug!(path = %path.display(), error = %e, "could not write the project cache");
    }
}

fn read(path: &Path) -> Option<Cache> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// The cached models, when no input changed since they were computed, known from the texts
/// already read. When the files' stamps moved (a touch, a checkout of the same content), the
/// cache takes the new ones, so the next plan can trust a stat again.
pub fn lookup(
    root: &Path,
    config_text: &str,
    sources: &ProjectSources,
    stamps: &Stamps,
) -> Option<Vec<CachedModel>> {
    let path = cache_file(root);
    let mut cache = read(&path)?;
    let mut stamps = stamps.clone();
    let mut seeds = Vec::with_capacity(cache.seeds.len());
    for p in &cache.seeds {
        let (bytes, meta) = crate::util::bounded_read::read_bounded_stat(
            &root.join(p),
            crate::util::bounded_read::SEED_LIMIT,
        )
        .ok()?;
        if let Some(s) = Stamp::of(&meta) {
            stamps.insert(p.clone(), s);
        }
        seeds.push((p.clone(), content_hash(&bytes)));
    }
    if key(config_text, sources, &seeds) != cache.key {
        return None;
    }
    let now = stamped(config_text, sources, &seeds, &stamps);
    if restamp(&cache.stamped, &now) {
        cache.stamped = now;
        write(&path, &cache);
    }
    tracing::debug!("project cache: the texts are unchanged");
    Some(cache.models)
}

/// The cached models, when a stat of every file the config selects (`selected`) and of every
/// cached seed shows each as it was when the cache was written, and the config's text is
/// the same: no file is read. `None` sends the caller to [`lookup`] with the texts.
pub fn lookup_stamped<'a>(
    root: &Path,
    config_text: &str,
    selected: impl Iterator<Item = &'a str>,
) -> Option<Vec<CachedModel>> {
    let cache = read(&cache_file(root))?;
    let stamped = cache.stamped.as_ref()?;
    if stamped.config != config_key(config_text) || stamped.racy() {
        return None;
    }
    let mut paths: Vec<&str> = selected.collect();
    paths.extend(cache.seeds.iter().map(String::as_str));
    paths.sort_unstable();
    paths.dedup();
    if paths.len() != stamped.files.len() {
        return None;
    }
    for (p, (recorded, stamp)) in paths.into_iter().zip(&stamped.files) {
        if p != recorded {
            return None;
        }
        let now = Stamp::of(&std::fs::metadata(root.join(p)).ok()?)?;
        if now != *stamp {
            return None;
        }
    }
    tracing::debug!(
        files = stamped.files.len(),
        "project cache: every file as stamped, none read"
    );
    Some(cache.models)
}

/// The all-unchanged plan, when the environment serves exactly the cached versions.
pub fn noop_plan(
    env: &str,
    models: &[CachedModel],
    pointers: &BTreeMap<String, crate::state::Served>,
) -> Option<Plan> {
    // intervals fall due as time passes: only a full plan can tell for incremental models
    // lake versions are checked against their manifests by a full plan
    if pointers.len() != models.len() || models.iter().any(|m| m.intervals || m.parquet) {
        return None;
    }
    let mut actions = Vec::with_capacity(models.len());
    for m in models {
        let p = pointers.get(&m.name)?;
        if p.fingerprint != m.fingerprint || p.metadata_hash != m.metadata_hash {
            return None;
        }
        actions.push(Action {
            model: m.name.clone(),
            kind: m.kind.clone(),
            category: Category::Unchanged,
            fingerprint: Some(m.fingerprint.clone()),
            previous_fingerprint: Some(m.fingerprint.clone()),
            physical_fingerprint: None,
            build: false,
            explain: vec![],
            caused_by: vec![],
            forward_only: false,
            batches: vec![],
            sql_change: None,
        });
    }
    tracing::debug!(
        env,
        models = models.len(),
        "plan answered from the project cache"
    );
    Some(Plan {
        env: env.to_string(),
        actions,
        warnings: vec![],
        new_snapshots: vec![],
        missing_physics: vec![],
    })
}

/// Remove the temporary files killed runs left in the project's `.efmesh` folder (an atomic
/// write's `.<file>.tmp-<pid>` whose process is gone); called after a successful apply.
pub(crate) fn sweep_dead_temps(root: &Path) {
    let dir = root.join(".efmesh");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if crate::util::process::left_by_dead_process(&name) {
            tracing::info!(file = %e.path().display(), "removing a temporary file a killed run left");
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(touched_ns: i64) -> Stamp {
        Stamp {
            len: 10,
            ino: 7,
            mtime_ns: touched_ns - 5,
            ctime_ns: touched_ns,
        }
    }

    #[test]
    fn a_stamp_is_kept_as_four_integers_and_read_back() {
        let s = stamp(1_796_499_474_605_061_663);
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(text, "[10,7,1796499474605061658,1796499474605061663]");
        assert_eq!(serde_json::from_str::<Stamp>(&text).unwrap(), s);
    }

    #[test]
    fn a_file_touched_within_two_seconds_of_the_read_is_racy() {
        let since = 1_000_000_000_000;
        let at = |touched| Stamped {
            config: String::new(),
            since_ns: since,
            files: vec![("a.sql".into(), stamp(touched))],
        };
        assert!(!at(since - RACY_NS - 1).racy());
        assert!(at(since - RACY_NS).racy());
        // touched after the read began: its text may be older than its stamp says
        assert!(at(since + 1).racy());
    }
}
