//! efmesh: SQL models fingerprinted by their canonical AST, planned as diffs against an
//! environment, and applied to DuckDB.
//!
//! This crate is the native half: it finds a project on disk, reads its files, and hands them
//! to [`efmesh_core`], which does the thinking without I/O. The `efmesh` binary is a thin
//! layer over the [`Efmesh`] facade, so everything the CLI does is available to Rust code.
//!
//! ```
//! # let dir = tempfile::tempdir().unwrap();
//! # std::fs::create_dir_all(dir.path().join("models")).unwrap();
//! # std::fs::write(dir.path().join("efmesh.toml"), "[project]\nname = \"demo\"\n").unwrap();
//! # std::fs::write(dir.path().join("models/a.sql"), "MODEL (name s.a, kind FULL, columns (id INT));\nSELECT 1 AS id").unwrap();
//! # std::fs::write(dir.path().join("models/b.sql"), "MODEL (name s.b, kind VIEW);\nSELECT id FROM s.a").unwrap();
//! use efmesh::{ApplyOptions, Efmesh};
//!
//! let project = Efmesh::open(dir.path())?;
//! let plan = project.plan("dev")?;
//! assert!(plan.has_changes());
//! let applied = project.apply(&plan, ApplyOptions { applied_by: Some("docs".into()), ..Default::default() })?;
//! assert_eq!(applied.built, ["s.a", "s.b"]);
//!
//! // promotion to prod only swaps views
//! let promoted = project.apply(&project.plan("prod")?, ApplyOptions::default())?;
//! assert!(promoted.built.is_empty());
//! assert!(!project.plan("prod")?.has_changes());
//! # Ok::<(), efmesh::Error>(())
//! ```
#![warn(missing_docs)]

// The seams (engine, state store, lake store) are public, so a backend can live outside this
// crate; everything else is reached through the re-exports below.
pub mod cli;
pub mod engine;
mod error;
mod exec;
mod lake;
mod ops;
pub mod state;
pub mod testing;
mod util;
mod workspace;

pub use efmesh_core as core;
pub use efmesh_core::plan::Plan;
pub use error::{CheckFailure, Error, SeedBadValue};
pub use exec::apply::{
    os_user, ApplyOptions, ApplyOutcome, BatchDone, BatchProgress, ModelFinished, Progress,
    ProgressHook, PROGRESS,
};
pub use exec::audits::{AuditResult, AuditStatus};
pub use lake::local::LocalFs;
pub use lake::store::{Entry as LakeEntry, LakeStore, Scratch};
pub use ops::audit::AuditReport;
pub use ops::compact::{CompactOptions, CompactReport, PartitionReport};
pub use ops::janitor::{Collected, JanitorOptions, JanitorReport};
pub use ops::lock::{EnvLock, Fence};
pub use ops::passport::{ModelPassport, PassportReport};
pub use ops::restate::{RestateReport, Restated};
pub use ops::run::{run_dir, RunOptions, RunReport};
pub use ops::status::{ModelLag, StatusReport};
pub use workspace::backends::Backends;
pub use workspace::{
    check, migrate, plan_dir, plan_dir_checked, state_for_dir, CheckReport, Efmesh, Graph,
    GraphModel, ModelDef, ProjectBuilder, RenderOptions, Rendered,
};
