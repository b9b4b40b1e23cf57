//! Forward-only versions keep the previous physics: their new columns arrive through ALTER,
//! and the columns they no longer return go as the model's `on_destructive_change` says.

use super::SqlDialect;
use crate::model::kind::DestructiveChange;

/// What bringing kept physics in line with a forward-only version takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evolution {
    /// The ALTER statements, in order (adds, then drops).
    pub statements: Vec<String>,
    /// Columns the version no longer returns that are dropped (`warn`, `allow`).
    pub dropped: Vec<String>,
    /// Columns the version no longer returns that are kept, NULL in new rows (`ignore`).
    pub kept: Vec<String>,
}

/// The statements that add to `physical` (whose columns are `existing`) the `wanted` columns
/// it lacks; the columns of `existing` that `wanted` drops are handled as `policy` says:
/// refused (the error lists them, SQLMesh's default `error`), dropped, or kept.
pub fn evolve(
    d: &dyn SqlDialect,
    physical: &str,
    wanted: &[(String, String)],
    existing: &[(String, String)],
    policy: DestructiveChange,
) -> Result<Evolution, Vec<String>> {
    let has =
        |cols: &[(String, String)], n: &str| cols.iter().any(|(c, _)| c.eq_ignore_ascii_case(n));
    let gone: Vec<String> = existing
        .iter()
        .filter(|(c, _)| !has(wanted, c))
        .map(|(c, _)| c.clone())
        .collect();
    let mut statements: Vec<String> = wanted
        .iter()
        .filter(|(c, _)| !has(existing, c))
        .map(|(c, t)| d.add_column(physical, c, t))
        .collect();
    let (dropped, kept) = match policy {
        DestructiveChange::Error if !gone.is_empty() => return Err(gone),
        DestructiveChange::Error => (vec![], vec![]),
        DestructiveChange::Warn | DestructiveChange::Allow => (gone, vec![]),
        DestructiveChange::Ignore => (vec![], gone),
    };
    statements.extend(dropped.iter().map(|c| d.drop_column(physical, c)));
    Ok(Evolution {
        statements,
        dropped,
        kept,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_columns_follow_on_destructive_change() {
        let d = crate::sql::dialect::DuckDb;
        let cols = |names: &[&str]| -> Vec<(String, String)> {
            names
                .iter()
                .map(|n| (n.to_string(), "INTEGER".to_string()))
                .collect()
        };
        let (wanted, existing) = (cols(&["id", "new"]), cols(&["id", "old"]));
        let run = |p| evolve(&d, "t", &wanted, &existing, p);
        assert_eq!(run(DestructiveChange::Error), Err(vec!["old".to_string()]));
        let allow = run(DestructiveChange::Allow).unwrap();
        assert_eq!(
            allow.statements,
            [
                "ALTER TABLE t ADD COLUMN \"new\" INTEGER",
                "ALTER TABLE t DROP COLUMN \"old\""
            ]
        );
        assert_eq!(run(DestructiveChange::Warn).unwrap(), Evolution { ..allow });
        let ignore = run(DestructiveChange::Ignore).unwrap();
        assert_eq!(
            ignore.statements,
            ["ALTER TABLE t ADD COLUMN \"new\" INTEGER"]
        );
        assert_eq!(ignore.kept, ["old"]);
    }
}
