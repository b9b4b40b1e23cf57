//! Models: one `.sql` file each, a `MODEL (...)` block in SQLMesh's syntax plus one query.
//!
//! [`parse_model_file`] turns a file's text into a [`Model`] (or diagnostics) on its own,
//! without looking at other models; cross-model checks (references, columns, cycles) happen
//! when the project is assembled.

pub mod block;
pub mod comments;
pub mod defaults;
pub mod kind;
pub mod maintenance;
pub mod values;

pub use defaults::{ModelDefaults, ParseEnv};
pub use kind::{Batching, ChangePolicy, ExternalSource, FileFormat, Kind};
pub use maintenance::Maintenance;

use crate::diagnostic::{Diagnostic, Problem};
use crate::location::Location;
use crate::sql::{self, Dialect, ModelQuery};
use crate::types::TypeFamily;
use block::{Item, TermKind};
use serde::Serialize;
use values::{key_value, span_of, Value};

/// A declared output column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ColumnDef {
    /// Lower-cased name.
    pub name: String,
    /// The type as written (`DECIMAL(10, 2)`).
    pub sql_type: String,
    /// The type's family, which is what contracts compare across engines.
    pub family: TypeFamily,
}

/// Where a model's physics lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    /// A table in the engine's database (the default).
    #[default]
    Table,
    /// Parquet files in the project's lake (`[lake] path`).
    Parquet,
    /// A table in the DuckLake catalog configured under `[ducklake]`.
    Ducklake,
}

impl Target {
    /// The target's name as written in a MODEL block.
    pub fn label(self) -> &'static str {
        match self {
            Target::Table => "table",
            Target::Parquet => "parquet",
            Target::Ducklake => "ducklake",
        }
    }

    /// The kinds whose data this target can hold (`None`: every kind). Parquet holds versions
    /// as immutable files, so it takes kinds whose data is rewritten whole or by time range.
    pub fn kinds(self) -> Option<&'static [&'static str]> {
        match self {
            Target::Table => None,
            Target::Parquet | Target::Ducklake => {
                Some(&["FULL", "SEED", "INCREMENTAL_BY_TIME_RANGE"])
            }
        }
    }

    /// Whether a model of `kind` can have this target.
    pub fn holds(self, kind: &Kind) -> bool {
        self.kinds().is_none_or(|k| k.contains(&kind.name()))
    }
}

pub use crate::passport::Answerable;

pub use crate::interval::IntervalUnit;

/// One audit applied to a model: a built-in or a named AUDIT, with its arguments.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditCall {
    /// The audit's name, lower-cased: a built-in or a named AUDIT.
    pub name: String,
    /// `(argument, value as SQL text)` in the order written.
    pub args: Vec<(String, String)>,
    /// Where the call is written, for diagnostics about it.
    #[serde(skip)]
    pub location: Location,
}

/// A model as defined by its file.
#[derive(Debug, Clone)]
pub struct Model {
    /// `schema.table`, lower-cased.
    pub name: String,
    /// The project-relative path of the file.
    pub file: String,
    /// Where the `name` is written: the anchor for diagnostics about the model as a whole.
    pub name_location: Location,
    /// How the model is materialized, with the kind's parameters.
    pub kind: Kind,
    /// The first instant of history to build; `None` falls back to the project's `start`.
    pub start: Option<String>,
    /// The last instant to build, for models whose history is closed (SQLMesh's meaning: a
    /// date-only `end` includes that whole day); see [`Model::history_end`].
    pub end: Option<String>,
    /// How often the model is due to run (`@daily`, a cron expression); never fingerprinted.
    pub cron: Option<String>,
    /// The length of one interval of the model; unset means one day.
    pub interval_unit: Option<IntervalUnit>,
    /// The columns that identify one row; each must be an output column.
    pub grain: Vec<String>,
    /// The declared output columns: the model's contract. `None` means inferred, unchecked.
    pub columns: Option<Vec<ColumnDef>>,
    /// The audits to run on the model's data, in the order written.
    pub audits: Vec<AuditCall>,
    /// Free text for people; never fingerprinted. Written as the comment of the model's table
    /// and views. From `description`, or else (as SQLMesh reads it) the comment before the
    /// MODEL block.
    pub description: Option<String>,
    /// `column_descriptions (col = 'text', ...)`: written as column comments; never
    /// fingerprinted.
    pub column_descriptions: Vec<(String, String)>,
    /// The comment written at each of the outer SELECT's items (by position), which SQLMesh
    /// registers as the column's comment when `column_descriptions` is not declared. Empty
    /// when the items cannot be matched to output columns (a `*`).
    pub projection_comments: Vec<(usize, String)>,
    /// Who answers for the model; never fingerprinted.
    pub owner: Option<String>,
    /// Labels for grouping and selection; never fingerprinted.
    pub tags: Vec<String>,
    /// Parents declared by hand, for dependencies the query does not name, with where written.
    pub depends_on: Vec<(String, Location)>,
    /// Where the model's data is stored.
    pub target: Target,
    /// Where `target` is written (`None`: not written, the default `table`), so a target the
    /// project cannot build is refused at the line that asks for it.
    pub target_location: Option<Location>,
    /// How far the model's data may be trusted to answer questions, as its owner declares.
    pub answerable: Answerable,
    /// Known limitations of the data, in the owner's words, for anyone reading the model.
    pub caveats: Vec<String>,
    /// Columns to mask in environments configured with `redacted = true`.
    pub redact: Vec<String>,
    /// How the model's intervals are cut into batches and scheduled: metadata, never
    /// fingerprinted.
    pub batching: Batching,
    /// Whether changes apply forward only and whether restating is allowed (SQLMesh's
    /// `forward_only` and `disable_restatement`): metadata, never fingerprinted.
    pub policy: ChangePolicy,
    /// Whether the model's file defines audits after its query (`AUDIT (name x); SELECT
    /// ...`), so the loader reads them there; only those files are read twice.
    pub defines_audits: bool,
    /// How `efmesh compact` may rewrite the files of an EXTERNAL model; never fingerprinted.
    pub maintenance: Option<Maintenance>,
    /// The query, for kinds defined by one.
    pub query: Option<ModelQuery>,
    /// The statements written before and after the query, and those run when its views are
    /// swapped.
    pub statements: sql::statements::ModelStatements,
}

