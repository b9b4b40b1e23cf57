//! `efmesh.toml`: the project's configuration, parsed and validated without touching the disk.
//!
//! The native side finds and reads the file and passes its text plus a way to look up
//! environment variables; this module returns a typed [`Config`] or diagnostics that point
//! at the offending line. Unknown keys are errors, because a silently ignored typo in a
//! config (`memory_limt`) is worse than a refusal.

use crate::diagnostic::{Diagnostic, Problem};
use crate::location::Location;
use crate::sql::Dialect;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use toml::Spanned;

/// The name of the project file, found by walking up from the working directory.
pub const CONFIG_FILE: &str = "efmesh.toml";

type S = Spanned<String>;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    project: RawProject,
    engine: Option<RawEngine>,
    state: Option<RawState>,
    lake: Option<RawLake>,
    ducklake: Option<RawDuckLake>,
    #[serde(default)]
    environments: BTreeMap<String, RawEnvironment>,
    #[serde(default)]
    attach: BTreeMap<String, Spanned<RawAttach>>,
    #[serde(default)]
    variables: BTreeMap<String, Spanned<toml::Value>>,
    model_defaults: Option<RawModelDefaults>,
}

/// `[model_defaults]`: what a model without these properties gets.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModelDefaults {
    kind: Option<S>,
    cron: Option<S>,
    owner: Option<S>,
}

/// `[attach.NAME]`: another database the engine attaches at startup.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAttach {
    url: S,
    secret: Option<S>,
    #[serde(default)]
    options: BTreeMap<String, Spanned<toml::Value>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawProject {
    name: Option<S>,
    start: Option<S>,
    models: Option<Vec<S>>,
    audits: Option<Vec<S>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEngine {
    duckdb: Option<S>,
    postgres: Option<S>,
    #[serde(default)]
    extensions: Vec<S>,
    pool_size: Option<Spanned<u32>>,
    #[serde(default)]
    settings: BTreeMap<String, toml::Value>,
    #[serde(default)]
    secrets: Vec<Spanned<BTreeMap<String, Spanned<toml::Value>>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawState {
    sqlite: Option<S>,
    postgres: Option<S>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLake {
    path: S,
    secret: Option<S>,
    index: Option<RawLakeIndex>,
}

/// `[lake.index]`: the `index.html` apply writes into the lake root.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLakeIndex {
    enabled: Option<bool>,
    duckdb_wasm: Option<S>,
    duckdb_wasm_dist: Option<S>,
    #[serde(default)]
    imports: BTreeMap<String, S>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDuckLake {
    catalog: S,
    data_path: Option<S>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEnvironment {
    #[serde(default)]
    redacted: bool,
}

/// Where models are materialized and queried.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "lowercase", tag = "type")]
pub enum EngineTarget {
    /// A DuckDB database file, relative to the project root (or `:memory:`).
    Duckdb {
        /// The database file, with `${VAR}` already resolved.
        path: String,
    },
    /// A PostgreSQL connection URL.
    Postgres {
        /// The connection URL, with `${VAR}` (e.g. a password) already resolved.
        url: Sensitive,
    },
}

/// Engine section: the target plus the startup capabilities that never enter fingerprints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EngineConfig {
    /// The database models are materialized in; it also decides the SQL dialect.
    pub target: EngineTarget,
    /// Engine extensions to load at startup (e.g. DuckDB's `httpfs`).
    pub extensions: Vec<String>,
    /// `SET key = value` applied at startup, rendered as SQL literals.
    pub settings: BTreeMap<String, String>,
    /// How many connections a PostgreSQL engine may hold open at once (`pool_size`); the
    /// most models and batches that can build at the same time.
    pub pool_size: u32,
    /// `[[engine.secrets]]`, created at startup in this order.
    pub secrets: Vec<EngineSecret>,
    /// `[attach.*]`, attached at startup after the secrets, by name.
    pub attachments: Vec<Attachment>,
    /// `[ducklake]`: the DuckLake catalog `target ducklake` models live in, attached last.
    pub ducklake: Option<DuckLake>,
}

/// `[ducklake]`: where the DuckLake target keeps its catalog and its data files. Attached as
/// [`crate::naming::DUCKLAKE_CATALOG`]; each version of a `target ducklake` model is a table
/// in it, and environments are views over those tables, as for engine tables.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DuckLake {
    /// The catalog database.
    pub catalog: DuckLakeCatalog,
    /// `data_path`: where the data files go (a folder relative to the project root, or an
    /// `s3://` URL); DuckLake's default (next to the catalog) when absent.
    pub data_path: Option<String>,
}

/// The database a DuckLake catalog is kept in, which decides the extension that reads it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum DuckLakeCatalog {
    /// A SQLite file, relative to the project root (`sqlite_scanner`): several processes may
    /// use it.
    Sqlite(String),
    /// A DuckDB file, relative to the project root: one process at a time.
    DuckDb(String),
    /// A PostgreSQL database (`postgres_scanner`), by URL: a catalog a team shares.
    Postgres(Sensitive),
}

impl DuckLakeCatalog {
    /// The extension DuckDB needs to read the catalog, besides `ducklake`.
    pub fn extension(&self) -> Option<&'static str> {
        match self {
            DuckLakeCatalog::Sqlite(_) => Some("sqlite_scanner"),
            DuckLakeCatalog::DuckDb(_) => None,
            DuckLakeCatalog::Postgres(_) => Some("postgres_scanner"),
        }
    }
}

/// Text that may carry a credential (a secret's key, an attach URL with a password). It prints
/// as `<redacted>` through `Debug` and `Serialize`, so a configuration dumped into a message, a
/// log or `--json` never shows it; only the engine's setup reads it, through
/// [`Sensitive::expose`].
#[derive(Clone, PartialEq)]
pub struct Sensitive(String);

