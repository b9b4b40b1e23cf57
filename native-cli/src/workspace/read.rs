//! Project reading: `efmesh.toml` and every file it selects, from disk, into core's loader.
//! The only module besides the backends that reads the project's files.

use super::discover;
use super::plan_cache::{Stamp, Stamps};
use crate::{CheckFailure, Error};
use efmesh_core::config::{Config, CONFIG_FILE};
use efmesh_core::external_yaml::{
    DEPRECATED_EXTERNAL_MODELS_FILE, EXTERNAL_MODELS_DIR, EXTERNAL_MODELS_FILE,
};
use efmesh_core::project::{self, Project, ProjectSources, SourceText};
use efmesh_core::Diagnostic;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The outcome of checking a project: every diagnostic plus the texts to render them.
#[derive(Debug)]
pub struct CheckReport {
    /// The project root: the directory holding `efmesh.toml`.
    pub root: PathBuf,
    /// Every problem found, errors first; empty when the project is clean.
    pub diagnostics: Vec<Diagnostic>,
    /// The text of every file read, by project-relative path, to show diagnostics in context.
    pub files: BTreeMap<String, String>,
    /// The project, when it checked without errors.
    pub project: Option<Project>,
}

impl CheckReport {
    /// How many diagnostics are errors; any error means the project cannot be used.
    pub fn errors(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count()
    }
    /// How many diagnostics are only warnings.
    pub fn warnings(&self) -> usize {
        self.diagnostics.len() - self.errors()
    }
}

/// Read the process environment for `${VAR}` interpolation.
fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The config file of the project at `root`: `efmesh.toml`, else SQLMesh's `config.yaml` (or
/// `config.yml`); `efmesh.toml` wins when both are there.
pub(crate) fn config_name(root: &Path) -> &'static str {
    if root.join(CONFIG_FILE).is_file() {
        return CONFIG_FILE;
    }
    discover::sqlmesh_config(root).unwrap_or(CONFIG_FILE)
}

/// Parse a project's config by its file name: `efmesh.toml`, or a SQLMesh `config.yaml` (which
/// also says which of its keys efmesh reads past).
pub(crate) fn parse_config(
    name: &str,
    text: &str,
) -> Result<(Config, Vec<Diagnostic>), Vec<Diagnostic>> {
    if name == CONFIG_FILE {
        Config::parse(name, text, &process_env).map(|c| (c, vec![]))
    } else {
        efmesh_core::sqlmesh_config::parse(name, text, &process_env)
    }
}

/// Load and check the project whose root (or any subdirectory) is `dir`.
///
/// Only a missing project or unreadable files are `Err`; problems in the project itself are
/// reported as diagnostics in the [`CheckReport`].
pub fn check(dir: &Path) -> Result<CheckReport, Error> {
    let root = discover::find_root(dir)?;
    Ok(match read_sources(&root)? {
        Ok((config_text, sources, stamps)) => load_sources(root, config_text, sources, stamps),
        Err((diagnostics, files)) => CheckReport {
            root,
            diagnostics,
            files,
            project: None,
        },
    })
}

