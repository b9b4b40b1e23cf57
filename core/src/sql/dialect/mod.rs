//! SQL dialects as statement vocabularies: every statement efmesh writes for an engine is
//! spelled here, so a new engine is one new implementation of [`SqlDialect`] and the
//! statement builders ([`crate::materialize`]) stay the same.
//!
//! This is the writing side of a dialect; the reading side (tokenizing and parsing model
//! files) is [`super::Dialect`], which picks sqlparser's dialect.

mod duckdb;
mod postgres;

pub use duckdb::DuckDb;
pub use postgres::Postgres;

use chrono::NaiveDateTime;

/// What a relation in an engine is, for statements that must name it (`DROP VIEW` or
/// `DROP TABLE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelationKind {
    /// A stored table.
    Table,
    /// A view (a VIEW model's physics, or a parquet version's view over its files).
    View,
}

impl RelationKind {
    /// The keyword `DROP` and `CREATE` take for it.
    pub fn keyword(self) -> &'static str {
        match self {
            RelationKind::Table => "TABLE",
            RelationKind::View => "VIEW",
        }
    }
}

/// How one engine spells the statements efmesh runs. Implementations are plain values
/// (`&'static dyn SqlDialect`), so the executor asks its engine for one and hands it to the
/// statement builders.
pub trait SqlDialect: Send + Sync + std::fmt::Debug {
    /// The dialect's name, for messages.
    fn name(&self) -> &'static str;
    /// A quoted identifier.
    fn ident(&self, name: &str) -> String {
        crate::quote::ident(name)
    }
    /// A string literal.
    fn literal(&self, value: &str) -> String {
        crate::quote::literal(value)
    }
    /// A timestamp literal for an interval edge.
    fn timestamp(&self, t: NaiveDateTime) -> String;
    /// Create a schema unless it exists (`schema` is a bare name; the builder quotes it).
    fn create_schema(&self, schema: &str) -> String;
    // The builders below take a relation already written as SQL: every caller makes it with
    // `quote::relation`, the one place a name becomes SQL.
    /// Create or replace table `table` with the rows of `select`.
    fn replace_table(&self, table: &str, select: &str) -> String;
    /// Create or replace view `view` over `select`.
    fn replace_view(&self, view: &str, select: &str) -> String;
    /// Create or replace a connection-local (temporary) table with the rows of `select`.
    fn replace_temp_table(&self, table: &str, select: &str) -> String;
    /// Drop a relation (`if_exists`: gone already is fine).
    fn drop(&self, kind: RelationKind, name: &str, if_exists: bool) -> String;
    /// Insert the rows of `select` into `table`, matching columns by name. `columns` are the
    /// names both have, when known; a dialect that cannot match by name itself lists them, or
    /// (unknown) relies on `table` having been created from the same query, in its order.
    fn insert_by_name(&self, table: &str, select: &str, columns: Option<&[String]>) -> String;
    /// Delete the rows of `table` (aliased `t`) that match rows of `using` (aliased `b`) by
    /// `condition`.
    fn delete_using(&self, table: &str, using: &str, condition: &str) -> String;
    /// Add a column to an existing table.
    fn add_column(&self, table: &str, column: &str, sql_type: &str) -> String;
    /// Drop `column` from `table` (a forward-only version's `on_destructive_change allow`).
    fn drop_column(&self, table: &str, column: &str) -> String {
        format!("ALTER TABLE {table} DROP COLUMN {}", self.ident(column))
    }
    /// The rows of `from` (a relation or a parenthesized query with an alias) without
    /// `except`; `all` are its columns when known. `None` when the dialect needs them and they
    /// are not known.
    fn select_except(
        &self,
        from: &str,
        all: Option<&[String]>,
        except: &[String],
    ) -> Option<String>;
    /// An expression that fails the statement with the text `message` (an SQL string
    /// expression) when it is evaluated.
    fn raise(&self, message: &str) -> String;
    /// `expr` as text.
    fn text(&self, expr: &str) -> String;
    /// `expr` cast to `sql_type`, or NULL where the value does not fit.
    fn try_cast(&self, expr: &str, sql_type: &str) -> String;
    /// The text `expr` read as a month-first date or timestamp (`1/4/2024`, `1/4/2024 13:45`,
    /// `1/4/2024 13:45:10`) as a timestamp, or NULL: how pandas, and so SQLMesh, reads such a
    /// seed value declared `DATE` or `TIMESTAMP`.
    fn try_month_first_timestamp(&self, expr: &str) -> String;
    /// The text `expr` of whole digits as a timestamp that many nanoseconds after the epoch,
    /// else NULL: how pandas turns an integer into a `TIMESTAMP` for SQLMesh (it keeps
    /// microseconds, dropping the rest).
    fn try_epoch_nanos_timestamp(&self, expr: &str) -> String;
    /// The values of `expr` over a group, joined by `separator` (a plain string).
    fn string_agg(&self, expr: &str, separator: &str) -> String;
    /// A bucket in `0..10000` computed from these text expressions (never NULL), the same on
    /// every relation of the engine: `diff --sample` keeps the keys whose bucket is below a
    /// threshold on both sides, so a sampled key is sampled everywhere it exists.
    fn sample_bucket(&self, text_exprs: &[String]) -> String;
    /// How this dialect reads and writes files, when its engine can.
    fn files(&self) -> Option<&dyn FileSql> {
        None
    }
}

/// The file side of a dialect: the table functions that read seed and lake files, and the
/// statement that writes parquet. Only engines with file access have one.
pub trait FileSql: Send + Sync {
    /// Read a CSV file with a header row naming `columns`, every value as text: a comma and
    /// double quotes, and a line of whitespace alone no row, as [`crate::seed::records`] reads
    /// it (which the executor runs first, so a ragged row is refused by name).
    fn read_csv_text(&self, path: &str, columns: &[String]) -> String;
    /// Read a JSON array (`lines`: JSON lines) whose objects have `keys`, every value as text.
    fn read_json_text(&self, path: &str, lines: bool, keys: &[String]) -> String;
    /// Read a file's whole content as one row with a `content` column.
    fn read_text(&self, path: &str) -> String;
    /// Read these parquet files as one relation, columns matched by name, path segments never
    /// taken as partition columns.
    fn read_parquet(&self, paths: &[String]) -> String;
    /// Write the rows of `select` to a parquet file at `path`.
    fn copy_to_parquet(&self, select: &str, path: &str) -> String;
}
