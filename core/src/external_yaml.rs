//! SQLMesh's `external_models.yaml`: engine tables declared by name and columns.
//!
//! Reading it lets a SQLMesh project's raw tables count as declared EXTERNAL models without
//! rewriting them as model files.

use crate::diagnostic::{Diagnostic, Problem};
use crate::location::Location;
use crate::model::{Answerable, ColumnDef, ExternalSource, Kind, Model, Target};
use crate::types::TypeFamily;
use serde::Deserialize;

/// The conventional file name, at the project root.
pub const EXTERNAL_MODELS_FILE: &str = "external_models.yaml";

/// SQLMesh's older name for [`EXTERNAL_MODELS_FILE`], read when that file is absent.
pub const DEPRECATED_EXTERNAL_MODELS_FILE: &str = "schema.yaml";

/// The directory whose `**/*.yaml` files declare more external models.
pub const EXTERNAL_MODELS_DIR: &str = "external_models";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    columns: serde_norway::Mapping,
    #[serde(default)]
    gateway: Option<String>,
    #[serde(default)]
    start: Option<String>,
    #[serde(default)]
    dialect: Option<String>,
}

/// Where a YAML parser error points, for a diagnostic: the file alone when it says nothing.
pub(crate) fn yaml_error_location(file: &str, e: &serde_norway::Error) -> Location {
    e.location()
        .map(|l| {
            Location::new(
                file,
                (l.line() as u64, l.column() as u64),
                (l.line() as u64, l.column() as u64 + 1),
            )
        })
        .unwrap_or_else(|| Location::file_only(file))
}

/// Parse the file into EXTERNAL table models.
pub fn parse(file: &str, text: &str) -> Result<Vec<Model>, Diagnostic> {
    let entries: Vec<Entry> = match serde_norway::from_str::<Option<Vec<Entry>>>(text) {
        Ok(e) => e.unwrap_or_default(),
        Err(e) => {
            let loc = yaml_error_location(file, &e);
            return Err(Diagnostic::at(
                Problem::ExternalYaml {
                    message: e.to_string(),
                },
                loc,
            ));
        }
    };
    let mut out = vec![];
    for e in entries {
        let _ = (&e.gateway, &e.start, &e.dialect);
        let name = e.name.trim_matches('"').to_ascii_lowercase();
        if let Some(reason) = crate::naming::name_problem(&name) {
            return Err(Diagnostic::at(
                Problem::InvalidName { name, reason },
                Location::file_only(file),
            ));
        }
        let mut columns = vec![];
        for (k, v) in &e.columns {
            let (Some(k), Some(v)) = (k.as_str(), v.as_str()) else {
                return Err(Diagnostic::at(
                    Problem::ExternalYaml {
                        message: format!("columns of `{name}` must map names to type strings"),
                    },
                    Location::file_only(file),
                ));
            };
            if let Some(why) = crate::type_name::type_problem(v) {
                return Err(Diagnostic::at(
                    Problem::ExternalYaml {
                        message: format!("column `{k}` of `{name}`: {why}"),
                    },
                    Location::file_only(file),
                ));
            }
            columns.push(ColumnDef {
                name: k.to_ascii_lowercase(),
                sql_type: crate::type_name::duckdb_spelling(v),
                family: TypeFamily::of(v),
            });
        }
        out.push(Model {
            name: name.clone(),
            file: file.to_string(),
            name_location: Location::file_only(file),
            kind: Kind::External {
                source: ExternalSource::Table { table: name },
            },
            start: None,
            end: None,
            cron: None,
            interval_unit: None,
            grain: vec![],
            columns: Some(columns),
            audits: vec![],
            description: e.description,
            column_descriptions: vec![],
            projection_comments: vec![],
            owner: None,
            tags: vec![],
            depends_on: vec![],
            target: Target::Table,
            target_location: None,
            answerable: Answerable::Full,
            caveats: vec![],
            redact: vec![],
            batching: Default::default(),
            policy: Default::default(),
            defines_audits: false,
            statements: Default::default(),
            maintenance: None,
            query: None,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_sqlmesh_external_models() {
        let m = super::parse(
            "external_models.yaml",
            "- name: raw.demographics\n  columns:\n    customer_id: int\n    zip: text\n",
        )
        .unwrap();
        assert_eq!(m[0].name, "raw.demographics");
        let cols: Vec<_> = m[0]
            .columns
            .as_ref()
            .unwrap()
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(cols, vec!["customer_id", "zip"]);
        let err = super::parse("external_models.yaml", "- name: raw.x\n  colums: {}\n")
            .err()
            .unwrap();
        assert_eq!(err.location.unwrap().line, 2);
    }
}
