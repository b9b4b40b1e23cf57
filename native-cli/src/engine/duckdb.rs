//! DuckDB, the default engine: a database file next to the project (or `:memory:`).

use super::{Engine, EngineError, EngineFactory, EngineFeature, Rows, SqlDialect};
use efmesh_core::config::EngineConfig;
use std::path::{Path, PathBuf};

/// Opens the project's DuckDB database (a file relative to the project root, or `:memory:`)
/// with its `[engine]` extensions and settings.
#[derive(Debug, Clone)]
pub struct DuckDbFactory {
    /// The project root: relative database and file paths resolve against it.
    pub root: PathBuf,
    /// The database, as configured.
    pub path: String,
    /// Extensions and settings.
    pub config: EngineConfig,
}

impl EngineFactory for DuckDbFactory {
    fn name(&self) -> &'static str {
        "DuckDB"
    }
    fn dialect(&self) -> &'static dyn SqlDialect {
        &efmesh_core::sql::dialect::DuckDb
    }
    fn open(&self) -> Result<Box<dyn Engine + Send>, EngineError> {
        Ok(Box::new(DuckDbEngine::open(
            &self.root,
            &self.path,
            &self.config,
        )?))
    }
    fn missing_database(&self) -> Option<String> {
        let file = self.root.join(&self.path);
        (self.path != ":memory:" && !file.exists()).then(|| file.display().to_string())
    }
}

/// A DuckDB connection with the project's settings applied.
pub struct DuckDbEngine {
    conn: ::duckdb::Connection,
    statements: u64,
    /// The statements that configured the connection (search path, extensions, settings),
    /// replayed on every other connection made from it.
    setup: Vec<Setup>,
}

/// One statement that configures a connection.
#[derive(Clone)]
enum Setup {
    /// Logged and reported like any statement.
    Plain { context: String, sql: String },
    /// `SET name = value` from `[engine.settings]`: a value may be a secret (a token, an S3
    /// key), so only the setting's name is ever logged or reported, and the engine's own
    /// message is scrubbed of the value.
    Setting { name: String, value: String },
    /// A statement that carries credentials (`CREATE SECRET`, `ATTACH` of a URL with a
    /// password): never logged, and a failure names `what` and is scrubbed of `values`.
    Credentialed {
        what: String,
        sql: String,
        values: Vec<String>,
    },
}

