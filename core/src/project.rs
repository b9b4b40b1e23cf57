//! A whole project: every model loaded, every reference and column checked, fingerprints and
//! the DAG computed.
//!
//! The caller supplies the files as text and a way to read seed files; this module decides
//! everything else. A project either checks clean (warnings allowed) or comes back as the
//! complete list of problems, so a user fixes all of them in one round.

use crate::audit::{self, AuditDef};
use crate::config::Config;
use crate::dag::Dag;
use crate::diagnostic::{self, Diagnostic, Problem};
use crate::fingerprint;
use crate::location::Location;
use crate::model::{self, Kind, Model};
use crate::seed;
use crate::sql::{columns, references, QueryForm};
use std::collections::{BTreeMap, HashMap};

/// One source file: a project-relative path and its text.
#[derive(Debug, Clone)]
pub struct SourceText {
    /// The path relative to the project root; diagnostics name files by it.
    pub path: String,
    /// The file's full contents.
    pub text: String,
}

/// The project as data, gathered by the caller.
#[derive(Debug, Clone)]
pub struct ProjectSources {
    /// The already-parsed `efmesh.toml`.
    pub config: Config,
    /// Every model file selected by the config's model globs.
    pub models: Vec<SourceText>,
    /// Every AUDIT file selected by the config's audit globs.
    pub audits: Vec<SourceText>,
    /// `external_models.yaml`, when the project has one.
    pub external_models: Option<SourceText>,
}

/// A loaded, checked project.
#[derive(Debug, Clone)]
pub struct Project {
    /// The configuration the project was loaded with.
    pub config: Config,
    /// All models, in the order their files were given.
    pub models: Vec<Model>,
    /// Dependencies between models, by index into `models`.
    pub dag: Dag,
    /// Fingerprint per model (same index as `models`).
    pub fingerprints: Vec<String>,
    /// Output columns per model, declared or inferred; `None` when unknown.
    pub columns: Vec<Option<Vec<String>>>,
    /// Content hash of each SEED model's file.
    pub seed_hashes: Vec<Option<String>>,
    /// Each SEED model's file columns as written: the CSV header, or the JSON keys in
    /// first-seen order (same index as `models`).
    pub seed_columns: Vec<Option<Vec<String>>>,
    /// Named audits from AUDIT files, by name.
    pub audits: BTreeMap<String, AuditDef>,
    index: HashMap<String, usize>,
}

impl Project {
    /// The index of a model by name.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.index.get(&name.to_ascii_lowercase()).copied()
    }

    /// A model by name, case-insensitively.
    pub fn model(&self, name: &str) -> Option<&Model> {
        self.index_of(name).map(|i| &self.models[i])
    }

    /// Where model `i`'s history starts: its own `start`, else the project's (both validated
    /// when they were loaded). Callers choose their own fallback when neither is declared.
    pub fn history_start(&self, i: usize) -> Option<chrono::NaiveDateTime> {
        let m = &self.models[i];
        m.start
            .as_deref()
            .or(self.config.start.as_deref())
            .and_then(|s| crate::time::parse_instant(s).ok())
    }

    /// Where model `i`'s history ends (exclusive), from its `end`; `None` when it is open.
    pub fn history_end(&self, i: usize) -> Option<chrono::NaiveDateTime> {
        self.models[i].history_end()
    }

    /// The project as a redacted environment builds it: every model that declares
    /// `redact (...)` returns its query without those columns, so its physics never holds
    /// them; fingerprints are recomputed, so those models (and everything reading them) get
    /// physics of their own, while models outside the policy keep sharing theirs. A model whose
    /// query cannot be wrapped (one efmesh could not parse) is refused by name.
    pub fn redacted(&self) -> Result<Project, String> {
        let mut p = self.clone();
        let dialect = self.config.dialect();
        for m in p.models.iter_mut().filter(|m| !m.redact.is_empty()) {
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
            let cols = m
                .redact
                .iter()
                .map(|c| format!("\"{}\"", c.replace('"', "\"\"")))
                .collect::<Vec<_>>()
                .join(", ");
            let text = format!(
                "SELECT * EXCLUDE ({cols}) FROM ({}) AS efmesh_redacted",
                q.canonical
            );
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

    /// Parent names of model `i`, sorted.
    pub fn parent_names(&self, i: usize) -> Vec<&str> {
        let mut v: Vec<&str> = self
            .dag
            .parents(i)
            .iter()
            .map(|&p| self.models[p].name.as_str())
            .collect();
        v.sort();
        v
    }
}

/// The outcome of loading: the project when nothing was an error, and every diagnostic.
#[derive(Debug)]
pub struct Loaded {
    /// The checked project; `None` when any diagnostic is an error.
    pub project: Option<Project>,
    /// Every problem found, errors first, then by file and position.
    pub diagnostics: Vec<Diagnostic>,
}

impl Loaded {
    /// Whether any diagnostic is an error, i.e. why `project` is `None`.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.is_error())
    }
}

