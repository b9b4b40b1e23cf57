//! PostgreSQL as an engine: models become tables and views in a shared server, built over a
//! connection pool so time-range batches and independent models run at once.
//!
//! Every connection runs [`Postgres::SESSION_SETUP`] (the session-local helper functions the
//! dialect's statements call) and the project's `[engine.settings]` as startup parameters
//! (`-c name=value`), so every pooled connection is configured the same way. Results are read
//! through the simple-query protocol, which returns every value as the server's own text:
//! what audits and `efmesh audit` compare and print.

use super::{Engine, EngineError, EngineFactory, EngineFeature, Rows, SqlDialect};
use crate::util::pg_url::{describe as describe_error, PoolErrors, Redact};
use efmesh_core::config::EngineConfig;
use efmesh_core::sql::dialect::Postgres;
use postgres::types::{Kind, Type};
use postgres::{NoTls, SimpleQueryMessage};
use r2d2_postgres::PostgresConnectionManager;
use std::sync::{Arc, Mutex};
use std::time::Duration;

type Manager = PostgresConnectionManager<NoTls>;
type Pool = r2d2::Pool<Manager>;

/// How long connecting (or waiting for a free pooled connection) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens pooled connections to the project's PostgreSQL database.
pub struct PostgresFactory {
    config: postgres::Config,
    redact: Arc<Redact>,
    pool_size: u32,
    /// Built at the first `open`, after one direct connection proved the server reachable,
    /// the credentials right and every setting accepted.
    pool: Mutex<Option<Pool>>,
}

impl std::fmt::Debug for PostgresFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresFactory")
            .field("location", &self.redact.location)
            .field("pool_size", &self.pool_size)
            .finish_non_exhaustive()
    }
}

impl PostgresFactory {
    /// The engine at `url` with `[engine]`'s settings and pool size. Nothing is connected
    /// yet; a URL that does not parse is refused here, without echoing its password.
    pub fn new(url: &str, engine: &EngineConfig) -> Result<PostgresFactory, EngineError> {
        let mut config: postgres::Config = url.parse().map_err(|e| {
            let r = Redact::new(url, None);
            EngineError::Connect {
                target: r.location.clone(),
                message: r.scrub(&format!(
                    "not a PostgreSQL connection URL: {}",
                    describe_error(&e)
                )),
            }
        })?;
        let redact = Arc::new(Redact::new(url, Some(&config)));
        if !engine.extensions.is_empty() {
            return Err(EngineError::Connect {
                target: redact.location.clone(),
                message: format!(
                    "`[engine] extensions` ({}) are DuckDB extensions; a PostgreSQL server's extensions are installed by its administrator (CREATE EXTENSION). Remove the line",
                    engine.extensions.join(", ")
                ),
            });
        }
        let mut options: Vec<String> = config
            .get_options()
            .filter(|o| !o.is_empty())
            .map(|o| vec![o.to_string()])
            .unwrap_or_default();
        for (name, value) in &engine.settings {
            options.push(format!("-c {name}={}", startup_value(value)));
        }
        if !options.is_empty() {
            config.options(&options.join(" "));
        }
        if config.get_application_name().is_none() {
            config.application_name("efmesh");
        }
        config.connect_timeout(CONNECT_TIMEOUT);
        Ok(PostgresFactory {
            config,
            redact,
            pool_size: engine.pool_size.max(1),
            pool: Mutex::new(None),
        })
    }

    fn connect_error(&self, e: &postgres::Error) -> EngineError {
        let message = self.redact.scrub(&describe_error(e));
        // a refused startup parameter names itself: report it as the setting it came from
        if let Some(name) = message
            .strip_prefix("FATAL: unrecognized configuration parameter \"")
            .or_else(|| message.strip_prefix("ERROR: unrecognized configuration parameter \""))
            .and_then(|rest| rest.split('"').next())
        {
            return EngineError::Setting {
                name: name.to_string(),
                message: "PostgreSQL has no such setting".into(),
            };
        }
        EngineError::Connect {
            target: self.redact.location.clone(),
            message,
        }
    }

    fn pool(&self) -> Result<Pool, EngineError> {
        let mut slot = self.pool.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = slot.as_ref() {
            return Ok(p.clone());
        }
        let mut probe = self
            .config
            .connect(NoTls)
            .map_err(|e| self.connect_error(&e))?;
        probe
            .batch_execute(Postgres::SESSION_SETUP)
            .map_err(|e| self.connect_error(&e))?;
        drop(probe);
        let pool = r2d2::Pool::builder()
            .max_size(self.pool_size)
            .min_idle(Some(0))
            .connection_timeout(CONNECT_TIMEOUT)
            .connection_customizer(Box::new(SessionSetup))
            .error_handler(Box::new(PoolErrors {
                redact: self.redact.clone(),
                role: "engine",
            }))
            .build_unchecked(PostgresConnectionManager::new(self.config.clone(), NoTls));
        *slot = Some(pool.clone());
        Ok(pool)
    }
}