impl DuckDbEngine {
    /// Open `path` (relative paths resolve against `root`), apply `[engine]` extensions and
    /// settings, and make relative file paths in models resolve against the project root.
    pub fn open(
        root: &Path,
        path: &str,
        config: &EngineConfig,
    ) -> Result<DuckDbEngine, EngineError> {
        let target = if path == ":memory:" {
            path.to_string()
        } else {
            root.join(path).display().to_string()
        };
        let err = |e: ::duckdb::Error| {
            let message = e.to_string();
            // "Could not set lock on file ...: Conflicting lock is held in <program> (PID <n>)"
            match message.split_once("Conflicting lock is held in ") {
                Some((_, rest)) => EngineError::Locked {
                    target: target.clone(),
                    holder: rest
                        .split_once(". See also")
                        .map_or(rest, |(h, _)| h)
                        .trim()
                        .to_string(),
                },
                None => EngineError::Connect {
                    target: target.clone(),
                    message,
                },
            }
        };
        let conn = if path == ":memory:" {
            ::duckdb::Connection::open_in_memory()
        } else {
            ::duckdb::Connection::open(&target)
        }
        .map_err(err)?;
        let mut engine = DuckDbEngine {
            conn,
            statements: 0,
            setup: vec![],
        };
        let root_lit = efmesh_core::quote::literal(&root.display().to_string());
        let mut setup = vec![Setup::Plain {
            context: "configuring the engine".into(),
            sql: format!("SET file_search_path = {root_lit}"),
        }];
        // where extensions are found must be known before they load; every other setting may
        // belong to an extension (`s3_region`), so it waits until they have
        let (early, late): (Vec<_>, Vec<_>) = config
            .settings
            .iter()
            .partition(|(k, _)| k.as_str() == "extension_directory");
        let setting = |(k, v): (&String, &String)| Setup::Setting {
            name: k.clone(),
            value: v.clone(),
        };
        setup.extend(early.into_iter().map(setting));
        setup.extend(config.extensions.iter().map(|ext| Setup::Plain {
            context: format!("loading extension {ext}"),
            sql: format!("LOAD {ext}"),
        }));
        setup.extend(late.into_iter().map(setting));
        setup.extend(config.secrets.iter().map(|x| {
            Setup::Credentialed {
                what: format!("engine secret `{}`", x.name),
                sql: efmesh_core::sql::dialect::DuckDb::create_secret(x),
                values: x
                    .values
                    .iter()
                    .map(|(_, v)| v.expose().to_string())
                    .collect(),
            }
        }));
        setup.extend(config.attachments.iter().map(|a| {
            // a file's path is no secret, and an error without it would not say which file
            let (url, values) = if a.is_local_file() {
                (root.join(a.url.expose()).display().to_string(), vec![])
            } else {
                let url = a.url.expose().to_string();
                (url.clone(), vec![url])
            };
            Setup::Credentialed {
                what: format!("attached database `{}`", a.name),
                sql: efmesh_core::sql::dialect::DuckDb::attach(a, &url),
                values,
            }
        }));
        if let Some(dl) = &config.ducklake {
            use efmesh_core::config::DuckLakeCatalog;
            let file = |p: &str| root.join(p).display().to_string();
            let (catalog, values) = match &dl.catalog {
                DuckLakeCatalog::Sqlite(p) => (format!("sqlite:{}", file(p)), vec![]),
                DuckLakeCatalog::DuckDb(p) => (file(p), vec![]),
                DuckLakeCatalog::Postgres(url) => (
                    format!("postgres:{}", url.expose()),
                    vec![url.expose().to_string()],
                ),
            };
            let data_path = dl.data_path.as_ref().map(|d| {
                if d.contains("://") {
                    d.clone()
                } else {
                    format!("{}/", file(d).trim_end_matches('/'))
                }
            });
            setup.push(Setup::Credentialed {
                what: "the DuckLake catalog (`[ducklake]`)".into(),
                sql: efmesh_core::sql::dialect::DuckDb::attach_ducklake(
                    &catalog,
                    data_path.as_deref(),
                ),
                values,
            });
        }
        for step in &setup {
            match step {
                Setup::Plain { context, sql } if sql.starts_with("LOAD ") => {
                    if engine.execute(context, sql).is_err() {
                        let ext = &sql["LOAD ".len()..];
                        engine
                            .execute(
                                &format!("installing extension {ext}"),
                                &format!("INSTALL {ext}; LOAD {ext}"),
                            )
                            .map_err(|e| EngineError::Connect {
                                target: target.clone(),
                                message: format!("extension `{ext}`: {e}"),
                            })?;
                    }
                }
                step => engine.run_setup(step).map_err(|e| EngineError::Connect {
                    target: target.clone(),
                    message: e.to_string(),
                })?,
            }
        }
        engine.setup = setup;
        Ok(engine)
    }

    /// Run one setup statement; a setting is logged and reported by its name alone.
    fn run_setup(&mut self, step: &Setup) -> Result<(), EngineError> {
        match step {
            Setup::Plain { context, sql } => self.execute(context, sql),
            Setup::Setting { name, value } => {
                self.statements += 1;
                tracing::debug!(setting = name.as_str(), "applying engine setting");
                self.conn
                    .execute_batch(&format!("SET {name} = {value}"))
                    .map_err(|e| EngineError::Setting {
                        name: name.clone(),
                        message: scrub(&e.to_string(), value),
                    })
            }
            Setup::Credentialed { what, sql, values } => {
                self.statements += 1;
                tracing::debug!(
                    what = what.as_str(),
                    "running a credentialed setup statement"
                );
                self.conn
                    .execute_batch(sql)
                    .map_err(|e| EngineError::Redacted {
                        what: what.clone(),
                        message: values.iter().fold(e.to_string(), |m, v| scrub(&m, v)),
                    })
            }
        }
    }

    /// Run a query and return its first two columns as text.
    fn pairs(&mut self, sql: &str) -> Result<Vec<(String, String)>, EngineError> {
        self.statements += 1;
        let wrap = |e: ::duckdb::Error| EngineError::Statement {
            context: "describing".into(),
            message: e.to_string(),
            sql: sql.into(),
        };
        let mut stmt = self.conn.prepare(sql).map_err(wrap)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(wrap)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(wrap)
    }

    /// Run a query and return the first column of every row as text (for tests and checks).
    pub fn query_strings(&mut self, sql: &str) -> Result<Vec<Option<String>>, EngineError> {
        self.statements += 1;
        let wrap = |e: ::duckdb::Error| EngineError::Statement {
            context: "querying".into(),
            message: e.to_string(),
            sql: sql.into(),
        };
        let mut stmt = self.conn.prepare(sql).map_err(wrap)?;
        let rows = stmt
            .query_map([], |r| r.get::<_, Option<String>>(0))
            .map_err(wrap)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(wrap)
    }
}

