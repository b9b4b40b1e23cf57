//! PostgreSQL's spelling of efmesh's statements (15 and later).
//!
//! PostgreSQL has no `CREATE OR REPLACE TABLE`, no `INSERT ... BY NAME`, no `SELECT * EXCLUDE`,
//! no `error()` and no `TRY_CAST`, and its `CREATE OR REPLACE VIEW` refuses to change a view's
//! columns. Each is spelled here with what PostgreSQL has; two helper functions (`pg_temp.
//! efmesh_error`, `pg_temp.efmesh_try_cast`) are created on every connection by the engine
//! ([`Postgres::SESSION_SETUP`]).

use super::{RelationKind, SqlDialect};
use chrono::NaiveDateTime;

/// PostgreSQL.
#[derive(Debug, Clone, Copy, Default)]
pub struct Postgres;

impl Postgres {
    /// What every connection runs once: the session-local functions statements call.
    pub const SESSION_SETUP: &'static str = "\
CREATE OR REPLACE FUNCTION pg_temp.efmesh_error(message text) RETURNS boolean LANGUAGE plpgsql AS $efmesh$
BEGIN RAISE EXCEPTION USING MESSAGE = message; END
$efmesh$;
CREATE OR REPLACE FUNCTION pg_temp.efmesh_try_cast(value text, sql_type text) RETURNS text LANGUAGE plpgsql AS $efmesh$
BEGIN EXECUTE format('SELECT CAST(%L AS %s)', value, sql_type); RETURN value;
EXCEPTION WHEN OTHERS THEN RETURN NULL; END
$efmesh$;";
}

impl SqlDialect for Postgres {
    fn name(&self) -> &'static str {
        "PostgreSQL"
    }
    fn timestamp(&self, t: NaiveDateTime) -> String {
        format!("CAST('{}' AS TIMESTAMP)", t.format("%Y-%m-%d %H:%M:%S"))
    }
    fn create_schema(&self, schema: &str) -> String {
        format!(
            "CREATE SCHEMA IF NOT EXISTS {}",
            crate::quote::name_part(schema)
        )
    }
    /// Views an environment serves depend on the table, so it is never dropped: created empty
    /// when missing, else emptied, then filled, in the caller's transaction.
    fn replace_table(&self, table: &str, select: &str) -> String {
        format!(
            "CREATE TABLE IF NOT EXISTS {table} AS {select} WITH NO DATA; TRUNCATE {table}; INSERT INTO {table} {select}"
        )
    }
    /// `CREATE OR REPLACE VIEW` keeps dependent objects but cannot change columns; when it
    /// refuses, the view is dropped and created again.
    fn replace_view(&self, view: &str, select: &str) -> String {
        format!(
            "DO $efmesh_view$ BEGIN CREATE OR REPLACE VIEW {view} AS {select}; EXCEPTION WHEN invalid_table_definition THEN DROP VIEW {view}; CREATE VIEW {view} AS {select}; END $efmesh_view$"
        )
    }
    fn replace_temp_table(&self, table: &str, select: &str) -> String {
        format!("DROP TABLE IF EXISTS {table}; CREATE TEMP TABLE {table} AS {select}")
    }
    fn drop(&self, kind: RelationKind, name: &str, if_exists: bool) -> String {
        let guard = if if_exists { " IF EXISTS" } else { "" };
        format!("DROP {}{guard} {name}", kind.keyword())
    }
    fn insert_by_name(&self, table: &str, select: &str, columns: Option<&[String]>) -> String {
        match columns {
            Some(cols) if !cols.is_empty() => {
                let list: Vec<String> = cols.iter().map(|c| self.ident(c)).collect();
                let list = list.join(", ");
                format!("INSERT INTO {table} ({list}) SELECT {list} FROM ({select}) AS efmesh_q")
            }
            _ => format!("INSERT INTO {table} {select}"),
        }
    }
    fn delete_using(&self, table: &str, using: &str, condition: &str) -> String {
        format!("DELETE FROM {table} AS t USING {using} AS b WHERE {condition}")
    }
    fn add_column(&self, table: &str, column: &str, sql_type: &str) -> String {
        format!(
            "ALTER TABLE {table} ADD COLUMN {} {sql_type}",
            self.ident(column)
        )
    }
    fn select_except(
        &self,
        from: &str,
        all: Option<&[String]>,
        except: &[String],
    ) -> Option<String> {
        let kept: Vec<String> = all?
            .iter()
            .filter(|c| !except.contains(c))
            .map(|c| self.ident(c))
            .collect();
        Some(format!("SELECT {} FROM {from}", kept.join(", ")))
    }
    fn raise(&self, message: &str) -> String {
        format!("pg_temp.efmesh_error({message})")
    }
    fn text(&self, expr: &str) -> String {
        format!("CAST({expr} AS TEXT)")
    }
    fn try_cast(&self, expr: &str, sql_type: &str) -> String {
        format!(
            "pg_temp.efmesh_try_cast(CAST({expr} AS TEXT), {})",
            self.literal(sql_type)
        )
    }
    fn try_epoch_nanos_timestamp(&self, expr: &str) -> String {
        format!(
            "CASE WHEN {expr} ~ '^[0-9]{{1,18}}$' THEN to_timestamp(CAST({expr} AS BIGINT) / 1000 / 1000000.0) AT TIME ZONE 'UTC' END"
        )
    }
    fn try_month_first_timestamp(&self, expr: &str) -> String {
        let forms = [
            (
                r"^\d{1,2}/\d{1,2}/\d{4} \d{1,2}:\d{2}:\d{2}$",
                "MM/DD/YYYY HH24:MI:SS",
            ),
            (
                r"^\d{1,2}/\d{1,2}/\d{4} \d{1,2}:\d{2}$",
                "MM/DD/YYYY HH24:MI",
            ),
            (r"^\d{1,2}/\d{1,2}/\d{4}$", "MM/DD/YYYY"),
        ];
        let arms: String = forms
            .iter()
            .map(|(re, fmt)| {
                format!(
                    " WHEN {expr} ~ {} THEN CAST(to_timestamp({expr}, {}) AS TIMESTAMP)",
                    self.literal(re),
                    self.literal(fmt)
                )
            })
            .collect();
        format!("CASE{arms} END")
    }
    fn string_agg(&self, expr: &str, separator: &str) -> String {
        format!("string_agg({expr}, {})", self.literal(separator))
    }
    fn sample_bucket(&self, text_exprs: &[String]) -> String {
        // concat_ws with a unit separator, so ('a', 'bc') and ('ab', 'c') hash apart
        format!(
            "((hashtextextended(concat_ws(chr(31), {}), 0) % 10000 + 10000) % 10000)",
            text_exprs.join(", ")
        )
    }
}
