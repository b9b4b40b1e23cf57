//! The project as a redacted environment builds it.

use super::Project;
use crate::fingerprint;

impl Project {
    /// The project as a redacted environment builds it: every model that declares
    /// `redact (...)` returns its query without those columns, so its physics never holds
    /// them; fingerprints are recomputed, so those models (and everything reading them) get
    /// physics of their own, while models outside the policy keep sharing theirs. A model whose
    /// query cannot be wrapped (one efmesh could not parse) is refused by name.
    /// `sql` spells the statement that leaves the columns out, in the engine's dialect.
    pub fn redacted(&self, sql: &dyn crate::sql::dialect::SqlDialect) -> Result<Project, String> {
        let mut p = self.clone();
        let dialect = self.config.dialect();
        for (idx, m) in p.models.iter_mut().enumerate() {
            if m.redact.is_empty() {
                continue;
            }
            let Some(q) = &m.query else {
                return Err(format!(
                    "`{}` ({}) declares `redact`, but a {} model has no query to redact; only models with a query can be redacted",
                    m.name,
                    m.file,
                    m.kind.name()
                ));
            };
            if q.ast().is_none() {
                return Err(format!(
                    "`{}` ({}) declares `redact`, but efmesh could not parse its query, so it cannot remove the columns safely",
                    m.name, m.file
                ));
            }
            let from = format!("({}) AS efmesh_redacted", q.canonical);
            let Some(text) = sql.select_except(&from, self.columns[idx].as_deref(), &m.redact)
            else {
                return Err(format!(
                    "`{}` ({}) declares `redact`, but efmesh cannot tell its columns (its query selects `*` from a source of unknown shape), and this engine needs them to leave columns out; list the columns in its query or declare them with `columns (...)`",
                    m.name, m.file
                ));
            };
            let tokens = crate::sql::tokenize(&m.file, &text, dialect)
                .map_err(|d| format!("`{}`: cannot redact: {}", m.name, d.problem))?;
            let (wrapped, _) = crate::sql::prepare_query(&tokens, &m.file, dialect, false)
                .map_err(|e| {
                    let why: Vec<String> = e.iter().map(|d| d.problem.to_string()).collect();
                    format!("`{}`: cannot redact: {}", m.name, why.join("; "))
                })?;
            m.query = Some(wrapped);
            if let Some(declared) = &mut m.columns {
                declared.retain(|c| !m.redact.contains(&c.name));
            }
        }
        for (i, m) in p.models.iter().enumerate() {
            if let Some(cols) = &mut p.columns[i] {
                cols.retain(|c| !m.redact.contains(c));
            }
        }
        for &i in self.dag.topological_order() {
            let parent_fps: Vec<(&str, &str)> = p
                .dag
                .parents(i)
                .iter()
                .map(|&j| (p.models[j].name.as_str(), p.fingerprints[j].as_str()))
                .collect();
            let fp =
                fingerprint::fingerprint(&p.models[i], p.seed_hashes[i].as_deref(), &parent_fps);
            p.fingerprints[i] = fp;
        }
        Ok(p)
    }
}
