//! Names of things in the engine: environment views and physical tables.
//!
//! A version lives in exactly one physical table named by its fingerprint; an environment is a
//! set of views over those tables. `prod` is special only in that its views carry the plain
//! `schema.table` name that consumers query.

/// The environment whose views use plain model names.
pub const PROD: &str = "prod";

/// The schema that holds every physical table.
pub const PHYSICAL_SCHEMA: &str = "_efmesh";

/// The catalog name the `[ducklake]` catalog is attached as; `target ducklake` versions are
/// tables in its [`PHYSICAL_SCHEMA`].
pub const DUCKLAKE_CATALOG: &str = "efmesh_ducklake";

/// The physical relation of a version as SQL: `_efmesh.<schema>__<table>__<fp8>`, or
/// `efmesh_ducklake._efmesh.…` for a version kept in the DuckLake catalog.
pub fn physical_relation(model: &str, fingerprint: &str, in_ducklake: bool) -> String {
    let (schema, table) = physical_name(model, fingerprint);
    let relation = crate::quote::relation(&schema, &table);
    if in_ducklake {
        format!("{}.{relation}", crate::quote::name_part(DUCKLAKE_CATALOG))
    } else {
        relation
    }
}

/// The short form of a fingerprint used in physical names and human output.
pub fn fp8(fingerprint: &str) -> &str {
    &fingerprint[..fingerprint.len().min(8)]
}

/// Why an environment name was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("`{0}` is not a valid environment name: use lower-case letters, digits and `_`, starting with a letter")]
pub struct InvalidEnvironment(pub String);

/// Validate an environment name; it becomes part of schema names.
pub fn validate_env(env: &str) -> Result<(), InvalidEnvironment> {
    let ok = env.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && env
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !env.contains("__");
    if ok {
        Ok(())
    } else {
        Err(InvalidEnvironment(env.to_string()))
    }
}

/// Whether a name part is a plain SQL identifier, the shape every model name's parts must
/// have; quoting owns the definition, since it decides what may be written bare.
pub use crate::quote::is_plain as plain_ident;

/// Whether `name` is a relation of one to three plain identifiers (`t`, `s.t`, `c.s.t`): the
/// only form in which an EXTERNAL table's name is written into SQL.
pub fn plain_relation(name: &str) -> bool {
    let parts: Vec<&str> = name.split('.').collect();
    parts.len() <= 3 && parts.iter().all(|p| plain_ident(p))
}

/// Why a model name cannot be used, if it cannot: model names become schema and table names
/// in the engine and keys in the lake, so each part is a plain SQL identifier (letters,
/// digits and `_`, not starting with a digit: never a quote, a space or a `;`), and no name
/// may land in efmesh's own namespaces: the physical schema, the PostgreSQL state schema, or
/// another environment's `<env>__<schema>`.
pub fn name_problem(name: &str) -> Option<String> {
    let plain = plain_ident;
    let Some((schema, table)) = name.split_once('.') else {
        return Some("it is not `schema.table`".into());
    };
    if table.contains('.') || schema.is_empty() || table.is_empty() {
        return Some("it is not `schema.table`".into());
    }
    if let Some(bad) = [schema, table].into_iter().find(|p| !plain(p)) {
        return Some(format!(
            "`{bad}` is not a plain identifier: use letters, digits and `_`, not starting with a digit"
        ));
    }
    let lower = schema.to_ascii_lowercase();
    if lower == PHYSICAL_SCHEMA || lower.starts_with("efmesh_state") {
        return Some(format!("schema `{schema}` is efmesh's own"));
    }
    if schema.contains("__") {
        return Some(format!(
            "schema `{schema}` contains `__`, which names environments' schemas (`<env>__<schema>`)"
        ));
    }
    None
}

/// `(schema, table)` of the view a model gets in `env`: `<env>__<schema>.<table>`, or
/// `<schema>.<table>` in prod.
pub fn view_name(env: &str, model: &str) -> (String, String) {
    let (schema, table) = model.split_once('.').unwrap_or(("main", model));
    if env == PROD {
        (schema.to_string(), table.to_string())
    } else {
        (format!("{env}__{schema}"), table.to_string())
    }
}

/// `(schema, table)` of a version's physical table: `_efmesh.<schema>__<table>__<fp8>`.
pub fn physical_name(model: &str, fingerprint: &str) -> (String, String) {
    let (schema, table) = model.split_once('.').unwrap_or(("main", model));
    let fp8 = fp8(fingerprint);
    (
        PHYSICAL_SCHEMA.to_string(),
        format!("{schema}__{table}__{fp8}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_are_not_plain_or_collide_with_efmesh_are_refused() {
        assert_eq!(name_problem("med.moves"), None);
        assert_eq!(name_problem("_stg.v2_x"), None);
        for bad in [
            "raw.x as select 1; create table pwned as select 42 as v; create table y",
            "raw.\"x\"",
            "raw.2x",
            "a.b.c",
            "raw.",
            "dev__med.moves",
            "_efmesh.med__moves__01234567",
            "_EFMESH.t",
            "efmesh_state.environments",
        ] {
            assert!(name_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn names_follow_the_documented_shapes() {
        assert_eq!(
            view_name("prod", "med.moves"),
            ("med".into(), "moves".into())
        );
        assert_eq!(
            view_name("dev", "med.moves"),
            ("dev__med".into(), "moves".into())
        );
        assert_eq!(
            physical_name("med.moves", "0123456789abcdef"),
            ("_efmesh".into(), "med__moves__01234567".into())
        );
        assert!(validate_env("dev_2").is_ok());
        assert!(
            validate_env("Dev").is_err()
                && validate_env("a-b").is_err()
                && validate_env("").is_err()
                && validate_env("a__b").is_err()
        );
    }
}
