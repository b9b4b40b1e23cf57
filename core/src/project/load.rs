//! The loader: parsed model files in, a checked [`Project`] (or every problem) out.
//!
//! Each phase is a function that reads what earlier phases decided and adds diagnostics;
//! nothing stops at the first problem, so a user sees all of them in one round. The one
//! exception is a dependency cycle: without a DAG there is no order to check columns in.

use super::{seed_path, Loaded, ParsedFile, Project, ProjectSources};
use crate::audit::{self, AuditDef};
use crate::dag::Dag;
use crate::diagnostic::{self, Diagnostic, Problem};
use crate::fingerprint;
use crate::model::{Kind, Model};
use crate::seed;
use crate::sql::{columns, references, QueryForm};
use std::collections::{BTreeMap, HashMap};

/// [`load`](super::load()), with the model files already parsed (one entry per
/// `sources.models` entry).
pub fn load_parsed(
    sources: &ProjectSources,
    parsed: Vec<ParsedFile>,
    read_seed: &mut dyn FnMut(&str) -> Result<Vec<u8>, String>,
) -> Loaded {
    let mut diags: Vec<Diagnostic> = sources.config_diagnostics.clone();
    let (models, failed_files) = collect_models(sources, parsed, &mut diags);
    let (mut models, index) = unique_names(models, &mut diags);
    if sources.config.is_sqlmesh() {
        qualify_default_schema(&mut models);
    }
    // what this build of efmesh cannot do is refused here, never halfway through an apply
    diags.extend(crate::support::check(&sources.config, &models));
    let audits = named_audits(sources, &models, &mut diags);
    let sqlmesh = sources.config.is_sqlmesh();
    let seeds = read_seeds(&mut models, sqlmesh, read_seed, &mut diags);
    let (parents, reads_itself) = resolve_references(&models, &index, sqlmesh, &mut diags);
    let dag = match build_dag(parents, &models) {
        Ok(d) => d,
        Err(cycle) => {
            diags.push(cycle);
            diagnostic::sort(&mut diags);
            return Loaded {
                project: None,
                diagnostics: diags,
            };
        }
    };
    let star = Star::new(sources);
    let columns = check_columns(
        &mut models,
        &dag,
        &index,
        &seeds.headers,
        &star,
        sqlmesh,
        &mut diags,
    );
    check_column_descriptions(&models, &columns, &mut diags);
    let fingerprints = fingerprints(&models, &dag, &seeds.hashes);
    let inferred_types = if sqlmesh {
        inferred_types(&models, &dag, &index)
    } else {
        vec![None; models.len()]
    };

    diagnostic::sort(&mut diags);
    let has_errors = failed_files || diags.iter().any(|d| d.is_error());
    let project = (!has_errors).then(|| Project {
        config: sources.config.clone(),
        models,
        dag,
        fingerprints,
        columns,
        seed_hashes: seeds.hashes,
        seed_columns: seeds.columns,
        reads_itself,
        audits,
        inferred_types,
        index,
    });
    Loaded {
        project,
        diagnostics: diags,
    }
}

/// The types SQLMesh casts each model's table to when it does not declare its columns: what
/// sqlglot infers for its query, over its parents' declared or inferred types
/// (`sql::annotate`); `None` where any column's type is not known, as SQLMesh then casts
/// nothing.
fn inferred_types(
    models: &[Model],
    dag: &Dag,
    index: &HashMap<String, usize>,
) -> Vec<Option<Vec<(String, String)>>> {
    use crate::sql::annotate::{output_types, Ty};
    // per model, its columns with their types as the models below it see them
    let mut typed: Vec<Option<Vec<(String, Ty)>>> = vec![None; models.len()];
    let mut out: Vec<Option<Vec<(String, String)>>> = vec![None; models.len()];
    for &i in dag.topological_order() {
        let m = &models[i];
        if let Some(cols) = &m.columns {
            typed[i] = Some(
                cols.iter()
                    .map(|c| (c.name.clone(), Ty::parse(&c.sql_type)))
                    .collect(),
            );
            continue;
        }
        let Some(ast) = m.query.as_ref().and_then(|q| q.ast()) else {
            continue;
        };
        let catalog = |n: &str| -> Option<Vec<(String, Ty)>> {
            let p = *index.get(n)?;
            if p == i {
                return None;
            }
            typed[p].clone()
        };
        let Some(cols) = output_types(ast, &catalog) else {
            continue;
        };
        let mut names: Vec<&str> = cols.iter().map(|(n, _)| n.as_str()).collect();
        names.sort_unstable();
        let unique = names.windows(2).all(|w| w[0] != w[1]);
        let sql: Option<Vec<(String, String)>> = cols
            .iter()
            .map(|(n, t)| Some((n.clone(), t.sql()?)))
            .collect();
        if unique {
            out[i] = sql;
        }
        typed[i] = Some(cols);
    }
    out
}