/// Load and check a project from texts already read (see [`read_sources`]).
pub(crate) fn load_sources(
    root: PathBuf,
    config_text: String,
    sources: ProjectSources,
    mut stamps: Stamps,
) -> CheckReport {
    let mut files = BTreeMap::from([(config_name(&root).to_string(), config_text.clone())]);
    let mut read_seed = |rel: &str| {
        let (bytes, meta) = crate::util::bounded_read::read_bounded_stat(
            &root.join(rel),
            crate::util::bounded_read::SEED_LIMIT,
        )?;
        if let Some(stamp) = Stamp::of(&meta) {
            stamps.insert(rel.to_string(), stamp);
        }
        Ok(bytes)
    };
    let parsed = parse_parallel(&sources);
    let loaded = project::load_parsed(&sources, parsed, &mut read_seed);
    // keep the texts of the files diagnostics point into, for rendering them
    let mentioned: std::collections::HashSet<&str> = loaded
        .diagnostics
        .iter()
        .filter_map(|d| d.location.as_ref())
        .map(|l| l.file.as_str())
        .collect();
    let all = sources
        .models
        .iter()
        .chain(&sources.audits)
        .chain(&sources.macros)
        .chain(&sources.external_models);
    for src in all.filter(|s| mentioned.contains(s.path.as_str())) {
        files.insert(src.path.clone(), src.text.clone());
    }
    if let Some(p) = &loaded.project {
        super::plan_cache::remember(&root, &config_text, &sources, p, &stamps);
    }
    CheckReport {
        root,
        diagnostics: loaded.diagnostics,
        files,
        project: loaded.project,
    }
}

/// The root of the project at (or above) `dir` and its parsed `efmesh.toml`, without loading a
/// model: for commands that need only the config (`migrate`, `schedule`) or must reach the state
/// store even when the models do not check (`run`).
pub(crate) fn read_config(dir: &Path) -> Result<(PathBuf, Config), Error> {
    let root = discover::find_root(dir)?;
    let name = config_name(&root);
    let text = crate::util::bounded_read::read_text(&root.join(name))
        .map_err(|e| Error::io(&root.join(name), e))?;
    let files = BTreeMap::from([(name.to_string(), text.clone())]);
    let (config, _) = parse_config(name, &text)
        .map_err(|diagnostics| Error::Invalid(Box::new(CheckFailure { diagnostics, files })))?;
    Ok((root, config))
}

/// Parse model files on every core: files are independent, and on thousands of models parsing
/// dominates the time of every command.
fn parse_parallel(sources: &ProjectSources) -> Vec<project::ParsedFile> {
    if cores() < 2 || sources.models.len() < 64 {
        return project::parse_models(sources);
    }
    let dialect = sources.config.dialect();
    let (env, problems) = project::macros::parse_env(sources);
    let mut parsed = on_every_core(&sources.models, |f| {
        efmesh_core::model::parse_model_file(&f.path, &f.text, dialect, &env)
    });
    if !problems.is_empty() {
        parsed.push((None, problems));
    }
    parsed
}

/// The cores worth a thread when reading or parsing a project.
fn cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8)
}

/// `f` over `items`, one chunk per core, results in the order of `items`.
fn on_every_core<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let chunk = items.len().div_ceil(cores()).max(1);
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().map(f).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a project reader thread panicked"))
            .collect()
    })
}

/// A config that failed to parse: its diagnostics and the text to render them.
pub(crate) type ConfigFailure = (Vec<Diagnostic>, BTreeMap<String, String>);

/// A project's config, parsed, and the files it selects by role, before any is read: what a
/// plan needs to ask the project cache whether anything changed, by a stat of each file.
pub(crate) struct Selected {
    config_text: String,
    config: Config,
    config_diagnostics: Vec<Diagnostic>,
    models: Vec<String>,
    audits: Vec<String>,
    macros: Vec<String>,
    /// A SQLMesh project's Python models and macros, read only to be named.
    python: Vec<String>,
    external: Vec<String>,
}

impl Selected {
    /// The config's text.
    pub(crate) fn config_text(&self) -> &str {
        &self.config_text
    }

    /// The parsed config.
    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// Every selected file, project-relative.
    pub(crate) fn paths(&self) -> impl Iterator<Item = &str> {
        self.models
            .iter()
            .chain(&self.audits)
            .chain(&self.macros)
            .chain(&self.python)
            .chain(&self.external)
            .map(String::as_str)
    }
}

/// Read `efmesh.toml` and every project file it selects, with the stat of each.
pub(crate) fn read_sources(root: &Path) -> Result<Result<Sources, ConfigFailure>, Error> {
    read_if_selected(root, select_sources(root)?)
}

