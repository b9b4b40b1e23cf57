//! Column type families: the level at which efmesh compares declared types with the engine.
//!
//! Engines disagree on exact type names (`INT4` vs `INTEGER`, `TEXT` vs `VARCHAR`), and a
//! contract that compared them literally would fail on harmless spelling. Families are what a
//! consumer actually relies on.

use serde::{Deserialize, Serialize};

/// The family a SQL type belongs to. `Any` covers types efmesh does not compare (JSON, lists,
/// structs, blobs), which therefore match anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum TypeFamily {
    /// Strings, however spelled (`VARCHAR`, `TEXT`, ...), plus UUIDs and enums.
    Text,
    /// Integers, floats and decimals of any width.
    Numeric,
    /// Dates, times, timestamps (with or without zone) and intervals.
    Temporal,
    /// `BOOLEAN` and its aliases.
    Boolean,
    /// Anything efmesh does not compare (JSON, lists, structs, ...); matches every family.
    Any,
}

impl TypeFamily {
    /// Classify a type as written in SQL (`DECIMAL(10, 2)`, `timestamp with time zone`, `INT[]`).
    pub fn of(sql_type: &str) -> TypeFamily {
        let t = sql_type.trim().to_ascii_uppercase();
        if t.ends_with(']')
            || t.starts_with("STRUCT")
            || t.starts_with("MAP")
            || t.starts_with("UNION")
        {
            return TypeFamily::Any;
        }
        let base: String = t
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        match base.as_str() {
            "VARCHAR" | "TEXT" | "STRING" | "CHAR" | "BPCHAR" | "NVARCHAR" | "CHARACTER"
            | "UUID" | "NAME" | "CITEXT" | "ENUM" => TypeFamily::Text,
            "TINYINT" | "SMALLINT" | "INT" | "INTEGER" | "BIGINT" | "HUGEINT" | "UTINYINT"
            | "USMALLINT" | "UINTEGER" | "UBIGINT" | "UHUGEINT" | "INT1" | "INT2" | "INT4"
            | "INT8" | "INT16" | "INT32" | "INT64" | "INT128" | "SHORT" | "LONG" | "SIGNED"
            | "SERIAL" | "BIGSERIAL" | "SMALLSERIAL" | "FLOAT" | "FLOAT4" | "FLOAT8" | "REAL"
            | "DOUBLE" | "DECIMAL" | "NUMERIC" | "VARINT" | "BIGNUM" | "MONEY" => {
                TypeFamily::Numeric
            }
            "DATE" | "TIME" | "TIMESTAMP" | "TIMESTAMPTZ" | "DATETIME" | "TIMESTAMP_S"
            | "TIMESTAMP_MS" | "TIMESTAMP_NS" | "TIMETZ" | "INTERVAL" => TypeFamily::Temporal,
            "BOOLEAN" | "BOOL" | "LOGICAL" => TypeFamily::Boolean,
            _ => TypeFamily::Any,
        }
    }

    /// Whether a value of family `other` satisfies a declaration of family `self`.
    pub fn accepts(self, other: TypeFamily) -> bool {
        self == TypeFamily::Any || other == TypeFamily::Any || self == other
    }
}

/// Type names efmesh knows but does not compare ([`TypeFamily::Any`]): nested, binary, JSON
/// and network types of DuckDB and PostgreSQL.
pub(crate) const OTHER_KNOWN: &[&str] = &[
    "STRUCT",
    "MAP",
    "UNION",
    "LIST",
    "ARRAY",
    "JSON",
    "JSONB",
    "BLOB",
    "BYTEA",
    "BINARY",
    "VARBINARY",
    "BIT",
    "BITSTRING",
    "VARBIT",
    "INET",
    "CIDR",
    "MACADDR",
    "XML",
    "GEOMETRY",
];

impl std::fmt::Display for TypeFamily {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TypeFamily::Text => "text",
            TypeFamily::Numeric => "numeric",
            TypeFamily::Temporal => "temporal",
            TypeFamily::Boolean => "boolean",
            TypeFamily::Any => "any",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::TypeFamily::*;
    use super::*;

    #[test]
    fn families_cover_common_spellings() {
        assert_eq!(TypeFamily::of("varchar"), Text);
        assert_eq!(TypeFamily::of("DECIMAL(10, 2)"), Numeric);
        assert_eq!(TypeFamily::of("timestamp with time zone"), Temporal);
        assert_eq!(TypeFamily::of("BOOL"), Boolean);
        assert_eq!(TypeFamily::of("INT[]"), Any);
        assert_eq!(TypeFamily::of("STRUCT(a INT)"), Any);
        assert!(Any.accepts(Text) && Text.accepts(Any) && !Text.accepts(Numeric));
    }
}
