//! SQLMesh's `config.yaml`, read as efmesh's [`Config`], so a SQLMesh project runs as it is:
//! the DuckDB gateway's database, extensions and settings, `model_defaults` (dialect, start,
//! cron, owner, kind), `variables` (the gateway's over the project's), `default_gateway`,
//! `time_column_format`, `model_naming` and `project`.
//!
//! Every other key is named once: a warning when it changes no table or efmesh does the same
//! thing its own way (state, naming, the UI), an error when ignoring it would change what is
//! built (`before_all`, another engine, model defaults efmesh cannot apply), with what to do.
//! `config.py` is not read.

use crate::config::{Config, EngineTarget};
use crate::diagnostic::{Diagnostic, Problem};
use crate::location::Location;
use serde_norway::{Mapping, Value};
use std::collections::BTreeMap;

/// The names SQLMesh looks for, in order.
pub const SQLMESH_CONFIG_FILES: [&str; 2] = ["config.yaml", "config.yml"];

/// Top-level keys that change no table (or that efmesh does its own way): read past, named.
const IGNORED: &[(&str, &str)] = &[
    ("format", "formatting options change no table"),
    ("ui", "efmesh has no web UI; `efmesh graph --html` draws the DAG"),
    ("linter", "efmesh's `check` has its own rules"),
    ("plan", "efmesh's plan options are flags (`efmesh plan --help`)"),
    ("janitor", "efmesh's `gc` removes unreferenced physics"),
    ("cicd_bot", "efmesh has no CI bot"),
    ("notification_targets", "efmesh sends no notifications; read `--json` output instead"),
    ("users", "efmesh has no user roles"),
    ("username", "efmesh's lock holder is `user@host pid N`"),
    ("disable_anonymized_analytics", "efmesh collects no analytics"),
    ("log_limit", "efmesh keeps its run journal in the state store"),
    ("cache_dir", "efmesh keeps no cache directory"),
    ("feature_flags", "no feature flags apply"),
    ("snapshot_ttl", "efmesh's `gc --older-than` sets retention"),
    ("environment_ttl", "efmesh's environments live until removed"),
    ("pinned_environments", "efmesh's environments live until removed"),
    ("default_target_environment", "name the environment on the command line (`efmesh plan dev`)"),
    ("infer_python_dependencies", "Python models are not supported"),
    ("migration", "efmesh migrates its own state (`efmesh migrate`)"),
    ("run", "efmesh's `run` options are flags"),
    ("physical_schema_mapping", "efmesh keeps physical tables in its `_efmesh` schema; environments are views (the manual's \"Coming from SQLMesh\", docs/src/sqlmesh.md)"),
    ("physical_schema_override", "efmesh keeps physical tables in its `_efmesh` schema; environments are views (the manual's \"Coming from SQLMesh\", docs/src/sqlmesh.md)"),
    ("environment_suffix_target", "efmesh names an environment's views `<env>__<schema>.<table>`, and prod's `<schema>.<table>`"),
    ("environment_catalog_mapping", "efmesh serves every environment from the one DuckDB database"),
    ("gateway_managed_virtual_layer", "efmesh serves every environment from the one DuckDB database"),
    ("default_test_connection", "`efmesh test` runs on an in-memory DuckDB"),
    ("default_scheduler", "efmesh schedules with `efmesh run` (and `efmesh schedule`)"),
    ("ignore_patterns", "efmesh reads `models/**/*.sql`; move files to skip out of `models/`"),
    ("openlineage", "efmesh's `lineage --json` gives column lineage"),
];

/// Top-level keys whose absence would change what is built: refused, with what to do.
const REFUSED: &[(&str, &str)] = &[
    (
        "env_vars",
        "set the variables in the environment (`${VAR}` works in `efmesh.toml`)",
    ),
    ("dbt", "dbt projects are not read; write SQL models"),
    (
        "loader",
        "a custom loader is Python; efmesh reads `models/**/*.sql`",
    ),
    (
        "loader_kwargs",
        "a custom loader is Python; efmesh reads `models/**/*.sql`",
    ),
];

/// Connection keys that change no table.
const CONNECTION_IGNORED: &[&str] = &[
    "concurrent_tasks",
    "register_comments",
    "pre_ping",
    "pretty_sql",
    "shared_connection",
];

/// `model_defaults` keys efmesh honours besides dialect, start, cron, owner and kind: none yet;
/// these it reads past because they change no table here.
const DEFAULTS_IGNORED: &[(&str, &str)] = &[
    ("formatting", "formatting options change no table"),
    ("optimize_query", "efmesh runs the query as written"),
    ("validate_query", "`efmesh check` always validates"),
    ("ignored_rules", "efmesh's `check` has its own rules"),
    (
        "interval_unit",
        "efmesh derives it from the cron; declare `interval_unit` per model to change it",
    ),
];

/// What reading a `config.yaml` gave: the config, and its warnings.
pub type Read = (Config, Vec<Diagnostic>);

