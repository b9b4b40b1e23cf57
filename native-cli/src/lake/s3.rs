//! The lake in an S3-compatible object store (`[lake] path = "s3://bucket/prefix"`).
//!
//! The engine writes each data file to a local scratch file (its `COPY … TO` is a local
//! write, so a killed process leaves nothing in the bucket), and efmesh uploads it under its
//! content address with one PUT, which an object store makes visible whole or not at all.
//! The manifest is PUT last, so it never names an object that does not exist. The engine
//! reads the published files through httpfs (`s3://` URLs) with the declared secret; efmesh
//! reads manifests, lists prefixes and deletes versions through the `object_store` crate with
//! the same secret's values.

use super::local::LocalFs;
use super::store::{content_name, join, Entry, LakeStore, Scratch};
use crate::Error;
use efmesh_core::config::{EngineSecret, S3Lake};
use futures::TryStreamExt;
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, PutPayload};
use std::path::PathBuf;

/// A lake under `s3://bucket/prefix`.
pub struct S3Store {
    store: AmazonS3,
    bucket: String,
    prefix: String,
    /// Where the engine writes files before they are uploaded (`.efmesh/lake-scratch`).
    scratch: LocalFs,
    runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for S3Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "S3Store({})", self.describe())
    }
}

impl S3Store {
    /// The lake `lake` describes, authenticated with `secret`'s values (`KEY_ID`, `SECRET`,
    /// `SESSION_TOKEN`, `REGION`, `ENDPOINT`, `URL_STYLE`, `USE_SSL`, as DuckDB reads them),
    /// with scratch files under `scratch_dir`.
    pub fn new(
        lake: &S3Lake,
        secret: &EngineSecret,
        scratch_dir: PathBuf,
    ) -> Result<S3Store, Error> {
        let value = |k: &str| secret.texts.get(k).map(|v| v.expose().to_string());
        let use_ssl = value("USE_SSL").is_none_or(|v| !v.eq_ignore_ascii_case("false"));
        let mut b = AmazonS3Builder::new()
            .with_bucket_name(&lake.bucket)
            .with_region(value("REGION").unwrap_or_else(|| "us-east-1".into()))
            .with_allow_http(!use_ssl)
            .with_virtual_hosted_style_request(
                value("URL_STYLE").is_some_and(|v| v.eq_ignore_ascii_case("vhost")),
            );
        if let Some(endpoint) = value("ENDPOINT") {
            let scheme = if use_ssl { "https" } else { "http" };
            b = b.with_endpoint(if endpoint.contains("://") {
                endpoint
            } else {
                format!("{scheme}://{endpoint}")
            });
        }
        if let (Some(id), Some(key)) = (value("KEY_ID"), value("SECRET")) {
            b = b.with_access_key_id(id).with_secret_access_key(key);
        }
        if let Some(token) = value("SESSION_TOKEN") {
            b = b.with_token(token);
        }
        let url = format!("s3://{}/{}", lake.bucket, lake.prefix);
        let store = b.build().map_err(|e| Error::ObjectStore {
            url: url.clone(),
            message: e.to_string(),
        })?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::ObjectStore {
                url,
                message: format!("cannot start the object-store client: {e}"),
            })?;
        sweep_dead_scratch(&scratch_dir);
        Ok(S3Store {
            store,
            bucket: lake.bucket.clone(),
            prefix: lake.prefix.clone(),
            scratch: LocalFs::new(scratch_dir),
            runtime,
        })
    }

    fn path(&self, key: &str) -> ObjectPath {
        ObjectPath::from(join(&self.prefix, key).as_str())
    }

    fn fail(&self, key: &str, e: object_store::Error) -> Error {
        Error::ObjectStore {
            url: self.url(key),
            message: e.to_string(),
        }
    }

    /// Every object under `dir/` (all depths).
    fn all_under(&self, dir: &str) -> Result<Vec<object_store::ObjectMeta>, Error> {
        let prefix = self.path(dir);
        self.runtime
            .block_on(self.store.list(Some(&prefix)).try_collect::<Vec<_>>())
            .map_err(|e| self.fail(dir, e))
    }

    /// `meta` as a listing shows it.
    fn entry(&self, meta: &object_store::ObjectMeta) -> Entry {
        Entry {
            key: self.key_of(meta),
            size: meta.size,
            modified: std::time::SystemTime::from(meta.last_modified),
        }
    }

    /// `meta`'s key relative to the lake's prefix.
    fn key_of(&self, meta: &object_store::ObjectMeta) -> String {
        let full = meta.location.to_string();
        match full.strip_prefix(&self.prefix) {
            Some(rest) if !self.prefix.is_empty() => rest.trim_start_matches('/').to_string(),
            _ => full,
        }
    }
}

