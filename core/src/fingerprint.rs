//! Fingerprints: the name of a model version.
//!
//! A fingerprint hashes a versioned payload of everything that shapes a model's data: its
//! canonical SQL, kind and parameters, grain, declared column names and type families,
//! target, a seed's content hash, the redaction list, and the parents' fingerprints. Things
//! that only describe the model (cron, description, owner, tags, audits, answerable,
//! caveats) or only say how it is computed (start, end, batch size, batch concurrency) are
//! left out, so editing them never rebuilds anything.
//!
//! The payload is serialized to JSON with a fixed field order and hashed with SHA-256, which
//! behaves identically natively and in WebAssembly. Golden tests freeze the result; changing
//! the payload on purpose means bumping [`FINGERPRINT_VERSION`].

use crate::model::{Kind, Model, Target};
use crate::types::TypeFamily;
use serde::Serialize;
use sha2::{Digest, Sha256};

/// The version of the fingerprint algorithm. Snapshots record it. A plan against versions of an
/// older algorithm recomputes their fingerprints the old way ([`legacy`]): a model whose
/// definition did not change keeps its physics, anything else is breaking.
///
/// - 1: the first algorithm.
/// - 2: `batch_size` left the kind, and so the fingerprint (it is metadata, as in SQLMesh).
pub const FINGERPRINT_VERSION: u32 = 2;

pub mod legacy;

/// Hex characters of the SHA-256 digest kept as the fingerprint (128 bits).
const FINGERPRINT_HEX_LEN: usize = 32;

#[derive(Serialize)]
struct Payload<'a, K: Serialize> {
    fingerprint_version: u32,
    name: &'a str,
    kind: K,
    query: Option<&'a str>,
    /// The pre- and post-statements, absent (not `null`) when there are none, so a model
    /// without statements hashes exactly as before they existed.
    #[serde(skip_serializing_if = "Option::is_none")]
    statements: Option<Vec<String>>,
    grain: &'a [String],
    columns: Option<Vec<(&'a str, TypeFamily)>>,
    target: Target,
    seed_hash: Option<&'a str>,
    redact: &'a [String],
    /// `(parent name, parent fingerprint)`, sorted by name.
    parents: Vec<(&'a str, &'a str)>,
}

/// Compute a model's fingerprint from its definition, its seed file's hash (for SEED models)
/// and its parents' fingerprints.
pub fn fingerprint(model: &Model, seed_hash: Option<&str>, parents: &[(&str, &str)]) -> String {
    hash_payload(&payload(model, seed_hash, parents))
}

/// The fingerprint of the model's own definition, without its parents: equal definitions
/// with different fingerprints mean the change came only through parents (an indirect change).
pub fn definition_hash(model: &Model, seed_hash: Option<&str>) -> String {
    hash_payload(&payload(model, seed_hash, &[]))
}

/// The payload a fingerprint hashes, as JSON. Snapshots store it, so a later plan can compare
/// an old version with a new one field by field.
pub fn payload_json(
    model: &Model,
    seed_hash: Option<&str>,
    parents: &[(&str, &str)],
) -> serde_json::Value {
    serde_json::to_value(payload(model, seed_hash, parents)).expect("payload serializes")
}

fn payload<'a>(
    model: &'a Model,
    seed_hash: Option<&'a str>,
    parents: &[(&'a str, &'a str)],
) -> Payload<'a, &'a Kind> {
    payload_with(model, FINGERPRINT_VERSION, &model.kind, seed_hash, parents)
}

/// The payload of algorithm `version`, with `kind` serialized the way that version did.
fn payload_with<'a, K: Serialize>(
    model: &'a Model,
    version: u32,
    kind: K,
    seed_hash: Option<&'a str>,
    parents: &[(&'a str, &'a str)],
) -> Payload<'a, K> {
    let mut parents = parents.to_vec();
    parents.sort();
    parents.dedup();
    Payload {
        fingerprint_version: version,
        name: &model.name,
        kind,
        query: model.query.as_ref().map(|q| q.canonical.as_str()),
        statements: model.statements.data_canonical(),
        grain: &model.grain,
        columns: model
            .columns
            .as_ref()
            .map(|cols| cols.iter().map(|c| (c.name.as_str(), c.family)).collect()),
        target: model.target,
        seed_hash,
        redact: &model.redact,
        parents,
    }
}

/// Hash the payload's JSON in declaration order (the frozen byte form).
fn hash_payload<K: Serialize>(p: &Payload<K>) -> String {
    hash_bytes(&serde_json::to_vec(p).expect("payload serializes"))
}

fn hash_bytes(bytes: &[u8]) -> String {
    let mut hex = hex::encode(Sha256::digest(bytes));
    hex.truncate(FINGERPRINT_HEX_LEN);
    hex
}

/// A hash of the properties outside the fingerprint (cron, description, owner, tags, audits,
/// answerable, caveats, start, end, interval unit, and the batching knobs): when only it
/// changes, a plan is metadata-only and rebuilds nothing.
pub fn metadata_hash(model: &Model) -> String {
    let mut v = serde_json::json!({
        "cron": model.cron,
        "description": model.description,
        "owner": model.owner,
        "tags": model.tags,
        "audits": model.audits,
        "answerable": model.answerable,
        "caveats": model.caveats,
        "start": model.start,
        "end": model.end,
        "interval_unit": model.interval_unit,
        "batch_size": model.batching.size,
        "batch_concurrency": model.batching.concurrency,
    });
    // only when present, so every other model keeps its hash
    if let Some(statements) = model.statements.virtual_canonical() {
        v["on_virtual_update"] = serde_json::json!(statements);
    }
    hash_bytes(&serde_json::to_vec(&v).expect("metadata serializes"))
}

/// The SHA-256 hex digest of file content (seed files).
pub fn content_hash(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}
