//! Table, view and column comments: a model's description and its columns' descriptions,
//! written into the engine as SQLMesh writes them (`register_comments`), so a catalog browser
//! or `duckdb_columns()` shows the documentation next to the data.

use super::{RelationKind, SqlDialect};
use crate::model::Model;

/// The descriptions of `m`'s output `columns` (when known): its `column_descriptions`, or
/// else the comments at its SELECT's items, by position, as SQLMesh takes them.
pub fn column_descriptions(m: &Model, columns: Option<&[String]>) -> Vec<(String, String)> {
    if !m.column_descriptions.is_empty() {
        return m.column_descriptions.clone();
    }
    let Some(columns) = columns else {
        return vec![];
    };
    m.projection_comments
        .iter()
        .filter_map(|(k, text)| columns.get(*k).map(|c| (c.clone(), text.clone())))
        .collect()
}

/// The statements that write `description` and `columns`' descriptions on `relation` (a
/// table or a view, already quoted); none when there is nothing to write.
pub fn statements(
    d: &dyn SqlDialect,
    relation: &str,
    kind: RelationKind,
    description: Option<&str>,
    columns: &[(String, String)],
) -> Vec<String> {
    let what = match kind {
        RelationKind::View => "VIEW",
        RelationKind::Table => "TABLE",
    };
    let mut out = vec![];
    if let Some(text) = description {
        out.push(format!(
            "COMMENT ON {what} {relation} IS {}",
            d.literal(text)
        ));
    }
    for (column, text) in columns {
        out.push(format!(
            "COMMENT ON COLUMN {relation}.{} IS {}",
            d.ident(column),
            d.literal(text)
        ));
    }
    out
}
