//! Synthetic project generator.
//!
//! The benchmarks need a project of a chosen size that *both* efmesh and
//! SQLMesh load unchanged, so that the two tools are timed on identical
//! input. The shape is deliberately simple and deterministic:
//!
//! * one root model `src.events` (FULL, explicit `columns` block, 1000 rows
//!   from DuckDB's `range`), and
//! * `N` FULL models `bench.m_00000 ..` arranged in chains of
//!   [`CHAIN_LEN`]: every model whose index is a multiple of [`CHAIN_LEN`]
//!   reads from the root, every other model reads from its predecessor.
//!
//! That gives a DAG whose width grows with `N` while its depth stays at
//! `CHAIN_LEN + 1`, which exercises both "many models" and "real lineage"
//! without making a single plan step pathologically deep.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// Length of each model chain hanging off the root; fixed so that results for
/// different `N` stay comparable.
pub const CHAIN_LEN: usize = 5;

/// Fully qualified name of the single root model every chain starts from.
pub const ROOT_MODEL: &str = "src.events";

/// Largest `N` whose model names still fit the fixed five-digit `m_{i:05}`
/// pattern; beyond it names stop sorting (and matching) consistently.
pub const MAX_MODELS: usize = 100_000;

/// The efmesh project config, written verbatim to `efmesh.toml`.
pub const EFMESH_TOML: &str = r#"[project]
name = "bench"
start = "2026-01-01"

[engine]
duckdb = "efmesh.duckdb"

[state]
sqlite = "efmesh.state.sqlite"
"#;

/// DuckDB file SQLMesh writes to, relative to the project. Separate from
/// efmesh's `efmesh.duckdb` so both tools can run on the same project
/// directory without seeing each other's tables.
///
/// It must NOT be `sqlmesh.duckdb`: DuckDB names the attached catalog after
/// the file stem, and a catalog called `sqlmesh` collides with SQLMesh's state
/// schema `sqlmesh` ("Ambiguous reference to catalog or schema \"sqlmesh\"")
/// on the very first `sqlmesh plan`.
pub const SQLMESH_DATABASE: &str = "sqlmesh_bench.duckdb";

/// The SQLMesh project config for `config.yaml`: a local DuckDB gateway on
/// [`SQLMESH_DATABASE`] and the same dialect and start date as efmesh.
pub fn sqlmesh_config_yaml() -> String {
    format!(
        "gateways:
  local:
    connection:
      type: duckdb
      database: {SQLMESH_DATABASE}

default_gateway: local

model_defaults:
  dialect: duckdb
  start: '2026-01-01'
"
    )
}

/// Definition of the root model. It declares its columns explicitly so that
/// neither tool needs to query the engine to learn the root's schema.
pub const ROOT_MODEL_SQL: &str = "MODEL (
  name src.events,
  kind FULL,
  columns (
    id BIGINT,
    v DOUBLE
  )
);

SELECT
  range AS id,
  CAST(range AS DOUBLE) AS v
FROM range(1000)
";

/// Name of generated model `i`; centralised so tests, file paths and parent
/// references can never disagree on the zero-padding.
pub fn model_name(i: usize) -> String {
    format!("bench.m_{i:05}")
}

/// Project-relative path of the SQL file for generated model `i`.
pub fn model_path(i: usize) -> PathBuf {
    PathBuf::from(format!("models/bench/m_{i:05}.sql"))
}

/// Project-relative path of the root model's SQL file.
pub fn root_model_path() -> PathBuf {
    PathBuf::from("models/src/events.sql")
}

/// The model that generated model `i` selects from: the root at the start of
/// each chain, the previous model otherwise. This is the one place that
/// defines the DAG shape.
pub fn parent_of(i: usize) -> String {
    if i % CHAIN_LEN == 0 {
        ROOT_MODEL.to_string()
    } else {
        model_name(i - 1)
    }
}

/// Full file contents for generated model `i`. No `columns` block: efmesh is
/// expected to infer the schema from the parent, like SQLMesh does.
pub fn model_sql(i: usize) -> String {
    format!(
        "MODEL (\n  name {name},\n  kind FULL\n);\n\nSELECT\n  id,\n  v + {i} AS v\nFROM {parent}\n",
        name = model_name(i),
        parent = parent_of(i),
    )
}

/// Every file of an `n`-model project as `(relative path, contents)`, in a
/// deterministic order. Separated from [`write_project`] so the content can be
/// tested (and reused, e.g. to mutate a model for incremental-plan benchmarks)
/// without touching the filesystem.
pub fn project_files(n: usize) -> Vec<(PathBuf, String)> {
    let mut files = Vec::with_capacity(n + 3);
    files.push((PathBuf::from("efmesh.toml"), EFMESH_TOML.to_string()));
    files.push((PathBuf::from("config.yaml"), sqlmesh_config_yaml()));
    files.push((root_model_path(), ROOT_MODEL_SQL.to_string()));
    files.extend((0..n).map(|i| (model_path(i), model_sql(i))));
    files
}

