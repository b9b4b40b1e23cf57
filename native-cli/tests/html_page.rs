//! `efmesh graph --html` and the lake's `index.html`: what is written where and when, and the
//! refusals. What the pages do in a browser is tested in headless Chromium
//! (js/test/html-page.test.mjs).

mod common;
use common::*;
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;

/// The JSON a page carries.
fn page_data(html: &str) -> Value {
    let start = html
        .find(r#"<script type="application/json" id="efmesh-data">"#)
        .expect("the page carries its data")
        + r#"<script type="application/json" id="efmesh-data">"#.len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

fn graph_html(dir: &Path, args: &[&str]) -> String {
    let mut all = vec!["graph", "--html"];
    all.extend_from_slice(args);
    let out = efmesh(dir).args(&all).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

#[test]
fn graph_html_is_one_page_that_fetches_nothing() {
    let p = copy_example("hospital");
    let html = graph_html(p.path(), &[]);
    // no src=, href= or url() outside the page: everything it needs is inline
    for needle in ["src=", "href=", "url(", "@import", "http://", "https://"] {
        let hits: Vec<_> = html.match_indices(needle).collect();
        let external = hits
            .iter()
            // the SVG namespace is a name, not a fetch
            .filter(|(i, _)| !html[*i..].starts_with("http://www.w3.org/2000/svg"))
            .count();
        assert_eq!(external, 0, "`{needle}` in the page");
    }
    let data = page_data(&html);
    assert_eq!(data["env"], Value::Null);
    assert_eq!(data["query"], Value::Null);
    let models = data["models"].as_array().unwrap();
    assert_eq!(models.len(), 11);
    let layer = |n: &str| {
        models.iter().find(|m| m["name"] == n).unwrap()["layer"]
            .as_u64()
            .unwrap()
    };
    // raw.movements → med.moves → med.moves_enriched → mart.stays → mart.daily_admissions
    assert_eq!(
        [
            "raw.movements",
            "med.moves",
            "med.moves_enriched",
            "mart.stays",
            "mart.daily_admissions"
        ]
        .map(layer),
        [0, 1, 2, 3, 4]
    );
    assert!(models.iter().all(|m| m["passport"].is_null()));
}

#[test]
fn graph_html_env_needs_an_applied_environment_and_html() {
    let p = copy_example("hospital");
    efmesh(p.path())
        .args(["graph", "--html", "--env", "prod"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "environment `prod` does not exist",
        ));
    efmesh(p.path())
        .args(["graph", "--env", "prod"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--html"));
    efmesh(p.path())
        .args(["apply", "prod", "--yes"])
        .assert()
        .success();
    let data = page_data(&graph_html(p.path(), &["--env", "prod"]));
    assert_eq!(data["env"], "prod");
    let stays = data["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "mart.stays")
        .unwrap();
    assert_eq!(stays["passport"]["effective"]["answerable"], "sampled");
}

#[test]
fn apply_to_prod_writes_the_lake_page_and_dev_does_not() {
    let p = copy_example("hospital");
    let index = p.path().join("lake/index.html");
    efmesh(p.path())
        .args(["apply", "dev", "--yes"])
        .assert()
        .success();
    assert!(!index.exists(), "dev does not speak for the lake");
    efmesh(p.path())
        .args(["apply", "prod", "--yes"])
        .assert()
        .success();
    let data = page_data(&std::fs::read_to_string(&index).unwrap());
    assert_eq!(data["env"], "prod");
    let tables: Vec<&str> = data["models"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| !m["table"].is_null())
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tables,
        ["ref.departments", "med.moves", "mart.daily_admissions"]
    );
    // each table's files are the manifest's, relative to the lake root
    let moves = data["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "med.moves")
        .unwrap();
    for f in moves["table"]["files"].as_array().unwrap() {
        let url = f["url"].as_str().unwrap();
        assert!(url.starts_with("med/moves/fp="), "{url}");
        assert!(p.path().join("lake").join(url).exists(), "{url} exists");
    }
    assert_eq!(
        data["query"]["module"],
        "https://cdn.jsdelivr.net/npm/@duckdb/duckdb-wasm@1.28.0/+esm"
    );
    // no temporary file is left next to it
    let leftovers: Vec<_> = std::fs::read_dir(p.path().join("lake"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with('.') || n.contains("tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn the_lake_page_can_be_turned_off_and_its_keys_are_checked() {
    let p = copy_example("hospital");
    let toml = p.path().join("efmesh.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, format!("{text}\n[lake.index]\nenabled = false\n")).unwrap();
    efmesh(p.path())
        .args(["apply", "prod", "--yes"])
        .assert()
        .success();
    assert!(!p.path().join("lake/index.html").exists());

    std::fs::write(&toml, format!("{text}\n[lake.index]\nenable = false\n")).unwrap();
    efmesh(p.path())
        .args(["check"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("efmesh.toml"))
        .stderr(predicate::str::contains("enable"));
}
