//! Reading a published lake: what a consumer (a browser page, an edge function, the JS package)
//! concludes from one `manifest.json`.
//!
//! Everything here is a pure function of a [`Manifest`](crate::manifest::Manifest), so the
//! native CLI, the WebAssembly build and the tests compute the same passport, the same
//! freshness verdict and the same file URLs. A client needs exactly one fetch, the manifest,
//! before it reads data.

pub mod file_urls;
pub mod freshness_check;
pub mod passport_view;
pub mod relation;

pub use file_urls::resolve_files;
pub use freshness_check::{check_freshness, FreshnessStatus, FreshnessVerdict};
pub use passport_view::{passport_of, PassportView};
pub use relation::{file_alias, relation_sql, Relation};