/// A `[engine.settings]` value (a SQL literal, as for DuckDB's `SET`) as a startup
/// parameter: the literal's text, with spaces and backslashes escaped for the options string.
fn startup_value(value: &str) -> String {
    let bare = value
        .strip_prefix('\'')
        .and_then(|v| v.strip_suffix('\''))
        .map(|v| v.replace("''", "'"))
        .unwrap_or_else(|| value.to_string());
    bare.replace('\\', "\\\\").replace(' ', "\\ ")
}

/// Creates the dialect's session-local helper functions on every new pooled connection.
#[derive(Debug)]
struct SessionSetup;

impl r2d2::CustomizeConnection<postgres::Client, postgres::Error> for SessionSetup {
    fn on_acquire(&self, conn: &mut postgres::Client) -> Result<(), postgres::Error> {
        conn.batch_execute(Postgres::SESSION_SETUP)
    }
}

impl EngineFactory for PostgresFactory {
    fn name(&self) -> &'static str {
        "PostgreSQL"
    }
    fn dialect(&self) -> &'static dyn SqlDialect {
        &Postgres
    }
    fn open(&self) -> Result<Box<dyn Engine + Send>, EngineError> {
        let pool = self.pool()?;
        Ok(Box::new(PostgresEngine::checkout(
            pool,
            self.redact.clone(),
        )?))
    }
}

/// One pooled PostgreSQL connection.
pub struct PostgresEngine {
    conn: r2d2::PooledConnection<Manager>,
    pool: Pool,
    redact: Arc<Redact>,
    statements: u64,
}

impl PostgresEngine {
    fn checkout(pool: Pool, redact: Arc<Redact>) -> Result<PostgresEngine, EngineError> {
        let conn = pool.get().map_err(|e| EngineError::Connect {
            target: redact.location.clone(),
            message: redact.scrub(&e.to_string()),
        })?;
        Ok(PostgresEngine {
            conn,
            pool,
            redact,
            statements: 0,
        })
    }

    fn statement_error(&self, context: &str, sql: &str, e: &postgres::Error) -> EngineError {
        EngineError::Statement {
            context: context.into(),
            message: self.redact.scrub(&describe_error(e)),
            sql: sql.into(),
        }
    }

    /// The first two columns of every row of `sql`, as text.
    fn pairs(&mut self, sql: &str) -> Result<Vec<(String, String)>, EngineError> {
        let rows = self.query("describing", sql, None)?;
        Ok(rows
            .rows
            .into_iter()
            .map(|r| {
                let mut it = r.into_iter();
                (
                    it.next().flatten().unwrap_or_default(),
                    it.next().flatten().unwrap_or_default(),
                )
            })
            .collect())
    }
}

/// A result type's name as PostgreSQL's DDL accepts it (`int4`, `timestamptz`, `text[]`), so a
/// described column can be added to a table as it is (forward-only schema evolution).
fn type_name(t: &Type) -> String {
    match t.kind() {
        Kind::Array(inner) => format!("{}[]", type_name(inner)),
        Kind::Domain(inner) => type_name(inner),
        _ => t.name().to_string(),
    }
}

