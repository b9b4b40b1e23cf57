//! Column types as a small grammar: parsed from text, written back from the parse.
//!
//! A type name reaches SQL in two places that trust different sources: `check` writes a
//! MODEL block's declared types into casts, and the browser reader writes a manifest's column
//! types into duckdb-wasm (`CAST(NULL AS <type>)`). A manifest is fetched from anywhere, so
//! its text must never be pasted: a crafted `"type": "INT) AS x; DROP TABLE t; --"` would run.
//! Parsing into [`TypeName`] and printing that parse means only type syntax can come out:
//! known type words, numbers, quoted field names and quoted enum labels.
//!
//! Feature-free, because the browser reader needs it.

use crate::quote::{ident, literal};
use crate::types::{TypeFamily, OTHER_KNOWN};
use std::fmt;

/// Why `sql_type` is not a column type efmesh can write into SQL, if it is not: its first
/// word must be a type DuckDB or PostgreSQL knows (a typo such as `INTEGR` is caught at
/// `check`, not by the engine mid-apply), and the rest only type syntax (arguments in
/// parentheses, `[]`, `WITH TIME ZONE`, quoted field names and enum labels), never a
/// statement. The grammar is [`TypeName`].
pub fn type_problem(sql_type: &str) -> Option<String> {
    TypeName::parse(sql_type).err()
}

/// `sql_type` (already checked with [`type_problem`]) as DuckDB spells it when it is written
/// with the angle brackets of other dialects (`STRUCT<a INT>`, `ARRAY<INT>`), which SQLMesh
/// accepts and writes for DuckDB as `STRUCT(a INT)`, `INT[]`; any other type as written.
pub fn duckdb_spelling(sql_type: &str) -> String {
    match TypeName::parse(sql_type) {
        Ok(t) if sql_type.contains('<') => t.to_string(),
        _ => sql_type.to_string(),
    }
}

/// How deeply types may nest (`STRUCT(a STRUCT(b ...))`, `INT[][]`); far beyond any real
/// schema, and low enough that the recursive parser cannot exhaust a stack.
pub const MAX_TYPE_DEPTH: usize = 64;

/// A column type as DuckDB or PostgreSQL spell it: `DECIMAL(18, 3)`, `VARCHAR[]`,
/// `TIMESTAMP WITH TIME ZONE`, `STRUCT("a b" INTEGER, c MAP(VARCHAR, INTEGER)[])`,
/// `ENUM('x', 'y')`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeName {
    /// The words before any arguments, upper-cased: `["DOUBLE", "PRECISION"]`.
    words: Vec<String>,
    /// What stands in the parentheses, if any.
    args: Args,
    /// Words after the arguments (`TIMESTAMP(3) WITH TIME ZONE`).
    tail: Vec<String>,
    /// One entry per `[]` (None) or `[n]` (Some) suffix.
    arrays: Vec<Option<u64>>,
}

/// The arguments of a type, whose shape its first word decides.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Args {
    None,
    /// `DECIMAL(18, 3)`, `VARCHAR(10)`.
    Numbers(Vec<u64>),
    /// `MAP(VARCHAR, INTEGER)`, `LIST(INTEGER)`.
    Types(Vec<TypeName>),
    /// `STRUCT(a INTEGER, "b c" VARCHAR)`, `UNION(...)`.
    Fields(Vec<(String, TypeName)>),
    /// `ENUM('a', 'b')`.
    Labels(Vec<String>),
}

/// Words that may follow a type's first word: the multi-word spellings of standard SQL.
const FOLLOWING_WORDS: &[&str] = &["PRECISION", "VARYING", "WITH", "WITHOUT", "TIME", "ZONE"];

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    Number(u64),
    /// `"quoted identifier"`, unescaped.
    Quoted(String),
    /// `'string literal'`, unescaped.
    Str(String),
    Punct(char),
}

impl TypeName {
    /// Parse `text`; the error says, for a person, what is wrong with it.
    pub fn parse(text: &str) -> Result<TypeName, String> {
        let tokens = tokenize(text)?;
        let mut p = Parser { tokens, at: 0 };
        let t = p.type_name(0)?;
        match p.peek() {
            None => Ok(t),
            Some(tok) => Err(format!("{} has no place after the type", describe(tok))),
        }
    }

