//! INCREMENTAL_BY_PARTITION models: every refresh runs the whole query, and its rows replace
//! the table's rows of the partitions they hold; partitions the query no longer returns are
//! kept, as SQLMesh keeps them. A partition is matched by equality on every `partitioned_by`
//! column, so (as in SQLMesh) a NULL partition value never matches and its rows accumulate.

use super::{empty_like, keys, RelationKind, SqlDialect};

/// The staging table a refresh writes the query's rows to before replacing partitions.
pub const STAGING: &str = "efmesh_partition_batch";

/// The statements of one build or refresh of `physical` from `select`, as one string: create
/// the table when it does not exist yet (a new version), stage the rows, delete the partitions
/// they hold, insert them. Run in one transaction, a killed refresh changes nothing.
pub fn create(
    d: &dyn SqlDialect,
    physical: &str,
    select: &str,
    partitioned_by: &[String],
) -> String {
    [
        format!(
            "CREATE TABLE IF NOT EXISTS {physical} AS {}",
            empty_like(select)
        ),
        d.replace_temp_table(STAGING, select),
        d.delete_using(
            physical,
            STAGING,
            &keys::matches(d, partitioned_by, "t", "b"),
        ),
        d.insert_by_name(physical, &format!("SELECT * FROM {STAGING}"), None),
        d.drop(RelationKind::Table, STAGING, false),
    ]
    .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refresh_replaces_the_partitions_its_rows_hold() {
        let sql = create(
            &crate::sql::dialect::DuckDb,
            "_efmesh.t",
            "SELECT 1 AS ds, 2 AS n",
            &["ds".to_string()],
        );
        let statements: Vec<&str> = sql.split("; ").collect();
        assert_eq!(statements.len(), 5, "{sql}");
        assert!(
            statements[0].starts_with(
                "CREATE TABLE IF NOT EXISTS _efmesh.t AS SELECT * FROM (SELECT 1 AS ds, 2 AS n)"
            ),
            "{sql}"
        );
        assert_eq!(
            statements[2],
            "DELETE FROM _efmesh.t AS t USING efmesh_partition_batch AS b WHERE t.\"ds\" = b.\"ds\""
        );
    }
}
