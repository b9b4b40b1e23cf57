//! INCREMENTAL_BY_TIME_RANGE models: each batch replaces exactly the rows of its range.

use super::time_column::{TimeColumn, TimeColumnError};
use super::{empty_like, SqlDialect, Write};
use crate::interval::Range;

/// Where a parquet model's batch waits, audited, before it is written out as files.
pub const PARQUET_STAGING: &str = "efmesh_parquet_batch";

/// Create the (empty) table at `physical`, shaped like `select`; the batches fill it. Also
/// how INCREMENTAL_BY_UNIQUE_KEY tables start.
pub fn create(d: &dyn SqlDialect, physical: &str, select: &str) -> String {
    d.replace_table(physical, &empty_like(select))
}

/// One batch in one transaction: delete the range, insert the query's rows for it (filtered
/// to it in the time column's own type, whatever the query returns). Recomputing a range never
/// duplicates rows. `columns` are the query's, when known (see [`SqlDialect::insert_by_name`]).
pub fn batch(
    d: &dyn SqlDialect,
    physical: &str,
    select: &str,
    time: &TimeColumn,
    b: Range,
    columns: Option<&[String]>,
) -> Result<Write, TimeColumnError> {
    let tc = d.ident(&time.name);
    let within = time.filter(d, &tc, b)?;
    Ok(Write {
        statements: vec![
            format!("DELETE FROM {physical} WHERE {within}"),
            d.insert_by_name(
                physical,
                &format!(
                    "SELECT * FROM ({select}) AS q WHERE {}",
                    time.filter(d, &format!("q.{tc}"), b)?
                ),
                columns,
            ),
        ],
        audited: format!("(SELECT * FROM {physical} WHERE {within})"),
        cleanup: vec![],
    })
}

/// One batch of a parquet model, staged in [`PARQUET_STAGING`] (filtered to its range) for
/// its audits and for writing out; the lake publishes it, so nothing is cleaned up here.
pub fn stage(
    d: &dyn SqlDialect,
    select: &str,
    time: &TimeColumn,
    b: Range,
) -> Result<Write, TimeColumnError> {
    let tc = d.ident(&time.name);
    Ok(Write {
        statements: vec![d.replace_temp_table(
            PARQUET_STAGING,
            &format!(
                "SELECT * FROM ({select}) AS q WHERE {}",
                time.filter(d, &format!("q.{tc}"), b)?
            ),
        )],
        audited: PARQUET_STAGING.to_string(),
        cleanup: vec![],
    })
}
