//! Forward-only versions keep the previous physics: their new columns arrive through ALTER.

use super::SqlDialect;

/// The statements that add to `physical` (whose columns are `existing`) the `wanted` columns
/// it lacks, or the existing columns `wanted` drops: forward-only can only add columns,
/// because it keeps the rows already written.
pub fn add_columns(
    d: &dyn SqlDialect,
    physical: &str,
    wanted: &[(String, String)],
    existing: &[(String, String)],
) -> Result<Vec<String>, Vec<String>> {
    let has =
        |cols: &[(String, String)], n: &str| cols.iter().any(|(c, _)| c.eq_ignore_ascii_case(n));
    let dropped: Vec<String> = existing
        .iter()
        .filter(|(c, _)| !has(wanted, c))
        .map(|(c, _)| c.clone())
        .collect();
    if !dropped.is_empty() {
        return Err(dropped);
    }
    Ok(wanted
        .iter()
        .filter(|(c, _)| !has(existing, c))
        .map(|(c, t)| d.add_column(physical, c, t))
        .collect())
}
