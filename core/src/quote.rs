//! SQL quoting: the one place quotes inside names, paths and values are escaped.
//!
//! Feature-free, because the browser reader writes SQL for duckdb-wasm with the same rules the
//! native engine uses.

/// A SQL string literal (`'it''s'`).
pub fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A quoted identifier (`"my ""odd"" name"`), safe for any name a user or a manifest supplies.
pub fn ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// One part of a relation's name as SQL: a plain identifier as itself, so each engine folds
/// its case exactly as it does for what users write (PostgreSQL lowers it, DuckDB matches it
/// case-insensitively), and anything else quoted. Every engine, view and physical name
/// efmesh writes goes through here, so a name that slipped past `check` is still one name.
pub fn name_part(s: &str) -> String {
    if is_plain(s) && !is_reserved(s) {
        s.to_string()
    } else {
        ident(s)
    }
}

/// The words DuckDB (`duckdb_keywords()`, category `reserved`) and PostgreSQL reserve: a
/// schema or table named like one (`default`, `order`) is written quoted.
const RESERVED: &[&str] = &[
    "all",
    "analyse",
    "analyze",
    "and",
    "any",
    "array",
    "as",
    "asc",
    "asymmetric",
    "authorization",
    "both",
    "case",
    "cast",
    "check",
    "collate",
    "column",
    "constraint",
    "create",
    "current_date",
    "current_time",
    "current_timestamp",
    "current_user",
    "default",
    "deferrable",
    "desc",
    "describe",
    "distinct",
    "do",
    "else",
    "end",
    "except",
    "false",
    "fetch",
    "for",
    "foreign",
    "from",
    "grant",
    "group",
    "having",
    "in",
    "initially",
    "intersect",
    "into",
    "lambda",
    "lateral",
    "leading",
    "limit",
    "localtime",
    "localtimestamp",
    "not",
    "null",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "pivot",
    "pivot_longer",
    "pivot_wider",
    "placing",
    "primary",
    "qualify",
    "references",
    "returning",
    "select",
    "session_user",
    "show",
    "some",
    "summarize",
    "symmetric",
    "table",
    "then",
    "to",
    "trailing",
    "true",
    "union",
    "unique",
    "unpivot",
    "user",
    "using",
    "variadic",
    "when",
    "where",
    "window",
    "with",
];

/// Whether `part` is a word the engines reserve, which a name must quote.
pub fn is_reserved(part: &str) -> bool {
    RESERVED.contains(&part.to_ascii_lowercase().as_str())
}

/// Whether `part` is a plain SQL identifier: letters, digits and `_`, not starting with a
/// digit; a name of this shape means the same quoted or not, in DuckDB and PostgreSQL alike.
pub fn is_plain(part: &str) -> bool {
    part.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `schema.table` as SQL, each part through [`name_part`].
pub fn relation(schema: &str, table: &str) -> String {
    format!("{}.{}", name_part(schema), name_part(table))
}

#[cfg(test)]
mod tests {
    #[test]
    fn quotes_are_doubled() {
        assert_eq!(super::literal("it's"), "'it''s'");
        assert_eq!(super::ident("a\"b"), "\"a\"\"b\"");
    }

    #[test]
    fn relation_parts_are_plain_or_quoted_never_pasted() {
        assert_eq!(
            super::relation("_efmesh", "med__moves__0123abcd"),
            "_efmesh.med__moves__0123abcd"
        );
        assert_eq!(
            super::relation("raw", "x as select 1; drop table y"),
            "raw.\"x as select 1; drop table y\""
        );
        assert_eq!(super::relation("a\"b", "2x"), "\"a\"\"b\".\"2x\"");
    }
}