/// Parse `text` (the contents of `file`, a SQLMesh `config.yaml`). `env` resolves
/// `{{ env_var('X') }}`, the one Jinja form SQLMesh configs commonly use.
pub fn parse(
    file: &str,
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Read, Vec<Diagnostic>> {
    let text_resolved = resolve_env_vars(text, env);
    let root: Value = match serde_norway::from_str(&text_resolved) {
        Ok(v) => v,
        Err(e) => {
            let loc = crate::external_yaml::yaml_error_location(file, &e);
            return Err(vec![Diagnostic::at(
                Problem::ConfigSyntax {
                    message: format!("invalid YAML: {e}"),
                },
                loc,
            )]);
        }
    };
    let mut r = Reader {
        file,
        text,
        warnings: vec![],
        errors: vec![],
    };
    let mut cfg = Config::defaults("sqlmesh");
    // a SQLMesh model without `kind` is a VIEW
    cfg.model_defaults.kind = crate::model::defaults::default_kind("VIEW");
    let empty = Mapping::new();
    let top = match &root {
        Value::Mapping(m) => m,
        Value::Null => &empty,
        _ => {
            r.error(
                "",
                "the file must be a mapping of keys (`gateways:`, `model_defaults:`, ...)".into(),
            );
            return Err(r.errors);
        }
    };
    let mut gateway_name: Option<String> = None;
    for (k, v) in top {
        let key = k.as_str().unwrap_or_default();
        match key {
            "gateways" | "model_defaults" | "variables" | "default_connection" => {}
            "default_gateway" => gateway_name = v.as_str().map(str::to_string),
            "before_all" | "after_all" => {
                let list = match v {
                    Value::Sequence(items) => items
                        .iter()
                        .map(|i| i.as_str().map(str::to_string))
                        .collect::<Option<Vec<String>>>(),
                    Value::Null => Some(vec![]),
                    _ => None,
                };
                match list {
                    Some(list) => {
                        let statements = r.statements(key, list);
                        if key == "before_all" {
                            cfg.before_all = statements;
                        } else {
                            cfg.after_all = statements;
                        }
                    }
                    None => r.error(
                        key,
                        "expected a list of SQL statements, each a string".into(),
                    ),
                }
            }
            "model_naming" => match v.as_mapping() {
                Some(m) => {
                    for (nk, nv) in m {
                        let nk = nk.as_str().unwrap_or_default();
                        let dotted = format!("model_naming.{nk}");
                        match (nk, nv.as_bool()) {
                            ("infer_names", Some(b)) => cfg.model_defaults.infer_names = b,
                            ("infer_names", None) => {
                                r.error(&dotted, "expected true or false".into())
                            }
                            _ => r.refused(
                                &dotted,
                                "SQLMesh's `model_naming` has only `infer_names`".into(),
                            ),
                        }
                    }
                }
                None => r.error(
                    key,
                    "expected a mapping such as `{infer_names: true}`".into(),
                ),
            },
            "time_column_format" => match v.as_str() {
                Some(f) => match crate::materialize::time_column::format_problem(f) {
                    None => cfg.model_defaults.time_column_format = Some(f.to_string()),
                    Some(problem) => r.error(key, problem),
                },
                None => r.error(key, "expected a strftime format such as '%Y%m%d'".into()),
            },
            "project" => {
                if let Some(n) = v.as_str() {
                    if !n.is_empty() {
                        cfg.name = n.to_string();
                    }
                }
            }
            _ => {
                if let Some((_, why)) = IGNORED.iter().find(|(n, _)| *n == key) {
                    r.ignored(key, why.to_string());
                } else if let Some((_, why)) = REFUSED.iter().find(|(n, _)| *n == key) {
                    r.refused(key, why.to_string());
                } else {
                    let known = IGNORED.iter().chain(REFUSED).map(|(n, _)| *n).chain([
                        "gateways",
                        "model_defaults",
                        "variables",
                        "default_gateway",
                        "default_connection",
                        "project",
                        "time_column_format",
                        "model_naming",
                        "before_all",
                        "after_all",
                    ]);
                    let hint = match crate::suggest::closest(key, known) {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => {
                            "remove it; the manual's \"Coming from SQLMesh\" (docs/src/sqlmesh.md) lists the keys efmesh reads"
                                .into()
                        }
                    };
                    r.refused(key, format!("SQLMesh has no such key here; {hint}"));
                }
            }
        }
    }
    // the gateway: the named default, else the first
    let gateways = top.get("gateways").and_then(Value::as_mapping);
    let gateway = match (gateways, &gateway_name) {
        (Some(g), Some(name)) => match g.get(name.as_str()) {
            Some(v) => Some((name.clone(), v)),
            None => {
                let names: Vec<&str> = g.keys().filter_map(Value::as_str).collect();
                r.error(
                    "default_gateway",
                    format!(
                        "names gateway `{name}`, which is not under `gateways` (there: {})",
                        names.join(", ")
                    ),
                );
                None
            }
        },
        (Some(g), None) => g
            .iter()
            .next()
            .and_then(|(k, v)| k.as_str().map(|k| (k.to_string(), v))),
        (None, _) => None,
    };
    let mut connection = top.get("default_connection");
    let mut gateway_vars = None;
    cfg.sqlmesh_gateway = Some(
        gateway
            .as_ref()
            .map_or_else(|| "default".to_string(), |(n, _)| n.clone()),
    );
    if let Some((name, g)) = gateway {
        if let Some(g) = g.as_mapping() {
            for (k, v) in g {
                let key = k.as_str().unwrap_or_default();
                let dotted = format!("gateways.{name}.{key}");
                match key {
                    "connection" => connection = Some(v),
                    "variables" => gateway_vars = v.as_mapping(),
                    "state_connection" | "state_schema" => r.ignored(&dotted, "efmesh keeps its state in `efmesh.state.sqlite` next to the project (or a PostgreSQL state store set in `efmesh.toml`)".into()),
                    "test_connection" => r.ignored(&dotted, "`efmesh test` runs on an in-memory DuckDB".into()),
                    "scheduler" => r.ignored(&dotted, "efmesh schedules with `efmesh run`".into()),
                    "model_defaults" => r.refused(&dotted, "put the defaults under the top-level `model_defaults`".into()),
                    _ => r.refused(&dotted, "SQLMesh has no such gateway key".into()),
                }
            }
        }
    }
    match connection {
        Some(c) => r.connection(c, &mut cfg),
        None => r.ignored("gateways", "no DuckDB connection is configured, so efmesh uses `efmesh.duckdb` in the project directory".into()),
    }
    if let Some(d) = top.get("model_defaults") {
        r.model_defaults(d, &mut cfg);
    }
    for vars in [
        top.get("variables").and_then(Value::as_mapping),
        gateway_vars,
    ]
    .into_iter()
    .flatten()
    {
        for (k, v) in vars {
            let Some(name) = k.as_str() else { continue };
            match variable(v) {
                Some(j) => {
                    if !keys_sorted(v) {
                        r.warn_sorted(&format!("variables.{name}"));
                    }
                    cfg.variables.insert(name.to_ascii_lowercase(), j);
                }
                None => r.error(
                    &format!("variables.{name}"),
                    "a variable is a string, a number, a boolean, or a list or map of them (with text keys)".into(),
                ),
            }
        }
    }
    // `before_all`/`after_all` must render (what `@this_env` and friends will hold is known at
    // apply; their shape is known now), so a typo is caught at `check`, at its line
    for (stage, list) in [
        (
            crate::environment_statements::Stage::BeforeAll,
            &cfg.before_all,
        ),
        (
            crate::environment_statements::Stage::AfterAll,
            &cfg.after_all,
        ),
    ] {
        let serving = crate::environment_statements::Serving {
            env: crate::naming::PROD.into(),
            ..Default::default()
        };
        if let Err(d) = crate::environment_statements::render(list, stage, &serving, &cfg.variables)
        {
            r.errors.push(d);
        }
    }
    if r.errors.is_empty() {
        Ok((cfg, r.warnings))
    } else {
        Err(r.errors)
    }
}

/// `{{ env_var('X') }}` (or `"X"`, with an optional default) replaced by the variable's value.
fn resolve_env_vars(text: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start..].find("}}") else {
            break;
        };
        let inner = rest[start + 2..start + len].trim();
        out.push_str(&rest[..start]);
        let args = inner
            .strip_prefix("env_var(")
            .and_then(|a| a.strip_suffix(')'));
        match args {
            Some(a) => {
                let parts: Vec<String> = a
                    .split(',')
                    .map(|p| p.trim().trim_matches(|c| c == '\'' || c == '"').to_string())
                    .collect();
                let value = env(&parts[0])
                    .or_else(|| parts.get(1).cloned())
                    .unwrap_or_default();
                out.push_str(&value);
            }
            None => out.push_str(&rest[start..start + len + 2]),
        }
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    out
}

