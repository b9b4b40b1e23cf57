//! Models defined in code: for an application that embeds its warehouse and would rather not
//! ship `.sql` files, next to a project's files or instead of them.
//!
//! A model built here becomes the same text a model file holds (a `MODEL (...)` block and its
//! query) and goes through the same loader, so it is checked, fingerprinted and planned exactly
//! like one; a diagnostic names it as `<code>/<name>.sql`.
//!
//! ```
//! use efmesh::{ApplyOptions, Efmesh, ModelDef};
//! # let dir = tempfile::tempdir().unwrap();
//! let project = Efmesh::builder(dir.path())
//!     .model(ModelDef::full("shop.orders")
//!         .columns([("id", "INT"), ("amount", "DOUBLE")])
//!         .sql("SELECT range::INT AS id, range * 1.5 AS amount FROM range(10)"))
//!     .model(ModelDef::view("shop.big_orders")
//!         .sql("SELECT id, amount FROM shop.orders WHERE amount > 6")
//!         .audit("not_null(columns := (id))"))
//!     .open()?;
//! let plan = project.plan("dev")?;
//! assert!(plan.has_changes());
//! let applied = project.apply(&plan, ApplyOptions::default())?;
//! assert_eq!(applied.built, ["shop.orders", "shop.big_orders"]);
//! assert!(!project.plan("dev")?.has_changes());
//! # Ok::<(), efmesh::Error>(())
//! ```

use super::read;
use super::Efmesh;
use crate::{CheckFailure, Error};
use efmesh_core::project::SourceText;
use std::path::{Path, PathBuf};

/// The folder a model defined in code appears under in diagnostics.
pub const CODE_DIR: &str = "<code>";

/// One model, defined in code. Values are written as in a MODEL block (SQL types, audit calls,
/// kind parameters), so everything a model file says can be said here.
#[derive(Debug, Clone)]
pub struct ModelDef {
    name: String,
    kind: String,
    sql: Option<String>,
    columns: Vec<(String, String)>,
    audits: Vec<String>,
    properties: Vec<(String, String)>,
}

impl ModelDef {
    /// A model `name` (`schema.table`) of `kind` as written in a MODEL block, e.g.
    /// `INCREMENTAL_BY_TIME_RANGE (time_column ts, batch_size 7)`.
    pub fn new(name: impl Into<String>, kind: impl Into<String>) -> ModelDef {
        ModelDef {
            name: name.into(),
            kind: kind.into(),
            sql: None,
            columns: vec![],
            audits: vec![],
            properties: vec![],
        }
    }

    /// A FULL model, rebuilt whenever it changes.
    pub fn full(name: impl Into<String>) -> ModelDef {
        ModelDef::new(name, "FULL")
    }

    /// A VIEW model.
    pub fn view(name: impl Into<String>) -> ModelDef {
        ModelDef::new(name, "VIEW")
    }

    /// An INCREMENTAL_BY_TIME_RANGE model over `time_column`.
    pub fn incremental_by_time_range(name: impl Into<String>, time_column: &str) -> ModelDef {
        ModelDef::new(
            name,
            format!("INCREMENTAL_BY_TIME_RANGE (time_column {time_column})"),
        )
    }

    /// The model's query.
    pub fn sql(mut self, query: impl Into<String>) -> ModelDef {
        self.sql = Some(query.into());
        self
    }

    /// Declared output columns (`name`, SQL type): the model's contract.
    pub fn columns<N: Into<String>, T: Into<String>>(
        mut self,
        columns: impl IntoIterator<Item = (N, T)>,
    ) -> ModelDef {
        self.columns = columns
            .into_iter()
            .map(|(n, t)| (n.into(), t.into()))
            .collect();
        self
    }

    /// One audit call, e.g. `not_null(columns := (id))`.
    pub fn audit(mut self, call: impl Into<String>) -> ModelDef {
        self.audits.push(call.into());
        self
    }

    /// Any other MODEL property as written (`start`, `'2026-01-01'`; `owner`, `ops`; ...).
    pub fn property(mut self, key: impl Into<String>, value: impl Into<String>) -> ModelDef {
        self.properties.push((key.into(), value.into()));
        self
    }

    /// The text of the model file this definition stands for.
    pub fn to_model_file(&self) -> String {
        let mut props = vec![
            format!("  name {}", self.name),
            format!("  kind {}", self.kind),
        ];
        if !self.columns.is_empty() {
            let cols: Vec<String> = self
                .columns
                .iter()
                .map(|(n, t)| format!("{} {t}", efmesh_core::quote::ident(n)))
                .collect();
            props.push(format!("  columns ({})", cols.join(", ")));
        }
        if !self.audits.is_empty() {
            props.push(format!("  audits ({})", self.audits.join(", ")));
        }
        props.extend(self.properties.iter().map(|(k, v)| format!("  {k} {v}")));
        let mut text = format!("MODEL (\n{}\n);\n", props.join(",\n"));
        if let Some(q) = &self.sql {
            text.push_str(q);
            text.push('\n');
        }
        text
    }
}

/// Opens a project from models defined in code, with or without files on disk.
#[derive(Debug, Clone)]
pub struct ProjectBuilder {
    root: PathBuf,
    config: Option<String>,
    files: Option<bool>,
    models: Vec<ModelDef>,
}

impl ProjectBuilder {
    pub(crate) fn new(root: &Path) -> ProjectBuilder {
        ProjectBuilder {
            root: root.to_path_buf(),
            config: None,
            files: None,
            models: vec![],
        }
    }

    /// The project's configuration as `efmesh.toml` text (default: the root's `efmesh.toml`
    /// when there is one, else the defaults: DuckDB and SQLite files in the root).
    pub fn config(mut self, toml: impl Into<String>) -> ProjectBuilder {
        self.config = Some(toml.into());
        self
    }

    /// Also load the model, audit and external-model files the configuration selects
    /// (default: when the root has an `efmesh.toml`).
    pub fn with_files(mut self, files: bool) -> ProjectBuilder {
        self.files = Some(files);
        self
    }

    /// Add a model.
    pub fn model(mut self, model: ModelDef) -> ProjectBuilder {
        self.models.push(model);
        self
    }

    /// Check the project and open it; [`Error::Invalid`] carries every diagnostic.
    pub fn open(self) -> Result<Efmesh, Error> {
        let on_disk = read::config_text(&self.root)?;
        let has_file = on_disk.is_some();
        let config_text = match (self.config, on_disk) {
            (Some(t), _) => t,
            (None, Some(t)) => t,
            (None, None) => "[project]\nname = \"efmesh\"\n".to_string(),
        };
        let files = self.files.unwrap_or(has_file);
        let (config_text, mut sources, stamps) = read::sources_for(&self.root, config_text, files)?
            .map_err(|(diagnostics, files)| {
                Error::Invalid(Box::new(CheckFailure { diagnostics, files }))
            })?;
        for m in &self.models {
            sources.models.push(SourceText {
                path: format!("{CODE_DIR}/{}.sql", m.name),
                text: m.to_model_file(),
            });
        }
        Efmesh::from_report(read::load_sources(self.root, config_text, sources, stamps))
    }
}

impl Efmesh {
    /// Define a project in code, rooted at `root` (where its engine and state files live).
    pub fn builder(root: impl AsRef<Path>) -> ProjectBuilder {
        ProjectBuilder::new(root.as_ref())
    }
}
