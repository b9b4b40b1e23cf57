//! efmesh-core: the platform-neutral heart of efmesh.
//!
//! This crate performs no I/O, spawns no threads and needs no async runtime, so the same code
//! runs in the native CLI and in WebAssembly. It takes a project as data (file paths and their
//! text, seed hashes, environment variables) and returns decisions as values: parsed models,
//! diagnostics, canonical SQL, fingerprints and the DAG.
//!
//! The SQL-analysis half (model files, sqlparser, project loading) sits behind the `analysis`
//! feature, which is on by default; the browser bundle builds without it.
#![warn(missing_docs)]
// Diagnostics travel on cold error paths; boxing them would only add noise at every call site.
#![allow(clippy::result_large_err)]

pub mod contract;
pub mod diagnostic;
pub mod location;
pub mod manifest;
pub mod naming;
pub mod passport;
pub mod quote;
pub mod reader;
pub mod type_name;
pub mod types;

#[cfg(feature = "analysis")]
pub mod audit;
#[cfg(feature = "analysis")]
pub mod config;
#[cfg(feature = "analysis")]
pub mod cron;
#[cfg(feature = "analysis")]
pub mod dag;
#[cfg(feature = "analysis")]
pub mod diff;
#[cfg(feature = "analysis")]
pub mod environment_statements;
#[cfg(feature = "analysis")]
pub mod external_yaml;
#[cfg(feature = "analysis")]
pub mod fingerprint;
#[cfg(feature = "analysis")]
pub mod html_page;
pub mod interval;
#[cfg(feature = "analysis")]
pub mod lineage;
#[cfg(feature = "analysis")]
pub mod materialize;
#[cfg(feature = "analysis")]
pub mod model;
#[cfg(feature = "analysis")]
pub mod model_sql;
#[cfg(feature = "analysis")]
pub mod plan;
#[cfg(feature = "analysis")]
pub mod project;
#[cfg(feature = "analysis")]
pub mod seed;
#[cfg(feature = "analysis")]
pub mod sql;
#[cfg(feature = "analysis")]
pub mod sqlmesh_config;
#[cfg(feature = "analysis")]
pub mod suggest;
#[cfg(feature = "analysis")]
pub mod support;
pub mod time;

pub use diagnostic::{Diagnostic, Problem, Severity};
pub use location::Location;

/// The `apiVersion` carried by every `--json` payload; bumped only when a field breaks.
pub const API_VERSION: u32 = 1;
