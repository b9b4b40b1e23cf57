//! Engines: where models are materialized. A trait, so DuckDB (the default) and PostgreSQL
//! are interchangeable, with DuckDB-only capabilities behind [`EngineFeature`] checks.

pub mod duckdb;
pub mod postgres;

/// Capabilities not every engine has. An engine without one fails honestly with
/// [`EngineError::Feature`] instead of degrading silently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineFeature {
    /// Reading files (parquet, csv, json) and URLs: seeds and file-based EXTERNAL models.
    FileSources,
    /// Writing parquet.
    ParquetTarget,
    /// DuckLake catalogs.
    DuckLake,
    /// Taking rows streamed from efmesh ([`Engine::copy_rows`]): how a seed reaches an
    /// engine that cannot read the project's files.
    CopyRows,
}

/// Why the engine failed.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The database could not be opened or configured.
    #[error("cannot open {target}: {message}")]
    Connect {
        /// The database file or URL.
        target: String,
        /// What the engine said.
        message: String,
    },
    /// Another process holds the database's write lock (DuckDB allows one writer per file):
    /// a lock conflict like efmesh's own environment lock, so it exits 3 and names the holder.
    #[error("`{target}` is open for writing by another process: {holder}")]
    Locked {
        /// The database file.
        target: String,
        /// Who holds it, as the engine reports it (program and PID).
        holder: String,
    },
    /// A statement failed.
    #[error("{message}")]
    Statement {
        /// What efmesh was doing (`building mart.stays`).
        context: String,
        /// What the engine said.
        message: String,
        /// The SQL that failed.
        sql: String,
    },
    /// An `[engine.settings]` entry was refused. Only the setting's name is reported: its
    /// value may be a secret, and the engine's message is scrubbed of it.
    #[error("engine setting `{name}`: {message}")]
    Setting {
        /// The setting's name.
        name: String,
        /// What the engine said, without the value.
        message: String,
    },
    /// A startup statement that carries credentials (`[[engine.secrets]]`, `[attach.*]`)
    /// failed. It names the object; the engine's message is scrubbed of every value, and the
    /// statement itself is never reported.
    #[error("{what}: {message}")]
    Redacted {
        /// What failed (`engine secret `lake``).
        what: String,
        /// What the engine said, without the values.
        message: String,
    },
    /// The engine lacks a capability the project needs.
    #[error("{engine} cannot {feature:?}: {detail}")]
    Feature {
        /// The engine's name.
        engine: &'static str,
        /// The missing capability.
        feature: EngineFeature,
        /// Which model or setting needed it.
        detail: String,
    },
}

/// A query's result as text: what audits, unit tests and `efmesh audit` compare and print.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Rows {
    /// The result's column names, in order.
    pub columns: Vec<String>,
    /// Each row's values rendered by the engine as text; `None` is SQL NULL.
    pub rows: Vec<Vec<Option<String>>>,
}

impl Rows {
    /// The first cell as a count: what `SELECT count(*) ...` returns (0 when absent).
    pub fn count(&self) -> u64 {
        self.rows
            .first()
            .and_then(|r| r.first().cloned().flatten())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }
}

pub use efmesh_core::sql::dialect::{RelationKind, SqlDialect};

/// Opens connections to one configured engine: what the composition root
/// (`workspace::backends`) hands the library, so nothing above `engine/` names a concrete
/// engine. A new engine is a new file with an `Engine` and an `EngineFactory`, plus one line
/// there, and it runs the shared conformance suite (`tests/engine_conformance.rs`).
pub trait EngineFactory: Send + Sync {
    /// The engine's name, for messages.
    fn name(&self) -> &'static str;
    /// How it spells statements (known without connecting).
    fn dialect(&self) -> &'static dyn SqlDialect;
    /// A new connection, set up as the project configures it.
    fn open(&self) -> Result<Box<dyn Engine + Send>, EngineError>;
    /// The database file, when the engine keeps one and it does not exist: then everything
    /// the state says was built there is gone, known without opening it (which would create
    /// an empty one). `None` for a server or a database that exists.
    fn missing_database(&self) -> Option<String> {
        None
    }
}

