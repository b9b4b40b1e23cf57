//! DuckDB's spelling of efmesh's statements.

use super::{FileSql, RelationKind, SqlDialect};
use chrono::NaiveDateTime;

/// DuckDB (1.5): `CREATE OR REPLACE`, `INSERT ... BY NAME`, `SELECT * EXCLUDE`, `error()`,
/// and its file functions.
#[derive(Debug, Clone, Copy, Default)]
pub struct DuckDb;

impl DuckDb {
    /// `[[engine.secrets]]` as DuckDB's `CREATE SECRET`: temporary, so it lives in the
    /// engine's memory and never in the database file. Its text holds the secret's values:
    /// the caller runs it on the redacted path and never logs it.
    pub fn create_secret(secret: &crate::config::EngineSecret) -> String {
        let mut parts = vec![format!("TYPE {}", secret.kind)];
        parts.extend(
            secret
                .values
                .iter()
                .map(|(k, v)| format!("{k} {}", v.expose())),
        );
        format!(
            "CREATE OR REPLACE TEMPORARY SECRET {} ({})",
            crate::quote::name_part(&secret.name),
            parts.join(", ")
        )
    }

    /// `[attach.NAME]` as DuckDB's `ATTACH`, of `url` (already resolved against the project
    /// root when it is a file). `IF NOT EXISTS`, so a second connection of the same database
    /// instance may run it again. Its text may hold a password: run it on the redacted path.
    pub fn attach(a: &crate::config::Attachment, url: &str) -> String {
        let mut options: Vec<String> = a.options.iter().map(|(k, v)| format!("{k} {v}")).collect();
        if let Some(secret) = &a.secret {
            options.push(format!("SECRET {}", crate::quote::name_part(secret)));
        }
        let options = if options.is_empty() {
            String::new()
        } else {
            format!(" ({})", options.join(", "))
        };
        format!(
            "ATTACH IF NOT EXISTS {} AS {}{options}",
            crate::quote::literal(url),
            crate::quote::name_part(&a.name)
        )
    }
}

impl DuckDb {
    /// The `[ducklake]` catalog as `ATTACH 'ducklake:<catalog>' AS efmesh_ducklake`, with its
    /// `DATA_PATH` when one is set (both already resolved against the project root).
    pub fn attach_ducklake(catalog: &str, data_path: Option<&str>) -> String {
        let options = data_path
            .map(|d| format!(" (DATA_PATH {})", crate::quote::literal(d)))
            .unwrap_or_default();
        format!(
            "ATTACH IF NOT EXISTS {} AS {}{options}",
            crate::quote::literal(&format!("ducklake:{catalog}")),
            crate::quote::name_part(crate::naming::DUCKLAKE_CATALOG)
        )
    }
}

impl SqlDialect for DuckDb {
    fn name(&self) -> &'static str {
        "DuckDB"
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
    fn replace_table(&self, table: &str, select: &str) -> String {
        format!("CREATE OR REPLACE TABLE {table} AS {select}")
    }
    fn replace_view(&self, view: &str, select: &str) -> String {
        format!("CREATE OR REPLACE VIEW {view} AS {select}")
    }
    fn replace_temp_table(&self, table: &str, select: &str) -> String {
        format!("CREATE OR REPLACE TEMP TABLE {table} AS {select}")
    }
    fn drop(&self, kind: RelationKind, name: &str, if_exists: bool) -> String {
        let guard = if if_exists { " IF EXISTS" } else { "" };
        format!("DROP {}{guard} {name}", kind.keyword())
    }
    fn insert_by_name(&self, table: &str, select: &str, _columns: Option<&[String]>) -> String {
        format!("INSERT INTO {table} BY NAME {select}")
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
        _all: Option<&[String]>,
        except: &[String],
    ) -> Option<String> {
        let cols: Vec<String> = except.iter().map(|c| self.ident(c)).collect();
        Some(format!(
            "SELECT * EXCLUDE ({}) FROM {from}",
            cols.join(", ")
        ))
    }
    fn raise(&self, message: &str) -> String {
        format!("error({message})")
    }
    fn text(&self, expr: &str) -> String {
        format!("CAST({expr} AS VARCHAR)")
    }
    fn try_cast(&self, expr: &str, sql_type: &str) -> String {
        format!("TRY_CAST({expr} AS {sql_type})")
    }
    fn try_month_first_timestamp(&self, expr: &str) -> String {
        format!("try_strptime({expr}, ['%m/%d/%Y %H:%M:%S', '%m/%d/%Y %H:%M', '%m/%d/%Y'])")
    }
    fn try_epoch_nanos_timestamp(&self, expr: &str) -> String {
        format!(
            "CASE WHEN regexp_full_match({expr}, '[0-9]{{1,18}}') THEN make_timestamp(CAST({expr} AS BIGINT) // 1000) END"
        )
    }
    fn string_agg(&self, expr: &str, separator: &str) -> String {
        format!("string_agg({expr}, {})", self.literal(separator))
    }
    fn sample_bucket(&self, text_exprs: &[String]) -> String {
        format!("(hash({}) % 10000)", text_exprs.join(", "))
    }
    fn files(&self) -> Option<&dyn FileSql> {
        Some(self)
    }
}

impl FileSql for DuckDb {
    fn read_csv_text(&self, path: &str, columns: &[String]) -> String {
        // the dialect is set, not sniffed: a line of whitespace defeats the sniffer; it reads
        // as a padded row, left out here (padding needs the serial reader when a value holds
        // a newline)
        let read = format!(
            "read_csv({}, header = true, all_varchar = true, delim = ',', quote = '\"', escape = '\"', null_padding = true, parallel = false)",
            crate::quote::literal(path)
        );
        let Some((first, rest)) = columns.split_first() else {
            return read;
        };
        let mut blank = vec![format!("trim({}) = ''", self.ident(first))];
        blank.extend(rest.iter().map(|c| format!("{} IS NULL", self.ident(c))));
        format!(
            "(SELECT * FROM {read} WHERE NOT COALESCE({}, false))",
            blank.join(" AND ")
        )
    }
    fn read_json_text(&self, path: &str, lines: bool, keys: &[String]) -> String {
        let columns = keys
            .iter()
            .map(|k| format!("{}: 'VARCHAR'", crate::quote::literal(k)))
            .collect::<Vec<_>>()
            .join(", ");
        let layout = if lines { "newline_delimited" } else { "array" };
        format!(
            "read_json({}, format = '{layout}', columns = {{{columns}}})",
            crate::quote::literal(path)
        )
    }
    fn read_text(&self, path: &str) -> String {
        format!("read_text({})", crate::quote::literal(path))
    }
    fn read_parquet(&self, paths: &[String]) -> String {
        let list: Vec<String> = paths.iter().map(|p| crate::quote::literal(p)).collect();
        format!(
            "read_parquet([{}], union_by_name = true, hive_partitioning = false)",
            list.join(", ")
        )
    }
    fn copy_to_parquet(&self, select: &str, path: &str) -> String {
        format!(
            "COPY ({select}) TO {} (FORMAT parquet)",
            crate::quote::literal(path)
        )
    }
}