impl Model {
    /// Whether every tick of the model's cron is an edge of its intervals: then a run never
    /// finds an interval in progress, and SQLMesh's `allow_partials` changes nothing.
    pub fn cron_fires_on_interval_edges(&self) -> bool {
        let Ok(cron) = crate::cron::parse(self.cron.as_deref().unwrap_or("@daily")) else {
            return false;
        };
        let zero =
            |items: &[crate::cron::Item]| matches!(items, [i] if !i.star && i.lo == 0 && i.hi == 0);
        match self.interval_unit() {
            IntervalUnit::Minute => true,
            IntervalUnit::Hour => zero(&cron.parsed[0]),
            IntervalUnit::Day => zero(&cron.parsed[0]) && zero(&cron.parsed[1]),
        }
    }

    /// The unit of the model's intervals: its declared `interval_unit`, else the one its `cron`
    /// implies (a schedule that fires every minute or hour gets that unit), else a day.
    pub fn interval_unit(&self) -> IntervalUnit {
        if let Some(u) = self.interval_unit {
            return u;
        }
        let Some(cron) = self.cron.as_deref().map(str::trim) else {
            return IntervalUnit::Day;
        };
        match cron {
            "@hourly" => return IntervalUnit::Hour,
            "@daily" | "@midnight" | "@weekly" | "@monthly" | "@yearly" | "@annually" => {
                return IntervalUnit::Day
            }
            _ => {}
        }
        let fields: Vec<&str> = cron.split_whitespace().collect();
        let repeating =
            |f: &str| f == "*" || f.starts_with("*/") || f.contains(',') || f.contains('-');
        match fields.as_slice() {
            [minute, ..] if repeating(minute) => IntervalUnit::Minute,
            [_, hour, ..] if repeating(hour) => IntervalUnit::Hour,
            _ => IntervalUnit::Day,
        }
    }

    /// The exclusive upper bound of the model's history, from `end`, with SQLMesh's meaning: a
    /// date-only `end` closes after that whole day; an instant on an interval edge is
    /// exclusive, and one inside an interval keeps that interval. `None` when it is open.
    pub fn history_end(&self) -> Option<chrono::NaiveDateTime> {
        let raw = self.end.as_deref()?;
        let t = crate::time::parse_instant(raw).ok()?;
        let unit = self.interval_unit();
        Some(if crate::time::is_date_only(raw) {
            unit.ceil(t + chrono::Duration::days(1))
        } else {
            unit.ceil(t)
        })
    }

    /// `(schema, table)`.
    pub fn schema_table(&self) -> (&str, &str) {
        self.name.split_once('.').unwrap_or(("", &self.name))
    }
}

/// Properties efmesh understands.
pub const KNOWN_PROPERTIES: &[&str] = &[
    "name",
    "kind",
    "start",
    "end",
    "cron",
    "interval_unit",
    "grain",
    "grains",
    "columns",
    "audits",
    "description",
    "column_descriptions",
    "owner",
    "tags",
    "depends_on",
    "target",
    "answerable",
    "caveats",
    "redact",
    "batch_concurrency",
    "maintenance",
];

/// SQLMesh properties efmesh reads and deliberately ignores, with a warning saying why: none
/// of them changes what a DuckDB table holds.
const IGNORED_PROPERTIES: &[(&str, &str)] = &[
    (
        "physical_properties",
        "DuckDB tables take no storage options here",
    ),
    ("virtual_properties", "DuckDB views take no options here"),
    (
        "table_properties",
        "DuckDB tables take no storage options here",
    ),
    (
        "session_properties",
        "set engine settings in the config (`connector_config`, `[engine.settings]`)",
    ),
    (
        "partitioned_by",
        "DuckDB tables have no partitions; SQLMesh ignores it on DuckDB too",
    ),
    (
        "clustered_by",
        "DuckDB tables have no clustering; SQLMesh ignores it on DuckDB too",
    ),
    ("storage_format", "DuckDB tables have one storage format"),
    ("table_format", "DuckDB tables have one table format"),
    (
        "stamp",
        "a stamp only forces a new version in SQLMesh; change the query to make one",
    ),
    (
        "signals",
        "efmesh has no signals: a model is built when its cron is due",
    ),
    ("optimize_query", "efmesh runs the query as written"),
    ("formatting", "formatting changes no table"),
    ("project", "efmesh reads one project"),
    ("cron_tz", "efmesh's crons are in UTC"),
    (
        "references",
        "used by SQLMesh's metrics, which efmesh does not have",
    ),
    ("physical_version", "efmesh versions physics by fingerprint"),
    ("ignored_rules", "efmesh's `check` has its own rules"),
    ("validate_query", "`efmesh check` always validates"),
    (
        "virtual_environment_mode",
        "efmesh's environments are always views over shared physics",
    ),
];