/// What [`write_project`] did, so callers can report it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenerateSummary {
    /// Number of files written (configs + root + generated models).
    pub files_written: usize,
    /// Stale `models/bench/m_NNNNN.sql` files from an earlier, larger
    /// generation that were removed so the project contains exactly `n`
    /// generated models.
    pub stale_removed: usize,
}

/// Write an `n`-model project into `dir`.
///
/// Refuses a non-empty `dir` unless `force` is set, so a typo cannot scatter
/// models into an unrelated directory. With `force`, generated files are
/// overwritten and leftover generated models beyond `n` are deleted (other
/// files, such as DuckDB/state databases, are left alone). Each file is
/// written to a temporary sibling and renamed into place, so a reader never
/// sees a half-written model.
pub fn write_project(dir: &Path, n: usize, force: bool) -> Result<GenerateSummary> {
    if n > MAX_MODELS {
        bail!("--models {n} is too large: names are m_00000..m_99999, so at most {MAX_MODELS}");
    }
    if dir.exists() {
        if !dir.is_dir() {
            bail!("{} exists and is not a directory", dir.display());
        }
        let non_empty = fs::read_dir(dir)
            .with_context(|| format!("reading {}", dir.display()))?
            .next()
            .is_some();
        if non_empty && !force {
            bail!(
                "{} exists and is not empty; pass --force to overwrite its generated files",
                dir.display()
            );
        }
    }

    let files = project_files(n);
    for (rel, contents) in &files {
        write_atomic(&dir.join(rel), contents)?;
    }
    let stale_removed = remove_stale_models(dir, n)?;
    Ok(GenerateSummary {
        files_written: files.len(),
        stale_removed,
    })
}

