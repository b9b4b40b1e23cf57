//! One model's audit call, resolved: where it runs (its scope), whether it blocks, and the SQL
//! that finds its violations over a given relation.
//!
//! Apply audits each batch it writes and, before promotion, the whole table; `efmesh audit`
//! audits an environment's views. All three go through [`resolve`] and [`AuditQuery::sql`], so
//! a call means the same thing wherever it runs.

use super::builtin::{self, Shape};
use super::AuditDef;
use crate::model::AuditCall;
use crate::sql::render::{render, Relation};
use crate::sql::Dialect;
use serde::Serialize;

/// Where an audit runs. SQLMesh audits always see the whole table; efmesh lets a model say
/// which checks are meaningful per batch (a batch's rows) and which only over all of history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// `scope := 'per_interval'`: over each batch apply writes, as rendered for it.
    PerInterval,
    /// `scope := 'whole'`: over the whole relation, before promotion and in `efmesh audit`.
    Whole,
    /// No scope given: both.
    Everywhere,
}

impl Scope {
    /// Read a `scope := ...` value (quoted or not).
    pub fn parse(value: &str) -> Option<Scope> {
        match value
            .trim()
            .trim_matches('\'')
            .to_ascii_lowercase()
            .as_str()
        {
            "per_interval" => Some(Scope::PerInterval),
            "whole" => Some(Scope::Whole),
            _ => None,
        }
    }

    /// Whether the audit runs over each batch apply writes.
    pub fn per_batch(self) -> bool {
        matches!(self, Scope::PerInterval | Scope::Everywhere)
    }

    /// Whether the audit runs over the whole relation.
    pub fn whole(self) -> bool {
        matches!(self, Scope::Whole | Scope::Everywhere)
    }

    /// The name reports use.
    pub fn label(self) -> &'static str {
        match self {
            Scope::PerInterval => "per_interval",
            Scope::Whole => "whole",
            Scope::Everywhere => "everywhere",
        }
    }
}

/// A model's audit call with everything needed to run it anywhere.
#[derive(Debug, Clone)]
pub struct AuditQuery<'a> {
    /// The call as the model wrote it.
    pub call: &'a AuditCall,
    /// The AUDIT that defines it, when it is not a built-in.
    pub def: Option<&'a AuditDef>,
    /// Where it runs.
    pub scope: Scope,
    /// Whether a violation stops the apply (or fails `efmesh audit`).
    pub blocking: bool,
}

/// Resolve a model's audit call against the project's named audits. `None` for an audit that
/// is neither built in nor named (the project check has already reported it).
pub fn resolve<'a>(
    call: &'a AuditCall,
    named: &dyn Fn(&str) -> Option<&'a AuditDef>,
) -> Option<AuditQuery<'a>> {
    let builtin = super::builtin_of(&call.name);
    let def = if builtin.is_some() {
        None
    } else {
        Some(named(&call.name)?)
    };
    let arg = |k: &str| call.args.iter().find(|(a, _)| a == k).map(|(_, v)| v);
    let scope = arg("scope")
        .and_then(|v| Scope::parse(v))
        .unwrap_or(Scope::Everywhere);
    let blocking = match arg("blocking") {
        Some(v) => !v.eq_ignore_ascii_case("false"),
        None => def
            .and_then(|d| d.blocking)
            .unwrap_or(!builtin.is_some_and(|(_, non_blocking)| non_blocking)),
    };
    Some(AuditQuery {
        call,
        def,
        scope,
        blocking,
    })
}

impl AuditQuery<'_> {
    /// The call as people read it: `not_null(columns := (a, b))`, without `blocking`/`scope`.
    pub fn display(&self) -> String {
        let args: Vec<String> = self
            .call
            .args
            .iter()
            .filter(|(k, _)| !super::CALL_OPTIONS.contains(&k.as_str()))
            .map(|(k, v)| format!("{k} := {v}"))
            .collect();
        if args.is_empty() {
            self.call.name.clone()
        } else {
            format!("{}({})", self.call.name, args.join(", "))
        }
    }

    /// The query for violations over `relation` (a table name or a parenthesized subquery).
    /// A named audit's other model references go through `resolve`, its time macros through
    /// `bind_time`, and its argument macros take the call's values, then the defaults.
    pub fn sql(
        &self,
        relation: &str,
        dialect: Dialect,
        resolve: &dyn Fn(&str) -> Option<Relation>,
        bind_time: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(String, Shape), String> {
        let arg = |k: &str| {
            self.call
                .args
                .iter()
                .find(|(a, _)| a == k)
                .map(|(_, v)| v.clone())
        };
        let Some(def) = self.def else {
            let base =
                super::builtin_of(&self.call.name).map_or(self.call.name.as_str(), |(b, _)| b);
            return builtin::builtin_sql(base, &arg, relation, dialect)
                .ok_or_else(|| format!("`{}` is not a built-in audit", self.call.name));
        };
        let audited = if relation.starts_with('(') {
            Relation::Expr(relation.to_string())
        } else {
            Relation::Name(relation.to_string())
        };
        let resolve_all = |name: &str| {
            if name == "@this_model" {
                Some(audited.clone())
            } else {
                resolve(name)
            }
        };
        let bind = |name: &str| {
            arg(name)
                .or_else(|| {
                    def.defaults
                        .iter()
                        .find(|(k, _)| k == name)
                        .map(|(_, v)| v.clone())
                })
                .or_else(|| bind_time(name))
        };
        render(&def.query, dialect, &resolve_all, &bind, false)
            .map(|sql| (sql, Shape::Violations))
            .map_err(|e| format!("audit `{}` ({}): {e}", def.name, def.file))
    }
}

/// How a continuity gate's holes read: the first hole's boundaries, then how many more.
pub fn describe_gaps(covered_through: &str, resumes_at: &str, holes: u64) -> String {
    let more = match holes.saturating_sub(1) {
        0 => String::new(),
        1 => " (and 1 further gap)".into(),
        n => format!(" (and {n} further gaps)"),
    };
    format!("covered through {covered_through}, resumes at {resumes_at}{more}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_parse_and_gaps_read_as_boundaries() {
        assert_eq!(Scope::parse("'per_interval'"), Some(Scope::PerInterval));
        assert_eq!(Scope::parse("whole"), Some(Scope::Whole));
        assert_eq!(Scope::parse("'daily'"), None);
        assert!(Scope::Everywhere.per_batch() && Scope::Everywhere.whole());
        assert!(!Scope::Whole.per_batch());
        assert_eq!(
            describe_gaps("2026-01-02", "2026-01-04", 3),
            "covered through 2026-01-02, resumes at 2026-01-04 (and 2 further gaps)"
        );
        assert_eq!(
            describe_gaps("7", "9", 1),
            "covered through 7, resumes at 9"
        );
    }
}