/// Properties handled below besides [`KNOWN_PROPERTIES`]: SQLMesh's, honoured or refused.
const SQLMESH_HANDLED: &[&str] = &[
    "dialect",
    "enabled",
    "gateway",
    "allow_partials",
    "on_destructive_change",
];

/// Parse one model file. Returns the model (when its block is usable) and every diagnostic,
/// warnings included.
pub fn parse_model_file(
    file: &str,
    text: &str,
    dialect: Dialect,
    env: &ParseEnv,
) -> (Option<Model>, Vec<Diagnostic>) {
    // a SQLMesh Jinja query is rendered in place first; the rendered file is parsed as any other
    if env.sqlmesh {
        let jinja = sql::jinja::JinjaEnv {
            variables: &env.macros.jinja_variables,
            macros: &env.macros.jinja_macros,
            gateway: env.gateway.as_deref(),
        };
        match sql::jinja::render_query_block(file, text, &jinja) {
            // the markers became spaces: a marker left is one a template wrote
            Some(Ok(rendered))
                if sql::jinja::render_query_block(file, &rendered, &jinja).is_some() =>
            {
                let d = Diagnostic::at(
                    Problem::JinjaTemplate {
                        message: "a Jinja block rendered another Jinja block's marker".into(),
                    },
                    Location::file_only(file),
                );
                return (None, vec![d]);
            }
            Some(Ok(rendered)) => return parse_model_file(file, &rendered, dialect, env),
            Some(Err(d)) => return (None, vec![d]),
            None => {}
        }
    }
    let mut diags = vec![];
    let tokens = match sql::tokenize(file, text, dialect) {
        Ok(t) => t,
        Err(d) => return (None, vec![d]),
    };
    // properties may use the project's variables (`name @{schema}.orders`)
    let tokens = match sql::macro_lang::expand_block(&tokens, &env.macros, file) {
        Ok(t) => t,
        Err(d) => return (None, d),
    };
    let block = match block::parse_block("MODEL", "MODEL", &tokens, file) {
        Ok(Some(b)) => b,
        // named after its path, a file may be only its query (SQLMesh's `infer_names`)
        Ok(None) if env.defaults.infer_names => block::Block {
            items: vec![],
            span: tokens
                .iter()
                .find(|t| !matches!(t.token, sqlparser::tokenizer::Token::Whitespace(_)))
                .map_or(sqlparser::tokenizer::Span::empty(), |t| t.span),
            rest: 0,
        },
        Ok(None) => {
            let loc = tokens
                .iter()
                .find(|t| !matches!(t.token, sqlparser::tokenizer::Token::Whitespace(_)))
                .map(|t| Location::from_span(file, t.span))
                .unwrap_or_else(|| Location::file_only(file));
            return (None, vec![Diagnostic::at(Problem::MissingModelBlock, loc)]);
        }
        Err(e) => return (None, vec![e]),
    };
    let parsed = interpret(file, &block.items, block.span, env, &mut diags);
    // `AUDIT (...)` blocks after the query define audits, as SQLMesh allows in a model file
    // (the project loader reads them, for the files that have them: `audit::inline_audits`)
    let (rest, audits_at) = split_inline_audits(&tokens[block.rest..]);
    let Some((mut model, kind_ok, notes)) = parsed else {
        return (None, diags);
    };
    model.defines_audits = audits_at.is_some();
    // the comments SQLMesh reads as documentation (efmesh's own projects declare it)
    if env.sqlmesh {
        if model.description.is_none() {
            model.description = comments::leading(&tokens);
        }
        model.projection_comments = comments::projections(rest);
    }
    if let Some(p) = notes.on_destructive_change {
        model.policy.on_destructive_change = p;
    }
    match (&mut model.kind, notes.partitioned_by) {
        (Kind::IncrementalByPartition { partitioned_by }, Some((cols, _))) => match cols {
            Ok(cols) => *partitioned_by = cols,
            Err(d) => diags.push(d),
        },
        (Kind::IncrementalByPartition { .. }, None) if kind_ok => diags.push(Diagnostic::at(
            Problem::MissingKindParameter {
                kind: "INCREMENTAL_BY_PARTITION".into(),
                param: "partitioned_by",
            },
            model.name_location.clone(),
        )),
        (_, Some((_, at))) => diags.push(Diagnostic::at(
            Problem::IgnoredProperty {
                name: "partitioned_by".into(),
                why: "DuckDB tables have no partitions; SQLMesh ignores it on DuckDB too",
            },
            at,
        )),
        _ => {}
    }
    if let Some(at) = notes.allow_partials {
        if !model.cron_fires_on_interval_edges() {
            diags.push(Diagnostic::at(
                Problem::UnsupportedProperty {
                    name: "allow_partials".into(),
                    why: format!(
                        "with cron `{}` SQLMesh computes the {} interval in progress at each run; efmesh computes complete intervals only. Remove `allow_partials`, or use a cron that fires on interval edges (`@{}`), where SQLMesh computes none either",
                        model.cron.as_deref().unwrap_or("@daily"),
                        model.interval_unit().label(),
                        match model.interval_unit() {
                            IntervalUnit::Minute => "minute (* * * * *)",
                            IntervalUnit::Hour => "hourly",
                            IntervalUnit::Day => "daily",
                        }
                    ),
                },
                at,
            ));
        }
    }
    if notes.disabled {
        // `enabled false`: SQLMesh loads no such model, and neither does efmesh
        return (None, diags);
    }
    let block_loc = Location::from_span(file, block.span);
    let has_query = sql::has_content(rest);
    // A model with a broken block or query is still returned, so its children resolve their
    // references to it and the user sees the root cause instead of a cascade.
    if !kind_ok {
        // nothing more to say about the query until the kind is fixed
    } else if model.kind.has_query() {
        if !has_query {
            diags.push(Diagnostic::at(
                Problem::MissingQuery {
                    kind: model.kind.name().into(),
                },
                block_loc,
            ));
        } else if let Some(jinja) = sql::jinja::refuse(file, rest) {
            // the model is still returned, so its children do not cascade into errors
            diags.push(jinja);
        } else if let Some(query) = statements(file, rest, env, &mut model, &mut diags) {
            // SQLMesh transpiles `STRUCT(x AS a)` for DuckDB; DuckDB does not read it
            let transpiled;
            let query: &[sqlparser::tokenizer::TokenWithSpan] = if env.sqlmesh {
                transpiled = sql::struct_literals::rewrite(&query);
                &transpiled
            } else {
                &query
            };
            match sql::prepare_query_in(query, file, dialect, false, &env.macros) {
                Ok((mut q, warnings)) => {
                    diags.extend(warnings);
                    if env.sqlmesh {
                        // SQLMesh's optimizer names unaliased items, and its users read them
                        if let sql::QueryForm::Parsed(ast) = &mut q.form {
                            if let Some(c) = &env.catalog {
                                sql::catalog::strip_references(ast, c);
                            }
                            sql::output_names::name_outputs(ast);
                            q.canonical = ast.to_string();
                        }
                    }
                    model.query = Some(q);
                }
                Err(errs) => diags.extend(errs),
            }
        }
    } else if has_query {
        let first = rest
            .iter()
            .find(|t| !matches!(t.token, sqlparser::tokenizer::Token::Whitespace(_)));
        let loc = first
            .map(|t| Location::from_span(file, t.span))
            .unwrap_or(block_loc);
        diags.push(Diagnostic::at(
            Problem::UnexpectedQuery {
                kind: model.kind.name().into(),
            },
            loc,
        ));
    }
    if let Some((dialect, at)) = notes.foreign_dialect {
        // another dialect is accepted only when its query is DuckDB SQL as well
        let parses = matches!(
            model.query.as_ref().map(|q| &q.form),
            Some(sql::QueryForm::Parsed(_)) | None
        );
        if parses {
            diags.push(Diagnostic::at(Problem::ForeignDialect { dialect }, at));
        } else {
            diags.retain(|d| d.problem.code() != "fallback-parse");
            diags.push(Diagnostic::at(
                Problem::UnsupportedProperty {
                    name: format!("dialect {dialect}"),
                    why: "efmesh parses models as DuckDB SQL and this query does not parse as DuckDB; rewrite it in DuckDB SQL and set `dialect duckdb`".into(),
                },
                at,
            ));
        }
    }
    if let Kind::External { .. } = model.kind {
        if model.columns.is_none() {
            diags.push(Diagnostic::at(
                Problem::ExternalWithoutColumns,
                model.name_location.clone(),
            ));
        }
    }
    if kind_ok {
        diags.extend(maintenance::check(&model));
    }
    (Some(model), diags)
}