/// The path of a SEED model's file relative to the project root: SQLMesh resolves it relative
/// to the model file's directory.
pub fn seed_path(model_file: &str, seed: &str) -> String {
    if seed.starts_with('/') {
        return seed.to_string();
    }
    let mut parts: Vec<&str> = model_file.split('/').collect();
    parts.pop();
    for p in seed.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    parts.push("..");
                }
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// One model file parsed on its own: the model (when its block is usable) and its diagnostics.
pub type ParsedFile = (Option<Model>, Vec<Diagnostic>);

/// Parse every model file of `sources`, in order. Files are independent, so a caller with
/// threads may instead parse them in parallel with [`model::parse_model_file`] and call
/// [`load_parsed`].
pub fn parse_models(sources: &ProjectSources) -> Vec<ParsedFile> {
    let dialect = sources.config.dialect();
    sources
        .models
        .iter()
        .map(|src| model::parse_model_file(&src.path, &src.text, dialect))
        .collect()
}

/// Load and check a project. `read_seed` reads a project-relative file.
pub fn load(
    sources: &ProjectSources,
    read_seed: &mut dyn FnMut(&str) -> Result<Vec<u8>, String>,
) -> Loaded {
    load_parsed(sources, parse_models(sources), read_seed)
}

/// [`load`], with the model files already parsed (one entry per `sources.models` entry).
pub fn load_parsed(
    sources: &ProjectSources,
    parsed: Vec<ParsedFile>,
    read_seed: &mut dyn FnMut(&str) -> Result<Vec<u8>, String>,
) -> Loaded {
    let dialect = sources.config.dialect();
    let mut diags: Vec<Diagnostic> = vec![];
    let mut models: Vec<Model> = vec![];
    let mut failed_files = false;

    for (m, d) in parsed {
        failed_files |= m.is_none() || d.iter().any(|d| d.is_error());
        diags.extend(d);
        models.extend(m);
    }
    if let Some(y) = &sources.external_models {
        match crate::external_yaml::parse(&y.path, &y.text) {
            Ok(ms) => models.extend(ms),
            Err(d) => diags.push(d),
        }
    }

    // names must be unique
    let mut index: HashMap<String, usize> = HashMap::with_capacity(models.len());
    let mut unique = Vec::with_capacity(models.len());
    for m in models {
        if let Some(&first) = index.get(&m.name) {
            let first: &Model = &unique[first];
            diags.push(Diagnostic::at(
                Problem::DuplicateModel {
                    name: m.name.clone(),
                    first: first.name_location.to_string(),
                },
                m.name_location.clone(),
            ));
            continue;
        }
        index.insert(m.name.clone(), unique.len());
        unique.push(m);
    }
    let models = unique;

    // what this build of efmesh cannot do is refused here, never halfway through an apply
    diags.extend(crate::support::check(&sources.config, &models));

    // named audits
    let mut audits: BTreeMap<String, AuditDef> = BTreeMap::new();
    for src in &sources.audits {
        let (defs, d) = audit::parse_audit_file(&src.path, &src.text, dialect);
        diags.extend(d);
        for def in defs {
            if let Some(first) = audits.get(&def.name) {
                diags.push(Diagnostic::at(
                    Problem::DuplicateAudit {
                        name: def.name.clone(),
                        first: first.location.to_string(),
                    },
                    def.location.clone(),
                ));
            } else {
                audits.insert(def.name.clone(), def);
            }
        }
    }
    let audit_names: Vec<&str> = audits.keys().map(String::as_str).collect();
    for m in &models {
        for call in &m.audits {
            if let Some(d) = audit::check_call(call, &|n| audits.get(n), &audit_names) {
                diags.push(d);
            }
        }
    }

    // seeds
    let mut seed_hashes: Vec<Option<String>> = vec![None; models.len()];
    let mut seed_headers: Vec<Option<Vec<String>>> = vec![None; models.len()];
    let mut seed_columns: Vec<Option<Vec<String>>> = vec![None; models.len()];
    for (i, m) in models.iter().enumerate() {
        if let Kind::Seed { path } = &m.kind {
            let p = seed_path(&m.file, path);
            match read_seed(&p) {
                Ok(bytes) => {
                    seed_hashes[i] = Some(fingerprint::content_hash(&bytes));
                    let format = seed::SeedFormat::of(&p);
                    match seed::columns(format, &bytes) {
                        Ok(file_columns) => {
                            if let Some(declared) = &m.columns {
                                diags.extend(
                                    seed::check_columns(&p, &file_columns, declared)
                                        .into_iter()
                                        .map(|pr| Diagnostic::at(pr, m.name_location.clone())),
                                );
                            }
                            seed_headers[i] =
                                Some(file_columns.iter().map(|c| seed::normalize(c)).collect());
                            seed_columns[i] = Some(file_columns);
                        }
                        Err(message) => diags.push(Diagnostic::at(
                            Problem::SeedMalformed {
                                path: p,
                                format: format.label().into(),
                                message,
                            },
                            m.name_location.clone(),
                        )),
                    }
                }
                Err(message) => diags.push(Diagnostic::at(
                    Problem::SeedUnreadable { path: p, message },
                    m.name_location.clone(),
                )),
            }
        }
    }

    // references -> parents
    let names: Vec<&str> = models.iter().map(|m| m.name.as_str()).collect();
    let mut parents: Vec<Vec<usize>> = vec![vec![]; models.len()];
    for (i, m) in models.iter().enumerate() {
        let mut refs = vec![];
        if let Some(q) = &m.query {
            match &q.form {
                QueryForm::Parsed(ast) => refs = references::table_refs(ast, &m.file),
                QueryForm::Fallback { tokens, .. } => {
                    let (known, unknown) =
                        references::fallback_refs(tokens, &m.file, &|n| index.contains_key(n));
                    refs = known;
                    refs.extend(unknown);
                }
            }
        }
        for (n, loc) in &m.depends_on {
            refs.push(references::TableRef {
                name: n.clone(),
                location: loc.clone(),
            });
        }
        for r in refs {
            match index.get(&r.name) {
                Some(&p) if p == i => {} // self-reference (incremental models reading themselves)
                Some(&p) => {
                    if !parents[i].contains(&p) {
                        parents[i].push(p);
                    }
                }
                None => {
                    let suggestion = crate::suggest::closest(&r.name, names.iter().copied());
                    diags.push(Diagnostic::at(
                        Problem::UnknownReference {
                            name: r.name,
                            suggestion,
                        },
                        r.location,
                    ));
                }
            }
        }
    }

    let dag = match Dag::new(parents) {
        Ok(d) => d,
        Err(mut cycle) => {
            // start the cycle at its smallest name so the message is stable
            cycle.pop();
            let first = (0..cycle.len())
                .min_by_key(|&k| &models[cycle[k]].name)
                .unwrap_or(0);
            cycle.rotate_left(first);
            cycle.push(cycle[0]);
            let path: Vec<String> = cycle.iter().map(|&i| models[i].name.clone()).collect();
            let mut d = Diagnostic::global(Problem::Cycle { path });
            for &i in &cycle[..cycle.len() - 1] {
                d = d.with_note(format!(
                    "`{}` is defined in {}",
                    models[i].name, models[i].name_location
                ));
            }
            diags.push(d);
            diagnostic::sort(&mut diags);
            return Loaded {
                project: None,
                diagnostics: diags,
            };
        }
    };

    // columns, in topological order so parents are known before children
    let mut cols: Vec<Option<Vec<String>>> = vec![None; models.len()];
    for &i in dag.topological_order() {
        let m = &models[i];
        let declared: Option<Vec<String>> = m
            .columns
            .as_ref()
            .map(|c| c.iter().map(|c| c.name.clone()).collect());
        let mut effective = declared.clone();
        if let Some(q) = &m.query {
            if let Some(ast) = q.ast() {
                let catalog = |n: &str| -> Option<Vec<String>> {
                    let p = *index.get(n)?;
                    if p == i {
                        declared.clone()
                    } else {
                        cols[p].clone()
                    }
                };
                let analysis = columns::analyze(ast, &m.file, &catalog);
                for issue in analysis.issues {
                    let suggestion = crate::suggest::closest(
                        &issue.column,
                        issue.available.iter().map(String::as_str),
                    );
                    diags.push(Diagnostic::at(
                        Problem::UnknownColumn {
                            column: issue.column,
                            source_desc: issue.source_desc,
                            available: issue.available,
                            suggestion,
                        },
                        issue.location,
                    ));
                }
                match (&declared, analysis.outputs) {
                    (Some(decl), Ok(out)) => {
                        for c in decl.iter().filter(|c| !out.contains(c)) {
                            diags.push(Diagnostic::at(
                                Problem::MissingOutputColumn {
                                    column: c.clone(),
                                    returned: out.clone(),
                                },
                                m.name_location.clone(),
                            ));
                        }
                        for c in out.iter().filter(|c| !decl.contains(c)) {
                            diags.push(Diagnostic::at(
                                Problem::ExtraOutputColumn {
                                    column: c.clone(),
                                    declared: decl.clone(),
                                },
                                m.name_location.clone(),
                            ));
                        }
                    }
                    (Some(_), Err(_)) => {}
                    (None, Ok(out)) => {
                        if !matches!(m.kind, Kind::Embedded) {
                            diags.push(Diagnostic::at(
                                Problem::ColumnsUnchecked {
                                    inferred: out.clone(),
                                },
                                m.name_location.clone(),
                            ));
                        }
                        effective = Some(out);
                    }
                    (None, Err(reason)) => diags.push(Diagnostic::at(
                        Problem::ColumnsNotInferable { reason },
                        m.name_location.clone(),
                    )),
                }
            }
        } else if let Kind::Seed { .. } = m.kind {
            if effective.is_none() {
                effective = seed_headers[i].clone();
            }
        }
        // SCD type 2 models gain their validity columns
        if let (
            Some(e),
            Kind::ScdType2 {
                valid_from_name: f,
                valid_to_name: t,
                ..
            }
            | Kind::ScdType2ByColumn {
                valid_from_name: f,
                valid_to_name: t,
                ..
            },
        ) = (&mut effective, &m.kind)
        {
            for c in [f, t] {
                if !e.contains(c) {
                    e.push(c.clone());
                }
            }
        }
        if let Some(e) = &effective {
            check_key_columns(m, e, &mut diags);
        }
        cols[i] = effective;
    }

    // fingerprints, parents first
    let mut fps: Vec<String> = vec![String::new(); models.len()];
    for &i in dag.topological_order() {
        let parent_fps: Vec<(&str, &str)> = dag
            .parents(i)
            .iter()
            .map(|&p| (models[p].name.as_str(), fps[p].as_str()))
            .collect();
        let fp = fingerprint::fingerprint(&models[i], seed_hashes[i].as_deref(), &parent_fps);
        fps[i] = fp;
    }

    diagnostic::sort(&mut diags);
    let has_errors = failed_files || diags.iter().any(|d| d.is_error());
    let project = if has_errors {
        None
    } else {
        Some(Project {
            config: sources.config.clone(),
            models,
            dag,
            fingerprints: fps,
            columns: cols,
            seed_hashes,
            seed_columns,
            audits,
            index,
        })
    };
    Loaded {
        project,
        diagnostics: diags,
    }
}

