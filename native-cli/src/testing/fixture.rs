//! Fixture rows as SQL: each parent of the tested model becomes a CTE over `VALUES`, each value
//! cast to the parent's declared column type, so the model reads typed data exactly as it
//! would read the parent's table.

use super::yaml::{Node, Scalar};

/// A value written in a test (YAML or JSON), before it is given a type.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Literal {
    /// SQL NULL.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number as SQL literal text, exactly as written (`1.50` stays `1.50`).
    Number(String),
    /// A string: cast from text to the column's type (`'2026-01-01 08:00'` → TIMESTAMP).
    Text(String),
    /// A list or mapping, as JSON text: DuckDB casts it to a LIST, STRUCT, MAP or JSON column.
    Nested(String),
}

impl Literal {
    /// The literal a YAML node holds.
    pub(crate) fn from_node(n: &Node) -> Literal {
        match n.scalar() {
            Some(Scalar::Null) => Literal::Null,
            Some(Scalar::Bool(b)) => Literal::Bool(b),
            Some(Scalar::Number(t)) => Literal::Number(t),
            Some(Scalar::Str(s)) => Literal::Text(s.to_string()),
            None => Literal::Nested(n.to_json().to_string()),
        }
    }

    /// The literal a JSON value holds (rows given through the Rust API).
    pub(crate) fn from_json(v: &serde_json::Value) -> Literal {
        use serde_json::Value as J;
        match v {
            J::Null => Literal::Null,
            J::Bool(b) => Literal::Bool(*b),
            J::Number(n) => Literal::Number(n.to_string()),
            J::String(s) => Literal::Text(s.clone()),
            J::Array(_) | J::Object(_) => Literal::Nested(v.to_string()),
        }
    }

    /// The value as an SQL expression of the literal's own type.
    pub(crate) fn sql(&self) -> String {
        match self {
            Literal::Null => "NULL".into(),
            Literal::Bool(b) => if *b { "TRUE" } else { "FALSE" }.into(),
            Literal::Number(n) => n.clone(),
            Literal::Text(s) | Literal::Nested(s) => quote_str(s),
        }
    }

    /// The value as an SQL expression of type `sql_type` (its own type when `None`).
    pub(crate) fn typed(&self, sql_type: Option<&str>) -> String {
        match sql_type {
            Some(t) => format!("CAST({} AS {t})", self.sql()),
            None => self.sql(),
        }
    }

    /// The value as a person wrote it, for messages.
    pub(crate) fn shown(&self) -> String {
        match self {
            Literal::Text(s) => quote_str(s),
            other => other.sql(),
        }
    }
}

use efmesh_core::quote::{ident, literal as quote_str};

/// A relation of typed rows: `columns` are (name, type when known), `rows` hold one literal per
/// column. With no rows it is a typed empty relation, so a model still sees every column.
pub(crate) fn relation(columns: &[(String, Option<String>)], rows: &[Vec<Literal>]) -> String {
    if columns.is_empty() {
        // a parent whose columns nobody knows and no row names: nothing can be read from it
        return "SELECT NULL AS \"__efmesh_no_columns\" WHERE FALSE".into();
    }
    if rows.is_empty() {
        let cols: Vec<String> = columns
            .iter()
            .map(|(name, ty)| format!("{} AS {}", Literal::Null.typed(ty.as_deref()), ident(name)))
            .collect();
        return format!("SELECT {} WHERE FALSE", cols.join(", "));
    }
    let values: Vec<String> = rows
        .iter()
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .zip(columns)
                .map(|(v, (_, ty))| v.typed(ty.as_deref()))
                .collect();
            format!("({})", cells.join(", "))
        })
        .collect();
    let names: Vec<String> = columns.iter().map(|(n, _)| ident(n)).collect();
    format!(
        "SELECT * FROM (VALUES {}) AS __efmesh_values({})",
        values.join(", "),
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_values_and_empty_relations() {
        let cols = vec![
            ("id".to_string(), Some("BIGINT".to_string())),
            ("name".to_string(), None),
        ];
        assert_eq!(
            relation(&cols, &[]),
            "SELECT CAST(NULL AS BIGINT) AS \"id\", NULL AS \"name\" WHERE FALSE"
        );
        let rows = vec![vec![
            Literal::Number("1".into()),
            Literal::Text("it's".into()),
        ]];
        assert_eq!(
            relation(&cols, &rows),
            "SELECT * FROM (VALUES (CAST(1 AS BIGINT), 'it''s')) AS __efmesh_values(\"id\", \"name\")"
        );
        assert_eq!(
            Literal::from_json(&serde_json::json!([1, 2])).typed(Some("INT[]")),
            "CAST('[1,2]' AS INT[])"
        );
    }
}