impl Sensitive {
    /// Wrap text that must not be printed.
    pub fn new(text: String) -> Sensitive {
        Sensitive(text)
    }
    /// The text itself, for the one place that hands it to the engine.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Sensitive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

impl Serialize for Sensitive {
    fn serialize<Z: serde::Serializer>(&self, z: Z) -> Result<Z::Ok, Z::Error> {
        z.serialize_str("<redacted>")
    }
}

/// `[[engine.secrets]]`: a DuckDB secret (`CREATE SECRET`) made at startup, so extensions
/// such as httpfs authenticate without credentials in settings or model SQL. Temporary: it
/// lives in the engine's memory, never in the database file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EngineSecret {
    /// Its name (`name`, default `efmesh_secret_<n>`), which `[attach.*] secret` refers to.
    pub name: String,
    /// Its type (`type`: `s3`, `http`, `gcs`, `postgres`, ...).
    pub kind: String,
    /// Every other key, upper-cased, with its value as a SQL literal (`${VAR}` resolved).
    pub values: Vec<(String, Sensitive)>,
    /// The same values as text (a string unquoted, a number or boolean as written), for the
    /// object-store client that reads an S3 lake with the same credentials.
    pub texts: BTreeMap<String, Sensitive>,
}

/// `[lake.index]`: the `index.html` an apply of `prod` writes into the lake root, listing the
/// lake's models with their passports and running SQL over them in the reader's browser with
/// duckdb-wasm. The page loads duckdb-wasm from these URLs and nothing else from the network.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LakeIndex {
    /// `enabled = false` opts out: no page is written (one already there is left alone).
    pub enabled: bool,
    /// The ES module of duckdb-wasm the page imports.
    pub duckdb_wasm: String,
    /// The folder holding duckdb-wasm's `.wasm` files and workers (ends with `/`).
    pub duckdb_wasm_dist: String,
    /// Import-map entries for the module's own imports, for a self-hosted duckdb-wasm
    /// (`"apache-arrow" = "/vendor/Arrow.dom.mjs"`); empty for the CDN's bundled module.
    pub imports: BTreeMap<String, String>,
}

impl Default for LakeIndex {
    fn default() -> LakeIndex {
        LakeIndex {
            enabled: true,
            duckdb_wasm: "https://cdn.jsdelivr.net/npm/@duckdb/duckdb-wasm@1.28.0/+esm".into(),
            duckdb_wasm_dist: "https://cdn.jsdelivr.net/npm/@duckdb/duckdb-wasm@1.28.0/dist/"
                .into(),
            imports: BTreeMap::new(),
        }
    }
}

/// `[lake] path = "s3://bucket/prefix"`: a lake in an S3-compatible object store. Its
/// endpoint, region, URL style and credentials are the values of one `[[engine.secrets]]` of
/// type `s3` (`secret`), so the engine (httpfs) and efmesh's own object-store client read the
/// same bucket the same way, declared once.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct S3Lake {
    /// The bucket.
    pub bucket: String,
    /// The key prefix inside it (no leading or trailing `/`; empty for the bucket's root).
    pub prefix: String,
    /// The name of the `[[engine.secrets]]` it authenticates with.
    pub secret: String,
}

/// `[attach.NAME]`: a database the engine attaches at startup (`ATTACH url AS NAME`), so
/// EXTERNAL models can read `NAME.schema.table`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Attachment {
    /// The catalog name it is attached as.
    pub name: String,
    /// What to attach: a file (relative to the project root), or a connection string.
    pub url: Sensitive,
    /// `options`, upper-cased keys with their values as SQL (`TYPE sqlite`, `READ_ONLY true`).
    pub options: Vec<(String, String)>,
    /// `secret`: the `[[engine.secrets]]` it authenticates with.
    pub secret: Option<String>,
}

impl Attachment {
    /// Whether the URL names a local file (no `type`, or `duckdb`/`sqlite`, and no scheme),
    /// which resolves against the project root like every other path efmesh reads.
    pub fn is_local_file(&self) -> bool {
        let local_type = self
            .options
            .iter()
            .find(|(k, _)| k == "TYPE")
            .is_none_or(|(_, v)| matches!(v.to_ascii_lowercase().as_str(), "duckdb" | "sqlite"));
        let url = self.url.expose();
        let scheme = url.split_once(':').is_some_and(|(s, _)| {
            s.len() > 1
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        });
        local_type && !scheme && url != ":memory:"
    }
}

/// The default `[engine] pool_size`.
pub const DEFAULT_POOL_SIZE: u32 = 4;

/// Where efmesh keeps snapshots, environments and the interval ledger.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "lowercase", tag = "type")]
pub enum StateTarget {
    /// A local SQLite file (the default, `efmesh.state.sqlite`): no server needed.
    Sqlite {
        /// The SQLite file, relative to the project root.
        path: String,
    },
    /// A PostgreSQL database, so a team can share one state.
    Postgres {
        /// The connection URL, with `${VAR}` already resolved.
        url: Sensitive,
    },
}

/// Per-environment policy.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct EnvironmentConfig {
    /// Materialize redacted physics for models that declare `redact (...)`.
    pub redacted: bool,
}

/// A validated `efmesh.toml`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Config {
    /// The project's name from `[project] name`.
    pub name: String,
    /// Default history start for models that declare none.
    pub start: Option<String>,
    /// Globs, relative to the project root, that select model files.
    pub model_globs: Vec<String>,
    /// Globs, relative to the project root, that select AUDIT files.
    pub audit_globs: Vec<String>,
    /// Where models are materialized, and how the engine starts.
    pub engine: EngineConfig,
    /// Where snapshots, environments and intervals are recorded.
    pub state: StateTarget,
    /// `[lake] path`: the directory (or, with [`Config::lake_s3`], the `s3://` URL) for models
    /// with `target parquet`.
    pub lake_path: Option<String>,
    /// The object-store lake, when `[lake] path` is an `s3://` URL.
    pub lake_s3: Option<S3Lake>,
    /// `[lake.index]`: the page apply writes into the lake root for readers.
    pub lake_index: LakeIndex,
    /// Per-environment policies from `[environments.<name>]`, by environment name.
    pub environments: BTreeMap<String, EnvironmentConfig>,
    /// Global macro variables (`[variables]`, SQLMesh's `variables:`), by lower-cased name:
    /// strings, numbers, booleans, or lists of them. Models read them as `@name` or
    /// `@VAR('name')`.
    pub variables: BTreeMap<String, serde_json::Value>,
    /// What a model gets for the properties it does not declare (`[model_defaults]`, SQLMesh's
    /// `model_defaults:`).
    pub model_defaults: crate::model::ModelDefaults,
    /// The SQLMesh gateway a `config.yaml` project runs on (`None` for an `efmesh.toml` one).
    pub sqlmesh_gateway: Option<String>,
    /// The name of the gateway's default catalog when `catalogs:` gives it (the first entry's
    /// name, which need not be its file's stem).
    pub sqlmesh_catalog: Option<String>,
    /// Statements run before the first build of every apply that builds or promotes
    /// (SQLMesh's `before_all`).
    pub before_all: Vec<crate::environment_statements::EnvironmentStatement>,
    /// Statements run after every such apply's promotion (SQLMesh's `after_all`).
    pub after_all: Vec<crate::environment_statements::EnvironmentStatement>,
}

