//! The one HTML page format efmesh writes for people: `efmesh graph --html` (the project's DAG,
//! self-contained, no network) and the lake's `index.html` (the same page, plus the lake's
//! parquet models and a SQL box that runs in the reader's browser with duckdb-wasm).
//!
//! The page is a fixed template (`page.html`: markup, CSS and a small script that draws and
//! explains) plus one JSON document built here. Everything the page shows is computed in Rust
//! before the page is written: layers, canonical SQL, passports, the statements that make a
//! model's files queryable. The script only lays out and displays, so the browser never redoes
//! what the core decided.

use crate::project::Project;
use serde::Serialize;
use std::collections::BTreeMap;

const TEMPLATE: &str = include_str!("page.html");

/// Everything one page shows.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Page {
    /// The page's title (the project's name).
    pub title: String,
    /// When the page was written (RFC 3339).
    pub generated_at: String,
    /// The environment whose passports and coverage the page shows, if any.
    pub env: Option<String>,
    /// Every model, in topological order.
    pub models: Vec<PageModel>,
    /// Where the page loads duckdb-wasm from, for pages that run SQL (the lake's index).
    pub query: Option<QueryEngine>,
}

/// One model as the page shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PageModel {
    /// The model.
    pub name: String,
    /// Its kind.
    pub kind: String,
    /// Its fingerprint.
    pub fingerprint: String,
    /// Its direct dependencies.
    pub deps: Vec<String>,
    /// Its column in the drawing: one more than its deepest dependency.
    pub layer: usize,
    /// Its description.
    pub description: Option<String>,
    /// Its query in canonical form, laid out for reading.
    pub sql: Option<String>,
    /// Its columns (names, with types where declared).
    pub columns: Vec<PageColumn>,
    /// Its audits as called (`not_null(columns := (id))`).
    pub audits: Vec<String>,
    /// Its passport in the page's environment (`efmesh passport --json`'s model entry).
    pub passport: Option<serde_json::Value>,
    /// Its parquet files, when the page runs SQL and the model is in the lake.
    pub table: Option<LakeTable>,
}

/// A column of a model.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PageColumn {
    /// Its name.
    pub name: String,
    /// Its declared type, if declared.
    pub sql_type: Option<String>,
}

/// What makes a lake model queryable in the reader's duckdb-wasm.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LakeTable {
    /// The view the statements create (`"med"."moves"`).
    pub relation: String,
    /// Each data file: the name it is registered under, and its URL relative to the page.
    pub files: Vec<LakeFile>,
    /// The statements that create the view over the registered files.
    pub statements: Vec<String>,
    /// Rows, from the manifest.
    pub rows: u64,
}

/// One registered data file.
#[derive(Debug, Clone, Serialize)]
pub struct LakeFile {
    /// The name duckdb-wasm knows it by.
    pub alias: String,
    /// Its URL, relative to the page.
    pub url: String,
}

/// Where the page loads duckdb-wasm from (`[lake.index]`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryEngine {
    /// The ES module.
    pub module: String,
    /// The folder of the `.wasm` files and workers.
    pub dist: String,
    /// Import-map entries for the module's imports.
    pub imports: BTreeMap<String, String>,
}

/// The page's models: the DAG with layers, canonical SQL, columns and audits; no passports
/// or lake tables yet (the caller adds what it read from the state and the lake).
pub fn page_models(project: &Project) -> Vec<PageModel> {
    let mut layer = vec![0usize; project.models.len()];
    let mut out = vec![];
    for &i in project.dag.topological_order() {
        layer[i] = project
            .dag
            .parents(i)
            .iter()
            .map(|&p| layer[p] + 1)
            .max()
            .unwrap_or(0);
        let m = &project.models[i];
        let declared: BTreeMap<&str, &str> = m
            .columns
            .iter()
            .flatten()
            .map(|c| (c.name.as_str(), c.sql_type.as_str()))
            .collect();
        let names: Vec<String> = project.columns[i]
            .clone()
            .or_else(|| project.seed_columns[i].clone())
            .unwrap_or_default();
        out.push(PageModel {
            name: m.name.clone(),
            kind: m.kind.name().to_string(),
            fingerprint: project.fingerprints[i].clone(),
            deps: project
                .parent_names(i)
                .into_iter()
                .map(str::to_string)
                .collect(),
            layer: layer[i],
            description: m.description.clone(),
            sql: m
                .query
                .as_ref()
                .map(|q| crate::sql::pretty(&q.canonical, project.config.dialect())),
            columns: names
                .iter()
                .map(|n| PageColumn {
                    sql_type: declared.get(n.as_str()).map(|t| t.to_string()),
                    name: n.clone(),
                })
                .collect(),
            audits: m
                .audits
                .iter()
                .map(|a| {
                    if a.args.is_empty() {
                        a.name.clone()
                    } else {
                        let args: Vec<String> =
                            a.args.iter().map(|(k, v)| format!("{k} := {v}")).collect();
                        format!("{}({})", a.name, args.join(", "))
                    }
                })
                .collect(),
            passport: None,
            table: None,
        });
    }
    out
}

/// JSON that is safe inside a `<script>` element: no `</script>`, `<!--` or line separators
/// can end or bend it, whatever a model's SQL or description holds.
fn script_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value)
        .unwrap_or_else(|_| "null".into())
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

fn html_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The page as one HTML document.
pub fn render(page: &Page) -> String {
    let import_map = match &page.query {
        Some(q) if !q.imports.is_empty() => format!(
            "<script type=\"importmap\">{}</script>",
            script_json(&serde_json::json!({ "imports": q.imports }))
        ),
        _ => String::new(),
    };
    TEMPLATE
        .replace("{{title}}", &html_text(&page.title))
        .replace("{{importmap}}", &import_map)
        .replace("{{data}}", &script_json(page))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_cannot_close_its_script_element() {
        let page = Page {
            title: "<b>x</b>".into(),
            generated_at: "now".into(),
            env: None,
            models: vec![PageModel {
                name: "a.b".into(),
                kind: "FULL".into(),
                fingerprint: "f".into(),
                deps: vec![],
                layer: 0,
                description: Some("</script><script>alert(1)</script>".into()),
                sql: None,
                columns: vec![],
                audits: vec![],
                passport: None,
                table: None,
            }],
            query: None,
        };
        let html = render(&page);
        assert!(!html.contains("alert(1)</script>"));
        assert!(html.contains("&lt;b&gt;x&lt;/b&gt;"));
        let start = html.find("id=\"efmesh-data\">").unwrap() + 17;
        let end = start + html[start..].find("</script>").unwrap();
        let back: serde_json::Value = serde_json::from_str(&html[start..end]).unwrap();
        assert_eq!(
            back["models"][0]["description"],
            "</script><script>alert(1)</script>"
        );
    }
}
