//! `efmesh init`: a working project over data DuckDB generates itself, so it needs no files.

use crate::Error;
use std::path::Path;

const FILES: &[(&str, &str)] = &[
    (
        "efmesh.toml",
        "[project]\nname = \"warehouse\"\nstart = \"2026-01-01\"\n\n[engine]\nduckdb = \"efmesh.duckdb\"\n\n[state]\nsqlite = \"efmesh.state.sqlite\"\n",
    ),
    (
        "models/raw/orders.sql",
        "MODEL (\n  name raw.orders,\n  kind FULL,\n  description 'Synthetic orders generated inside DuckDB',\n  columns (order_id BIGINT, customer_id BIGINT, amount DOUBLE, ordered_at TIMESTAMP)\n);\n\nSELECT\n  range AS order_id,\n  range % 37 AS customer_id,\n  round((range * 7919) % 1000 / 10.0, 2) AS amount,\n  TIMESTAMP '2026-01-01' + to_minutes(range * 17) AS ordered_at\nFROM range(5000)\n",
    ),
    (
        "models/stg/orders.sql",
        "MODEL (\n  name stg.orders,\n  kind VIEW,\n  columns (order_id BIGINT, customer_id BIGINT, amount DOUBLE, ordered_on DATE)\n);\n\nSELECT order_id, customer_id, amount, CAST(ordered_at AS DATE) AS ordered_on\nFROM raw.orders\nWHERE amount > 0\n",
    ),
    (
        "models/mart/daily_revenue.sql",
        "MODEL (\n  name mart.daily_revenue,\n  kind FULL,\n  grain ordered_on,\n  columns (ordered_on DATE, orders BIGINT, revenue DOUBLE),\n  audits (not_null(columns := (ordered_on)))\n);\n\nSELECT ordered_on, count(*) AS orders, sum(amount) AS revenue\nFROM stg.orders\nGROUP BY ordered_on\n",
    ),
    (
        "models/mart/customers.sql",
        "MODEL (\n  name mart.customers,\n  kind FULL,\n  grain customer_id,\n  columns (customer_id BIGINT, orders BIGINT, lifetime_value DOUBLE)\n);\n\nSELECT customer_id, count(*) AS orders, sum(amount) AS lifetime_value\nFROM stg.orders\nGROUP BY customer_id\n",
    ),
    (".gitignore", "efmesh.duckdb*\nefmesh.state.sqlite*\n.efmesh/\n"),
];

/// Scaffold a project in `dir` (created if missing). Refuses, before writing anything, when
/// any file it would write already exists: a user's `.gitignore` or `models/` is never
/// replaced.
pub fn init(dir: &Path) -> Result<Vec<String>, Error> {
    if dir.join("efmesh.toml").exists() {
        return Err(Error::Argument {
            message: format!(
                "`{}` already holds an efmesh project",
                dir.join("efmesh.toml").display()
            ),
            help: Some("pick an empty directory".into()),
        });
    }
    let existing: Vec<&str> = FILES
        .iter()
        .map(|(rel, _)| *rel)
        .filter(|rel| dir.join(rel).symlink_metadata().is_ok())
        .collect();
    if !existing.is_empty() {
        return Err(Error::Argument {
            message: format!(
                "`{}` already has {}, which `efmesh init` would overwrite",
                dir.display(),
                existing
                    .iter()
                    .map(|r| format!("`{r}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            help: Some(
                "pick an empty directory, or move those files away first; nothing was written"
                    .into(),
            ),
        });
    }
    let mut written = vec![];
    for (rel, text) in FILES {
        let p = dir.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        crate::util::atomic_file::write(&p, text.as_bytes())
            .map_err(|(path, e)| Error::io(&path, e))?;
        written.push(rel.to_string());
    }
    Ok(written)
}