/// A YAML variable as JSON, if a macro can use it.
fn variable(v: &Value) -> Option<serde_json::Value> {
    use serde_json::Value as J;
    Some(match v {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Number(n) => serde_json::from_str(&n.to_string()).ok()?,
        Value::String(s) => J::String(s.clone()),
        Value::Sequence(items) => J::Array(items.iter().map(variable).collect::<Option<_>>()?),
        // SQLMesh takes any YAML: a map serves Jinja's `var()` as a dict, `@VAR` as a struct
        Value::Mapping(m) => J::Object(
            m.iter()
                .map(|(k, v)| Some((k.as_str()?.to_string(), variable(v)?)))
                .collect::<Option<_>>()?,
        ),
        Value::Tagged(t) => variable(&t.value)?,
    })
}

/// Whether every map in `v` has its keys in sorted order already: efmesh holds variables with
/// their keys sorted, so only then does `@VAR` write (and Jinja iterate) the map as SQLMesh does.
fn keys_sorted(v: &Value) -> bool {
    match v {
        Value::Mapping(m) => {
            let keys: Vec<_> = m.keys().filter_map(Value::as_str).collect();
            keys.windows(2).all(|w| w[0] <= w[1]) && m.values().all(keys_sorted)
        }
        Value::Sequence(items) => items.iter().all(keys_sorted),
        Value::Tagged(t) => keys_sorted(&t.value),
        _ => true,
    }
}

struct Reader<'a> {
    file: &'a str,
    text: &'a str,
    warnings: Vec<Diagnostic>,
    errors: Vec<Diagnostic>,
}

