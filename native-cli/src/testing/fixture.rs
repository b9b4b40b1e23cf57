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

    /// The literal a CSV cell holds, read as pandas' `read_csv` reads it (SQLMesh's CSV
    /// fixtures go through it): its missing-value markers are NULL, numbers and booleans are
    /// typed, anything else is text.
    pub(crate) fn from_csv(cell: &str) -> Literal {
        const NA: &[&str] = &[
            "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
            "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
        ];
        if NA.contains(&cell) {
            return Literal::Null;
        }
        match cell {
            "True" | "TRUE" | "true" => return Literal::Bool(true),
            "False" | "FALSE" | "false" => return Literal::Bool(false),
            _ => {}
        }
        let numeric = cell.parse::<f64>().is_ok_and(f64::is_finite)
            && cell
                .bytes()
                .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b));
        if numeric {
            let t = cell.strip_prefix('+').unwrap_or(cell);
            // SQL wants a digit on each side of the point
            let t = match t.strip_prefix('.') {
                Some(rest) => format!("0.{rest}"),
                None => match t.strip_prefix("-.") {
                    Some(rest) => format!("-0.{rest}"),
                    None => t.to_string(),
                },
            };
            return Literal::Number(match t.strip_suffix('.') {
                Some(int) => format!("{int}.0"),
                None => t,
            });
        }
        Literal::Text(cell.to_string())
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

    /// The value as an SQL expression of type `sql_type`. When nobody knows the column's type,
    /// a number takes the type pandas gives it in SQLMesh's fixtures (BIGINT, or DOUBLE when
    /// written with a point or an exponent), so `10.33 * 3` is float arithmetic there as here,
    /// not DuckDB's exact DECIMAL; other values keep their own type.
    pub(crate) fn typed(&self, sql_type: Option<&str>) -> String {
        match (sql_type, self) {
            (Some(t), _) => format!("CAST({} AS {t})", self.sql()),
            (None, Literal::Number(n)) if n.contains(['.', 'e', 'E']) => {
                format!("CAST({n} AS DOUBLE)")
            }
            (None, Literal::Number(n)) => format!("CAST({n} AS BIGINT)"),
            (None, _) => self.sql(),
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

/// A query's rows fitted to `columns` (name, type when known): each column read from the query
/// (`returned` is what it returns) and cast to its type, or NULL when the query leaves it out,
/// then the query's other columns as they are. With no columns known, the query as it is.
pub(crate) fn fitted(
    sql: &str,
    returned: &[String],
    columns: &[(String, Option<String>)],
) -> String {
    const Q: &str = "__efmesh_query";
    if columns.is_empty() {
        return format!("SELECT * FROM ({sql}) AS {Q}");
    }
    let mut items = vec![];
    for (c, ty) in columns {
        let value = match returned.iter().find(|r| r.eq_ignore_ascii_case(c)) {
            Some(r) => format!("{Q}.{}", ident(r)),
            None => "NULL".into(),
        };
        items.push(match ty {
            Some(t) => format!("CAST({value} AS {t}) AS {}", ident(c)),
            None => format!("{value} AS {}", ident(c)),
        });
    }
    for r in returned {
        if !columns.iter().any(|(c, _)| c.eq_ignore_ascii_case(r)) {
            items.push(format!("{Q}.{}", ident(r)));
        }
    }
    format!("SELECT {} FROM ({sql}) AS {Q}", items.join(", "))
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
        // a column nobody typed: numbers as pandas types them for SQLMesh
        assert_eq!(
            Literal::Number("10.33".into()).typed(None),
            "CAST(10.33 AS DOUBLE)"
        );
        assert_eq!(
            Literal::Number("1e3".into()).typed(None),
            "CAST(1e3 AS DOUBLE)"
        );
        assert_eq!(Literal::Number("7".into()).typed(None), "CAST(7 AS BIGINT)");
        assert_eq!(Literal::Text("7".into()).typed(None), "'7'");
        assert_eq!(
            Literal::from_json(&serde_json::json!([1, 2])).typed(Some("INT[]")),
            "CAST('[1,2]' AS INT[])"
        );
    }
}