impl Config {
    /// Whether the project is a SQLMesh one (read from `config.yaml`): there efmesh builds what
    /// SQLMesh builds where the two differ (output names, seeds read as pandas reads them, ...).
    pub fn is_sqlmesh(&self) -> bool {
        self.sqlmesh_gateway.is_some()
    }

    /// The catalog a SQLMesh project's names may start with: DuckDB names a database after its
    /// file (`db.db` is `db`), and SQLMesh users write `db.schema.table`. `None` for an efmesh
    /// project, whose names are `schema.table`.
    pub fn default_catalog(&self) -> Option<String> {
        if !self.is_sqlmesh() {
            return None;
        }
        if let Some(c) = &self.sqlmesh_catalog {
            return Some(c.to_ascii_lowercase());
        }
        match &self.engine.target {
            EngineTarget::Duckdb { path } if path == ":memory:" => Some("memory".into()),
            EngineTarget::Duckdb { path } => {
                let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
                let stem = file.split_once('.').map_or(file, |(stem, _)| stem);
                Some(stem.to_ascii_lowercase())
            }
            EngineTarget::Postgres { .. } => None,
        }
    }

    /// The SQL dialect models are written in, which follows the engine.
    pub fn dialect(&self) -> Dialect {
        match self.engine.target {
            EngineTarget::Duckdb { .. } => Dialect::DuckDb,
            EngineTarget::Postgres { .. } => Dialect::Postgres,
        }
    }

    /// The configuration a project gets when `efmesh.toml` only names it.
    pub fn defaults(name: &str) -> Config {
        Config {
            name: name.to_string(),
            start: None,
            model_globs: vec!["models/**/*.sql".into()],
            audit_globs: vec!["audits/**/*.sql".into()],
            engine: EngineConfig {
                target: EngineTarget::Duckdb {
                    path: "efmesh.duckdb".into(),
                },
                extensions: vec![],
                settings: BTreeMap::new(),
                pool_size: DEFAULT_POOL_SIZE,
                secrets: vec![],
                attachments: vec![],
                ducklake: None,
            },
            state: StateTarget::Sqlite {
                path: "efmesh.state.sqlite".into(),
            },
            lake_path: None,
            lake_s3: None,
            lake_index: LakeIndex::default(),
            environments: BTreeMap::new(),
            variables: BTreeMap::new(),
            model_defaults: Default::default(),
            sqlmesh_gateway: None,
            sqlmesh_catalog: None,
            before_all: vec![],
            after_all: vec![],
        }
    }

