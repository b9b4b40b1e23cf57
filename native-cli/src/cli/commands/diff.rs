//! `efmesh diff <a> <b>`: what B serves compared with A, printed for people or as JSON.

use crate::cli::exit::Exit;
use crate::cli::output::{fail, print_json};
use crate::ops::diff::{DataDiff, DiffOptions, EnvDiff};
use crate::Efmesh;
use std::path::Path;

/// Run `efmesh diff`.
pub(crate) fn run(
    dir: &Path,
    env_a: &str,
    env_b: &str,
    data: bool,
    models: Vec<String>,
    sample: Option<f64>,
    json: bool,
) -> Exit {
    let options = DiffOptions {
        data,
        models,
        sample_percent: sample,
    };
    match Efmesh::open(dir).and_then(|p| p.diff(env_a, env_b, &options)) {
        Err(e) => fail(e, json),
        Ok(report) => {
            if json {
                print_json(&report);
            } else {
                out!("{}", human(&report));
            }
            Exit::Ok
        }
    }
}

fn short(fp: &Option<String>) -> String {
    fp.as_deref()
        .map(|f| f.chars().take(12).collect())
        .unwrap_or_else(|| "-".into())
}

fn percent(rate: f64) -> String {
    format!("{:.1}%", rate * 100.0)
}

/// The report as lines: one per model, its data indented under it.
fn human(r: &EnvDiff) -> String {
    let mut out = vec![format!(
        "{} → {}: {} model{} differ{}, {} unchanged",
        r.env_a,
        r.env_b,
        r.models.len(),
        if r.models.len() == 1 { "" } else { "s" },
        if r.models.len() == 1 { "s" } else { "" },
        r.unchanged
    )];
    for m in &r.models {
        let v = &m.version;
        let mut line = format!(
            "  {:<14} {}  {} → {}",
            v.category,
            v.model,
            short(&v.version_a),
            short(&v.version_b)
        );
        if v.shares_data {
            line.push_str("  (same physical data)");
        }
        if !v.paths.is_empty() {
            line.push_str(&format!("  [{}]", v.paths.join(", ")));
        }
        out.push(line);
        if let Some(d) = &m.data {
            out.extend(data_lines(r, d));
        }
    }
    out.join("\n") + "\n"
}

fn data_lines(r: &EnvDiff, d: &DataDiff) -> Vec<String> {
    let n = |x: Option<u64>| x.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
    let mut out = vec![format!("      rows: {} → {}", n(d.rows_a), n(d.rows_b))];
    for (c, t) in &d.schema.only_in_a {
        out.push(format!("      schema: - {c} {t} (only in {})", r.env_a));
    }
    for (c, t) in &d.schema.only_in_b {
        out.push(format!("      schema: + {c} {t} (only in {})", r.env_b));
    }
    for (c, a, b) in &d.schema.type_changed {
        out.push(format!("      schema: ~ {c} {a} → {b}"));
    }
    if let Some(k) = &d.keyed {
        let sample = d
            .sample_percent
            .map(|p| format!(" (sample: {p}% of keys)"))
            .unwrap_or_default();
        out.push(format!(
            "      key ({}){sample}: {} matched, {} only in {}, {} only in {}",
            d.key.join(", "),
            k.matched,
            k.only_in_a,
            r.env_a,
            k.only_in_b,
            r.env_b
        ));
        if k.null_keys_a + k.null_keys_b > 0 {
            out.push(format!(
                "      rows with a NULL key part (not compared): {} in {}, {} in {}",
                k.null_keys_a, r.env_a, k.null_keys_b, r.env_b
            ));
        }
        if k.duplicate_keys_a + k.duplicate_keys_b > 0 {
            out.push(format!(
                "      duplicated keys (matches count row pairs): {} in {}, {} in {}",
                k.duplicate_keys_a, r.env_a, k.duplicate_keys_b, r.env_b
            ));
        }
        let differing: Vec<String> = k
            .mismatches
            .iter()
            .filter(|c| c.mismatched > 0)
            .map(|c| format!("{} {} ({})", c.column, percent(c.rate), c.mismatched))
            .collect();
        out.push(if differing.is_empty() {
            "      values: every compared column matches".into()
        } else {
            format!("      values differ: {}", differing.join(", "))
        });
    }
    if let Some(note) = &d.note {
        out.push(format!("      {note}"));
    }
    out
}
