//! The HTML page ([`efmesh_core::html_page`]): filled in with what only the native side can
//! read (passports from the state store, manifests from the lake) and written.
//!
//! `efmesh graph --html [--env E]` prints it; an apply of `prod` writes it into the lake root
//! as `index.html` (unless `[lake.index] enabled = false`), through the lake store's atomic
//! write, so a reader never fetches half a page.

use crate::lake::store::{join, LakeStore};
use crate::lake::VersionDir;
use crate::state::StateStore;
use crate::Error;
use efmesh_core::config::LakeIndex;
use efmesh_core::html_page::{self, LakeFile, LakeTable, Page, QueryEngine};
use efmesh_core::manifest::MANIFEST_FILE;
use efmesh_core::project::Project;
use efmesh_core::reader::{file_alias, relation_sql, resolve_files};
use std::sync::Arc;

/// The key the lake's page is written under, at the lake's root.
pub const INDEX_FILE: &str = "index.html";

/// The page of `project`, with the passports `env` serves when one is given.
pub fn page(
    project: &Project,
    state: Option<&mut dyn StateStore>,
    env: Option<&str>,
) -> Result<Page, Error> {
    let mut models = html_page::page_models(project);
    if let (Some(state), Some(env)) = (state, env) {
        let report = super::passport::passports(project, state, env)?;
        for p in report.models {
            if let Some(m) = models.iter_mut().find(|m| m.name == p.model) {
                m.passport = Some(serde_json::to_value(&p).map_err(|e| Error::Io {
                    path: "passport".into(),
                    message: e.to_string(),
                })?);
            }
        }
    }
    Ok(Page {
        title: project.config.name.clone(),
        generated_at: crate::util::clock::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        env: env.map(str::to_string),
        models,
        query: None,
    })
}

/// Write the lake's `index.html` for what `env` serves: the page, every parquet model the
/// environment serves as a table the reader's duckdb-wasm can query, and the configured
/// duckdb-wasm URLs.
pub fn write_lake_index(
    project: &Project,
    state: &mut dyn StateStore,
    lake: Arc<dyn LakeStore>,
    env: &str,
    config: &LakeIndex,
) -> Result<(), Error> {
    let pointers = state.environment(env)?;
    let mut page = page(project, Some(state), Some(env))?;
    for m in &mut page.models {
        let Some(pointer) = pointers.get(&m.name) else {
            continue;
        };
        let i = project.index_of(&m.name);
        if !i.is_some_and(|i| crate::lake::publish::is_parquet(project, i)) {
            continue;
        }
        let dir = VersionDir::new(lake.clone(), &m.name, &pointer.physical_fingerprint);
        let Some(manifest) = dir.manifest()? else {
            continue;
        };
        let urls = resolve_files(&join(&dir.key, MANIFEST_FILE), &manifest);
        let aliases: Vec<String> = urls.iter().map(|u| file_alias(u)).collect();
        let relation =
            relation_sql(&m.name, &aliases, &manifest.schema).map_err(|why| Error::Io {
                path: lake.url(&dir.file(MANIFEST_FILE)).into(),
                message: why,
            })?;
        m.table = Some(LakeTable {
            relation: relation.name,
            files: aliases
                .into_iter()
                .zip(urls)
                .map(|(alias, url)| LakeFile { alias, url })
                .collect(),
            statements: relation.statements,
            rows: manifest.files.iter().map(|f| f.rows).sum(),
        });
    }
    page.query = Some(QueryEngine {
        module: config.duckdb_wasm.clone(),
        dist: config.duckdb_wasm_dist.clone(),
        imports: config.imports.clone(),
    });
    lake.write(INDEX_FILE, html_page::render(&page).as_bytes())
}
