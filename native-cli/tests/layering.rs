//! The layers stay as ARCHITECTURE.md draws them: no module imports a module that imports it
//! back (in core or in the native crate), and only the backends themselves name DuckDB, SQLite
//! or the file system.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path (`exec::apply`) → source, for every `.rs` file under `src`.
fn modules(src: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for e in walkdir::WalkDir::new(src).into_iter().flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "rs") {
            continue;
        }
        let rel = p.strip_prefix(src).unwrap().with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if matches!(
            parts.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            parts.pop();
        }
        let text = std::fs::read_to_string(p).unwrap();
        // what tests import does not make a layer
        let text = match text.find("#[cfg(test)]\nmod tests") {
            Some(i) => text[..i].to_string(),
            None => text,
        };
        // comments (doc links included) import nothing
        let text = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        out.insert(parts.join("::"), text);
    }
    out
}

/// `module → modules it names through `crate::`, a submodule's use of its parent excluded.
fn edges(mods: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let resolve = |path: &str| -> Option<String> {
        let segs: Vec<&str> = path.split("::").collect();
        (1..=segs.len())
            .rev()
            .map(|n| segs[..n].join("::"))
            .find(|c| mods.contains_key(c))
    };
    let mut out = BTreeMap::new();
    for (m, text) in mods {
        let mut to = BTreeSet::new();
        let mut rest = text.as_str();
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            let path: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            if let Some(t) = resolve(path.trim_end_matches(':')) {
                if &t != m && !m.starts_with(&format!("{t}::")) && !t.is_empty() {
                    to.insert(t);
                }
            }
        }
        out.insert(m.clone(), to);
    }
    out
}

/// Every cycle (strongly connected set of more than one module).
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Kosaraju: finish order on the graph, then components on the reversed graph
    fn visit(
        v: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        seen: &mut BTreeSet<String>,
        order: &mut Vec<String>,
    ) {
        if !seen.insert(v.to_string()) {
            return;
        }
        for w in g.get(v).into_iter().flatten() {
            visit(w, g, seen, order);
        }
        order.push(v.to_string());
    }
    let (mut seen, mut order) = (BTreeSet::new(), vec![]);
    for v in g.keys() {
        visit(v, g, &mut seen, &mut order);
    }
    let mut rev: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (v, ws) in g {
        for w in ws {
            rev.entry(w.clone()).or_default().insert(v.clone());
        }
    }
    let mut assigned = BTreeSet::new();
    let mut out = vec![];
    for v in order.iter().rev() {
        if assigned.contains(v) {
            continue;
        }
        let mut comp = vec![];
        visit(v, &rev, &mut assigned, &mut comp);
        if comp.len() > 1 {
            comp.sort();
            out.push(comp);
        }
    }
    out
}

fn src(krate: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join(krate)
        .join("src")
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    for krate in ["core", "native-cli"] {
        let mods = modules(&src(krate));
        assert!(mods.len() > 20, "{krate}: read its modules");
        let found = cycles(&edges(&mods));
        assert!(found.is_empty(), "{krate} has import cycles: {found:?}");
    }
}

#[test]
fn the_cycle_check_finds_a_cycle() {
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["c".to_string()]));
    g.insert("c".to_string(), BTreeSet::from(["a".to_string()]));
    g.insert("d".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(cycles(&g), vec![vec!["a", "b", "c"]]);
}

#[test]
fn only_the_backends_name_duckdb_sqlite_or_the_file_system() {
    // the DuckDB engine, the SQLite store, the local lake (and landing zones), project
    // reading, init, and the atomic-file and bounded-read helpers
    let allowed = [
        "engine::duckdb",
        "state::sqlite",
        "lake::local",
        "lake::s3",
        "lake::landing",
        "workspace::discover",
        "workspace::read",
        "workspace::plan_cache",
        "workspace::init",
        "util::atomic_file",
        "util::bounded_read",
    ];
    let mut offenders = vec![];
    for (m, text) in modules(&src("native-cli")) {
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let names = ["DuckDbEngine", "SqliteState", "std::fs"]
            .into_iter()
            .filter(|n| code.contains(n))
            .collect::<Vec<_>>();
        let inside = allowed
            .iter()
            .any(|a| m == *a || m.starts_with(&format!("{a}::")));
        if !names.is_empty() && !inside {
            offenders.push(format!("{m}: {names:?}"));
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}