/// Split the query from the statements around it (into `model.statements`), returning the
/// query's tokens, or `None` (with the reason in `diags`) when the statements are unusable.
fn statements<'t>(
    file: &str,
    rest: &'t [sqlparser::tokenizer::TokenWithSpan],
    env: &ParseEnv,
    model: &mut Model,
    diags: &mut Vec<Diagnostic>,
) -> Option<std::borrow::Cow<'t, [sqlparser::tokenizer::TokenWithSpan]>> {
    use sql::statements::{prepare, split, stage_env, RuntimeStage, WRITE_STAGES};
    let parts = match split(rest, file) {
        Ok(p) => p,
        Err(d) => {
            diags.push(d);
            return None;
        }
    };
    if parts.pre.is_empty() && parts.post.is_empty() && parts.on_virtual_update.is_empty() {
        return Some(parts.query);
    }
    let envs: Vec<(RuntimeStage, sql::macro_lang::MacroEnv)> = WRITE_STAGES
        .iter()
        .chain(&[RuntimeStage::Promoting])
        .map(|s| (*s, stage_env(&env.macros, *s)))
        .collect();
    let write: Vec<(RuntimeStage, &sql::macro_lang::MacroEnv)> =
        envs[..2].iter().map(|(s, e)| (*s, e)).collect();
    let promoting = [(envs[2].0, &envs[2].1)];
    let mut ok = true;
    let mut each = |list: &[Vec<sqlparser::tokenizer::TokenWithSpan>],
                    stages: &[(RuntimeStage, &sql::macro_lang::MacroEnv)]| {
        let mut out = vec![];
        for tokens in list {
            match prepare(tokens, file, stages) {
                Ok(s) => out.push(s),
                Err(e) => {
                    ok = false;
                    diags.extend(e);
                }
            }
        }
        out
    };
    model.statements.pre = each(&parts.pre, &write);
    model.statements.post = each(&parts.post, &write);
    model.statements.on_virtual_update = each(&parts.on_virtual_update, &promoting);
    if env.sqlmesh {
        // the documentation comments are the query's, not a statement's
        model.projection_comments = comments::projections(&parts.query);
    }
    if model.kind == Kind::Embedded {
        let all = &model.statements;
        if let Some(s) = all
            .pre
            .iter()
            .chain(&all.post)
            .chain(&all.on_virtual_update)
            .next()
        {
            diags.push(Diagnostic::at(
                Problem::ModelStatement {
                    message: "an EMBEDDED model is inlined into the queries that read it: it is never written and has no view, so its statements would never run; move them to a model that is built".into(),
                },
                s.location.clone(),
            ));
            ok = false;
        }
    }
    if model.target == Target::Parquet {
        if let Some(s) = model
            .statements
            .pre
            .iter()
            .chain(&model.statements.post)
            .next()
        {
            diags.push(Diagnostic::at(
                Problem::ModelStatement {
                    message: "pre- and post-statements run in the engine around the write of a table, and a `target parquet` model's rows are written to files; move the statements to a model with `target table`, or to `before_all`".into(),
                },
                s.location.clone(),
            ));
            ok = false;
        }
    }
    ok.then_some(parts.query)
}

