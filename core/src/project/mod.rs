//! A whole project: every model loaded, every reference and column checked, fingerprints and
//! the DAG computed.
//!
//! The caller supplies the files as text and a way to read seed files; this module decides
//! everything else. A project either checks clean (warnings allowed) or comes back as the
//! complete list of problems, so a user fixes all of them in one round.
//!
//! - [`load`](load()) / [`load_parsed`]: the loader, as named phases (`load.rs`).
//! - [`Project::redacted`]: the project as a redacted environment builds it (`redact.rs`).

mod load;
pub mod macros;
mod redact;

pub use load::load_parsed;

use crate::audit::AuditDef;
use crate::config::Config;
use crate::dag::Dag;
use crate::diagnostic::Diagnostic;
use crate::fingerprint;
use crate::location::Location;
use crate::model::{self, Kind, Model};
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
    /// The files declaring external models: `external_models.yaml` (or SQLMesh's older name
    /// for it, `schema.yaml`) and every `external_models/**/*.yaml`, as SQLMesh reads them.
    pub external_models: Vec<SourceText>,
    /// The project's macro files (`macros/**/*.sql`): `@DEF` statements every model can call.
    pub macros: Vec<SourceText>,
    /// What reading the configuration found besides the config itself: the SQLMesh keys efmesh
    /// reads past, and the Python files it cannot run.
    pub config_diagnostics: Vec<Diagnostic>,
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
    /// Whether each model reads its own earlier rows (an incremental model naming itself):
    /// its table is created from its declared columns before the first batch, and its batches
    /// run one after another, each reading what the one before wrote.
    pub reads_itself: Vec<bool>,
    /// Named audits from AUDIT files, by name.
    pub audits: BTreeMap<String, AuditDef>,
    /// In a SQLMesh project, each output column (name, type) of a model that declares none, as
    /// SQLMesh infers it and casts its table to (`None`: not every type is known, or the model
    /// declares its columns, or the project is efmesh's own). Same index as `models`.
    pub inferred_types: Vec<Option<Vec<(String, String)>>>,
    pub(crate) index: HashMap<String, usize>,
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

    /// The effective passport of every model (same index as `models`). `coverage` gives a
    /// time-range model's own contiguous coverage (`None` inside: nothing computed) for the
    /// version in question; it is asked only for time-range models.
    pub fn passports(
        &self,
        coverage: &dyn Fn(usize) -> Option<chrono::NaiveDateTime>,
    ) -> Vec<crate::passport::Effective> {
        let nodes: Vec<crate::passport::Node> = self
            .models
            .iter()
            .enumerate()
            .map(|(i, m)| crate::passport::Node {
                name: &m.name,
                answerable: m.answerable,
                caveats: &m.caveats,
                coverage: matches!(m.kind, Kind::IncrementalByTimeRange { .. })
                    .then(|| coverage(i)),
                parents: self.dag.parents(i).to_vec(),
            })
            .collect();
        crate::passport::effective(&nodes, self.dag.topological_order())
    }

    /// The project as fingerprint algorithm `version` fingerprinted it, or `None` when this
    /// efmesh cannot reproduce that version: how a plan recognises versions built before an
    /// upgrade.
    pub fn legacy(&self, version: u32) -> Option<fingerprint::legacy::Legacy> {
        if !fingerprint::legacy::reproducible(version) {
            return None;
        }
        let n = self.models.len();
        let (mut fps, mut defs) = (vec![String::new(); n], vec![String::new(); n]);
        for &i in self.dag.topological_order() {
            let parents: Vec<(&str, &str)> = self
                .dag
                .parents(i)
                .iter()
                .map(|&p| (self.models[p].name.as_str(), fps[p].as_str()))
                .collect();
            let (m, seed) = (&self.models[i], self.seed_hashes[i].as_deref());
            fps[i] = fingerprint::legacy::fingerprint(version, m, seed, &parents);
            defs[i] = fingerprint::legacy::definition_hash(version, m, seed);
        }
        Some(fingerprint::legacy::Legacy {
            fingerprints: fps,
            definition_hashes: defs,
        })
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
    // SQLMesh's `$root/...` is relative to the project, not to the model file
    let seed = match seed.split_once('/') {
        Some((marker, rest)) if marker.eq_ignore_ascii_case("$root") => {
            parts.clear();
            rest
        }
        _ => seed,
    };
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
    let (env, problems) = macros::parse_env(sources);
    let mut parsed: Vec<ParsedFile> = sources
        .models
        .iter()
        .map(|src| model::parse_model_file(&src.path, &src.text, dialect, &env))
        .collect();
    if !problems.is_empty() {
        parsed.push((None, problems));
    }
    parsed
}

/// Load and check a project. `read_seed` reads a project-relative file.
pub fn load(
    sources: &ProjectSources,
    read_seed: &mut dyn FnMut(&str) -> Result<Vec<u8>, String>,
) -> Loaded {
    load_parsed(sources, parse_models(sources), read_seed)
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
        assert_eq!(
            seed_path("models/raw/x.sql", "$root/seeds/a.csv"),
            "seeds/a.csv"
        );
        assert_eq!(seed_path("models/x.sql", "$ROOT/a.csv"), "a.csv");
    }
}
