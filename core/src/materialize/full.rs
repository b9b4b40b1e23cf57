//! FULL (and SEED, and materialized VIEW) models: the table is rebuilt whole.

use super::SqlDialect;

/// Build the table at `physical` from `select`.
pub fn create(d: &dyn SqlDialect, physical: &str, select: &str) -> String {
    d.replace_table(physical, select)
}