/// Interpret the block's items as model properties. The flag says whether `kind` was readable.
fn interpret(
    file: &str,
    items: &[Item],
    block_span: sqlparser::tokenizer::Span,
    env: &ParseEnv,
    diags: &mut Vec<Diagnostic>,
) -> Option<(Model, bool, Notes)> {
    let defaults = &env.defaults;
    let mut notes = Notes::default();
    let mut seen: Vec<String> = vec![];
    let mut name: Option<(String, Location)> = None;
    let mut kind: Option<Kind> = None;
    let mut end_location: Option<Location> = None;
    let mut concurrency_property: Option<(u32, Location)> = None;
    let mut m = Model {
        name: String::new(),
        file: file.to_string(),
        name_location: Location::from_span(file, block_span),
        kind: Kind::Full,
        start: None,
        end: None,
        cron: None,
        interval_unit: None,
        grain: vec![],
        columns: None,
        audits: vec![],
        description: None,
        column_descriptions: vec![],
        projection_comments: vec![],
        owner: None,
        tags: vec![],
        depends_on: vec![],
        target: Target::Table,
        target_location: None,
        answerable: Answerable::Full,
        caveats: vec![],
        redact: vec![],
        batching: Batching::default(),
        policy: ChangePolicy::default(),
        defines_audits: false,
        statements: Default::default(),
        maintenance: None,
        query: None,
    };
    for item in items {
        let Some((key_t, rest)) = key_value(item) else {
            diags.push(Diagnostic::at(
                Problem::BlockSyntax {
                    block: "MODEL",
                    expected: "`property value`".into(),
                    found: format!("`{item}`"),
                },
                Location::from_span(file, item.span),
            ));
            continue;
        };
        let key = key_t.ident().unwrap_or_default().to_ascii_lowercase();
        let key_loc = Location::from_span(file, key_t.span);
        if seen.contains(&key) {
            diags.push(Diagnostic::at(
                Problem::DuplicateProperty { name: key },
                key_loc,
            ));
            continue;
        }
        seen.push(key.clone());
        if key == "partitioned_by" {
            // the partition key of INCREMENTAL_BY_PARTITION; read past for other kinds
            let v = Value::new("partitioned_by", rest, span_of(rest, key_t.span), file);
            notes.partitioned_by = Some((v.ident_list(), key_loc));
            continue;
        }
        if let Some((_, why)) = IGNORED_PROPERTIES.iter().find(|(k, _)| *k == key) {
            diags.push(Diagnostic::at(
                Problem::IgnoredProperty { name: key, why },
                key_loc,
            ));
            continue;
        }
        if SQLMESH_HANDLED.contains(&key.as_str()) {
            let v = Value::new("property", rest, span_of(rest, key_t.span), file);
            if let Err(d) = sqlmesh_property(&key, &v, env, &mut notes) {
                diags.push(d);
            }
            continue;
        }
        if !KNOWN_PROPERTIES.contains(&key.as_str()) && env.sqlmesh {
            let candidates = KNOWN_PROPERTIES
                .iter()
                .chain(SQLMESH_HANDLED)
                .copied()
                .chain(IGNORED_PROPERTIES.iter().map(|(k, _)| *k));
            let suggestion = crate::suggest::closest(&key, candidates);
            diags.push(Diagnostic::at(
                Problem::UnknownSqlmeshProperty {
                    name: key,
                    suggestion,
                },
                key_loc,
            ));
            continue;
        }
        if !KNOWN_PROPERTIES.contains(&key.as_str()) {
            let suggestion = crate::suggest::closest(&key, KNOWN_PROPERTIES.iter().copied());
            diags.push(Diagnostic::at(
                Problem::UnknownProperty {
                    name: key,
                    known: KNOWN_PROPERTIES.to_vec(),
                    suggestion,
                },
                key_loc,
            ));
            continue;
        }
        let v = Value::new(
            KNOWN_PROPERTIES
                .iter()
                .find(|k| **k == key)
                .copied()
                .unwrap_or("?"),
            rest,
            span_of(rest, key_t.span),
            file,
        );
        if rest.is_empty() {
            diags.push(v.invalid("a value"));
            continue;
        }
        let r: Result<(), Diagnostic> = (|| {
            match key.as_str() {
                "name" => {
                    let n = v.ident()?;
                    let n = match &env.catalog {
                        Some(c) => crate::sql::catalog::strip(&n, c),
                        None => n,
                    };
                    // SQLMesh puts a model named without a schema in schema `default`
                    let n = if env.sqlmesh && !n.contains('.') && !n.is_empty() {
                        format!("{}.{n}", crate::sql::catalog::DEFAULT_SCHEMA)
                    } else {
                        n
                    };
                    if let Some(mut reason) = crate::naming::name_problem(&n) {
                        let parts: Vec<&str> = n.split('.').collect();
                        if let (Some(c), [other, _, _]) = (&env.catalog, parts.as_slice()) {
                            reason = format!("its catalog `{other}` is not the gateway's default catalog `{c}`, where efmesh builds every model; name it `schema.table` (or `{c}.schema.table`)");
                        }
                        return Err(Diagnostic::at(
                            Problem::InvalidName { name: n, reason },
                            v.location(),
                        ));
                    }
                    name = Some((n, v.location()));
                }
                "kind" => {
                    let (k, batching, policy) = kind::parse_kind(&v, diags)?;
                    kind = Some(k);
                    m.batching = batching;
                    m.policy = policy;
                }
                "start" | "end" => {
                    let s = v.scalar()?;
                    if let Err(msg) = crate::time::parse_instant(&s) {
                        return Err(v.invalid(&msg));
                    }
                    if key == "start" {
                        m.start = Some(s)
                    } else {
                        end_location = Some(v.location());
                        m.end = Some(s)
                    }
                }
                "cron" => {
                    let text = v.text()?;
                    if let Err(why) = crate::cron::parse(&text) {
                        return Err(v.invalid(&format!(
                            "a 5-field cron expression or a macro such as @daily; `{text}`: {why}"
                        )));
                    }
                    m.cron = Some(text)
                }
                "interval_unit" => {
                    m.interval_unit = Some(match v.ident()?.as_str() {
                        "minute" => IntervalUnit::Minute,
                        "hour" => IntervalUnit::Hour,
                        "day" => IntervalUnit::Day,
                        _ => return Err(v.invalid("minute, hour or day")),
                    })
                }
                "grain" | "grains" => m.grain = v.ident_list()?,
                "columns" => m.columns = Some(parse_columns(&v)?),
                "audits" => m.audits = parse_audits(&v)?,
                "description" => m.description = Some(v.text()?),
                "column_descriptions" => {
                    let mut out = vec![];
                    for item in v.items()? {
                        match item.terms.as_slice() {
                            [c, eq, text]
                                if matches!(&eq.kind, block::TermKind::Op(o) if o == "=")
                                    && matches!(text.kind, block::TermKind::Str(_)) =>
                            {
                                let (Some(c), Some(t)) = (c.ident(), text.scalar()) else {
                                    return Err(v.invalid("(column = 'text', ...)"));
                                };
                                out.push((c.to_ascii_lowercase(), t.to_string()));
                            }
                            _ => return Err(v.invalid("(column = 'text', ...)")),
                        }
                    }
                    m.column_descriptions = out;
                }
                "owner" => m.owner = Some(v.text()?),
                "tags" => m.tags = v.text_list()?,
                "depends_on" => {
                    let loc = v.location();
                    m.depends_on = v
                        .ident_list()?
                        .into_iter()
                        .map(|n| (n, loc.clone()))
                        .collect();
                }
                "target" => {
                    m.target_location = Some(v.location());
                    m.target = match v.ident()?.as_str() {
                        "table" => Target::Table,
                        "parquet" => Target::Parquet,
                        "ducklake" => Target::Ducklake,
                        _ => return Err(v.invalid("table, parquet or ducklake")),
                    }
                }
                "answerable" => {
                    m.answerable = match v.ident()?.as_str() {
                        "full" => Answerable::Full,
                        "sampled" => Answerable::Sampled,
                        "unobservable" => Answerable::Unobservable,
                        _ => return Err(v.invalid("full, sampled or unobservable")),
                    }
                }
                "caveats" => m.caveats = v.text_list()?,
                "redact" => m.redact = v.ident_list()?,
                "batch_concurrency" => {
                    concurrency_property =
                        Some((v.u32_in(1, kind::MAX_BATCH_CONCURRENCY)?, v.location()))
                }
                "maintenance" => m.maintenance = Some(maintenance::parse_maintenance(&v)?),
                _ => unreachable!("every known property is handled"),
            }
            Ok(())
        })();
        if let Err(d) = r {
            diags.push(d);
        }
    }
    match name {
        Some((n, loc)) => {
            m.name = n;
            m.name_location = loc;
        }
        None if env.defaults.infer_names
            && !diags
                .iter()
                .any(|d| matches!(d.problem, Problem::InvalidName { .. })) =>
        {
            let n = defaults::inferred_name(file);
            let n = match &env.catalog {
                Some(c) => crate::sql::catalog::strip(&n, c),
                None => n,
            };
            let loc = Location::from_span(file, block_span);
            if let Some(reason) = crate::naming::name_problem(&n) {
                diags.push(Diagnostic::at(
                    Problem::InvalidName {
                        name: n,
                        reason: format!("{reason}; `model_naming: {{infer_names: true}}` names a model after its path under models/ (`models/<schema>/<table>.sql`): move the file, or declare `name` in its MODEL block"),
                    },
                    loc,
                ));
                return None;
            }
            m.name = n;
            m.name_location = loc;
        }
        None => {
            // a name that was written but refused has its own diagnostic already
            let written = diags
                .iter()
                .any(|d| matches!(d.problem, Problem::InvalidName { .. }));
            if !written {
                diags.push(Diagnostic::at(
                    Problem::MissingName,
                    Location::from_span(file, block_span),
                ));
            }
            return None;
        }
    }
    // `batch_concurrency` as a property (efmesh) or a kind parameter (SQLMesh), not both
    if let Some((n, loc)) = concurrency_property {
        if m.batching.concurrency.is_some() {
            diags.push(Diagnostic::at(
                Problem::DuplicateProperty {
                    name: "batch_concurrency".into(),
                },
                loc,
            ));
        } else {
            m.batching.concurrency = Some(n);
            m.batching.concurrency_location = Some(loc);
        }
    }
    if let (Some(start), Some(end), Some(loc)) = (&m.start, &m.end, end_location) {
        let (s, e) = (
            crate::time::parse_instant(start).ok(),
            crate::time::parse_instant(end).ok(),
        );
        if let (Some(s), Some(e)) = (s, e) {
            if e < s {
                diags.push(Diagnostic::at(
                    Problem::EndBeforeStart {
                        start: start.clone(),
                        end: end.clone(),
                    },
                    loc,
                ));
            }
        }
    }
    match kind {
        Some(k) => m.kind = k,
        // an unreadable kind was reported; don't guess what the query should look like
        None if seen.iter().any(|k| k == "kind") => return Some((m, false, notes)),
        None => {
            if let Some(k) = &defaults.kind {
                m.kind = k.clone();
            }
        }
    }
    if m.cron.is_none() {
        m.cron = defaults.cron.clone();
    }
    if m.owner.is_none() {
        m.owner = defaults.owner.clone();
    }
    if let Kind::IncrementalByTimeRange {
        time_column_format: format @ None,
        ..
    } = &mut m.kind
    {
        format.clone_from(&defaults.time_column_format);
    }
    Some((m, true, notes))
}