/// A project's texts as read: the config's text, every selected file, and their stamps.
pub(crate) type Sources = (String, ProjectSources, Stamps);

/// The files `selected` names, read; a config that failed stays the failure.
fn read_if_selected(
    root: &Path,
    selected: Result<Selected, ConfigFailure>,
) -> Result<Result<Sources, ConfigFailure>, Error> {
    match selected {
        Ok(selected) => read_selected(root, selected).map(Ok),
        Err(failure) => Ok(Err(failure)),
    }
}

/// Read `efmesh.toml` and list the files it selects, reading none of them.
pub(crate) fn select_sources(root: &Path) -> Result<Result<Selected, ConfigFailure>, Error> {
    let p = root.join(config_name(root));
    let config_text = crate::util::bounded_read::read_text(&p).map_err(|e| Error::io(&p, e))?;
    select(root, config_text, true)
}

/// The project `config_text` describes at `root`: its model, audit and `external_models.yaml`
/// files read when `files` (a project defined in code may have none).
pub(crate) fn sources_for(
    root: &Path,
    config_text: String,
    files: bool,
) -> Result<Result<Sources, ConfigFailure>, Error> {
    read_if_selected(root, select(root, config_text, files)?)
}

fn select(
    root: &Path,
    config_text: String,
    files: bool,
) -> Result<Result<Selected, ConfigFailure>, Error> {
    let name = if files {
        config_name(root)
    } else {
        CONFIG_FILE
    };
    let (config, config_diagnostics) = match parse_config(name, &config_text) {
        Ok(c) => c,
        Err(diagnostics) => {
            return Ok(Err((
                diagnostics,
                BTreeMap::from([(name.to_string(), config_text)]),
            )))
        }
    };
    let mut selected = Selected {
        config_text,
        config,
        config_diagnostics,
        models: vec![],
        audits: vec![],
        macros: vec![],
        python: vec![],
        external: vec![],
    };
    if !files {
        return Ok(Ok(selected));
    }
    let tree = discover::ProjectFiles::walk(root)?;
    let config = &selected.config;
    selected.models = tree.matching(&config.model_globs)?;
    selected.audits = tree.matching(&config.audit_globs)?;
    selected.macros = tree.matching(&[project::macros::MACRO_GLOB.to_string()])?;
    let sqlmesh = name != CONFIG_FILE;
    if sqlmesh {
        // a SQLMesh project's Python models and macros are named, never skipped quietly
        let python = ["models/**/*.py".to_string(), "macros/**/*.py".to_string()];
        selected.python = tree.matching(&python)?;
    }
    // SQLMesh reads `schema.yaml` only without `external_models.yaml`, and then the directory
    let file = [EXTERNAL_MODELS_FILE, DEPRECATED_EXTERNAL_MODELS_FILE]
        .into_iter()
        .take(if sqlmesh { 2 } else { 1 })
        .find(|f| root.join(f).is_file());
    selected.external.extend(file.map(str::to_string));
    if sqlmesh {
        let glob = [format!("{EXTERNAL_MODELS_DIR}/**/*.yaml")];
        selected.external.extend(tree.matching(&glob)?);
    }
    Ok(Ok(selected))
}

/// The texts of the selected files, and the stat of each taken before its read.
pub(crate) fn read_selected(root: &Path, selected: Selected) -> Result<Sources, Error> {
    let mut stamps = Stamps::start();
    let mut sources = ProjectSources {
        config: selected.config,
        models: read_all(root, selected.models, &mut stamps)?,
        audits: read_all(root, selected.audits, &mut stamps)?,
        macros: read_all(root, selected.macros, &mut stamps)?,
        external_models: vec![],
        config_diagnostics: selected.config_diagnostics,
    };
    for file in read_all(root, selected.python, &mut stamps)? {
        // an empty `__init__.py` (SQLMesh's init template has one) defines nothing
        let defines_nothing = file
            .text
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'));
        if defines_nothing {
            continue;
        }
        let role = if file.path.starts_with("models/") {
            "model"
        } else {
            "macro"
        };
        sources.config_diagnostics.push(Diagnostic::at(
            efmesh_core::diagnostic::Problem::PythonFile { role },
            efmesh_core::location::Location::file_only(&file.path),
        ));
    }
    sources.external_models = read_all(root, selected.external, &mut stamps)?;
    Ok((selected.config_text, sources, stamps))
}

