//! Staging a batch for a keyed write, refusing duplicate or NULL keys.

use super::SqlDialect;

/// Stage the rows of `select` in the temporary table `staging`, then fail the transaction on
/// duplicate or NULL `unique_key` values, naming up to five: picking one row silently would
/// hide a data bug.
pub(super) fn stage_with_key_checks(
    d: &dyn SqlDialect,
    staging: &str,
    select: &str,
    unique_key: &[String],
) -> Vec<String> {
    let keys: Vec<String> = unique_key.iter().map(|k| d.ident(k)).collect();
    let key_list = keys.join(", ");
    let key_text = if keys.len() == 1 {
        d.text(&keys[0])
    } else {
        d.text(&format!("({key_list})"))
    };
    let any_null = keys
        .iter()
        .map(|k| format!("{k} IS NULL"))
        .collect::<Vec<_>>()
        .join(" OR ");
    let names = unique_key.join(", ");
    let duplicate = d.literal(&format!(
        "duplicate unique_key ({names}) values in one batch: "
    ));
    let null = d.literal(&format!("NULL unique_key ({names}) in "));
    vec![
        d.replace_temp_table(staging, &format!("SELECT * FROM ({select}) AS q")),
        format!(
            "SELECT {} FROM (SELECT {key_text} AS k FROM {staging} GROUP BY {key_list} HAVING count(*) > 1 ORDER BY 1 LIMIT 5) AS efmesh_dups HAVING count(*) > 0",
            d.raise(&format!("{duplicate} || {}", d.string_agg("k", ", ")))
        ),
        format!(
            "SELECT {} FROM {staging} WHERE {any_null} HAVING count(*) > 0",
            d.raise(&format!("{null} || count(*) || ' row(s) of the batch'"))
        ),
    ]
}

/// `t.k = b.k AND ...` over the key columns, for aliases `t` and `b`.
pub(super) fn matches(d: &dyn SqlDialect, unique_key: &[String], t: &str, b: &str) -> String {
    unique_key
        .iter()
        .map(|k| format!("{t}.{0} = {b}.{0}", d.ident(k)))
        .collect::<Vec<_>>()
        .join(" AND ")
}