impl Reader<'_> {
    /// Where `dotted`'s last key is written (its first occurrence as a mapping key), for the
    /// diagnostic: YAML values carry no positions once parsed.
    fn loc(&self, dotted: &str) -> Location {
        let key = dotted.rsplit('.').next().unwrap_or(dotted);
        if key.is_empty() {
            return Location::file_only(self.file);
        }
        for (n, line) in self.text.lines().enumerate() {
            let t = line.trim_start();
            let indent = line.len() - t.len();
            let t = t.strip_prefix("- ").unwrap_or(t);
            if let Some(after) = t.strip_prefix(key) {
                if after.trim_start().starts_with(':') {
                    let col = indent as u64 + 1;
                    return Location::new(
                        self.file,
                        (n as u64 + 1, col),
                        (n as u64 + 1, col + key.len() as u64),
                    );
                }
            }
        }
        Location::file_only(self.file)
    }

    /// A map variable whose keys efmesh reorders: `@VAR` writes it as `MAP([keys], [values])`
    /// in sorted order and Jinja iterates it so, where SQLMesh keeps the file's order.
    fn warn_sorted(&mut self, key: &str) {
        let loc = self.loc(key);
        self.warnings.push(Diagnostic::at(
            Problem::SqlmeshConfig {
                key: key.into(),
                verdict: "read with its keys sorted",
                why: "`@VAR` writes this map, and Jinja iterates it, with its keys in sorted order where SQLMesh keeps the order of config.yaml; write its keys sorted to read it as SQLMesh does".into(),
            },
            loc,
        ));
    }

    fn ignored(&mut self, key: &str, why: String) {
        let loc = self.loc(key);
        self.warnings.push(Diagnostic::at(
            Problem::SqlmeshConfig {
                key: key.into(),
                verdict: "ignored",
                why,
            },
            loc,
        ));
    }

    /// `before_all`/`after_all` statements, each located at its own `- ` line under `key`
    /// (else at the key).
    fn statements(
        &mut self,
        key: &str,
        list: Vec<String>,
    ) -> Vec<crate::environment_statements::EnvironmentStatement> {
        let at_key = self.loc(key);
        let lines: Vec<(u64, u64)> = self
            .text
            .lines()
            .enumerate()
            .skip(at_key.line as usize)
            .take_while(|(_, l)| l.trim().is_empty() || l.starts_with([' ', '\t', '-']))
            .filter_map(|(n, l)| {
                let t = l.trim_start();
                t.starts_with("- ")
                    .then(|| (n as u64 + 1, (l.len() - t.len()) as u64 + 3))
            })
            .collect();
        list.into_iter()
            .enumerate()
            .map(|(k, sql)| {
                let location = match lines.get(k) {
                    Some(&(line, column)) => {
                        Location::new(self.file, (line, column), (line, column + sql.len() as u64))
                    }
                    None => at_key.clone(),
                };
                crate::environment_statements::EnvironmentStatement { sql, location }
            })
            .collect()
    }

    fn refused(&mut self, key: &str, why: String) {
        let loc = self.loc(key);
        self.errors.push(Diagnostic::at(
            Problem::SqlmeshConfig {
                key: key.into(),
                verdict: "not supported",
                why,
            },
            loc,
        ));
    }

    fn error(&mut self, key: &str, message: String) {
        let loc = self.loc(key);
        self.errors.push(Diagnostic::at(
            Problem::ConfigValue {
                key: key.into(),
                message,
            },
            loc,
        ));
    }

    fn connection(&mut self, c: &Value, cfg: &mut Config) {
        let Some(c) = c.as_mapping() else {
            self.error(
                "connection",
                "expected a mapping with `type: duckdb`".into(),
            );
            return;
        };
        let kind = c.get("type").and_then(Value::as_str).unwrap_or("duckdb");
        if kind != "duckdb" {
            self.refused(
                "type",
                format!("efmesh reads SQLMesh projects on DuckDB, not `{kind}`; for PostgreSQL write an `efmesh.toml` with `[engine] postgres = \"postgres://...\"`"),
            );
            return;
        }
        let mut catalogs: Vec<(String, crate::config::Attachment)> = vec![];
        for (k, v) in c {
            let key = k.as_str().unwrap_or_default();
            match key {
                "type" => {}
                "database" => match v.as_str() {
                    Some(path) => cfg.engine.target = EngineTarget::Duckdb { path: path.into() },
                    None => self.error("database", "expected a file path".into()),
                },
                "extensions" => {
                    for e in v.as_sequence().into_iter().flatten() {
                        let name = e
                            .as_str()
                            .or_else(|| e.get("name").and_then(Value::as_str));
                        match name {
                            Some(n) if crate::naming::plain_ident(n) => {
                                cfg.engine.extensions.push(n.to_string())
                            }
                            _ => self.error("extensions", "each extension is a name, or `{name: ...}`".into()),
                        }
                        if e.get("repository").is_some() {
                            self.ignored("repository", "efmesh loads extensions from DuckDB's extension directory (see TOOLCHAIN.md); install them there".into());
                        }
                    }
                }
                "connector_config" => {
                    for (sk, sv) in v.as_mapping().into_iter().flatten() {
                        let Some(name) = sk.as_str() else { continue };
                        // names reach the engine's SET unquoted
                        if !crate::naming::plain_ident(name) {
                            self.error(name, "a setting's name is letters, digits and `_` (such as `memory_limit`)".into());
                            continue;
                        }
                        let value = match sv {
                            Value::String(s) => crate::quote::literal(s),
                            Value::Bool(b) => b.to_string(),
                            Value::Number(n) => n.to_string(),
                            _ => {
                                self.error(name, "a setting is a string, a number or a boolean".into());
                                continue;
                            }
                        };
                        cfg.engine.settings.insert(name.to_string(), value);
                    }
                }
                "catalogs" => catalogs = self.catalogs(v),
                "secrets" => self.secrets(v, cfg),
                // an empty list registers nothing (`sqlmesh init` style configs write `[]`)
                "filesystems" if v.as_sequence().is_some_and(|s| s.is_empty()) || v.is_null() => {}
                "filesystems" => self.refused("filesystems", "SQLMesh registers them as Python fsspec file systems, which efmesh has not; reach object stores through `secrets` (DuckDB's httpfs)".into()),
                k if CONNECTION_IGNORED.contains(&k) => self.ignored(k, "it changes no table".into()),
                other => self.refused(other, "efmesh does not read this DuckDB connection option".into()),
            }
        }
        // without `database`, the first catalog is the default one, as in SQLMesh: its file is
        // the database efmesh opens and its name the catalog models may be qualified with; the
        // others are attached under their names
        if !catalogs.is_empty() && !c.contains_key("database") {
            let (name, first) = catalogs.remove(0);
            let local = first.is_local_file()
                && first
                    .options
                    .iter()
                    .all(|(k, v)| k != "TYPE" || v.eq_ignore_ascii_case("duckdb"));
            if local {
                cfg.engine.target = EngineTarget::Duckdb {
                    path: first.url.expose().to_string(),
                };
                cfg.sqlmesh_catalog = Some(name);
            } else {
                self.refused(&name, "the first catalog is the default one, where efmesh builds; it must be a DuckDB file (or `:memory:`); put another database after it".into());
            }
        }
        cfg.engine
            .attachments
            .extend(catalogs.into_iter().map(|(_, a)| a));
    }

    /// `catalogs:`: each a name and a path, or a mapping with `path`, `type` and `read_only`,
    /// as attachments in order (the caller takes the default one out).
    fn catalogs(&mut self, v: &Value) -> Vec<(String, crate::config::Attachment)> {
        let Some(m) = v.as_mapping() else {
            self.error(
                "catalogs",
                "expected a mapping of catalog names to database paths".into(),
            );
            return vec![];
        };
        let reserved = ["main", "memory", "system", "temp", "temporary"];
        let mut out = vec![];
        for (k, v) in m {
            let name = k.as_str().unwrap_or_default().to_string();
            if !crate::naming::plain_ident(&name)
                || reserved.contains(&name.to_ascii_lowercase().as_str())
            {
                self.error(&name, format!("`{name}` cannot name a catalog: use letters, digits and `_`, and none of {}", reserved.join(", ")));
                continue;
            }
            let (path, mut options) = match v {
                Value::String(p) => (p.clone(), vec![]),
                Value::Mapping(o) => {
                    let mut options = vec![];
                    let mut path = None;
                    for (ok, ov) in o {
                        let ok = ok.as_str().unwrap_or_default();
                        match (ok, ov) {
                            ("path", Value::String(p)) => path = Some(p.clone()),
                            ("type", Value::String(t)) if t.eq_ignore_ascii_case("ducklake") => {
                                self.refused(ok, "a DuckLake catalog is `[ducklake]` in an `efmesh.toml`".into());
                            }
                            ("type", Value::String(t)) if crate::naming::plain_ident(t) => {
                                options.push(("TYPE".to_string(), t.to_ascii_lowercase()))
                            }
                            ("read_only", Value::Bool(b)) => {
                                options.push(("READ_ONLY".to_string(), b.to_string()))
                            }
                            _ => self.refused(ok, format!("efmesh attaches a catalog with `path`, `type` and `read_only`; not with `{ok}`")),
                        }
                    }
                    if !o.contains_key("type") {
                        self.error(&name, "a catalog written as a mapping needs its `type` (such as `duckdb` or `sqlite`), as SQLMesh requires".into());
                        continue;
                    }
                    match path {
                        Some(p) => (p, options),
                        None => {
                            self.error(&name, "a catalog needs its `path`".into());
                            continue;
                        }
                    }
                }
                _ => {
                    self.error(
                        &name,
                        "expected a database path, or a mapping with `path`".into(),
                    );
                    continue;
                }
            };
            options.sort();
            out.push((
                name.clone(),
                crate::config::Attachment {
                    name,
                    url: crate::config::Sensitive::new(path),
                    options,
                    secret: None,
                },
            ));
        }
        out
    }

    /// `secrets:`: DuckDB secrets made when the engine starts, as a list (named in order) or a
    /// mapping of names, each with its `type` and its keys.
    fn secrets(&mut self, v: &Value, cfg: &mut Config) {
        let entries: Vec<(Option<String>, &Value)> = match v {
            Value::Sequence(items) => items.iter().map(|i| (None, i)).collect(),
            Value::Mapping(m) => m
                .iter()
                .map(|(k, v)| (k.as_str().map(str::to_string), v))
                .collect(),
            _ => {
                self.error(
                    "secrets",
                    "expected a list of secrets, each with its `type`".into(),
                );
                return;
            }
        };
        for (i, (name, entry)) in entries.into_iter().enumerate() {
            let Some(fields) = entry.as_mapping() else {
                self.error(
                    "secrets",
                    "each secret is a mapping with its `type` and keys".into(),
                );
                continue;
            };
            let name = name
                .or_else(|| {
                    fields
                        .get("name")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                })
                .unwrap_or_else(|| format!("efmesh_secret_{}", cfg.engine.secrets.len() + i + 1));
            if !crate::naming::plain_ident(&name) {
                self.error(
                    "secrets",
                    format!("`{name}` cannot name a secret: use letters, digits and `_`"),
                );
                continue;
            }
            let Some(kind) = fields
                .get("type")
                .and_then(Value::as_str)
                .filter(|t| crate::naming::plain_ident(t))
            else {
                self.error(
                    "secrets",
                    format!("secret `{name}` needs its `type` (such as `s3`, `gcs` or `http`)"),
                );
                continue;
            };
            let mut values = vec![];
            let mut texts = BTreeMap::new();
            for (k, v) in fields {
                let k = k.as_str().unwrap_or_default();
                if k == "type" || k == "name" {
                    continue;
                }
                if !crate::naming::plain_ident(k) {
                    self.error(
                        k,
                        "a secret's key is letters, digits and `_` (such as `key_id`)".into(),
                    );
                    continue;
                }
                let (sql, text) = match v {
                    Value::String(s) => (crate::quote::literal(s), s.clone()),
                    Value::Bool(b) => (b.to_string(), b.to_string()),
                    Value::Number(n) => (n.to_string(), n.to_string()),
                    _ => {
                        self.error(
                            k,
                            "a secret's value is a string, a number or a boolean".into(),
                        );
                        continue;
                    }
                };
                values.push((k.to_ascii_uppercase(), crate::config::Sensitive::new(sql)));
                texts.insert(k.to_ascii_uppercase(), crate::config::Sensitive::new(text));
            }
            cfg.engine.secrets.push(crate::config::EngineSecret {
                name,
                kind: kind.to_ascii_lowercase(),
                values,
                texts,
            });
        }
    }

    fn model_defaults(&mut self, d: &Value, cfg: &mut Config) {
        let Some(d) = d.as_mapping() else {
            self.error("model_defaults", "expected a mapping".into());
            return;
        };
        for (k, v) in d {
            let key = k.as_str().unwrap_or_default();
            let dotted = format!("model_defaults.{key}");
            let text = match v {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                Value::Bool(b) => Some(b.to_string()),
                _ => None,
            };
            match key {
                "dialect" => {
                    let d = text.unwrap_or_default().to_ascii_lowercase();
                    let d = d.split(',').next().unwrap_or_default().trim().to_string();
                    if d != "duckdb" {
                        self.refused(&dotted, format!("efmesh parses models as DuckDB SQL, not `{d}`; set `dialect: duckdb` (models in another dialect must be rewritten)"));
                    }
                }
                "start" => match text {
                    Some(s) => match crate::time::parse_instant(&s) {
                        Ok(_) => cfg.start = Some(s),
                        Err(m) => self.error(&dotted, m),
                    },
                    None => self.error(&dotted, "expected a date such as 2024-01-01".into()),
                },
                "cron" => match text {
                    Some(c) => match crate::cron::parse(&c) {
                        Ok(_) => cfg.model_defaults.cron = Some(c),
                        Err(why) => self.error(&dotted, format!("a 5-field cron expression or a macro such as @daily: {why}")),
                    },
                    None => self.error(&dotted, "expected a cron expression".into()),
                },
                "owner" => cfg.model_defaults.owner = text,
                "kind" => {
                    let name = text.or_else(|| v.get("name").and_then(Value::as_str).map(str::to_string));
                    match name.as_deref().and_then(crate::model::defaults::default_kind) {
                        Some(k) => cfg.model_defaults.kind = Some(k),
                        None => self.refused(&dotted, "efmesh's default kind is FULL, VIEW or EMBEDDED; declare other kinds in each model".into()),
                    }
                }
                _ => match DEFAULTS_IGNORED.iter().find(|(n, _)| *n == key) {
                    Some((_, why)) => self.ignored(&dotted, why.to_string()),
                    None => self.refused(&dotted, "efmesh does not apply this default; declare the property in each model that needs it".into()),
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Read, Vec<Diagnostic>> {
        parse("config.yaml", text, &|v| {
            (v == "DB").then(|| "from_env.db".to_string())
        })
    }

    #[test]
    fn the_init_template_reads_as_a_duckdb_project() {
        let (cfg, warnings) = read(
            "gateways:\n  duckdb:\n    connection:\n      type: duckdb\n      database: db.db\n\ndefault_gateway: duckdb\n\nmodel_defaults:\n  dialect: duckdb\n  start: 2026-11-27\n\nlinter:\n  enabled: true\n  rules:\n    - ambiguousorinvalidcolumn\n",
        )
        .unwrap();
        assert_eq!(
            cfg.engine.target,
            EngineTarget::Duckdb {
                path: "db.db".into()
            }
        );
        assert_eq!(cfg.start.as_deref(), Some("2026-11-27"));
        assert_eq!(
            cfg.model_defaults.kind,
            crate::model::defaults::default_kind("VIEW")
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0].problem.code(), "sqlmesh-config");
        assert_eq!(warnings[0].location.as_ref().unwrap().line, 13);
    }

    #[test]
    fn variables_defaults_extensions_and_settings_carry_over() {
        let (cfg, _) = read(
            "project: shop\ngateways:\n  a:\n    connection: {type: duckdb, database: a.db}\n  b:\n    connection:\n      type: duckdb\n      database: \"{{ env_var('DB') }}\"\n      extensions: [httpfs, {name: spatial}]\n      connector_config: {threads: 2, memory_limit: 1GB}\n    variables: {region: eu}\ndefault_gateway: b\nmodel_defaults:\n  dialect: duckdb\n  cron: '@hourly'\n  owner: data\n  kind: FULL\nvariables:\n  Region: us\n  days: [1, 2]\n",
        )
        .unwrap();
        assert_eq!(cfg.name, "shop");
        assert_eq!(
            cfg.engine.target,
            EngineTarget::Duckdb {
                path: "from_env.db".into()
            }
        );
        assert_eq!(cfg.engine.extensions, ["httpfs", "spatial"]);
        assert_eq!(cfg.engine.settings["threads"], "2");
        assert_eq!(cfg.engine.settings["memory_limit"], "'1GB'");
        assert_eq!(cfg.model_defaults.cron.as_deref(), Some("@hourly"));
        assert_eq!(cfg.model_defaults.owner.as_deref(), Some("data"));
        assert_eq!(cfg.model_defaults.kind, Some(crate::model::Kind::Full));
        // the gateway's variables win over the project's
        assert_eq!(cfg.variables["region"], serde_json::json!("eu"));
        assert_eq!(cfg.variables["days"], serde_json::json!([1, 2]));
    }

    #[test]
    fn map_variables_are_read_and_a_reordered_one_is_named() {
        // what dbt-converted projects write, and nested maps and lists
        let (cfg, warnings) = read(
            "gateways:\n  g:\n    connection: {type: duckdb, database: d.db}\nvariables:\n  __dbt_packages__: {}\n  shop: {city: oslo, name: north, tiers: [[1], {a: 2}]}\n  late:\n    b: 1\n    a: 2\n",
        )
        .unwrap();
        assert_eq!(cfg.variables["__dbt_packages__"], serde_json::json!({}));
        assert_eq!(
            cfg.variables["shop"],
            serde_json::json!({"city": "oslo", "name": "north", "tiers": [[1], {"a": 2}]})
        );
        // only the map whose keys efmesh holds in another order than the file's is named
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].to_string().contains("variables.late"),
            "{warnings:?}"
        );
        assert_eq!(warnings[0].location.as_ref().unwrap().line, 7);
        // a key that is not text cannot be a Jinja or macro name
        let errors = read(
            "gateways:\n  g:\n    connection: {type: duckdb, database: d.db}\nvariables:\n  m: {1: a}\n",
        )
        .unwrap_err();
        assert_eq!(errors[0].problem.code(), "config-value", "{errors:?}");
    }

    #[test]
    fn time_column_format_is_the_default_format_and_a_broken_one_is_refused() {
        let (cfg, warnings) = read(
            "gateways:\n  g:\n    connection: {type: duckdb, database: d.db}\ntime_column_format: '%Y%m%d'\n",
        )
        .unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(
            cfg.model_defaults.time_column_format.as_deref(),
            Some("%Y%m%d")
        );
        let errors = read(
            "gateways:\n  g:\n    connection: {type: duckdb, database: d.db}\ntime_column_format: '%Y%'\n",
        )
        .unwrap_err();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].location.as_ref().unwrap().line, 4);
        assert!(
            errors[0].to_string().contains("not a strftime format"),
            "{}",
            errors[0]
        );
    }

    #[test]
    fn model_naming_infers_names_when_asked() {
        let (cfg, warnings) = read(
            "gateways:\n  g:\n    connection: {type: duckdb, database: d.db}\nmodel_naming:\n  infer_names: true\n",
        )
        .unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(cfg.model_defaults.infer_names);
        let errors = read(
            "gateways:\n  g:\n    connection: {type: duckdb, database: d.db}\nmodel_naming:\n  infer_names: yes please\n",
        )
        .unwrap_err();
        assert!(
            errors[0].to_string().contains("true or false"),
            "{}",
            errors[0]
        );
        assert_eq!(
            crate::model::defaults::inferred_name("models/sales/orders.sql"),
            "sales.orders"
        );
        assert_eq!(
            crate::model::defaults::inferred_name("models/a/b/c/d.sql"),
            "b.c.d"
        );
        assert_eq!(
            crate::model::defaults::inferred_name("models/Top.sql"),
            "top"
        );
    }

    #[test]
    fn before_all_and_after_all_are_read_each_statement_at_its_line() {
        let (cfg, _) = read(
            "gateways:\n  g:\n    connection: {type: duckdb, database: d.db}\nbefore_all:\n  - CREATE SCHEMA IF NOT EXISTS ops\n  - CREATE TABLE IF NOT EXISTS ops.log (env VARCHAR)\nafter_all:\n  - INSERT INTO ops.log VALUES (@this_env)\n",
        )
        .unwrap();
        let lines: Vec<u64> = cfg.before_all.iter().map(|s| s.location.line).collect();
        assert_eq!(lines, [5, 6]);
        assert_eq!(
            cfg.before_all[1].sql,
            "CREATE TABLE IF NOT EXISTS ops.log (env VARCHAR)"
        );
        assert_eq!(cfg.after_all[0].location.line, 8);
        assert_eq!(cfg.after_all[0].location.column, 5);
        // a statement that cannot render is refused at its line, when the config is read
        let errors = read(
            "gateways:\n  g:\n    connection: {type: duckdb, database: d.db}\nafter_all:\n  - SELECT 1\n  - GRANT SELECT ON @nope TO r\n",
        )
        .unwrap_err();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].location.as_ref().unwrap().line, 6, "{errors:?}");
        let errors = read(
            "gateways:\n  g:\n    connection: {type: duckdb, database: d.db}\nbefore_all: CREATE SCHEMA x\n",
        )
        .unwrap_err();
        assert!(
            errors[0].to_string().contains("a list of SQL statements"),
            "{errors:?}"
        );
    }

    #[test]
    fn catalogs_and_secrets_become_the_database_attachments_and_engine_secrets() {
        let (cfg, _) = read(
            "gateways:\n  g:\n    connection:\n      type: duckdb\n      catalogs:\n        wh: data/wh.duckdb\n        lite: {type: sqlite, path: l.sqlite, read_only: true}\n      secrets:\n        - type: s3\n          key_id: AKIA\n          secret: shh\n          use_ssl: false\n        - {type: http, name: api, bearer_token: t}\n",
        )
        .unwrap();
        assert_eq!(
            cfg.engine.target,
            EngineTarget::Duckdb {
                path: "data/wh.duckdb".into()
            }
        );
        assert_eq!(cfg.default_catalog().as_deref(), Some("wh"));
        assert_eq!(cfg.engine.attachments.len(), 1);
        let a = &cfg.engine.attachments[0];
        assert_eq!((a.name.as_str(), a.url.expose()), ("lite", "l.sqlite"));
        assert_eq!(
            a.options,
            [
                ("READ_ONLY".to_string(), "true".to_string()),
                ("TYPE".to_string(), "sqlite".to_string())
            ]
        );
        let names: Vec<&str> = cfg.engine.secrets.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["efmesh_secret_1", "api"]);
        let sql = crate::sql::dialect::DuckDb::create_secret(&cfg.engine.secrets[0]);
        assert!(sql.contains("TYPE s3"), "{sql}");
        let exposed: Vec<(String, String)> = cfg.engine.secrets[0]
            .values
            .iter()
            .map(|(k, v)| (k.clone(), v.expose().to_string()))
            .collect();
        assert_eq!(
            exposed,
            [
                ("KEY_ID".to_string(), "'AKIA'".to_string()),
                ("SECRET".to_string(), "'shh'".to_string()),
                ("USE_SSL".to_string(), "false".to_string())
            ]
        );
        // nothing of a secret prints
        assert!(!format!("{cfg:?}").contains("shh"));
        // SQLMesh's own rules: a mapping needs `type`; the default catalog must be DuckDB
        let errors = read(
            "gateways:\n  g:\n    connection:\n      catalogs:\n        wh: {path: wh.duckdb}\n",
        )
        .unwrap_err();
        assert!(
            errors[0].to_string().contains("needs its `type`"),
            "{errors:?}"
        );
        let errors = read(
            "gateways:\n  g:\n    connection:\n      catalogs:\n        pg: {type: postgres, path: 'dbname=x'}\n",
        )
        .unwrap_err();
        assert!(
            errors[0]
                .to_string()
                .contains("the first catalog is the default one"),
            "{errors:?}"
        );
        let errors =
            read("gateways:\n  g:\n    connection:\n      filesystems:\n        - {fs: s3}\n")
                .unwrap_err();
        assert!(errors[0].to_string().contains("fsspec"), "{errors:?}");
        // an empty list registers no file system, so it changes nothing
        assert!(read("gateways:\n  g:\n    connection:\n      filesystems: []\n").is_ok());
    }

    #[test]
    fn what_would_change_the_tables_is_refused_by_name() {
        let errors = read(
            "gateways:\n  pg:\n    connection:\n      type: postgres\nmodel_defaults:\n  dialect: snowflake\n  storage_format: iceberg\nloader: custom\nmodle_defaults: {}\n",
        )
        .unwrap_err();
        let said: Vec<String> = errors.iter().map(|d| d.problem.to_string()).collect();
        assert!(
            said.iter()
                .any(|s| s.contains("`loader` in config.yaml is not supported")),
            "{said:?}"
        );
        assert!(said.iter().any(|s| s.contains("`type`")), "{said:?}");
        assert!(
            said.iter().any(|s| s.contains("`model_defaults.dialect`")),
            "{said:?}"
        );
        assert!(
            said.iter()
                .any(|s| s.contains("`model_defaults.storage_format`")),
            "{said:?}"
        );
        let typo = errors
            .iter()
            .find(|d| d.problem.to_string().contains("modle_defaults"))
            .unwrap();
        assert!(typo
            .problem
            .help()
            .unwrap()
            .contains("did you mean `model_defaults`?"));
        assert_eq!(typo.location.as_ref().unwrap().line, 9);
        let bad = read("gateways: [\n").unwrap_err();
        assert_eq!(bad[0].problem.code(), "config-syntax");
    }
}