impl Engine for PostgresEngine {
    fn name(&self) -> &'static str {
        "PostgreSQL"
    }

    fn dialect(&self) -> &'static dyn SqlDialect {
        &Postgres
    }

    fn another_connection(&self) -> Result<Box<dyn Engine + Send>, EngineError> {
        Ok(Box::new(PostgresEngine::checkout(
            self.pool.clone(),
            self.redact.clone(),
        )?))
    }

    fn connection_limit(&self) -> Option<usize> {
        Some(self.pool.max_size() as usize)
    }

    fn supports(&self, feature: EngineFeature) -> bool {
        match feature {
            EngineFeature::FileSources | EngineFeature::ParquetTarget | EngineFeature::DuckLake => {
                false
            }
            EngineFeature::CopyRows => true,
        }
    }

    fn transaction(&mut self, context: &str, statements: &[String]) -> Result<(), EngineError> {
        let redact = self.redact.clone();
        let fail = |sql: &str, e: postgres::Error| EngineError::Statement {
            context: context.into(),
            message: redact.scrub(&describe_error(&e)),
            sql: sql.into(),
        };
        // dropping the transaction on an early return rolls it back
        let mut tx = self.conn.transaction().map_err(|e| fail("BEGIN", e))?;
        for sql in statements {
            self.statements += 1;
            tracing::debug!(context, sql = sql.as_str(), "executing");
            tx.batch_execute(sql).map_err(|e| fail(sql, e))?;
        }
        tx.commit().map_err(|e| fail("COMMIT", e))
    }

    fn execute(&mut self, context: &str, sql: &str) -> Result<(), EngineError> {
        self.statements += 1;
        tracing::debug!(context, sql, "executing");
        let result = self.conn.batch_execute(sql);
        result.map_err(|e| self.statement_error(context, sql, &e))
    }

    fn query(
        &mut self,
        context: &str,
        sql: &str,
        limit: Option<usize>,
    ) -> Result<Rows, EngineError> {
        self.statements += 1;
        tracing::debug!(context, sql, "querying");
        let text = match limit {
            Some(l) => format!("SELECT * FROM ({sql}) AS efmesh_q LIMIT {l}"),
            None => sql.to_string(),
        };
        let messages = match self.conn.simple_query(&text) {
            Ok(m) => m,
            Err(e) => return Err(self.statement_error(context, sql, &e)),
        };
        let mut out = Rows::default();
        for m in messages {
            match m {
                SimpleQueryMessage::RowDescription(cols) => {
                    out.columns = cols.iter().map(|c| c.name().to_string()).collect();
                }
                SimpleQueryMessage::Row(r) => {
                    if out.columns.is_empty() {
                        out.columns = r.columns().iter().map(|c| c.name().to_string()).collect();
                    }
                    out.rows
                        .push((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect());
                }
                _ => {}
            }
        }
        Ok(out)
    }

    fn statements_issued(&self) -> u64 {
        self.statements
    }

    /// `COPY ... FROM STDIN` in PostgreSQL's binary format, every value sent as `text`: no
    /// quoting or escaping of the values to get wrong, and one round trip for all the rows.
    fn copy_rows(
        &mut self,
        context: &str,
        table: &str,
        columns: &[String],
        rows: &[Vec<Option<String>>],
    ) -> Result<(), EngineError> {
        use postgres::binary_copy::BinaryCopyInWriter;
        use postgres::types::ToSql;
        let list: Vec<String> = columns.iter().map(|c| Postgres.ident(c)).collect();
        let sql = format!(
            "COPY {table} ({}) FROM STDIN (FORMAT binary)",
            list.join(", ")
        );
        self.statements += 1;
        tracing::debug!(context, sql = sql.as_str(), rows = rows.len(), "copying");
        let types = vec![Type::TEXT; columns.len()];
        let copied = (|| {
            let mut writer = BinaryCopyInWriter::new(self.conn.copy_in(&sql)?, &types);
            for r in rows {
                let values: Vec<&(dyn ToSql + Sync)> =
                    r.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
                writer.write(&values)?;
            }
            writer.finish()
        })();
        copied
            .map(|_| ())
            .map_err(|e| self.statement_error(context, &sql, &e))
    }

    /// From the prepared statement's metadata: the query is parsed and planned, never run.
    fn describe(&mut self, sql: &str) -> Result<Vec<(String, String)>, EngineError> {
        self.statements += 1;
        let prepared = self.conn.prepare(sql);
        let statement = prepared.map_err(|e| self.statement_error("describing", sql, &e))?;
        Ok(statement
            .columns()
            .iter()
            .map(|c| (c.name().to_string(), type_name(c.type_())))
            .collect())
    }

    fn table_columns(&mut self, qualified: &str) -> Result<Vec<(String, String)>, EngineError> {
        let (schema, table) = qualified.split_once('.').unwrap_or(("public", qualified));
        let lit = |s: &str| Postgres.literal(s);
        self.pairs(&format!(
            "SELECT a.attname::text, format_type(a.atttypid, a.atttypmod) FROM pg_catalog.pg_attribute a
             JOIN pg_catalog.pg_class c ON c.oid = a.attrelid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = {} AND c.relname = {} AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
            lit(schema),
            lit(table)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_become_escaped_startup_parameters() {
        assert_eq!(startup_value("'Europe/Paris'"), "Europe/Paris");
        assert_eq!(startup_value("'a b''c'"), "a\\ b'c");
        assert_eq!(startup_value("4"), "4");
    }

    #[test]
    fn duckdb_extensions_are_refused_naming_the_line_to_remove() {
        let mut cfg = efmesh_core::config::Config::defaults("t").engine;
        cfg.extensions = vec!["httpfs".into()];
        let err = PostgresFactory::new("postgres://u:pw@127.0.0.1:1/d", &cfg).unwrap_err();
        let said = err.to_string();
        assert!(
            said.contains("httpfs") && said.contains("extensions"),
            "{said}"
        );
        assert!(!said.contains("pw@"), "{said}");
    }
}