impl Engine for DuckDbEngine {
    fn name(&self) -> &'static str {
        "DuckDB"
    }

    fn dialect(&self) -> &'static dyn super::SqlDialect {
        &efmesh_core::sql::dialect::DuckDb
    }

    fn another_connection(&self) -> Result<Box<dyn Engine + Send>, EngineError> {
        let conn = self.conn.try_clone().map_err(|e| EngineError::Connect {
            target: "another connection to the database".into(),
            message: e.to_string(),
        })?;
        let mut other = DuckDbEngine {
            conn,
            statements: 0,
            setup: self.setup.clone(),
        };
        for step in &self.setup {
            other.run_setup(step)?;
        }
        Ok(Box::new(other))
    }

    fn supports(&self, _feature: EngineFeature) -> bool {
        true
    }

    /// One prepared `INSERT` per row inside a transaction. DuckDB reads seed files itself, so
    /// only the conformance suite, which holds every engine to the same contract, calls this.
    fn copy_rows(
        &mut self,
        context: &str,
        table: &str,
        columns: &[String],
        rows: &[Vec<Option<String>>],
    ) -> Result<(), EngineError> {
        let list: Vec<String> = columns.iter().map(|c| self.dialect().ident(c)).collect();
        let marks = vec!["?"; columns.len()].join(", ");
        let sql = format!("INSERT INTO {table} ({}) VALUES ({marks})", list.join(", "));
        self.statements += 1;
        tracing::debug!(context, sql = sql.as_str(), rows = rows.len(), "copying");
        let fail = |e: duckdb::Error| EngineError::Statement {
            context: context.into(),
            message: e.to_string(),
            sql: sql.clone(),
        };
        let tx = self.conn.transaction().map_err(fail)?;
        {
            let mut insert = tx.prepare(&sql).map_err(fail)?;
            for r in rows {
                insert
                    .execute(duckdb::params_from_iter(r.iter()))
                    .map_err(fail)?;
            }
        }
        tx.commit().map_err(fail)
    }

    fn transaction(&mut self, context: &str, statements: &[String]) -> Result<(), EngineError> {
        let tx = self
            .conn
            .transaction()
            .map_err(|e| EngineError::Statement {
                context: context.into(),
                message: e.to_string(),
                sql: "BEGIN".into(),
            })?;
        for sql in statements {
            self.statements += 1;
            tracing::debug!(context, sql = sql.as_str(), "executing");
            tx.execute_batch(sql).map_err(|e| EngineError::Statement {
                context: context.into(),
                message: e.to_string(),
                sql: sql.clone(),
            })?;
        }
        tx.commit().map_err(|e| EngineError::Statement {
            context: context.into(),
            message: e.to_string(),
            sql: "COMMIT".into(),
        })
    }

    fn execute(&mut self, context: &str, sql: &str) -> Result<(), EngineError> {
        self.statements += 1;
        tracing::debug!(context, sql, "executing");
        self.conn
            .execute_batch(sql)
            .map_err(|e| EngineError::Statement {
                context: context.into(),
                message: e.to_string(),
                sql: sql.into(),
            })
    }

    fn query(
        &mut self,
        context: &str,
        sql: &str,
        limit: Option<usize>,
    ) -> Result<Rows, EngineError> {
        self.statements += 1;
        // every column as text, so values print and compare the way DuckDB renders them
        let text = format!("SELECT COLUMNS(*)::VARCHAR FROM ({sql}) AS efmesh_q");
        let wrap = |e: ::duckdb::Error| EngineError::Statement {
            context: context.into(),
            message: e.to_string(),
            sql: sql.into(),
        };
        tracing::debug!(context, sql, "querying");
        let mut stmt = self.conn.prepare(&text).map_err(wrap)?;
        let mut out = Rows::default();
        let mut rows = stmt.query([]).map_err(wrap)?;
        while let Some(r) = rows.next().map_err(wrap)? {
            if limit.is_some_and(|l| out.rows.len() >= l) {
                break;
            }
            let n = r.as_ref().column_count();
            let mut vals = Vec::with_capacity(n);
            for c in 0..n {
                vals.push(r.get::<_, Option<String>>(c).map_err(wrap)?);
            }
            out.rows.push(vals);
        }
        drop(rows);
        out.columns = stmt.column_names();
        Ok(out)
    }

    fn statements_issued(&self) -> u64 {
        self.statements
    }

    fn describe(&mut self, sql: &str) -> Result<Vec<(String, String)>, EngineError> {
        self.pairs(&format!("DESCRIBE {sql}"))
    }

    fn table_columns(&mut self, qualified: &str) -> Result<Vec<(String, String)>, EngineError> {
        let (catalog, schema, table) = super::split_relation(qualified, "main");
        let in_catalog = catalog
            .map(|c| format!(" AND table_catalog = {}", efmesh_core::quote::literal(&c)))
            .unwrap_or_default();
        self.pairs(&format!(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = {} AND table_name = {}{in_catalog} ORDER BY ordinal_position",
            efmesh_core::quote::literal(&schema),
            efmesh_core::quote::literal(&table)
        ))
    }
}

