//! Errors of the native layer: everything that can stop a command, each with advice.

use efmesh_core::Diagnostic;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A project that failed to check, with the file texts needed to render its diagnostics.
#[derive(Debug)]
pub struct CheckFailure {
    pub diagnostics: Vec<Diagnostic>,
    pub files: BTreeMap<String, String>,
}

/// Why an efmesh operation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("could not find `efmesh.toml` in `{}` or any parent directory", start.display())]
    NoProject { start: PathBuf },
    #[error("cannot read `{}`: {message}", path.display())]
    Io { path: PathBuf, message: String },
    #[error("invalid configuration: {message}")]
    Config { message: String },
    #[error("the project has {} error(s)", .0.diagnostics.iter().filter(|d| d.is_error()).count())]
    Invalid(Box<CheckFailure>),
    #[error("unknown model `{name}`")]
    UnknownModel { name: String, suggestion: Option<String> },
    #[error("{message}")]
    Argument { message: String, help: Option<String> },
    #[error("{0}")]
    Render(String),
}

impl Error {
    pub(crate) fn io(path: &Path, e: std::io::Error) -> Error {
        Error::Io { path: path.to_path_buf(), message: e.to_string() }
    }

    /// A stable identifier for `--json` consumers.
    pub fn code(&self) -> &'static str {
        match self {
            Error::NoProject { .. } => "no-project",
            Error::Io { .. } => "io",
            Error::Config { .. } => "config",
            Error::Invalid(_) => "invalid-project",
            Error::UnknownModel { .. } => "unknown-model",
            Error::Argument { .. } => "argument",
            Error::Render(_) => "render",
        }
    }

    /// What to do about it.
    pub fn help(&self) -> Option<String> {
        match self {
            Error::NoProject { .. } => Some("run inside a project, pass `-C <dir>`, or create one with `efmesh init`".into()),
            Error::Invalid(_) => Some("fix the errors above; `efmesh check` lists them all".into()),
            Error::UnknownModel { suggestion: Some(s), .. } => Some(format!("did you mean `{s}`? `efmesh graph` lists every model")),
            Error::UnknownModel { .. } => Some("`efmesh graph` lists every model".into()),
            Error::Argument { help, .. } => help.clone(),
            _ => None,
        }
    }
}
