//! Statement builders: what the executor runs to build a model's physics, compute one of its
//! batches, and promote an environment, as pure functions of the model and a [`SqlDialect`].
//!
//! One file per way of materializing. The executor renders the model's query, asks a builder
//! for the statements, and runs them; it never writes SQL of its own. A builder that stages
//! rows returns its cleanup separately ([`Write::cleanup`]), so audits can read the staged
//! rows before they are dropped.

pub mod comments;
pub mod evolve;
pub mod full;
mod keys;
pub mod partition;
pub mod promotion;
pub mod scd2;
pub mod seed;
pub mod time_column;
pub mod time_range;
pub mod unique_key;
pub mod view;

use crate::model::Kind;
pub use crate::sql::dialect::{FileSql, RelationKind, SqlDialect};

/// One audited write: its statements (one transaction), the relation its audits read while
/// the transaction is open, and the statements that clean up after the audits.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Write {
    /// The statements that write, in order.
    pub statements: Vec<String>,
    /// What audits read: the rows this write produced.
    pub audited: String,
    /// Run after the audits, in the same transaction (dropping staging tables).
    pub cleanup: Vec<String>,
}

/// Why a statement cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MaterializeError(pub String);

/// The statement that creates a model's physics at `physical` from its rendered `select`:
/// a view, a table built whole, or an empty table shaped like the query that batches fill.
pub fn create(d: &dyn SqlDialect, kind: &Kind, physical: &str, select: &str) -> String {
    if let Some((valid_from, valid_to)) = kind.validity_columns() {
        return scd2::create(d, physical, select, valid_from, valid_to);
    }
    match kind {
        Kind::View {
            materialized: false,
        } => view::create(d, physical, select),
        Kind::IncrementalByTimeRange { .. } | Kind::IncrementalByUniqueKey { .. } => {
            time_range::create(d, physical, select)
        }
        Kind::IncrementalByPartition { partitioned_by } => {
            partition::create(d, physical, select, partitioned_by)
        }
        _ => full::create(d, physical, select),
    }
}

/// `select`'s rows with each `(column, type)` cast to its type, in that order: SQLMesh's
/// wrapper around a query whose every column type it knows, declared or inferred, so the table
/// holds exactly those types (`INT` stays `INT` where DuckDB's query says `BIGINT`).
pub fn cast_to(d: &dyn SqlDialect, columns: &[(String, String)], select: &str) -> String {
    let list: Vec<String> = columns
        .iter()
        .map(|(n, t)| {
            let name = d.ident(n);
            format!("CAST({name} AS {t}) AS {name}")
        })
        .collect();
    format!("SELECT {} FROM ({select}) AS _subquery", list.join(", "))
}

/// A row shaped like a model's declared `columns`, typed NULLs: what a model that reads itself
/// is created from, since its query cannot be described before its table exists.
pub fn declared_shape(d: &dyn SqlDialect, columns: &[crate::model::ColumnDef]) -> String {
    let list: Vec<String> = columns
        .iter()
        .map(|c| format!("CAST(NULL AS {}) AS {}", c.sql_type, d.ident(&c.name)))
        .collect();
    format!("SELECT {}", list.join(", "))
}

/// A relation with `select`'s columns and no rows.
pub fn empty_like(select: &str) -> String {
    format!("SELECT * FROM ({select}) AS q LIMIT 0")
}

#[cfg(test)]
mod tests;