/// The query part of what follows a MODEL block, and where its first `AUDIT (` block starts
/// (after a top-level `;`), if it has one.
pub(crate) fn split_inline_audits(
    rest: &[sqlparser::tokenizer::TokenWithSpan],
) -> (&[sqlparser::tokenizer::TokenWithSpan], Option<usize>) {
    use sqlparser::tokenizer::Token;
    let mut depth = 0i32;
    for (i, t) in rest.iter().enumerate() {
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::SemiColon if depth == 0 => {
                let mut next = rest[i + 1..]
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| !matches!(t.token, Token::Whitespace(_)));
                if let (Some((k, a)), Some((_, b))) = (next.next(), next.next()) {
                    let is_audit = matches!(&a.token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("audit"));
                    if is_audit && b.token == Token::LParen {
                        return (&rest[..i], Some(i + 1 + k));
                    }
                }
            }
            _ => {}
        }
    }
    (rest, None)
}

/// What interpreting a block learned that only the whole file's parse can act on.
#[derive(Debug, Default)]
struct Notes {
    /// `enabled false`.
    disabled: bool,
    /// A `dialect` other than DuckDB, and where it is written.
    foreign_dialect: Option<(String, Location)>,
    /// `allow_partials true`, and where: accepted when the model's cron only fires on interval
    /// edges (then SQLMesh computes no partial interval either).
    allow_partials: Option<Location>,
    /// `partitioned_by`, and where it is written.
    partitioned_by: Option<(Result<Vec<String>, Diagnostic>, Location)>,
    /// `on_destructive_change` written as a model property rather than in the kind.
    on_destructive_change: Option<kind::DestructiveChange>,
}

