//! INCREMENTAL_BY_UNIQUE_KEY models: each batch upserts its rows by key.

use super::{keys, RelationKind, SqlDialect, Write};

/// The staging table an upsert writes its batch to before merging it.
pub const STAGING: &str = "efmesh_upsert_batch";

/// One upsert in one transaction: stage the batch, refuse duplicate or NULL keys, delete the
/// incoming keys, insert the batch. `columns` are the model's output columns, when known.
pub fn batch(
    d: &dyn SqlDialect,
    physical: &str,
    select: &str,
    unique_key: &[String],
    columns: Option<&[String]>,
) -> Write {
    let mut statements = keys::stage_with_key_checks(d, STAGING, select, unique_key);
    statements.push(d.delete_using(physical, STAGING, &keys::matches(d, unique_key, "t", "b")));
    statements.push(d.insert_by_name(physical, &format!("SELECT * FROM {STAGING}"), columns));
    Write {
        statements,
        audited: STAGING.to_string(),
        cleanup: vec![d.drop(RelationKind::Table, STAGING, false)],
    }
}
