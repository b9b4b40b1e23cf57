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