    /// Parse `text` (the contents of `file`), resolving `${VAR}` through `env`.
    ///
    /// Every problem found is returned, not only the first.
    pub fn parse(
        file: &str,
        text: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, Vec<Diagnostic>> {
        let raw: RawConfig = match toml::from_str(text) {
            Ok(r) => r,
            Err(e) => {
                let loc = e
                    .span()
                    .map(|r| byte_range_location(file, text, r))
                    .unwrap_or_else(|| Location::file_only(file));
                let message = e.message().trim().to_string();
                return Err(vec![Diagnostic::at(Problem::ConfigSyntax { message }, loc)]);
            }
        };
        let mut cx = Interp {
            file,
            text,
            env,
            diags: vec![],
        };
        let mut cfg = Config::defaults("efmesh");
        if let Some(n) = &raw.project.name {
            cfg.name = cx.value(n);
        }
        if let Some(s) = &raw.project.start {
            let v = cx.value(s);
            if let Err(m) = crate::time::parse_instant(&v) {
                cx.invalid(s, "project.start", m);
            }
            cfg.start = Some(v);
        }
        if let Some(m) = &raw.project.models {
            cfg.model_globs = m.iter().map(|g| cx.glob(g, "project.models")).collect();
        }
        if let Some(a) = &raw.project.audits {
            cfg.audit_globs = a.iter().map(|g| cx.glob(g, "project.audits")).collect();
        }
        if let Some(e) = &raw.engine {
            cfg.engine.target = match (&e.duckdb, &e.postgres) {
                (Some(_), Some(p)) => {
                    cx.invalid(
                        p,
                        "engine",
                        "set either `duckdb` or `postgres`, not both".into(),
                    );
                    cfg.engine.target
                }
                (Some(d), None) => EngineTarget::Duckdb { path: cx.value(d) },
                (None, Some(p)) => EngineTarget::Postgres {
                    url: Sensitive::new(cx.postgres_url(p, "engine.postgres")),
                },
                (None, None) => cfg.engine.target,
            };
            cfg.engine.extensions = e.extensions.iter().map(|x| cx.value(x)).collect();
            // names reach the engine's LOAD and SET unquoted, so only plain identifiers pass
            for x in &e.extensions {
                if !crate::naming::plain_ident(x.get_ref()) {
                    cx.invalid(
                        x,
                        "engine.extensions",
                        format!(
                            "`{}` is not an extension name: use the name DuckDB installs it by (letters, digits and `_`), such as `httpfs`",
                            x.get_ref()
                        ),
                    );
                }
            }
            if let Some(n) = &e.pool_size {
                if *n.get_ref() == 0 {
                    let loc = byte_range_location(file, text, n.span());
                    cx.diags.push(Diagnostic::at(
                        Problem::ConfigValue {
                            key: "engine.pool_size".into(),
                            message: "expected at least 1 connection".into(),
                        },
                        loc,
                    ));
                }
                cfg.engine.pool_size = *n.get_ref();
            }
            for (k, v) in &e.settings {
                if !crate::naming::plain_ident(k) {
                    cx.diags.push(Diagnostic::at(
                        Problem::ConfigValue {
                            key: format!("engine.settings.{k}"),
                            message: "a setting's name is letters, digits and `_` (such as `memory_limit`)".into(),
                        },
                        Location::file_only(file),
                    ));
                    continue;
                }
                let lit = match v {
                    // `${VAR}` resolves here as in every other string (a secret's token)
                    toml::Value::String(s) => {
                        let s = cx.expand(s, Location::file_only(file));
                        crate::quote::literal(&s)
                    }
                    toml::Value::Integer(i) => i.to_string(),
                    toml::Value::Float(f) => f.to_string(),
                    toml::Value::Boolean(b) => b.to_string(),
                    _ => {
                        cx.diags.push(Diagnostic::at(
                            Problem::ConfigValue {
                                key: format!("engine.settings.{k}"),
                                message: "expected a string, number or boolean".into(),
                            },
                            Location::file_only(file),
                        ));
                        continue;
                    }
                };
                cfg.engine.settings.insert(k.clone(), lit);
            }
            for (i, t) in e.secrets.iter().enumerate() {
                if let Some(secret) = cx.secret(i, t) {
                    cfg.engine.secrets.push(secret);
                }
            }
        }
        for (name, a) in &raw.attach {
            if let Some(a) = cx.attachment(name, a, &cfg.engine.secrets) {
                cfg.engine.attachments.push(a);
            }
        }
        if matches!(cfg.engine.target, EngineTarget::Postgres { .. }) {
            // a PostgreSQL server makes its own secrets and foreign servers
            if let Some(t) = raw.engine.as_ref().and_then(|e| e.secrets.first()) {
                cx.invalid_at(t.span(), "engine.secrets", "`[[engine.secrets]]` are DuckDB secrets; a PostgreSQL engine cannot create them. Remove the section, or use a DuckDB engine".into());
            }
            if let Some(a) = raw.attach.values().next() {
                cx.invalid_at(a.span(), "attach", "`[attach.*]` attaches databases to DuckDB; a PostgreSQL engine cannot. Remove the section, or use a DuckDB engine".into());
            }
        }
        if let Some(s) = &raw.state {
            cfg.state = match (&s.sqlite, &s.postgres) {
                (Some(_), Some(p)) => {
                    cx.invalid(
                        p,
                        "state",
                        "set either `sqlite` or `postgres`, not both".into(),
                    );
                    cfg.state
                }
                (Some(f), None) => StateTarget::Sqlite { path: cx.value(f) },
                (None, Some(p)) => StateTarget::Postgres {
                    url: Sensitive::new(cx.postgres_url(p, "state.postgres")),
                },
                (None, None) => cfg.state,
            };
        }
        if let Some(l) = &raw.lake {
            let path = cx.value(&l.path);
            // `gs://`, `file://`, ...: a URL is never joined onto the project root
            if let Some(rest) = path.strip_prefix("s3://") {
                let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
                let secret = l.secret.as_ref().map(|s| (cx.value(s), s));
                let s3_secret = secret.as_ref().and_then(|(name, _)| {
                    cfg.engine
                        .secrets
                        .iter()
                        .find(|x| &x.name == name && x.kind.eq_ignore_ascii_case("s3"))
                });
                if bucket.is_empty() {
                    cx.invalid(
                        &l.path,
                        "lake.path",
                        "expected `s3://<bucket>/<prefix>`".into(),
                    );
                } else if let Some((name, at)) = &secret {
                    if s3_secret.is_none() {
                        cx.invalid(at, "lake.secret", format!("no `[[engine.secrets]]` of type `s3` is named `{name}`: declare it (key_id, secret, region, endpoint, url_style, use_ssl) and name it here"));
                    } else if !cfg.engine.extensions.iter().any(|e| e == "httpfs") {
                        cx.invalid(&l.path, "lake.path", "the engine reads an S3 lake through DuckDB's httpfs: add `\"httpfs\"` to `[engine] extensions`".into());
                    }
                    cfg.lake_s3 = Some(S3Lake {
                        bucket: bucket.to_string(),
                        prefix: prefix.trim_matches('/').to_string(),
                        secret: name.clone(),
                    });
                } else {
                    cx.invalid(&l.path, "lake.path", "an S3 lake needs `secret = \"<name>\"`, the `[[engine.secrets]]` of type `s3` that holds its endpoint, region and credentials".into());
                }
            } else if let Some((scheme, _)) = path.split_once("://") {
                cx.not_built(
                    &l.path,
                    &format!("a `{scheme}://` lake (`[lake] path`)"),
                    "set `[lake] path` to a local folder (relative to the project root) or an `s3://` URL",
                );
            } else if l.secret.is_some() {
                cx.invalid(
                    &l.path,
                    "lake.secret",
                    "a local lake needs no secret: remove `secret`".into(),
                );
            } else if path.trim().is_empty() {
                cx.invalid(
                    &l.path,
                    "lake.path",
                    "expected a folder, relative to the project root".into(),
                );
            }
            cfg.lake_path = Some(path);
            if let Some(ix) = &l.index {
                if let Some(e) = ix.enabled {
                    cfg.lake_index.enabled = e;
                }
                if let Some(m) = &ix.duckdb_wasm {
                    cfg.lake_index.duckdb_wasm = cx.value(m);
                }
                if let Some(d) = &ix.duckdb_wasm_dist {
                    let mut d = cx.value(d);
                    if !d.ends_with('/') {
                        d.push('/');
                    }
                    cfg.lake_index.duckdb_wasm_dist = d;
                }
                for (k, v) in &ix.imports {
                    cfg.lake_index.imports.insert(k.clone(), cx.value(v));
                }
            }
        }
        if let Some(d) = &raw.ducklake {
            let catalog = cx.value(&d.catalog);
            let lower = catalog.to_ascii_lowercase();
            let catalog = if lower.starts_with("postgres://") || lower.starts_with("postgresql://")
            {
                Some(DuckLakeCatalog::Postgres(Sensitive::new(catalog)))
            } else if catalog.contains("://") {
                cx.invalid(&d.catalog, "ducklake.catalog", "expected a SQLite or DuckDB file (relative to the project root) or a `postgres://` URL".into());
                None
            } else if [".sqlite", ".sqlite3", ".db"]
                .iter()
                .any(|x| lower.ends_with(x))
            {
                Some(DuckLakeCatalog::Sqlite(catalog))
            } else if [".ducklake", ".duckdb"].iter().any(|x| lower.ends_with(x)) {
                Some(DuckLakeCatalog::DuckDb(catalog))
            } else {
                cx.invalid(&d.catalog, "ducklake.catalog", "name the catalog's file by its kind: `.sqlite` (SQLite, several processes) or `.ducklake` (a DuckDB file, one process), or give a `postgres://` URL".into());
                None
            };
            if matches!(cfg.engine.target, EngineTarget::Postgres { .. }) {
                cx.invalid(&d.catalog, "ducklake", "the DuckLake target runs on a DuckDB engine; a PostgreSQL engine cannot attach it. Remove `[ducklake]`, or use a DuckDB engine (a PostgreSQL catalog is `catalog = \"postgres://...\"`)".into());
            } else if let Some(c) = &catalog {
                let missing: Vec<&str> = ["ducklake"]
                    .into_iter()
                    .chain(c.extension())
                    .filter(|x| !cfg.engine.extensions.iter().any(|e| e == x))
                    .collect();
                if !missing.is_empty() {
                    cx.invalid(&d.catalog, "ducklake.catalog", format!("this catalog is read through DuckDB's {}: add {} to `[engine] extensions`", missing.join(" and "), missing.iter().map(|m| format!("`\"{m}\"`")).collect::<Vec<_>>().join(", ")));
                }
            }
            let data_path = d.data_path.as_ref().map(|p| {
                let v = cx.value(p);
                if v.contains("://") && !v.starts_with("s3://") {
                    cx.invalid(
                        p,
                        "ducklake.data_path",
                        "expected a folder (relative to the project root) or an `s3://` URL".into(),
                    );
                }
                v
            });
            if matches!(catalog, Some(DuckLakeCatalog::Postgres(_))) && data_path.is_none() {
                cx.invalid(&d.catalog, "ducklake.data_path", "a PostgreSQL catalog keeps no files: set `data_path` (a folder or an `s3://` URL) for the data".into());
            }
            cfg.engine.ducklake = catalog.map(|catalog| DuckLake { catalog, data_path });
        }
        for (name, e) in &raw.environments {
            cfg.environments.insert(
                name.clone(),
                EnvironmentConfig {
                    redacted: e.redacted,
                },
            );
        }
        if let Some(d) = &raw.model_defaults {
            if let Some(k) = &d.kind {
                match crate::model::defaults::default_kind(k.get_ref()) {
                    Some(kind) => cfg.model_defaults.kind = Some(kind),
                    None => cx.invalid(k, "model_defaults.kind", "a default kind is FULL, VIEW or EMBEDDED (kinds with parameters are declared per model)".into()),
                }
            }
            if let Some(c) = &d.cron {
                if let Err(why) = crate::cron::parse(c.get_ref()) {
                    cx.invalid(
                        c,
                        "model_defaults.cron",
                        format!("a 5-field cron expression or a macro such as @daily: {why}"),
                    );
                }
                cfg.model_defaults.cron = Some(c.get_ref().clone());
            }
            cfg.model_defaults.owner = d.owner.as_ref().map(|o| o.get_ref().clone());
        }
        for (name, v) in &raw.variables {
            cfg.variables
                .insert(name.to_ascii_lowercase(), variable_value(v.get_ref()));
        }
        if cx.diags.is_empty() {
            Ok(cfg)
        } else {
            Err(cx.diags)
        }
    }
}

/// A `[variables]` value as the JSON the macro expander reads: TOML has nothing a variable
/// cannot hold (a datetime is read as its text).
fn variable_value(v: &toml::Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        toml::Value::String(s) => J::String(s.clone()),
        toml::Value::Integer(i) => J::from(*i),
        toml::Value::Float(f) => J::from(*f),
        toml::Value::Boolean(b) => J::Bool(*b),
        toml::Value::Array(items) => J::Array(items.iter().map(variable_value).collect()),
        toml::Value::Datetime(d) => J::String(d.to_string()),
        // a table serves Jinja's `var()` as a dict and `@VAR` as a struct, as SQLMesh's maps do
        toml::Value::Table(t) => J::Object(
            t.iter()
                .map(|(k, v)| (k.clone(), variable_value(v)))
                .collect(),
        ),
    }
}