/// The texts of `paths` (project-relative), in their order, read on every core: a no-op plan
/// reads every model file, and on thousands of files the reads are most of its own work. The
/// first failing file in `paths` order is the error, as a sequential read would report. Each
/// file's stat before its read goes to `stamps`.
fn read_all(
    root: &Path,
    paths: Vec<String>,
    stamps: &mut Stamps,
) -> Result<Vec<SourceText>, Error> {
    let read = |path: String| -> Result<(SourceText, Option<Stamp>), Error> {
        let p = root.join(&path);
        let (text, meta) =
            crate::util::bounded_read::read_text_stat(&p).map_err(|e| Error::io(&p, e))?;
        Ok((SourceText { path, text }, Stamp::of(&meta)))
    };
    let read: Vec<(SourceText, Option<Stamp>)> = if cores() < 2 || paths.len() < 256 {
        paths.into_iter().map(read).collect::<Result<_, _>>()?
    } else {
        on_every_core(&paths, |p| read(p.clone()))
            .into_iter()
            .collect::<Result<_, _>>()?
    };
    Ok(read
        .into_iter()
        .map(|(file, stamp)| {
            if let Some(stamp) = stamp {
                stamps.insert(file.path.clone(), stamp);
            }
            file
        })
        .collect())
}

/// A project file other than models and audits (unit-test YAML), as text.
pub(crate) fn read_text(path: &Path) -> std::io::Result<String> {
    crate::util::bounded_read::read_text(path)
}

/// The text of `root`'s `efmesh.toml`, or `None` when it has none.
pub(crate) fn config_text(root: &Path) -> Result<Option<String>, Error> {
    let p = root.join(CONFIG_FILE);
    match crate::util::bounded_read::read_text(&p) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(&p, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_files_are_read_in_order_and_the_first_bad_one_is_the_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("models/x")).unwrap();
        let paths: Vec<String> = (0..600).map(|i| format!("models/x/m{i:04}.sql")).collect();
        for (i, p) in paths.iter().enumerate() {
            std::fs::write(dir.path().join(p), format!("SELECT {i}")).unwrap();
        }
        std::fs::write(dir.path().join("models/skipped.txt"), "not a model").unwrap();
        let tree = discover::ProjectFiles::walk(dir.path()).unwrap();
        let selected = tree.matching(&["models/**/*.sql".to_string()]).unwrap();
        assert_eq!(selected, paths, "sorted, and only what the glob selects");
        let mut stamps = Stamps::start();
        let read = read_all(dir.path(), selected.clone(), &mut stamps).unwrap();
        assert_eq!(stamps.len(), 600, "every file read is stamped");
        assert_eq!(read.len(), 600);
        for (i, f) in read.iter().enumerate() {
            assert_eq!(
                (f.path.as_str(), f.text.as_str()),
                (paths[i].as_str(), format!("SELECT {i}").as_str())
            );
        }
        // two unreadable files in different reader threads: the error names the earlier one
        std::fs::write(dir.path().join(&paths[450]), [0xff, 0xfe]).unwrap();
        std::fs::write(dir.path().join(&paths[10]), [0xff, 0xfe]).unwrap();
        let e = read_all(dir.path(), selected, &mut stamps)
            .unwrap_err()
            .to_string();
        assert!(e.contains("m0010.sql"), "{e}");
    }
}