/// A database efmesh materializes into.
pub trait Engine {
    /// The engine's name for messages.
    fn name(&self) -> &'static str;
    /// How this engine spells statements: the statement builders of
    /// `efmesh_core::materialize` write every statement the executor runs in it.
    fn dialect(&self) -> &'static dyn SqlDialect;
    /// Another connection to the same database, set up like this one, for a worker that
    /// builds models in parallel (`--jobs`).
    fn another_connection(&self) -> Result<Box<dyn Engine + Send>, EngineError>;
    /// How many connections this engine can have open at once, this one included (`None`: no
    /// limit). Parallel models and batches never ask for more, since one more would wait for a
    /// connection that only they could free.
    fn connection_limit(&self) -> Option<usize> {
        None
    }
    /// Whether the engine has a capability.
    fn supports(&self, feature: EngineFeature) -> bool;
    /// Run statements as one transaction: all of them take effect, or none.
    fn transaction(&mut self, context: &str, statements: &[String]) -> Result<(), EngineError>;
    /// Open an explicit transaction, for work that must inspect its own writes (audits) before
    /// deciding to keep them.
    fn begin(&mut self, context: &str) -> Result<(), EngineError> {
        self.execute(context, "BEGIN TRANSACTION")
    }
    /// Make the open transaction's writes visible to everyone.
    fn commit(&mut self, context: &str) -> Result<(), EngineError> {
        self.execute(context, "COMMIT")
    }
    /// Discard the open transaction's writes.
    fn rollback(&mut self, context: &str) -> Result<(), EngineError> {
        self.execute(context, "ROLLBACK")
    }
    /// Run a query and return at most `limit` rows of it as text (`None`: all rows).
    fn query(
        &mut self,
        context: &str,
        sql: &str,
        limit: Option<usize>,
    ) -> Result<Rows, EngineError>;
    /// Run one statement outside an explicit transaction.
    fn execute(&mut self, context: &str, sql: &str) -> Result<(), EngineError>;
    /// The result columns (name, type) a query would return, without running it.
    fn describe(&mut self, sql: &str) -> Result<Vec<(String, String)>, EngineError>;
    /// Append `rows` (text values, `None` for NULL) to the existing `table`'s `columns`, in
    /// one statement efmesh streams to the engine: PostgreSQL cannot read the project's files
    /// from SQL, so a seed's records travel this way (`COPY ... FROM STDIN`).
    fn copy_rows(
        &mut self,
        context: &str,
        table: &str,
        columns: &[String],
        rows: &[Vec<Option<String>>],
    ) -> Result<(), EngineError>;
    /// The columns (name, type) of an existing table, given as `schema.table`.
    fn table_columns(&mut self, qualified: &str) -> Result<Vec<(String, String)>, EngineError>;
    /// What the relation `schema.table` is, if it exists: the janitor drops each physical
    /// version as what it really is (a parquet version is a view over files, not a table).
    fn relation_kind(&mut self, qualified: &str) -> Result<Option<RelationKind>, EngineError> {
        let (catalog, schema, table) = split_relation(qualified, "main");
        let lit = |s: &str| self.dialect().literal(s);
        let in_catalog = catalog
            .map(|c| format!(" AND table_catalog = {}", lit(&c)))
            .unwrap_or_default();
        let rows = self.query(
            &format!("looking up {qualified}"),
            &format!(
                "SELECT table_type FROM information_schema.tables WHERE table_schema = {} AND table_name = {}{in_catalog}",
                lit(&schema),
                lit(&table)
            ),
            Some(1),
        )?;
        Ok(rows
            .rows
            .first()
            .and_then(|r| r.first().cloned().flatten())
            .map(|t| {
                if t.eq_ignore_ascii_case("VIEW") {
                    RelationKind::View
                } else {
                    RelationKind::Table
                }
            }))
    }
    /// How many statements this connection has issued, for tests and metrics.
    fn statements_issued(&self) -> u64;
    /// Quote an identifier.
    fn quote(&self, ident: &str) -> String {
        self.dialect().ident(ident)
    }
}

/// `[catalog.]schema.table` as efmesh writes it (parts plain, or quoted by `quote::name_part`)
/// split into its parts, unquoted; `default_schema` when only a table is given.
pub fn split_relation(qualified: &str, default_schema: &str) -> (Option<String>, String, String) {
    let mut parts = vec![];
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = qualified.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            '.' if !quoted => parts.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    parts.push(cur);
    match parts.len() {
        1 => (None, default_schema.to_string(), parts.remove(0)),
        2 => {
            let t = parts.pop().unwrap_or_default();
            (None, parts.pop().unwrap_or_default(), t)
        }
        _ => {
            let t = parts.pop().unwrap_or_default();
            let s = parts.pop().unwrap_or_default();
            (Some(parts.join(".")), s, t)
        }
    }
}