/// Interpolation and validation context, collecting diagnostics as it goes.
struct Interp<'a> {
    file: &'a str,
    text: &'a str,
    env: &'a dyn Fn(&str) -> Option<String>,
    diags: Vec<Diagnostic>,
}

impl Interp<'_> {
    fn loc(&self, s: &S) -> Location {
        byte_range_location(self.file, self.text, s.span())
    }

    fn invalid(&mut self, s: &S, key: &str, message: String) {
        let loc = self.loc(s);
        self.diags.push(Diagnostic::at(
            Problem::ConfigValue {
                key: key.into(),
                message,
            },
            loc,
        ));
    }

    fn invalid_at(&mut self, span: std::ops::Range<usize>, key: &str, message: String) {
        let loc = byte_range_location(self.file, self.text, span);
        self.diags.push(Diagnostic::at(
            Problem::ConfigValue {
                key: key.into(),
                message,
            },
            loc,
        ));
    }

    /// A scalar as SQL: a string as a literal (`${VAR}` resolved), a number or a boolean as
    /// written; anything else is refused at its line.
    fn scalar(&mut self, key: &str, v: &Spanned<toml::Value>) -> Option<String> {
        let loc = byte_range_location(self.file, self.text, v.span());
        Some(match v.get_ref() {
            toml::Value::String(s) => crate::quote::literal(&self.expand(s, loc)),
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            _ => {
                self.invalid_at(v.span(), key, "expected a string, number or boolean".into());
                return None;
            }
        })
    }

    /// One `[[engine.secrets]]` table (the `i`-th): `type`, optional `name`, and values.
    fn secret(
        &mut self,
        i: usize,
        t: &Spanned<BTreeMap<String, Spanned<toml::Value>>>,
    ) -> Option<EngineSecret> {
        let key = format!("engine.secrets[{i}]");
        let word = |cx: &mut Self, field: &str| -> Option<String> {
            let v = t.get_ref().get(field)?;
            match v.get_ref() {
                toml::Value::String(s) if crate::naming::plain_ident(s) => Some(s.clone()),
                _ => {
                    cx.invalid_at(
                        v.span(),
                        &format!("{key}.{field}"),
                        "expected a name: letters, digits and `_`".into(),
                    );
                    None
                }
            }
        };
        let kind = word(self, "type");
        let name = word(self, "name").unwrap_or_else(|| format!("efmesh_secret_{}", i + 1));
        let Some(kind) = kind else {
            if !t.get_ref().contains_key("type") {
                self.invalid_at(
                    t.span(),
                    &key,
                    "a secret needs its `type` (such as `s3`, `http` or `postgres`)".into(),
                );
            }
            return None;
        };
        let mut values = vec![];
        let mut texts = BTreeMap::new();
        for (k, v) in t.get_ref() {
            if k == "type" || k == "name" {
                continue;
            }
            if !crate::naming::plain_ident(k) {
                self.invalid_at(
                    v.span(),
                    &format!("{key}.{k}"),
                    "a secret's key is letters, digits and `_` (such as `key_id`)".into(),
                );
                continue;
            }
            let pair = match v.get_ref() {
                toml::Value::String(raw) => {
                    let loc = byte_range_location(self.file, self.text, v.span());
                    let text = self.expand(raw, loc);
                    Some((crate::quote::literal(&text), text))
                }
                _ => self
                    .scalar(&format!("{key}.{k}"), v)
                    .map(|sql| (sql.clone(), sql)),
            };
            if let Some((sql, text)) = pair {
                values.push((k.to_ascii_uppercase(), Sensitive::new(sql)));
                texts.insert(k.to_ascii_uppercase(), Sensitive::new(text));
            }
        }
        Some(EngineSecret {
            name,
            kind,
            values,
            texts,
        })
    }

    /// One `[attach.NAME]` section; `secrets` are the declared secrets it may name.
    fn attachment(
        &mut self,
        name: &str,
        a: &Spanned<RawAttach>,
        secrets: &[EngineSecret],
    ) -> Option<Attachment> {
        let key = format!("attach.{name}");
        let reserved = ["main", "memory", "system", "temp", "temporary"];
        if !crate::naming::plain_ident(name)
            || reserved.contains(&name.to_ascii_lowercase().as_str())
        {
            self.invalid_at(
                a.span(),
                &key,
                format!("`{name}` cannot name an attached database: use letters, digits and `_`, and none of {}", reserved.join(", ")),
            );
            return None;
        }
        let raw = a.get_ref();
        let url = self.value(&raw.url);
        let mut options = vec![];
        for (k, v) in &raw.options {
            if !crate::naming::plain_ident(k) {
                self.invalid_at(
                    v.span(),
                    &format!("{key}.options.{k}"),
                    "an option is letters, digits and `_` (such as `read_only`)".into(),
                );
                continue;
            }
            let sql = match v.get_ref() {
                // `TYPE sqlite`: a bare word stays a word
                toml::Value::String(s) if crate::naming::plain_ident(s) => s.clone(),
                _ => match self.scalar(&format!("{key}.options.{k}"), v) {
                    Some(sql) => sql,
                    None => continue,
                },
            };
            options.push((k.to_ascii_uppercase(), sql));
        }
        let secret = raw.secret.as_ref().map(|s| {
            let wanted = self.value(s);
            if !secrets.iter().any(|x| x.name == wanted) {
                let known: Vec<&str> = secrets.iter().map(|x| x.name.as_str()).collect();
                self.invalid(
                    s,
                    &format!("{key}.secret"),
                    format!(
                        "no `[[engine.secrets]]` is named `{wanted}`{}",
                        if known.is_empty() {
                            String::new()
                        } else {
                            format!(" (declared: {})", known.join(", "))
                        }
                    ),
                );
            }
            wanted
        });
        Some(Attachment {
            name: name.to_string(),
            url: Sensitive::new(url),
            options,
            secret,
        })
    }

    /// A PostgreSQL URL, refused (at its line) when it asks for what efmesh cannot do.
    fn postgres_url(&mut self, s: &S, key: &str) -> String {
        let url = self.value(s);
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            self.invalid(
                s,
                key,
                "expected a `postgres://user@host:port/database` URL".into(),
            );
            return url;
        }
        let tls = url
            .split_once('?')
            .map(|(_, q)| q.split('&'))
            .into_iter()
            .flatten()
            .find_map(|kv| kv.strip_prefix("sslmode="))
            .filter(|m| matches!(*m, "require" | "verify-ca" | "verify-full"));
        if let Some(mode) = tls {
            self.not_built(
                s,
                &format!("TLS to PostgreSQL (`sslmode={mode}`)"),
                "connect over a trusted network or a local socket without `sslmode`, or through a TLS-terminating proxy, until TLS lands",
            );
        }
        url
    }

    fn not_built(&mut self, s: &S, what: &str, instead: &str) {
        let loc = self.loc(s);
        self.diags.push(Diagnostic::at(
            Problem::NotBuiltYet {
                what: what.into(),
                instead: instead.into(),
            },
            loc,
        ));
    }

    /// Resolve `${VAR}` references in a string value.
    fn value(&mut self, s: &S) -> String {
        let loc = self.loc(s);
        self.expand(s.get_ref(), loc)
    }

    /// Resolve `${VAR}` references in `raw`, reporting a missing variable at `loc`.
    fn expand(&mut self, raw: &str, loc: Location) -> String {
        let mut out = String::with_capacity(raw.len());
        let mut rest = raw;
        while let Some(i) = rest.find("${") {
            out.push_str(&rest[..i]);
            let after = &rest[i + 2..];
            match after.find('}') {
                Some(j) => {
                    let name = &after[..j];
                    match (self.env)(name) {
                        Some(v) => out.push_str(&v),
                        None => {
                            self.diags.push(Diagnostic::at(
                                Problem::MissingEnvVar { name: name.into() },
                                loc.clone(),
                            ));
                        }
                    }
                    rest = &after[j + 1..];
                }
                None => {
                    out.push_str(&rest[i..]);
                    rest = "";
                }
            }
        }
        out.push_str(rest);
        out
    }

    fn glob(&mut self, s: &S, key: &str) -> String {
        let v = self.value(s);
        if let Err(e) = globset::Glob::new(&v) {
            self.invalid(s, key, format!("`{v}` is not a valid glob: {e}"));
        }
        v
    }
}