impl LakeStore for S3Store {
    fn describe(&self) -> String {
        self.url("")
    }

    fn url(&self, key: &str) -> String {
        let path = join(&self.prefix, key);
        format!("s3://{}/{}", self.bucket, path.trim_end_matches('/'))
    }

    fn scratch(&self, dir: &str) -> Result<Scratch, Error> {
        self.scratch.scratch(dir)
    }

    fn publish(&self, scratch: Scratch) -> Result<(String, u64), Error> {
        let bytes = match self.scratch.read(&scratch_key(&scratch)) {
            Ok(Some(b)) => b,
            Ok(None) => {
                return Err(Error::ObjectStore {
                    url: scratch.path.display().to_string(),
                    message: "the engine wrote no file to publish".into(),
                })
            }
            Err(e) => return Err(e),
        };
        let name = content_name(&bytes);
        let key = join(&scratch.dir, &name);
        let size = bytes.len() as u64;
        let put = self
            .runtime
            .block_on(self.store.put(&self.path(&key), PutPayload::from(bytes)));
        // uploaded or refused, the local copy has served its purpose: a rerun recomputes it
        self.scratch.discard(scratch);
        put.map_err(|e| self.fail(&key, e))?;
        Ok((name, size))
    }

    fn discard(&self, scratch: Scratch) {
        self.scratch.discard(scratch)
    }

    fn read(&self, key: &str) -> Result<Option<Vec<u8>>, Error> {
        let got = self.runtime.block_on(async {
            match self.store.get(&self.path(key)).await {
                Ok(r) => r.bytes().await.map(Some),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        });
        got.map(|b| b.map(|b| b.to_vec()))
            .map_err(|e| self.fail(key, e))
    }

    fn write(&self, key: &str, bytes: &[u8]) -> Result<(), Error> {
        self.runtime
            .block_on(
                self.store
                    .put(&self.path(key), PutPayload::from(bytes.to_vec())),
            )
            .map(|_| ())
            .map_err(|e| self.fail(key, e))
    }

    fn list(&self, dir: &str) -> Result<Vec<Entry>, Error> {
        let prefix = self.path(dir);
        let listed = self
            .runtime
            .block_on(self.store.list_with_delimiter(Some(&prefix)))
            .map_err(|e| self.fail(dir, e))?;
        let mut out: Vec<Entry> = listed.objects.iter().map(|o| self.entry(o)).collect();
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }

    fn list_all(&self, dir: &str) -> Result<Vec<Entry>, Error> {
        let mut out: Vec<Entry> = self.all_under(dir)?.iter().map(|o| self.entry(o)).collect();
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }

    fn exists(&self, key: &str) -> bool {
        let path = self.path(key);
        self.runtime.block_on(async {
            if self.store.head(&path).await.is_ok() {
                return true;
            }
            // a folder exists when anything is under it
            let mut under = self.store.list(Some(&path));
            matches!(under.try_next().await, Ok(Some(_)))
        })
    }

    fn delete(&self, key: &str) -> Result<(), Error> {
        match self.runtime.block_on(self.store.delete(&self.path(key))) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.fail(key, e)),
        }
    }

    fn delete_dir(&self, dir: &str) -> Result<(), Error> {
        // the manifest first, so no reader is left with a manifest naming deleted objects
        let mut all = self.all_under(dir)?;
        all.sort_by_key(|o| {
            !o.location
                .as_ref()
                .ends_with(efmesh_core::manifest::MANIFEST_FILE)
        });
        for o in all {
            let key = self.key_of(&o);
            self.delete(&key)?;
        }
        Ok(())
    }
}

/// The key of a scratch file inside the scratch folder.
fn scratch_key(scratch: &Scratch) -> String {
    let name = scratch
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    join(&scratch.dir, &name)
}

/// Remove scratch files whose writer process is gone (a killed apply): they were never
/// uploaded, so nothing in the bucket refers to them.
fn sweep_dead_scratch(dir: &std::path::Path) {
    for e in walkdir::WalkDir::new(dir).into_iter().flatten() {
        let name = e.file_name().to_string_lossy();
        if e.file_type().is_file() && crate::util::process::left_by_dead_process(&name) {
            tracing::info!(file = %e.path().display(), "removing a scratch file a killed run left");
            let _ = std::fs::remove_file(e.path());
        }
    }
}
