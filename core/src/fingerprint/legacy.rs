//! Fingerprints as older algorithms computed them, so upgrading efmesh never rebuilds a model
//! whose definition did not change.
//!
//! When an environment serves a version fingerprinted by an older [`FINGERPRINT_VERSION`], the
//! planner recomputes the project's fingerprints with that algorithm. Equal means the
//! definition is the one that was built, so the new version keeps its data; different means a
//! real change, categorized as breaking. Each supported old version is frozen by a golden test
//! over the same corpus as the current one.
//!
//! [`FINGERPRINT_VERSION`]: super::FINGERPRINT_VERSION

use super::{hash_payload, payload_with};
use crate::model::{Kind, Model};
use serde::Serialize;

/// The oldest algorithm [`fingerprint`] can reproduce.
pub const OLDEST: u32 = 1;

/// The kind as version 1 serialized it: `batch_size` was part of the kind.
#[derive(Serialize)]
#[serde(untagged)]
enum KindV1<'a> {
    TimeRange {
        name: &'static str,
        time_column: &'a str,
        time_column_format: Option<&'a str>,
        batch_size: Option<u32>,
        lookback: u32,
    },
    UniqueKey {
        name: &'static str,
        unique_key: &'a [String],
        batch_size: Option<u32>,
        lookback: u32,
    },
    Unchanged(&'a Kind),
}

fn kind_v1(m: &Model) -> KindV1<'_> {
    let size = m.batching.size;
    match &m.kind {
        Kind::IncrementalByTimeRange {
            time_column,
            time_column_format,
            lookback,
        } => KindV1::TimeRange {
            name: "INCREMENTAL_BY_TIME_RANGE",
            time_column,
            time_column_format: time_column_format.as_deref(),
            batch_size: size,
            lookback: *lookback,
        },
        Kind::IncrementalByUniqueKey {
            unique_key,
            lookback,
        } => KindV1::UniqueKey {
            name: "INCREMENTAL_BY_UNIQUE_KEY",
            unique_key,
            batch_size: size,
            lookback: *lookback,
        },
        other => KindV1::Unchanged(other),
    }
}

/// The project as an older algorithm fingerprinted it (see `Project::legacy`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Legacy {
    /// Every model's fingerprint (same index as `project.models`).
    pub fingerprints: Vec<String>,
    /// Every model's definition hash, parents excluded (same index).
    pub definition_hashes: Vec<String>,
}

/// Whether this efmesh can reproduce algorithm `version`.
pub fn reproducible(version: u32) -> bool {
    (OLDEST..super::FINGERPRINT_VERSION).contains(&version)
}

/// A model's fingerprint as algorithm `version` (see [`reproducible`]) computed it, from the
/// parents' fingerprints of that same version.
pub fn fingerprint(
    version: u32,
    model: &Model,
    seed_hash: Option<&str>,
    parents: &[(&str, &str)],
) -> String {
    debug_assert!(reproducible(version));
    hash_payload(&payload_with(
        model,
        version,
        kind_v1(model),
        seed_hash,
        parents,
    ))
}

/// A model's definition hash (no parents) as algorithm `version` computed it.
pub fn definition_hash(version: u32, model: &Model, seed_hash: Option<&str>) -> String {
    fingerprint(version, model, seed_hash, &[])
}