/// SQLMesh's properties that efmesh honours or refuses: `dialect`, `enabled`, `gateway`,
/// `allow_partials`, `on_destructive_change`.
fn sqlmesh_property(
    key: &str,
    v: &Value,
    env: &ParseEnv,
    notes: &mut Notes,
) -> Result<(), Diagnostic> {
    let refuse = |why: String| {
        Err(Diagnostic::at(
            Problem::UnsupportedProperty {
                name: key.to_string(),
                why,
            },
            v.location(),
        ))
    };
    match key {
        "dialect" => {
            let d = v.text()?.to_ascii_lowercase();
            let d = d.split(',').next().unwrap_or_default().trim().to_string();
            if d != "duckdb" {
                notes.foreign_dialect = Some((d, v.location()));
            }
        }
        "enabled" => notes.disabled = !v.bool()?,
        "gateway" => {
            let g = v.text()?;
            if env.gateway.as_deref() != Some(g.as_str()) {
                return refuse(format!(
                    "efmesh runs every model on the project's one engine{}; remove `gateway {g}` or move the model to a project of its own",
                    env.gateway.as_deref().map(|d| format!(" (gateway `{d}`)")).unwrap_or_default()
                ));
            }
        }
        "allow_partials" if v.bool()? => notes.allow_partials = Some(v.location()),
        "on_destructive_change" => notes.on_destructive_change = Some(kind::destructive_change(v)?),
        _ => {}
    }
    Ok(())
}