/// Write `contents` to `path` via a temp file in the same directory plus a
/// rename, creating parent directories as needed.
fn write_atomic(path: &Path, contents: &str) -> Result<()> {
    let parent = path
        .parent()
        .with_context(|| format!("{} has no parent directory", path.display()))?;
    fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    let mut tmp = tempfile::NamedTempFile::new_in(parent)
        .with_context(|| format!("creating temp file in {}", parent.display()))?;
    tmp.write_all(contents.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    tmp.persist(path)
        .with_context(|| format!("renaming temp file to {}", path.display()))?;
    Ok(())
}

/// Delete `models/bench/m_NNNNN.sql` files with index `>= n`. Only files that
/// match the generator's exact naming pattern are touched.
fn remove_stale_models(dir: &Path, n: usize) -> Result<usize> {
    let bench_dir = dir.join("models/bench");
    let mut removed = 0;
    if !bench_dir.is_dir() {
        return Ok(removed);
    }
    for entry in
        fs::read_dir(&bench_dir).with_context(|| format!("reading {}", bench_dir.display()))?
    {
        let entry = entry?;
        let file_name = entry.file_name();
        let Some(index) = file_name.to_str().and_then(generated_index) else {
            continue;
        };
        if index >= n {
            fs::remove_file(entry.path())
                .with_context(|| format!("removing stale {}", entry.path().display()))?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Parse `m_NNNNN.sql` (exactly five digits) into its index.
fn generated_index(file_name: &str) -> Option<usize> {
    let digits = file_name.strip_prefix("m_")?.strip_suffix(".sql")?;
    if digits.len() == 5 && digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse().ok()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_shape() {
        assert_eq!(parent_of(0), "src.events");
        assert_eq!(parent_of(1), "bench.m_00000");
        assert_eq!(parent_of(4), "bench.m_00003");
        assert_eq!(parent_of(5), "src.events");
        assert_eq!(parent_of(6), "bench.m_00005");
        assert_eq!(parent_of(10), "src.events");
    }

    #[test]
    fn names_and_paths_are_zero_padded() {
        assert_eq!(model_name(1), "bench.m_00001");
        assert_eq!(model_name(12345), "bench.m_12345");
        assert_eq!(model_path(7), PathBuf::from("models/bench/m_00007.sql"));
    }

    #[test]
    fn model_sql_contents() {
        let sql = model_sql(1);
        assert!(sql.contains("name bench.m_00001,"), "{sql}");
        assert!(sql.contains("kind FULL"), "{sql}");
        assert!(
            !sql.contains("columns"),
            "generated models must not declare columns: {sql}"
        );
        assert!(sql.contains("v + 1 AS v"), "{sql}");
        assert!(sql.trim_end().ends_with("FROM bench.m_00000"), "{sql}");

        let sql = model_sql(5);
        assert!(sql.contains("name bench.m_00005,"), "{sql}");
        assert!(sql.contains("v + 5 AS v"), "{sql}");
        assert!(sql.trim_end().ends_with("FROM src.events"), "{sql}");
    }

    #[test]
    fn project_files_list() {
        let files = project_files(7);
        assert_eq!(files.len(), 7 + 3);
        let paths: Vec<_> = files.iter().map(|(p, _)| p.to_str().unwrap()).collect();
        assert_eq!(
            &paths[..3],
            ["efmesh.toml", "config.yaml", "models/src/events.sql"]
        );
        assert_eq!(paths[3], "models/bench/m_00000.sql");
        assert_eq!(paths[9], "models/bench/m_00006.sql");
        assert!(project_files(0).len() == 3);
    }

    #[test]
    fn writes_expected_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("proj");
        let summary = write_project(&dir, 6, false).unwrap();
        assert_eq!(
            summary,
            GenerateSummary {
                files_written: 9,
                stale_removed: 0
            }
        );

        let read = |rel: &str| fs::read_to_string(dir.join(rel)).unwrap();
        assert_eq!(read("efmesh.toml"), EFMESH_TOML);
        assert!(read("efmesh.toml").contains("duckdb = \"efmesh.duckdb\""));
        assert!(read("efmesh.toml").contains("sqlite = \"efmesh.state.sqlite\""));

        let yaml = read("config.yaml");
        assert!(yaml.contains("type: duckdb"));
        assert!(yaml.contains(&format!("database: {SQLMESH_DATABASE}\n")));
        // A database file stem of `sqlmesh` breaks SQLMesh (see SQLMESH_DATABASE).
        assert!(!yaml.contains("sqlmesh.duckdb"));
        assert!(yaml.contains("dialect: duckdb"));
        assert!(yaml.contains("start: '2026-01-01'"));

        let root = read("models/src/events.sql");
        assert!(root.contains("name src.events,"));
        assert!(root.contains("id BIGINT"));
        assert!(root.contains("v DOUBLE"));
        assert!(root.contains("FROM range(1000)"));

        for i in 0..6 {
            assert_eq!(read(&format!("models/bench/m_{i:05}.sql")), model_sql(i));
        }
        assert_eq!(
            read("models/bench/m_00004.sql")
                .trim_end()
                .lines()
                .last()
                .unwrap(),
            "FROM bench.m_00003"
        );
        assert_eq!(
            read("models/bench/m_00005.sql")
                .trim_end()
                .lines()
                .last()
                .unwrap(),
            "FROM src.events"
        );
        assert!(!dir.join("models/bench/m_00006.sql").exists());

        // No temp files left behind by the atomic writes.
        assert_eq!(fs::read_dir(dir.join("models/bench")).unwrap().count(), 6);
    }

    #[test]
    fn refuses_non_empty_dir_without_force() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("keep.txt"), "x").unwrap();
        let err = write_project(tmp.path(), 3, false).unwrap_err();
        assert!(err.to_string().contains("--force"), "{err}");
        assert!(!tmp.path().join("efmesh.toml").exists());

        write_project(tmp.path(), 3, true).unwrap();
        assert!(tmp.path().join("efmesh.toml").exists());
        assert!(tmp.path().join("keep.txt").exists());
    }

    #[test]
    fn empty_existing_dir_is_fine() {
        let tmp = tempfile::tempdir().unwrap();
        write_project(tmp.path(), 2, false).unwrap();
        assert!(tmp.path().join("models/bench/m_00001.sql").exists());
    }

    #[test]
    fn force_regenerate_smaller_removes_stale_models() {
        let tmp = tempfile::tempdir().unwrap();
        write_project(tmp.path(), 8, false).unwrap();
        fs::write(tmp.path().join("models/bench/custom.sql"), "-- mine").unwrap();
        let summary = write_project(tmp.path(), 3, true).unwrap();
        assert_eq!(summary.stale_removed, 5);
        assert!(tmp.path().join("models/bench/m_00002.sql").exists());
        assert!(!tmp.path().join("models/bench/m_00003.sql").exists());
        assert!(tmp.path().join("models/bench/custom.sql").exists());
    }

    #[test]
    fn generated_index_parsing() {
        assert_eq!(generated_index("m_00042.sql"), Some(42));
        assert_eq!(generated_index("m_42.sql"), None);
        assert_eq!(generated_index("m_00042.sql.tmp"), None);
        assert_eq!(generated_index("x_00042.sql"), None);
    }
}