/// A SQLMesh model named without a schema lives in schema `default`, and other models read it
/// by its one-part name (`FROM orders`): such references are written `default.orders` before
/// anything resolves them.
fn qualify_default_schema(models: &mut [Model]) {
    let prefix = format!("{}.", crate::sql::catalog::DEFAULT_SCHEMA);
    let tables: std::collections::HashSet<String> = models
        .iter()
        .filter_map(|m| m.name.strip_prefix(&prefix).map(str::to_string))
        .collect();
    if tables.is_empty() {
        return;
    }
    for m in models.iter_mut() {
        if let Some(q) = &mut m.query {
            if let crate::sql::QueryForm::Parsed(ast) = &mut q.form {
                crate::sql::catalog::qualify_default(ast, &tables);
                q.canonical = ast.to_string();
            }
        }
    }
}

/// Phase 1: the models of every file (and of `external_models.yaml`); whether any file failed.
fn collect_models(
    sources: &ProjectSources,
    parsed: Vec<ParsedFile>,
    diags: &mut Vec<Diagnostic>,
) -> (Vec<Model>, bool) {
    let mut models: Vec<Model> = vec![];
    let mut failed_files = false;
    for (m, d) in parsed {
        failed_files |= m.is_none() || d.iter().any(|d| d.is_error());
        diags.extend(d);
        models.extend(m);
    }
    for y in &sources.external_models {
        match crate::external_yaml::parse(&y.path, &y.text) {
            Ok(ms) => models.extend(ms),
            Err(d) => diags.push(d),
        }
    }
    (models, failed_files)
}

/// Phase 2: names are unique; a later definition of a name is reported and dropped.
fn unique_names(
    models: Vec<Model>,
    diags: &mut Vec<Diagnostic>,
) -> (Vec<Model>, HashMap<String, usize>) {
    let mut index: HashMap<String, usize> = HashMap::with_capacity(models.len());
    let mut unique: Vec<Model> = Vec::with_capacity(models.len());
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
    (unique, index)
}

