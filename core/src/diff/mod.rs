//! Comparing two environments: which models serve different versions and why
//! ([`versions`]), and, for `--data`, the statements that measure how their rows differ and the
//! reading of what those statements return ([`data`]). Pure: the caller fetches pointers and
//! snapshots and runs the statements.

pub mod data;
pub mod versions;

pub use data::{KeyedStats, SchemaDrift};
pub use versions::{compare_environments, VersionDiff};
