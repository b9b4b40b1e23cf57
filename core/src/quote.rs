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

#[cfg(test)]
mod tests {
    #[test]
    fn quotes_are_doubled() {
        assert_eq!(super::literal("it's"), "'it''s'");
        assert_eq!(super::ident("a\"b"), "\"a\"\"b\"");
    }
}