fn check_key_columns(m: &Model, out: &[String], diags: &mut Vec<Diagnostic>) {
    let mut keys: Vec<(&str, &String)> = m.grain.iter().map(|g| ("grain", g)).collect();
    match &m.kind {
        Kind::IncrementalByTimeRange { time_column, .. } => keys.push(("time_column", time_column)),
        Kind::IncrementalByUniqueKey { unique_key, .. } | Kind::ScdType2 { unique_key, .. } => {
            keys.extend(unique_key.iter().map(|k| ("unique_key", k)))
        }
        Kind::ScdType2ByColumn {
            unique_key,
            columns,
            ..
        } => {
            keys.extend(unique_key.iter().map(|k| ("unique_key", k)));
            keys.extend(columns.iter().filter(|c| *c != "*").map(|k| ("columns", k)));
        }
        _ => {}
    }
    for (property, column) in keys {
        if !out.contains(column) {
            diags.push(Diagnostic::at(
                Problem::KeyColumnMissing {
                    property: property.into(),
                    column: column.clone(),
                    available: out.to_vec(),
                },
                m.name_location.clone(),
            ));
        }
    }
}

/// A location for diagnostics that concern a model as a whole.
pub fn model_location(m: &Model) -> Location {
    m.name_location.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_paths_resolve_relative_to_the_model_file() {
        assert_eq!(
            seed_path("models/raw/x.sql", "../../seeds/a.csv"),
            "seeds/a.csv"
        );
        assert_eq!(
            seed_path("models/x.sql", "seeds/a.csv"),
            "models/seeds/a.csv"
        );
        assert_eq!(seed_path("x.sql", "./a.csv"), "a.csv");
    }
}
