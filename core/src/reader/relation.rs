//! The SQL that turns a manifest's files into one queryable relation in duckdb-wasm.
//!
//! duckdb-wasm reads a registered file name as a glob, so a name that is a prefix of another
//! (`foo` and `foo2`) reads both (duckdb-wasm issue 2227). Every alias made here has the same
//! length and shape, `efmesh-<32 hex>.parquet`, so no alias can be a prefix of another.

use crate::manifest::ManifestColumn;
use crate::quote::{ident, literal};
use crate::type_name::TypeName;
use sha2::{Digest, Sha256};

/// The name under which a reader registers the file at `url`: stable for the URL, so
/// registering twice reuses the name.
pub fn file_alias(url: &str) -> String {
    let h = hex::encode(Sha256::digest(url.as_bytes()));
    format!("efmesh-{}.parquet", &h[..32])
}

/// What a reader runs to make a version queryable under one name.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Relation {
    /// The view's name as SQL (`"med"."moves"`), ready to paste into a query.
    pub name: String,
    /// The statements to run, in order.
    pub statements: Vec<String>,
}

/// A view named `name` (`table`, or `schema.table` with its schema created) over the
/// registered `aliases`, with columns matched by name. With no files (nothing computed yet)
/// the view still has the manifest's columns and no rows, so a query over it answers zero
/// instead of failing. Every statement replaces what it creates, so running them again for a
/// newer manifest is safe.
///
/// Column types are parsed and printed from the parse ([`TypeName`]), never pasted, since a
/// manifest comes from wherever the reader fetched it; a type that does not parse is an error
/// naming the column.
pub fn relation_sql(
    name: &str,
    aliases: &[String],
    schema: &[ManifestColumn],
) -> Result<Relation, String> {
    let body = if aliases.is_empty() {
        let cols = schema
            .iter()
            .map(|c| {
                let ty = TypeName::parse(&c.sql_type).map_err(|why| {
                    format!("column `{}` has type `{}`: {why}", c.name, c.sql_type)
                })?;
                Ok(format!("CAST(NULL AS {ty}) AS {}", ident(&c.name)))
            })
            .collect::<Result<Vec<String>, String>>()?;
        let cols = if cols.is_empty() {
            "NULL AS \"empty\"".to_string()
        } else {
            cols.join(", ")
        };
        format!("SELECT {cols} WHERE false")
    } else {
        let files: Vec<String> = aliases.iter().map(|a| literal(a)).collect();
        format!(
            "SELECT * FROM read_parquet([{}], union_by_name = true)",
            files.join(", ")
        )
    };
    let mut statements = vec![];
    let qualified = match name.split_once('.') {
        Some((schema, table)) if !schema.is_empty() && !table.is_empty() => {
            statements.push(format!("CREATE SCHEMA IF NOT EXISTS {}", ident(schema)));
            format!("{}.{}", ident(schema), ident(table))
        }
        _ => ident(name),
    };
    statements.push(format!("CREATE OR REPLACE VIEW {qualified} AS {body}"));
    Ok(Relation {
        name: qualified,
        statements,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::TypeFamily;

    #[test]
    fn aliases_never_prefix_each_other() {
        let a = file_alias("http://h/foo.parquet");
        let b = file_alias("http://h/foo.parquet2");
        assert_eq!(a.len(), b.len());
        assert!(!b.starts_with(&a) && !a.starts_with(&b));
        assert_eq!(a, file_alias("http://h/foo.parquet"));
    }

    #[test]
    fn an_empty_version_is_a_typed_empty_view() {
        let schema = vec![ManifestColumn {
            name: "n".into(),
            sql_type: "BIGINT".into(),
            family: TypeFamily::Numeric,
        }];
        assert_eq!(
            relation_sql("m", &[], &schema).unwrap().statements,
            ["CREATE OR REPLACE VIEW \"m\" AS SELECT CAST(NULL AS BIGINT) AS \"n\" WHERE false"]
        );
        let r = relation_sql("med.moves", &["a.parquet".into()], &schema).unwrap();
        assert_eq!(r.name, "\"med\".\"moves\"");
        assert_eq!(
            r.statements,
            [
                "CREATE SCHEMA IF NOT EXISTS \"med\"",
                "CREATE OR REPLACE VIEW \"med\".\"moves\" AS SELECT * FROM read_parquet(['a.parquet'], union_by_name = true)"
            ]
        );
    }

    #[test]
    fn a_crafted_column_type_never_reaches_sql() {
        let col = |t: &str| ManifestColumn {
            name: "n".into(),
            sql_type: t.into(),
            family: TypeFamily::Any,
        };
        let err = relation_sql("m", &[], &[col("INT) AS n; DROP TABLE t; --")]).unwrap_err();
        assert!(err.contains("column `n`"), "{err}");
        let ok = relation_sql("m", &[], &[col("decimal(18,3)")]).unwrap();
        assert_eq!(
            ok.statements,
            ["CREATE OR REPLACE VIEW \"m\" AS SELECT CAST(NULL AS DECIMAL(18, 3)) AS \"n\" WHERE false"]
        );
    }
}