/// The line/column location of a byte range in `text`.
pub fn byte_range_location(file: &str, text: &str, r: std::ops::Range<usize>) -> Location {
    let pos = |b: usize| {
        let b = b.min(text.len());
        let before = &text[..b];
        let line = before.matches('\n').count() as u64 + 1;
        let col = before
            .rsplit('\n')
            .next()
            .map(|l| l.chars().count())
            .unwrap_or(0) as u64
            + 1;
        (line, col)
    };
    Location::new(file, pos(r.start), pos(r.end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn defaults_apply_when_sections_are_absent() {
        let c = Config::parse("efmesh.toml", "[project]\nname = \"x\"\n", &no_env).unwrap();
        assert_eq!(c.name, "x");
        assert_eq!(c.model_globs, vec!["models/**/*.sql"]);
        assert_eq!(
            c.engine.target,
            EngineTarget::Duckdb {
                path: "efmesh.duckdb".into()
            }
        );
        assert_eq!(
            c.state,
            StateTarget::Sqlite {
                path: "efmesh.state.sqlite".into()
            }
        );
    }

    #[test]
    fn unknown_keys_name_their_line() {
        let err = Config::parse(
            "efmesh.toml",
            "[project]\nname = \"x\"\n\n[engine]\nduckdb = \"a\"\nthreds = 4\n",
            &no_env,
        )
        .unwrap_err();
        assert_eq!(err.len(), 1);
        let loc = err[0].location.as_ref().unwrap();
        assert_eq!(loc.line, 6, "{:?}", err[0]);
        assert!(err[0].problem.to_string().contains("threds"));
    }

    #[test]
    fn env_vars_interpolate_and_missing_ones_are_named() {
        let env = |k: &str| (k == "WAREHOUSE").then(|| "/srv/wh".to_string());
        let c = Config::parse(
            "efmesh.toml",
            "[engine]\nduckdb = \"${WAREHOUSE}/efmesh.duckdb\"\n",
            &env,
        )
        .unwrap();
        assert_eq!(
            c.engine.target,
            EngineTarget::Duckdb {
                path: "/srv/wh/efmesh.duckdb".into()
            }
        );
        let err = Config::parse(
            "efmesh.toml",
            "[engine]\nduckdb = \"${NOPE}/efmesh.duckdb\"\n",
            &env,
        )
        .unwrap_err();
        assert_eq!(
            err[0].problem,
            Problem::MissingEnvVar {
                name: "NOPE".into()
            }
        );
        assert_eq!(err[0].location.as_ref().unwrap().line, 2);
    }

    #[test]
    fn what_is_not_built_yet_is_refused_at_its_line_and_postgres_is_read() {
        let codes = |text: &str| -> Vec<(String, u64, String)> {
            Config::parse("efmesh.toml", text, &no_env)
                .unwrap_err()
                .into_iter()
                .map(|d| {
                    (
                        d.problem.code().to_string(),
                        d.location.map_or(0, |l| l.line),
                        d.problem.to_string(),
                    )
                })
                .collect()
        };
        let gs = codes("[project]\nname = \"x\"\n[lake]\npath = \"gs://bucket/lake\"\n");
        assert_eq!(gs.len(), 1, "{gs:?}");
        assert_eq!((gs[0].0.as_str(), gs[0].1), ("not-built-yet", 4));
        assert!(gs[0].2.contains("`gs://` lake"), "{gs:?}");
        // an S3 lake: its secret must be declared, of type s3, with httpfs loaded
        let s3 = codes("[project]\nname = \"x\"\n[lake]\npath = \"s3://bucket/lake\"\n");
        assert_eq!((s3[0].0.as_str(), s3[0].1), ("config-value", 4), "{s3:?}");
        assert!(s3[0].2.contains("needs `secret"), "{s3:?}");
        let s3 = codes("[engine]\nduckdb = \"x.duckdb\"\n[[engine.secrets]]\nname = \"k\"\ntype = \"s3\"\n[lake]\npath = \"s3://b/p/\"\nsecret = \"k\"\n");
        assert_eq!(s3.len(), 1, "{s3:?}");
        assert!(s3[0].2.contains("httpfs"), "{s3:?}");
        let ok = Config::parse("f", "[engine]\nduckdb = \"x.duckdb\"\nextensions = [\"httpfs\"]\n[[engine.secrets]]\nname = \"k\"\ntype = \"s3\"\n[lake]\npath = \"s3://b/p/q/\"\nsecret = \"k\"\n", &no_env).unwrap();
        assert_eq!(
            ok.lake_s3,
            Some(S3Lake {
                bucket: "b".into(),
                prefix: "p/q".into(),
                secret: "k".into()
            })
        );
        let dl = codes("[ducklake]\ncatalog = \"meta.ducklake\"\n");
        assert_eq!((dl[0].0.as_str(), dl[0].1), ("config-value", 2));
        assert!(dl[0].2.contains("`\"ducklake\"`"), "{dl:?}");
        let dl = codes("[engine]\nduckdb = \"x.duckdb\"\nextensions = [\"ducklake\", \"postgres_scanner\"]\n[ducklake]\ncatalog = \"postgres://u@h/d\"\n");
        assert_eq!((dl[0].0.as_str(), dl[0].1), ("config-value", 5));
        assert!(dl[0].2.contains("data_path"), "{dl:?}");
        let dl = codes("[ducklake]\ncatalog = \"meta\"\n");
        assert!(dl[0].2.contains("by its kind"), "{dl:?}");
        // PostgreSQL, but not over TLS yet, and only as a URL
        let pg = codes(
            "[engine]\npostgres = \"postgres://h/db?sslmode=require\"\n[state]\npostgres = \"h/db\"\n",
        );
        assert_eq!(pg.len(), 2, "{pg:?}");
        assert_eq!((pg[0].0.as_str(), pg[0].1), ("not-built-yet", 2));
        assert!(pg[0].2.contains("sslmode=require"), "{pg:?}");
        assert_eq!((pg[1].0.as_str(), pg[1].1), ("config-value", 4));
        let c = Config::parse(
            "f",
            "[engine]\npostgres = \"postgres://u:${PW}@h:5432/db\"\npool_size = 8\n[state]\npostgres = \"postgresql://h/db\"\n",
            &|k| (k == "PW").then(|| "s3cret".to_string()),
        )
        .unwrap();
        assert_eq!(
            c.engine.target,
            EngineTarget::Postgres {
                url: Sensitive::new("postgres://u:s3cret@h:5432/db".into())
            }
        );
        assert!(
            !format!("{c:?}").contains("s3cret"),
            "the password never prints"
        );
        assert_eq!((c.engine.pool_size, c.dialect()), (8, Dialect::Postgres));
        // a local folder is fine
        assert_eq!(
            Config::parse("f", "[lake]\npath = \"lake\"\n", &no_env)
                .unwrap()
                .lake_path
                .as_deref(),
            Some("lake")
        );
    }

    #[test]
    fn settings_resolve_environment_variables() {
        let env = |n: &str| (n == "TMP").then(|| "/scratch".to_string());
        let c = Config::parse("f", "[engine]\nduckdb = \"x.duckdb\"\n[engine.settings]\ntemp_directory = \"${TMP}/efmesh\"\n", &env).unwrap();
        assert_eq!(c.engine.settings["temp_directory"], "'/scratch/efmesh'");
        let e = Config::parse(
            "f",
            "[engine]\nduckdb = \"x.duckdb\"\n[engine.settings]\ns = \"${NOPE}\"\n",
            &env,
        )
        .unwrap_err();
        assert_eq!(e[0].problem.code(), "missing-env-var");
    }

    #[test]
    fn settings_render_as_sql_literals() {
        let c = Config::parse("f", "[engine]\nduckdb = \"x.duckdb\"\nextensions = [\"httpfs\"]\n[engine.settings]\nthreads = 4\nmemory_limit = \"4GB\"\n", &no_env).unwrap();
        assert_eq!(c.engine.settings["threads"], "4");
        assert_eq!(c.engine.settings["memory_limit"], "'4GB'");
        assert_eq!(c.dialect(), Dialect::DuckDb);
    }

    #[test]
    fn secrets_and_attachments_parse_and_never_print_their_values() {
        let env = |n: &str| (n == "KEY").then(|| "s3cr3t'x".to_string());
        let c = Config::parse(
            "f",
            "[engine]\nduckdb = \"x.duckdb\"\n[[engine.secrets]]\ntype = \"s3\"\nsecret = \"${KEY}\"\nuse_ssl = false\n[[engine.secrets]]\nname = \"pg\"\ntype = \"postgres\"\n[attach.shop]\nurl = \"dbname=shop host=127.0.0.1\"\nsecret = \"pg\"\noptions = { type = \"postgres\", read_only = true }\n",
            &env,
        )
        .unwrap();
        let s = &c.engine.secrets[0];
        assert_eq!(
            (s.name.as_str(), s.kind.as_str()),
            ("efmesh_secret_1", "s3")
        );
        assert_eq!(s.values[0].0, "SECRET");
        assert_eq!(s.values[0].1.expose(), "'s3cr3t''x'");
        let a = &c.engine.attachments[0];
        assert_eq!(
            a.options,
            [
                ("READ_ONLY".into(), "true".into()),
                ("TYPE".into(), "postgres".into())
            ]
        );
        assert!(!a.is_local_file());
        assert_eq!(
            crate::sql::dialect::DuckDb::attach(a, a.url.expose()),
            "ATTACH IF NOT EXISTS 'dbname=shop host=127.0.0.1' AS shop (READ_ONLY true, TYPE postgres, SECRET pg)"
        );
        assert_eq!(
            crate::sql::dialect::DuckDb::create_secret(s),
            "CREATE OR REPLACE TEMPORARY SECRET efmesh_secret_1 (TYPE s3, SECRET 's3cr3t''x', USE_SSL false)"
        );
        let printed = format!("{c:?} {}", serde_json::to_string(&c).unwrap());
        assert!(
            !printed.contains("s3cr3t") && !printed.contains("dbname"),
            "{printed}"
        );
    }

    #[test]
    fn a_postgresql_engine_refuses_secrets_and_attachments_at_their_line() {
        let e = Config::parse(
            "f",
            "[engine]\npostgres = \"postgres://u@127.0.0.1/d\"\n[[engine.secrets]]\ntype = \"s3\"\n[attach.shop]\nurl = \"shop.duckdb\"\n",
            &no_env,
        )
        .unwrap_err();
        let got: Vec<(String, u64)> = e
            .iter()
            .map(|d| match &d.problem {
                Problem::ConfigValue { key, .. } => {
                    (key.clone(), d.location.as_ref().unwrap().line)
                }
                p => (p.code().to_string(), 0),
            })
            .collect();
        assert_eq!(
            got,
            [("engine.secrets".to_string(), 3), ("attach".to_string(), 5)]
        );
    }

    #[test]
    fn extension_and_setting_names_that_are_not_plain_are_refused_at_their_key() {
        let e = Config::parse(
            "f",
            "[engine]\nduckdb = \"x.duckdb\"\nextensions = [\"httpfs; CREATE TABLE pwned AS SELECT 1\"]\n[engine.settings]\n\"threads = 1; DROP TABLE t; SET x\" = 4\n",
            &no_env,
        )
        .unwrap_err();
        let keys: Vec<String> = e
            .iter()
            .map(|d| match &d.problem {
                Problem::ConfigValue { key, .. } => key.clone(),
                p => p.code().to_string(),
            })
            .collect();
        assert_eq!(
            keys,
            [
                "engine.extensions",
                "engine.settings.threads = 1; DROP TABLE t; SET x"
            ],
            "{e:?}"
        );
        assert_eq!(e[0].location.as_ref().map(|l| l.line), Some(3), "{e:?}");
    }
}