fn parse_columns(v: &Value) -> Result<Vec<ColumnDef>, Diagnostic> {
    let mut out: Vec<ColumnDef> = vec![];
    let items = v.items()?;
    let mut rest = items.iter();
    while let Some(item) = rest.next() {
        let (name_t, ty) = match item.terms.split_first() {
            Some((n, ty)) if n.ident().is_some() && !ty.is_empty() => (n, ty),
            _ => {
                return Err(Diagnostic::at(
                    Problem::InvalidValue {
                        property: "columns".into(),
                        expected: "`name TYPE` entries".into(),
                    },
                    Location::from_span(v.file, item.span),
                ))
            }
        };
        let ty_item = Item {
            terms: ty.to_vec(),
            span: span_of(ty, item.span),
        };
        let mut sql_type = ty_item.to_string();
        // `STRUCT<a INT, b TEXT>`: the block splits at the comma inside the angle brackets,
        // which are no brackets to it (`<` compares elsewhere); the pieces are joined again
        let open = |t: &str| t.matches('<').count() > t.matches('>').count();
        while open(&sql_type) {
            match rest.next() {
                Some(more) => sql_type = format!("{sql_type}, {more}"),
                None => break,
            }
        }
        if let Some(why) = crate::type_name::type_problem(&sql_type) {
            return Err(Diagnostic::at(
                Problem::InvalidValue {
                    property: "columns".into(),
                    expected: format!("a column type: {why}"),
                },
                Location::from_span(v.file, ty_item.span),
            ));
        }
        let sql_type = crate::type_name::duckdb_spelling(&sql_type);
        let name = name_t.ident().unwrap_or_default().to_ascii_lowercase();
        if out.iter().any(|c| c.name == name) {
            return Err(Diagnostic::at(
                Problem::DuplicateProperty {
                    name: format!("columns.{name}"),
                },
                Location::from_span(v.file, name_t.span),
            ));
        }
        out.push(ColumnDef {
            name,
            family: TypeFamily::of(&sql_type),
            sql_type,
        });
    }
    Ok(out)
}

fn parse_audits(v: &Value) -> Result<Vec<AuditCall>, Diagnostic> {
    // `audits (a, b(x := 1))` or a single `audits a`
    let single;
    let items: &[Item] = match v.terms {
        [t] if matches!(t.kind, TermKind::Tuple(_) | TermKind::Array(_)) => t.list().unwrap_or(&[]),
        terms => {
            single = [Item {
                terms: terms.to_vec(),
                span: v.span,
            }];
            &single
        }
    };
    let bad = |span| {
        Diagnostic::at(
            Problem::InvalidValue {
                property: "audits".into(),
                expected: "audit names, optionally with (argument := value, ...)".into(),
            },
            Location::from_span(v.file, span),
        )
    };
    let mut out = vec![];
    for item in items {
        let (name, args) = match item.terms.as_slice() {
            [n] if n.ident().is_some() => (n, &[][..]),
            [n, a] if n.ident().is_some() && matches!(a.kind, TermKind::Tuple(_)) => {
                (n, a.list().unwrap_or(&[]))
            }
            _ => return Err(bad(item.span)),
        };
        let mut parsed = vec![];
        for arg in args {
            match arg.terms.as_slice() {
                [k, op, rest @ ..]
                    if k.ident().is_some()
                        && matches!(&op.kind, TermKind::Op(o) if o == ":=" || o == "=" || o == "=>")
                        && !rest.is_empty() =>
                {
                    let val = Item {
                        terms: rest.to_vec(),
                        span: span_of(rest, arg.span),
                    };
                    parsed.push((
                        k.ident().unwrap_or_default().to_ascii_lowercase(),
                        val.to_string(),
                    ));
                }
                _ => return Err(bad(arg.span)),
            }
        }
        out.push(AuditCall {
            name: name.ident().unwrap_or_default().to_ascii_lowercase(),
            args: parsed,
            location: Location::from_span(v.file, item.span),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
