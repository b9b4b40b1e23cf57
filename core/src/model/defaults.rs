//! What a model file is parsed with besides its own text: the project's macros and the
//! defaults a model gets for what it does not declare (SQLMesh's `model_defaults`).

use super::Kind;
use crate::sql::macro_lang::MacroEnv;

/// The properties a model takes from the project when it declares none.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ModelDefaults {
    /// The kind of a model without `kind`: FULL in an efmesh project, VIEW in a SQLMesh one (as
    /// SQLMesh does), or the configured one.
    pub kind: Option<Kind>,
    /// The `cron` of a model without one.
    pub cron: Option<String>,
    /// The `owner` of a model without one.
    pub owner: Option<String>,
    /// The format of a time column declared without one (SQLMesh's top-level
    /// `time_column_format`); `None` is SQLMesh's own default, `%Y-%m-%d`.
    pub time_column_format: Option<String>,
    /// Name a model that declares no `name` after its path under `models/` (SQLMesh's
    /// `model_naming: {infer_names: true}`): `models/sales/orders.sql` is `sales.orders`, and
    /// a file may then be a bare query with no MODEL block.
    pub infer_names: bool,
}

/// The name SQLMesh infers for the model file at `file` (project-relative): the folders after
/// the first `models` folder and the file's stem, at most the last three, joined by dots.
pub fn inferred_name(file: &str) -> String {
    let path = std::path::Path::new(file);
    let parts: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(p) => Some(p.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let from = parts
        .iter()
        .position(|p| p == "models")
        .map_or(0, |i| i + 1);
    let mut names: Vec<String> =
        parts[from.min(parts.len())..parts.len().saturating_sub(1)].to_vec();
    if let Some(stem) = path.file_stem() {
        names.push(stem.to_string_lossy().into_owned());
    }
    let keep = names.len().saturating_sub(3);
    names[keep..].join(".").to_ascii_lowercase()
}

/// Everything a model file's parse reads from its project.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParseEnv {
    /// Variables and `macros/*.sql` macros.
    pub macros: MacroEnv,
    /// Defaults for undeclared properties.
    pub defaults: ModelDefaults,
    /// Whether the project is a SQLMesh one (`config.yaml`): there an unknown property is a
    /// warning, since SQLMesh projects carry properties efmesh has not met; in an efmesh
    /// project it is an error, since it is most likely a typo.
    pub sqlmesh: bool,
    /// The SQLMesh gateway the project runs on: a model naming another one is refused.
    pub gateway: Option<String>,
    /// The catalog (`Config::default_catalog`) that a SQLMesh model's name and references may
    /// start with, dropped on reading: `db.raw.orders` is `raw.orders`.
    pub catalog: Option<String>,
}

/// A default kind by name, as `model_defaults.kind` may give it: only the kinds that need no
/// parameters.
pub fn default_kind(name: &str) -> Option<Kind> {
    Some(match name.to_ascii_uppercase().as_str() {
        "FULL" => Kind::Full,
        "VIEW" => Kind::View {
            materialized: false,
        },
        "EMBEDDED" => Kind::Embedded,
        _ => return None,
    })
}