/// `message` without `value` (a SQL literal) in either its quoted or its bare form.
fn scrub(message: &str, value: &str) -> String {
    let bare = value
        .strip_prefix('\'')
        .and_then(|v| v.strip_suffix('\''))
        .map(|v| v.replace("''", "'"))
        .unwrap_or_else(|| value.to_string());
    let mut out = message.replace(value, "<redacted>");
    if !bare.is_empty() {
        out = out.replace(&bare, "<redacted>");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_duckdb_1_5_5() {
        let cfg = EngineConfig {
            target: efmesh_core::config::EngineTarget::Duckdb {
                path: ":memory:".into(),
            },
            extensions: vec![],
            settings: Default::default(),
            pool_size: efmesh_core::config::DEFAULT_POOL_SIZE,
            secrets: vec![],
            attachments: vec![],
            ducklake: None,
        };
        let mut e = DuckDbEngine::open(Path::new("/tmp"), ":memory:", &cfg).unwrap();
        assert_eq!(
            e.query_strings("SELECT version()").unwrap(),
            vec![Some("v1.5.5".to_string())]
        );
        let rows = e
            .query(
                "t",
                "SELECT 1 AS a, NULL::INT AS b, 2.5::DOUBLE AS c UNION ALL SELECT 2, 3, 4",
                Some(5),
            )
            .unwrap();
        assert_eq!(rows.columns, vec!["a", "b", "c"]);
        assert_eq!(rows.rows.len(), 2);
        assert_eq!(
            rows.rows[0],
            vec![Some("1".into()), None, Some("2.5".into())]
        );
        // a failed transaction leaves nothing behind
        let r = e.transaction(
            "t",
            &["CREATE TABLE a (x INT)".into(), "SELECT * FROM nope".into()],
        );
        assert!(r.is_err());
        assert_eq!(
            e.query_strings(
                "SELECT count(*)::VARCHAR FROM information_schema.tables WHERE table_name = 'a'"
            )
            .unwrap(),
            vec![Some("0".into())]
        );
    }

    #[test]
    fn settings_apply_at_startup_and_bad_ones_are_named() {
        let text = "[engine]\nduckdb = \":memory:\"\n[engine.settings]\nthreads = 1\nmemory_limit = \"512MB\"\n";
        let cfg = efmesh_core::config::Config::parse("efmesh.toml", text, &|_| None)
            .unwrap()
            .engine;
        let mut e = DuckDbEngine::open(Path::new("/tmp"), ":memory:", &cfg).unwrap();
        assert_eq!(
            e.query_strings("SELECT current_setting('threads')::VARCHAR")
                .unwrap(),
            vec![Some("1".into())]
        );
        let bad = efmesh_core::config::Config::parse(
            "efmesh.toml",
            "[engine.settings]\nthreds = 1\n",
            &|_| None,
        )
        .unwrap()
        .engine;
        let err = DuckDbEngine::open(Path::new("/tmp"), ":memory:", &bad)
            .err()
            .unwrap();
        assert!(err.to_string().contains("setting `threds`"), "{err}");
    }

    #[test]
    fn a_refused_setting_never_reports_its_value() {
        // DuckDB echoes the value it could not convert; the report names the setting only
        let cfg = efmesh_core::config::Config::parse(
            "efmesh.toml",
            "[engine.settings]\nthreads = \"tok-s3cr3t-'x\"\n",
            &|_| None,
        )
        .unwrap()
        .engine;
        let err = DuckDbEngine::open(Path::new("/tmp"), ":memory:", &cfg)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("setting `threads`"), "{err}");
        assert!(!err.contains("s3cr3t"), "the value leaked: {err}");
        assert_eq!(
            scrub("bad 'a''b' and a'b", "'a''b'"),
            "bad <redacted> and <redacted>"
        );
    }
}
