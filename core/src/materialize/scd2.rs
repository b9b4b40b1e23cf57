//! SCD type 2 models (by time and by column): every version of a row, with its validity.

use super::{keys, MaterializeError, RelationKind, SqlDialect, Write};
use crate::model::Kind;
use crate::project::Project;
use chrono::NaiveDateTime;

/// The staging table an SCD run writes the source snapshot to before comparing it.
pub const STAGING: &str = "efmesh_scd_batch";

/// Create the (empty) table at `physical`: the query's columns plus the validity columns.
pub fn create(
    d: &dyn SqlDialect,
    physical: &str,
    select: &str,
    valid_from: &str,
    valid_to: &str,
) -> String {
    d.replace_table(
        physical,
        &format!(
            "SELECT *, CAST(NULL AS TIMESTAMP) AS {}, CAST(NULL AS TIMESTAMP) AS {} FROM ({select}) AS q LIMIT 0",
            d.ident(valid_from),
            d.ident(valid_to)
        ),
    )
}

/// One SCD type 2 run in one transaction: compare a snapshot of the source with the open
/// versions, close the ones that changed (and, with `invalidate_hard_deletes`, the ones that
/// disappeared), and open a version for every key without an open one. By time, a row changed
/// when its `updated_at` moved forward, and the new version is valid from it; by column, a row
/// changed when a compared column differs, and versions are valid from the run's time
/// (`run_time`, the batch end). First versions are valid from 1970-01-01 unless the kind says
/// otherwise.
pub fn batch(
    d: &dyn SqlDialect,
    project: &Project,
    i: usize,
    physical: &str,
    select: &str,
    run_time: NaiveDateTime,
) -> Result<Write, MaterializeError> {
    let m = &project.models[i];
    let q = |s: &str| d.ident(s);
    let epoch = d.timestamp(chrono::DateTime::UNIX_EPOCH.naive_utc());
    let now = d.timestamp(run_time);
    let (unique_key, valid_from_name, valid_to_name, invalidate) = match &m.kind {
        Kind::ScdType2 {
            unique_key,
            valid_from_name,
            valid_to_name,
            invalidate_hard_deletes,
            ..
        }
        | Kind::ScdType2ByColumn {
            unique_key,
            valid_from_name,
            valid_to_name,
            invalidate_hard_deletes,
            ..
        } => (
            unique_key,
            valid_from_name,
            valid_to_name,
            *invalidate_hard_deletes,
        ),
        other => {
            return Err(MaterializeError(format!(
                "`{}` is {}, not an SCD type 2 model",
                m.name,
                other.name()
            )))
        }
    };
    let vt = q(valid_to_name);
    let vf = q(valid_from_name);
    let matches = keys::matches(d, unique_key, "t", "s");
    let (changed, new_from, first_from) = match &m.kind {
        Kind::ScdType2 {
            updated_at_name,
            updated_at_as_valid_from,
            ..
        } => {
            let u = format!("CAST(s.{} AS TIMESTAMP)", q(updated_at_name));
            let first = if *updated_at_as_valid_from {
                u.clone()
            } else {
                epoch
            };
            (
                format!("{u} > CAST(t.{} AS TIMESTAMP)", q(updated_at_name)),
                u,
                first,
            )
        }
        Kind::ScdType2ByColumn {
            columns,
            execution_time_as_valid_from,
            ..
        } => {
            let compared: Vec<String> = if columns.iter().any(|c| c == "*") {
                let all = project.columns[i].clone().ok_or_else(|| {
                    MaterializeError(format!("`{}` compares all columns (`columns *`), but its output columns are unknown; declare `columns`", m.name))
                })?;
                all.into_iter()
                    .filter(|c| {
                        !unique_key.contains(c) && c != valid_from_name && c != valid_to_name
                    })
                    .collect()
            } else {
                columns.clone()
            };
            let any = compared
                .iter()
                .map(|c| format!("t.{0} IS DISTINCT FROM s.{0}", q(c)))
                .collect::<Vec<_>>()
                .join(" OR ");
            let first = if *execution_time_as_valid_from {
                now.clone()
            } else {
                epoch
            };
            (
                if any.is_empty() {
                    "false".into()
                } else {
                    format!("({any})")
                },
                now.clone(),
                first,
            )
        }
        _ => unreachable!("matched an SCD kind above"),
    };
    let mut statements = keys::stage_with_key_checks(d, STAGING, select, unique_key);
    statements.push(format!("UPDATE {physical} AS t SET {vt} = {new_from} FROM {STAGING} AS s WHERE {matches} AND t.{vt} IS NULL AND {changed}"));
    if invalidate {
        statements.push(format!("UPDATE {physical} AS t SET {vt} = {now} WHERE t.{vt} IS NULL AND NOT EXISTS (SELECT 1 FROM {STAGING} AS s WHERE {matches})"));
    }
    statements.push(d.insert_by_name(
        physical,
        &format!("SELECT s.*, CASE WHEN EXISTS (SELECT 1 FROM {physical} AS t WHERE {matches}) THEN {new_from} ELSE {first_from} END AS {vf}, CAST(NULL AS TIMESTAMP) AS {vt} FROM {STAGING} AS s WHERE NOT EXISTS (SELECT 1 FROM {physical} AS t WHERE {matches} AND t.{vt} IS NULL)"),
        project.columns[i].as_deref(),
    ));
    Ok(Write {
        statements,
        audited: STAGING.to_string(),
        cleanup: vec![d.drop(RelationKind::Table, STAGING, false)],
    })
}
