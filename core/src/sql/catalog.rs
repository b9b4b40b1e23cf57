//! The default catalog in SQLMesh names.
//!
//! SQLMesh qualifies every name with its catalog, and its users write it too: with
//! `database: db.db`, `db.raw.orders` and `raw.orders` are the same table. efmesh serves one
//! database, whose names are `schema.table`, so a leading part equal to the default catalog is
//! dropped from model names and table references. Any other catalog is left in place, where it
//! fails as an unknown or invalid name, naming it.

use sqlparser::ast::{ObjectName, ObjectNamePart, Query, VisitMut, VisitorMut};
use std::ops::ControlFlow;

/// The schema SQLMesh gives a model whose name has none (`name orders` is `default.orders`).
pub const DEFAULT_SCHEMA: &str = "default";

/// Write every one-part table reference of `query` that names a model of schema `default`
/// (`tables`, their table parts) and no CTE in scope as `default.table`, as SQLMesh resolves
/// `FROM orders` to the model named `orders`.
pub fn qualify_default(query: &mut Query, tables: &std::collections::HashSet<String>) {
    let _ = query.visit(&mut Qualifier {
        tables,
        ctes: vec![],
    });
}

struct Qualifier<'a> {
    tables: &'a std::collections::HashSet<String>,
    ctes: Vec<Vec<String>>,
}

impl VisitorMut for Qualifier<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        let names = q
            .with
            .as_ref()
            .map(|w| {
                w.cte_tables
                    .iter()
                    .map(|c| c.alias.name.value.to_ascii_lowercase())
                    .collect()
            })
            .unwrap_or_default();
        self.ctes.push(names);
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _q: &mut Query) -> ControlFlow<()> {
        self.ctes.pop();
        ControlFlow::Continue(())
    }

    fn pre_visit_relation(&mut self, name: &mut ObjectName) -> ControlFlow<()> {
        if let [ObjectNamePart::Identifier(only)] = name.0.as_slice() {
            let table = only.value.to_ascii_lowercase();
            let shadowed = self.ctes.iter().any(|s| s.contains(&table));
            if !shadowed && self.tables.contains(&table) {
                name.0.insert(
                    0,
                    ObjectNamePart::Identifier(sqlparser::ast::Ident::new(DEFAULT_SCHEMA)),
                );
            }
        }
        ControlFlow::Continue(())
    }
}

/// `name` without a leading `catalog.` when it has three parts.
pub fn strip(name: &str, catalog: &str) -> String {
    let parts: Vec<&str> = name.split('.').collect();
    if parts.len() == 3 && parts[0].eq_ignore_ascii_case(catalog) {
        parts[1..].join(".")
    } else {
        name.to_string()
    }
}

/// Drop the default catalog from every three-part table reference of `query`.
pub fn strip_references(query: &mut Query, catalog: &str) {
    let _ = query.visit(&mut Stripper { catalog });
}

struct Stripper<'a> {
    catalog: &'a str,
}

impl VisitorMut for Stripper<'_> {
    type Break = ();

    fn pre_visit_relation(&mut self, name: &mut ObjectName) -> ControlFlow<()> {
        if let [ObjectNamePart::Identifier(first), _, _] = name.0.as_slice() {
            if first.value.eq_ignore_ascii_case(self.catalog) {
                name.0.remove(0);
            }
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::DuckDbDialect;
    use sqlparser::parser::Parser;

    #[test]
    fn the_default_catalog_is_dropped_and_others_are_kept() {
        assert_eq!(strip("db.raw.orders", "db"), "raw.orders");
        assert_eq!(strip("DB.raw.orders", "db"), "raw.orders");
        assert_eq!(strip("other.raw.orders", "db"), "other.raw.orders");
        assert_eq!(strip("raw.orders", "raw"), "raw.orders");
        let mut q = match Parser::parse_sql(
            &DuckDbDialect {},
            "SELECT * FROM db.raw.a JOIN raw.b USING (id) JOIN other.raw.c USING (id) WHERE id IN (SELECT id FROM db.raw.d)",
        )
        .unwrap()
        .remove(0)
        {
            sqlparser::ast::Statement::Query(q) => q,
            _ => unreachable!(),
        };
        strip_references(&mut q, "db");
        assert_eq!(
            q.to_string(),
            "SELECT * FROM raw.a JOIN raw.b USING(id) JOIN other.raw.c USING(id) WHERE id IN (SELECT id FROM raw.d)"
        );
    }
}