    /// The family of the parsed type, for comparing declared and reported types.
    pub fn family(&self) -> TypeFamily {
        if !self.arrays.is_empty() {
            return TypeFamily::Any;
        }
        TypeFamily::of(&self.words[0])
    }
}

impl fmt::Display for TypeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.words.join(" "))?;
        let list = |items: Vec<String>| format!("({})", items.join(", "));
        match &self.args {
            Args::None => {}
            Args::Numbers(n) => f.write_str(&list(n.iter().map(u64::to_string).collect()))?,
            Args::Types(t) => f.write_str(&list(t.iter().map(ToString::to_string).collect()))?,
            Args::Fields(fs) => f.write_str(&list(
                fs.iter()
                    .map(|(n, t)| format!("{} {t}", ident(n)))
                    .collect(),
            ))?,
            Args::Labels(l) => f.write_str(&list(l.iter().map(|s| literal(s)).collect()))?,
        }
        for w in &self.tail {
            write!(f, " {w}")?;
        }
        for a in &self.arrays {
            match a {
                None => f.write_str("[]")?,
                Some(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

fn describe(t: &Token) -> String {
    match t {
        Token::Word(w) => format!("`{w}`"),
        Token::Number(n) => format!("`{n}`"),
        Token::Quoted(q) => format!("`{}`", ident(q)),
        Token::Str(s) => format!("`{}`", literal(s)),
        Token::Punct(c) => format!("`{c}`"),
    }
}

fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let mut out = vec![];
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_ascii_alphabetic() || c == '_' {
            let mut w = String::new();
            while let Some(&c) = chars
                .peek()
                .filter(|c| c.is_ascii_alphanumeric() || **c == '_')
            {
                w.push(c);
                chars.next();
            }
            out.push(Token::Word(w));
        } else if c.is_ascii_digit() {
            let mut n = String::new();
            while let Some(&c) = chars.peek().filter(|c| c.is_ascii_digit()) {
                n.push(c);
                chars.next();
            }
            let n = n.parse().map_err(|_| format!("`{n}` is too large"))?;
            out.push(Token::Number(n));
        } else if c == '"' || c == '\'' {
            chars.next();
            let mut s = String::new();
            loop {
                match chars.next() {
                    None => return Err(format!("its {c} quote is never closed")),
                    Some(q) if q == c => {
                        if chars.peek() == Some(&c) {
                            chars.next();
                            s.push(c);
                        } else {
                            break;
                        }
                    }
                    Some(other) => s.push(other),
                }
            }
            out.push(if c == '"' {
                Token::Quoted(s)
            } else {
                Token::Str(s)
            });
        } else if matches!(c, '(' | ')' | '[' | ']' | ',' | '<' | '>' | ':') {
            chars.next();
            out.push(Token::Punct(c));
        } else {
            return Err(format!("`{c}` has no place in a column type"));
        }
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Token::Punct(c)) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        match self.next() {
            Some(Token::Punct(p)) if p == c => Ok(()),
            Some(t) => Err(format!("expected `{c}`, found {}", describe(&t))),
            None => Err(format!("expected `{c}`, found the end")),
        }
    }

    fn following_words(&mut self, into: &mut Vec<String>) -> Result<(), String> {
        while let Some(Token::Word(w)) = self.peek() {
            let up = w.to_ascii_uppercase();
            if !FOLLOWING_WORDS.contains(&up.as_str()) {
                return Err(format!("`{w}` has no place in a column type"));
            }
            into.push(up);
            self.at += 1;
        }
        Ok(())
    }

    fn type_name(&mut self, depth: usize) -> Result<TypeName, String> {
        if depth >= MAX_TYPE_DEPTH {
            return Err(format!("it nests deeper than {MAX_TYPE_DEPTH} levels"));
        }
        let first = match self.next() {
            Some(Token::Word(w)) => w,
            Some(t) => return Err(format!("expected a type name, found {}", describe(&t))),
            None => return Err("expected a type name, found nothing".into()),
        };
        let base = first.to_ascii_uppercase();
        if TypeFamily::of(&base) == TypeFamily::Any && !OTHER_KNOWN.contains(&base.as_str()) {
            return Err(format!(
                "`{first}` is not a type DuckDB or PostgreSQL knows"
            ));
        }
        // the angle brackets other dialects write (`ARRAY<INT>`, `STRUCT<a INT>`), as sqlglot
        // reads them for SQLMesh: written back in DuckDB's spelling (`INT[]`, `STRUCT(a INT)`)
        if base == "ARRAY" && self.eat('<') {
            let mut inner = self.type_name(depth + 1)?;
            self.expect('>')?;
            inner.arrays.push(None);
            while self.eat('[') {
                self.expect(']')?;
                inner.arrays.push(None);
            }
            return Ok(inner);
        }
        let mut words = vec![base.clone()];
        self.following_words(&mut words)?;
        let args = if self.eat('(') {
            let args = self.args(&base, depth)?;
            self.expect(')')?;
            args
        } else if matches!(base.as_str(), "STRUCT" | "MAP") && self.eat('<') {
            let args = self.args(&base, depth)?;
            self.expect('>')?;
            args
        } else {
            Args::None
        };
        let mut tail = vec![];
        self.following_words(&mut tail)?;
        let mut arrays = vec![];
        while self.eat('[') {
            if arrays.len() + depth >= MAX_TYPE_DEPTH {
                return Err(format!("it nests deeper than {MAX_TYPE_DEPTH} levels"));
            }
            let size = match self.peek() {
                Some(Token::Number(n)) => {
                    let n = *n;
                    self.at += 1;
                    Some(n)
                }
                _ => None,
            };
            self.expect(']')?;
            arrays.push(size);
        }
        Ok(TypeName {
            words,
            args,
            tail,
            arrays,
        })
    }

    /// The comma-separated arguments of `base`, which decides what they are.
    fn args(&mut self, base: &str, depth: usize) -> Result<Args, String> {
        let mut args = match base {
            "STRUCT" | "UNION" => Args::Fields(vec![]),
            "MAP" | "LIST" => Args::Types(vec![]),
            "ENUM" => Args::Labels(vec![]),
            _ => Args::Numbers(vec![]),
        };
        loop {
            match &mut args {
                Args::Fields(fs) => {
                    let name = match self.next() {
                        Some(Token::Word(w)) => w,
                        Some(Token::Quoted(q)) => q,
                        Some(t) => {
                            return Err(format!("expected a field name, found {}", describe(&t)))
                        }
                        None => return Err("expected a field name, found the end".into()),
                    };
                    // `STRUCT<a: INT>` as some dialects write it
                    self.eat(':');
                    fs.push((name, self.type_name(depth + 1)?));
                }
                Args::Types(ts) => ts.push(self.type_name(depth + 1)?),
                Args::Labels(ls) => match self.next() {
                    Some(Token::Str(s)) => ls.push(s),
                    Some(t) => {
                        return Err(format!("expected a quoted label, found {}", describe(&t)))
                    }
                    None => return Err("expected a quoted label, found the end".into()),
                },
                Args::Numbers(ns) => match self.next() {
                    Some(Token::Number(n)) => ns.push(n),
                    Some(t) => {
                        return Err(format!(
                            "`{base}` takes numbers in parentheses, found {}",
                            describe(&t)
                        ))
                    }
                    None => return Err("expected a number, found the end".into()),
                },
                Args::None => unreachable!("args always starts as a list"),
            }
            if !self.eat(',') {
                return Ok(args);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_known_names_in_type_syntax() {
        for ok in [
            "INTEGER",
            "decimal(5, 2)",
            "TIMESTAMP WITH TIME ZONE",
            "INT[]",
            "VARCHAR[3]",
            "STRUCT(a INT, b VARCHAR)",
            "MAP(VARCHAR, INT)",
            "ENUM('a', 'b; c')",
            "JSON",
            "BLOB",
            "character varying(10)",
            "DOUBLE PRECISION",
        ] {
            assert_eq!(type_problem(ok), None, "{ok}");
        }
        // angle brackets, as sqlglot reads them, written back as DuckDB spells them
        for (written, duckdb) in [
            (
                "STRUCT<product_id VARCHAR, quantity INTEGER>",
                "STRUCT(product_id VARCHAR, quantity INTEGER)",
            ),
            (
                "STRUCT<a: INT, b STRUCT<c TEXT>>",
                "STRUCT(a INT, b STRUCT(c TEXT))",
            ),
            ("ARRAY<INT>", "INT[]"),
            ("ARRAY<STRUCT<a INT>>", "STRUCT(a INT)[]"),
            ("MAP<VARCHAR, INT>", "MAP(VARCHAR, INT)"),
        ] {
            let t = TypeName::parse(written).unwrap_or_else(|e| panic!("{written}: {e}"));
            assert_eq!(t.to_string().replace('"', ""), duckdb);
        }
        for bad in [
            "INTEGR",
            "FROBNICATE",
            "INT); DROP TABLE t; --",
            "INT -- x",
            "DECIMAL(5, 2",
            "INT)",
        ] {
            assert!(type_problem(bad).is_some(), "{bad}");
        }
    }

    fn round(t: &str) -> String {
        TypeName::parse(t)
            .unwrap_or_else(|e| panic!("{t}: {e}"))
            .to_string()
    }

    #[test]
    fn real_types_print_back_as_type_syntax() {
        assert_eq!(round("integer"), "INTEGER");
        assert_eq!(round("DECIMAL(18,3)"), "DECIMAL(18, 3)");
        assert_eq!(
            round("timestamp with time zone"),
            "TIMESTAMP WITH TIME ZONE"
        );
        assert_eq!(
            round("TIMESTAMP(3) WITHOUT TIME ZONE"),
            "TIMESTAMP(3) WITHOUT TIME ZONE"
        );
        assert_eq!(round("double precision"), "DOUBLE PRECISION");
        assert_eq!(round("character varying(10)"), "CHARACTER VARYING(10)");
        assert_eq!(round("VARCHAR[]"), "VARCHAR[]");
        assert_eq!(round("INTEGER[3][]"), "INTEGER[3][]");
        assert_eq!(round("MAP(VARCHAR, INTEGER[])"), "MAP(VARCHAR, INTEGER[])");
        assert_eq!(
            round("STRUCT(a INTEGER, \"b \"\"c\" STRUCT(d VARCHAR)[])"),
            "STRUCT(\"a\" INTEGER, \"b \"\"c\" STRUCT(\"d\" VARCHAR)[])"
        );
        assert_eq!(
            round("ENUM('a', 'it''s; DROP')"),
            "ENUM('a', 'it''s; DROP')"
        );
        // what is printed parses to the same thing
        let t = "STRUCT(\"x;y\" MAP(TEXT, ENUM('p')))";
        assert_eq!(round(&round(t)), round(t));
    }

    #[test]
    fn anything_but_type_syntax_is_refused() {
        for bad in [
            "",
            "INTEGR",
            "INT); DROP TABLE t; --",
            "INT) AS x FROM (SELECT 1",
            "DECIMAL((SELECT max(x) FROM t), 2)",
            "INT UNION SELECT",
            "INT -- x",
            "DECIMAL(5, 2",
            "VARCHAR(10) COLLATE x",
            "STRUCT(a)",
            "ENUM(a)",
            "INT[",
            "\"INT\"",
            "'unclosed",
        ] {
            assert!(TypeName::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn deep_nesting_is_refused_not_a_stack_overflow() {
        let deep = "STRUCT(a ".repeat(10_000) + "INT" + &")".repeat(10_000);
        assert!(TypeName::parse(&deep).unwrap_err().contains("deeper"));
        let arrays = format!("INT{}", "[]".repeat(10_000));
        assert!(TypeName::parse(&arrays).unwrap_err().contains("deeper"));
        let ok = "STRUCT(a ".repeat(10) + "INT" + &")".repeat(10);
        assert!(TypeName::parse(&ok).is_ok());
    }
}