/// Phase 3: named AUDIT files, unique by name, and every model's audit calls checked
/// against them and the built-ins.
fn named_audits(
    sources: &ProjectSources,
    models: &[Model],
    diags: &mut Vec<Diagnostic>,
) -> BTreeMap<String, AuditDef> {
    let dialect = sources.config.dialect();
    let mut audits: BTreeMap<String, AuditDef> = BTreeMap::new();
    // a SQLMesh project's Jinja audits render with its variables and `{% macro %}`s
    let jinja_audits = sources.config.is_sqlmesh()
        && sources
            .audits
            .iter()
            .any(|src| src.text.to_ascii_uppercase().contains("JINJA_QUERY_BEGIN"));
    let macros = jinja_audits.then(|| super::macros::macro_env(sources).0);
    let jinja = macros.as_ref().map(|m| crate::sql::jinja::JinjaEnv {
        variables: &m.jinja_variables,
        macros: &m.jinja_macros,
        gateway: sources.config.sqlmesh_gateway.as_deref(),
    });
    let from_files = sources.audits.iter().map(|src| {
        let (defs, d) = audit::parse_audit_file_in(&src.path, &src.text, dialect, jinja.as_ref());
        diags.extend(d);
        defs
    });
    let from_files: Vec<Vec<AuditDef>> = from_files.collect();
    // only the files whose parse found `AUDIT (` after the query are read again
    let inline: Vec<Vec<AuditDef>> = models
        .iter()
        .filter(|m| m.defines_audits)
        .filter_map(|m| sources.models.iter().find(|s| s.path == m.file))
        .map(|src| {
            let (defs, d) = audit::inline_audits(&src.path, &src.text, dialect);
            diags.extend(d);
            defs
        })
        .collect();
    for defs in from_files.into_iter().chain(inline) {
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
    for m in models {
        for call in &m.audits {
            if let Some(d) = audit::check_call(call, &|n| audits.get(n), &audit_names, dialect) {
                diags.push(d);
            }
        }
    }
    audits
}

/// What phase 4 learned from the seed files (same index as the models).
struct Seeds {
    /// Content hash of each SEED model's file (it enters the fingerprint).
    hashes: Vec<Option<String>>,
    /// The file's columns, normalized as references see them.
    headers: Vec<Option<Vec<String>>>,
    /// The file's columns as written.
    columns: Vec<Option<Vec<String>>>,
}

/// Phase 4: read every SEED model's file, hash it, and check its columns against the
/// declaration. In a SQLMesh project (`pandas`) a CSV seed without `columns` is given the types
/// SQLMesh gives it ([`seed::pandas_types`]), as if they were declared.
fn read_seeds(
    models: &mut [Model],
    pandas: bool,
    read_seed: &mut dyn FnMut(&str) -> Result<Vec<u8>, String>,
    diags: &mut Vec<Diagnostic>,
) -> Seeds {
    let n = models.len();
    let mut out = Seeds {
        hashes: vec![None; n],
        headers: vec![None; n],
        columns: vec![None; n],
    };
    for (i, m) in models.iter_mut().enumerate() {
        let Kind::Seed { path } = &m.kind else {
            continue;
        };
        let p = seed_path(&m.file, path);
        let bytes = match read_seed(&p) {
            Ok(bytes) => bytes,
            Err(message) => {
                diags.push(Diagnostic::at(
                    Problem::SeedUnreadable { path: p, message },
                    m.name_location.clone(),
                ));
                continue;
            }
        };
        out.hashes[i] = Some(fingerprint::content_hash(&bytes));
        let format = seed::SeedFormat::of(&p);
        if pandas && m.columns.is_none() && format == seed::SeedFormat::Csv {
            if let Ok(types) = seed::pandas_types(&bytes) {
                m.columns = Some(
                    types
                        .into_iter()
                        .map(|(name, ty)| crate::model::ColumnDef {
                            name: seed::normalize(&name),
                            sql_type: ty.into(),
                            family: crate::types::TypeFamily::of(ty),
                        })
                        .collect(),
                );
            }
        }
        match seed::columns(format, &bytes) {
            Ok(file_columns) => {
                if let Some(declared) = &m.columns {
                    diags.extend(
                        seed::check_columns(&p, &file_columns, declared)
                            .into_iter()
                            // SQLMesh loads the declared columns and leaves the rest out
                            .map(|pr| match pr {
                                Problem::SeedColumnExtra {
                                    path,
                                    column,
                                    declared,
                                } if pandas => Problem::SeedColumnLeftOut {
                                    path,
                                    column,
                                    declared,
                                },
                                other => other,
                            })
                            .map(|pr| Diagnostic::at(pr, m.name_location.clone())),
                    );
                }
                out.headers[i] = Some(file_columns.iter().map(|c| seed::normalize(c)).collect());
                out.columns[i] = Some(file_columns);
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
    out
}

/// Phase 5: every table a query names (and every `depends_on`) resolved to a model: the
/// parents of each model, and whether it reads itself. An unknown name is reported with the closest known one: an error in
/// an efmesh project, and in a SQLMesh one (`sqlmesh`) a warning, since SQLMesh reads an
/// undeclared table as an external one.
fn resolve_references(
    models: &[Model],
    index: &HashMap<String, usize>,
    sqlmesh: bool,
    diags: &mut Vec<Diagnostic>,
) -> (Vec<Vec<usize>>, Vec<bool>) {
    let names: Vec<&str> = models.iter().map(|m| m.name.as_str()).collect();
    let mut parents: Vec<Vec<usize>> = vec![vec![]; models.len()];
    let mut reads_itself = vec![false; models.len()];
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
                Some(&p) if p == i => {
                    let incremental = matches!(
                        m.kind,
                        Kind::IncrementalByTimeRange { .. }
                            | Kind::IncrementalByUniqueKey { .. }
                            | Kind::ScdType2 { .. }
                            | Kind::ScdType2ByColumn { .. }
                    );
                    let problem = if !incremental {
                        Some(Problem::SelfReference {
                            model: m.name.clone(),
                            kind: m.kind.name().to_string(),
                        })
                    } else if m.columns.is_none() {
                        // its table is created before its first batch reads it, so its shape
                        // cannot come from its query: SQLMesh asks for the types the same way
                        Some(Problem::SelfReferenceColumns {
                            model: m.name.clone(),
                        })
                    } else {
                        None
                    };
                    // incremental models may read what they already hold, as in SQLMesh; a
                    // model rebuilt whole would read a table that does not exist yet (or a
                    // view itself)
                    if let Some(problem) = problem.filter(|_| !reads_itself[i]) {
                        diags.push(Diagnostic::at(problem, r.location));
                    }
                    reads_itself[i] = true;
                }
                Some(&p) => {
                    if !parents[i].contains(&p) {
                        parents[i].push(p);
                    }
                }
                None => {
                    let suggestion = crate::suggest::closest(&r.name, names.iter().copied());
                    let problem = if sqlmesh {
                        Problem::UndeclaredExternal {
                            name: r.name,
                            suggestion,
                        }
                    } else {
                        Problem::UnknownReference {
                            name: r.name,
                            suggestion,
                        }
                    };
                    diags.push(Diagnostic::at(problem, r.location));
                }
            }
        }
    }
    (parents, reads_itself)
}

/// `column_descriptions` may only describe columns the model returns (when they are known),
/// so a typo is caught here and not by the engine's `COMMENT ON COLUMN` mid-apply.
fn check_column_descriptions(
    models: &[Model],
    columns: &[Option<Vec<String>>],
    diags: &mut Vec<Diagnostic>,
) {
    for (m, out) in models.iter().zip(columns) {
        let Some(out) = out else { continue };
        for (c, _) in &m.column_descriptions {
            if !out.contains(c) {
                diags.push(Diagnostic::at(
                    Problem::UnknownColumn {
                        column: c.clone(),
                        source_desc: format!(
                            "the output of `{}` (its `column_descriptions`)",
                            m.name
                        ),
                        available: out.clone(),
                        suggestion: crate::suggest::closest(c, out.iter().map(String::as_str)),
                    },
                    m.name_location.clone(),
                ));
            }
        }
    }
}

/// Phase 6: the DAG, or the cycle as a path that starts at its smallest name (so the message
/// is stable), with where each model on it is defined.
fn build_dag(parents: Vec<Vec<usize>>, models: &[Model]) -> Result<Dag, Diagnostic> {
    Dag::new(parents).map_err(|mut cycle| {
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
        d
    })
}

/// Phase 7: columns in topological order, so parents are known before children: unknown
/// columns, the declared output contract, inferred outputs, and key columns.
fn check_columns(
    models: &mut [Model],
    dag: &Dag,
    index: &HashMap<String, usize>,
    seed_headers: &[Option<Vec<String>>],
    star: &Star,
    sqlmesh: bool,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Option<Vec<String>>> {
    let mut cols: Vec<Option<Vec<String>>> = vec![None; models.len()];
    for &i in dag.topological_order() {
        star.expand(models, i, dag, &cols, diags);
        let m = &models[i];
        let declared: Option<Vec<String>> = m
            .columns
            .as_ref()
            .map(|c| c.iter().map(|c| c.name.clone()).collect());
        let mut effective = declared.clone();
        if let Some(ast) = m.query.as_ref().and_then(|q| q.ast()) {
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
                (Some(decl), Ok(out)) => check_contract(m, decl, &out, diags),
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
        } else if m.query.is_none() && matches!(m.kind, Kind::Seed { .. }) && effective.is_none() {
            effective = seed_headers[i].clone();
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
            check_key_columns(m, e, sqlmesh, diags);
        }
        cols[i] = effective;
    }
    cols
}

/// The declared columns against what the query returns: every declared column is returned,
/// and nothing undeclared is.
fn check_contract(m: &Model, declared: &[String], out: &[String], diags: &mut Vec<Diagnostic>) {
    for c in declared.iter().filter(|c| !out.contains(c)) {
        diags.push(Diagnostic::at(
            Problem::MissingOutputColumn {
                column: c.clone(),
                returned: out.to_vec(),
            },
            m.name_location.clone(),
        ));
    }
    for c in out.iter().filter(|c| !declared.contains(c)) {
        diags.push(Diagnostic::at(
            Problem::ExtraOutputColumn {
                column: c.clone(),
                declared: declared.to_vec(),
            },
            m.name_location.clone(),
        ));
    }
}

/// Phase 8: fingerprints, parents first, since each names its parents' fingerprints.
fn fingerprints(models: &[Model], dag: &Dag, seed_hashes: &[Option<String>]) -> Vec<String> {
    let mut fps: Vec<String> = vec![String::new(); models.len()];
    for &i in dag.topological_order() {
        let parent_fps: Vec<(&str, &str)> = dag
            .parents(i)
            .iter()
            .map(|&p| (models[p].name.as_str(), fps[p].as_str()))
            .collect();
        fps[i] = fingerprint::fingerprint(&models[i], seed_hashes[i].as_deref(), &parent_fps);
    }
    fps
}

/// Grain, time column, unique key and compared columns must be output columns.
fn check_key_columns(m: &Model, out: &[String], sqlmesh: bool, diags: &mut Vec<Diagnostic>) {
    let mut keys: Vec<(&str, &String)> = m.grain.iter().map(|g| ("grain", g)).collect();
    match &m.kind {
        Kind::IncrementalByTimeRange { time_column, .. } => keys.push(("time_column", time_column)),
        Kind::IncrementalByUniqueKey { unique_key, .. } => {
            keys.extend(unique_key.iter().map(|k| ("unique_key", k)))
        }
        Kind::IncrementalByPartition { partitioned_by } => {
            keys.extend(partitioned_by.iter().map(|k| ("partitioned_by", k)))
        }
        // SCD by time closes a version when a row's `updated_at` moves
        Kind::ScdType2 {
            unique_key,
            updated_at_name,
            ..
        } => {
            keys.extend(unique_key.iter().map(|k| ("unique_key", k)));
            keys.push(("updated_at_name", updated_at_name));
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
        if !out.contains(column) && sqlmesh && property == "grain" {
            // SQLMesh never checks a grain (it is documentation there), so a project may carry
            // one that is no column, such as `grain "id as waiter_id"`
            diags.push(Diagnostic::at(
                Problem::IgnoredProperty {
                    name: format!("grain {column}"),
                    why: "it is not an output column of the model; SQLMesh does not check grains, and efmesh ignores this one",
                },
                m.name_location.clone(),
            ));
        } else if !out.contains(column) {
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

/// SQLMesh's `@STAR` and `@UNION` write their tables' columns, which are known only in this
/// phase: a file that uses them is parsed first with `table.*` (`SELECT * FROM` each table)
/// standing in (references and the DAG need only its tables), then parsed again here, in topological order, once its parents' columns are
/// settled, so a `@STAR` over a model that itself uses `@STAR` sees the renamed columns.
/// Projects without `@STAR` pay one scan of their files' text.
struct Star<'s> {
    sources: &'s ProjectSources,
    /// The files that mention `@STAR`, and what model files are parsed with (`None`: none do).
    files: std::collections::BTreeSet<&'s str>,
    env: Option<crate::model::ParseEnv>,
}

impl<'s> Star<'s> {
    fn new(sources: &'s ProjectSources) -> Star<'s> {
        let files: std::collections::BTreeSet<&str> = sources
            .models
            .iter()
            .filter(|src| mentions_star(&src.text))
            .map(|src| src.path.as_str())
            .collect();
        let env = (!files.is_empty()).then(|| super::macros::parse_env(sources).0);
        Star {
            sources,
            files,
            env,
        }
    }

    /// Parse model `i` again with its parents' columns, when its file uses `@STAR`.
    fn expand(
        &self,
        models: &mut [Model],
        i: usize,
        dag: &Dag,
        cols: &[Option<Vec<String>>],
        diags: &mut Vec<Diagnostic>,
    ) {
        let Some(env) = &self.env else { return };
        if !self.files.contains(models[i].file.as_str()) {
            return;
        }
        let Some(src) = self
            .sources
            .models
            .iter()
            .find(|s| s.path == models[i].file)
        else {
            return;
        };
        let mut env = env.clone();
        env.macros.relations = Some(
            dag.parents(i)
                .iter()
                .filter_map(|&p| {
                    let parent = &models[p];
                    let columns: Vec<(String, Option<String>)> = match &parent.columns {
                        Some(declared) => declared
                            .iter()
                            .map(|c| (c.name.clone(), Some(c.sql_type.clone())))
                            .collect(),
                        None => cols[p]
                            .as_ref()?
                            .iter()
                            .map(|c| (c.clone(), None))
                            .collect(),
                    };
                    Some((parent.name.to_ascii_lowercase(), columns))
                })
                .collect(),
        );
        let (again, found) = crate::model::parse_model_file(
            &src.path,
            &src.text,
            self.sources.config.dialect(),
            &env,
        );
        for d in found {
            if !diags.contains(&d) {
                diags.push(d);
            }
        }
        if let Some(again) = again {
            models[i].query = again.query;
        }
    }
}

/// Whether a model file may call `@STAR` or `@UNION`, which need their parents' columns (a
/// cheap scan; a mention in a comment only costs a second parse).
fn mentions_star(text: &str) -> bool {
    let bytes = text.as_bytes();
    [b"@star".as_slice(), b"@union".as_slice()]
        .iter()
        .any(|m| bytes.windows(m.len()).any(|w| w.eq_ignore_ascii_case(m)))
}
