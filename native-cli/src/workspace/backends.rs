//! The composition root: the one file that names DuckDB, SQLite or the local file system.
//!
//! Everything else sees the seams: an [`EngineFactory`], a [`StateBackend`] and (for
//! `target parquet`) a [`LakeStore`]. A new backend is a new file behind one of those traits
//! plus one match arm here.

use crate::engine::duckdb::DuckDbFactory;
use crate::engine::postgres::PostgresFactory;
use crate::engine::EngineFactory;
use crate::lake::local::LocalFs;
use crate::lake::s3::S3Store;
use crate::lake::store::LakeStore;
use crate::state::postgres::PostgresBackend;
use crate::state::sqlite::SqliteBackend;
use crate::state::StateBackend;
use crate::Error;
use efmesh_core::config::{Config, EngineTarget, StateTarget};
use std::path::Path;
use std::sync::Arc;

/// The backends a project is configured with.
#[derive(Clone)]
pub struct Backends {
    /// Where models are materialized.
    pub engine: Arc<dyn EngineFactory>,
    /// Where snapshots, environments and the ledger live.
    pub state: Arc<dyn StateBackend>,
    /// Where `target parquet` versions are published (`[lake] path`), if configured.
    pub lake: Option<Arc<dyn LakeStore>>,
    /// An engine of the same kind over no database, for work that needs SQL but not the
    /// warehouse: unit tests over fixture rows, compaction of landing zones.
    pub scratch: Arc<dyn EngineFactory>,
}

impl std::fmt::Debug for Backends {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backends")
            .field("engine", &self.engine.name())
            .field("state", &self.state.location())
            .field("lake", &self.lake.as_ref().map(|l| l.describe()))
            .finish()
    }
}

/// The backends `config` names, for the project at `root`.
pub fn open(root: &Path, config: &Config) -> Result<Backends, Error> {
    let duckdb = |path: &str| DuckDbFactory {
        root: root.to_path_buf(),
        path: path.to_string(),
        config: config.engine.clone(),
    };
    let (engine, scratch): (Arc<dyn EngineFactory>, Arc<dyn EngineFactory>) =
        match &config.engine.target {
            EngineTarget::Duckdb { path } => (Arc::new(duckdb(path)), Arc::new(duckdb(":memory:"))),
            // `efmesh test` runs unit tests on in-memory DuckDB whatever the engine is
            EngineTarget::Postgres { url } => (
                Arc::new(PostgresFactory::new(url.expose(), &config.engine)?),
                Arc::new(DuckDbFactory {
                    root: root.to_path_buf(),
                    path: ":memory:".into(),
                    config: efmesh_core::config::Config::defaults("scratch").engine,
                }),
            ),
        };
    let lake = match (&config.lake_s3, &config.lake_path) {
        (Some(s3), _) => {
            // check refused a lake whose secret is not declared
            let secret = config
                .engine
                .secrets
                .iter()
                .find(|x| x.name == s3.secret)
                .ok_or_else(|| Error::Config {
                    message: format!("no `[[engine.secrets]]` is named `{}`", s3.secret),
                })?;
            Some(
                Arc::new(S3Store::new(s3, secret, root.join(".efmesh/lake-scratch"))?)
                    as Arc<dyn LakeStore>,
            )
        }
        (None, Some(p)) => {
            Some(Arc::new(LocalFs::in_project(root.join(p), root)) as Arc<dyn LakeStore>)
        }
        (None, None) => None,
    };
    Ok(Backends {
        engine,
        state: state(root, config)?,
        lake,
        scratch,
    })
}

/// The state store `config` names: all that commands which must work on a project whose
/// models do not check (`migrate`, the journal of a failed tick) need.
pub fn state(root: &Path, config: &Config) -> Result<Arc<dyn StateBackend>, Error> {
    match &config.state {
        StateTarget::Sqlite { path } => Ok(Arc::new(SqliteBackend {
            path: root.join(path),
        })),
        StateTarget::Postgres { url } => {
            Ok(Arc::new(PostgresBackend::new(url.expose().to_string())?))
        }
    }
}
