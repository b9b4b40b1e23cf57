//! Typed problems and the diagnostics that carry them to a human or a machine.
//!
//! Every user mistake efmesh can detect is one [`Problem`] variant, so callers can match on
//! what went wrong, tests can assert on it, and `--json` gets a stable `code`. A
//! [`Diagnostic`] pins a problem to a [`Location`] and adds notes; the CLI renders it
//! rustc-style and serializes it for `--json`.

use crate::location::Location;
use serde::ser::SerializeStruct;
use serde::Serialize;

/// How bad a problem is: errors stop the command, warnings are reported and let it go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The project cannot be used as it is: the command stops and nothing is run.
    Error,
    /// Worth knowing (something is ignored or unchecked), but the command goes on.
    Warning,
}

/// Render an optional suggestion as a `help:` line.
fn did_you_mean(s: &Option<String>) -> Option<String> {
    s.as_ref().map(|s| format!("did you mean `{s}`?"))
}

/// Everything a project can get wrong, as a typed value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Problem {
    // ---- config ----
    /// `efmesh.toml` is not valid TOML, or has a key or section efmesh does not know.
    #[error("invalid efmesh.toml: {message}")]
    ConfigSyntax {
        /// The TOML parser's explanation, naming the offending key or token.
        message: String,
    },
    /// A `${VAR}` in `efmesh.toml` names an environment variable that is not set.
    #[error("environment variable `{name}` is not set")]
    MissingEnvVar {
        /// The variable's name, without `${` and `}`.
        name: String,
    },
    /// A config value is valid TOML but unusable: a bad glob or `project.start`, two engines
    /// or state stores at once, or an engine setting that is not a string, number or boolean.
    #[error("invalid value for `{key}`: {message}")]
    ConfigValue {
        /// The dotted key the value belongs to, e.g. `project.start` or `engine.settings.threads`.
        key: String,
        /// Why the value was refused.
        message: String,
    },
    /// A SQLMesh `config.yaml` key efmesh reads past (it changes no table, or efmesh does it
    /// its own way) or cannot honour (then it is an error, with what to do instead).
    #[error("`{key}` in config.yaml is {verdict}")]
    SqlmeshConfig {
        /// The dotted key, e.g. `model_defaults.storage_format`.
        key: String,
        /// `ignored` or `read with its keys sorted` (warnings), or `not supported` (an error).
        verdict: &'static str,
        /// Why, and what to do.
        why: String,
    },
    /// A Python model or macro in a SQLMesh project: efmesh runs SQL only.
    #[error("a Python {role} is not supported")]
    PythonFile {
        /// `model` or `macro`.
        role: &'static str,
    },

    // ---- files ----
    /// A model or audit file cannot even be tokenized as SQL, e.g. an unterminated string literal.
    #[error("cannot parse SQL: {message}")]
    SqlTokenize {
        /// The tokenizer's explanation.
        message: String,
    },
    /// A model file does not open with a `MODEL (...)` block, so it defines no model.
    #[error("model file does not start with a MODEL (...) block")]
    MissingModelBlock,
    /// An audit file holds SQL that is not introduced by an `AUDIT (...)` block.
    #[error("audit file does not start with an AUDIT (...) block")]
    MissingAuditBlock,
    /// A `MODEL` or `AUDIT` block is malformed: no `(`, never closed, or an entry that is not
    /// `property value`.
    #[error("syntax error in {block} block: expected {expected}, found {found}")]
    BlockSyntax {
        /// Which block was being read: `MODEL` or `AUDIT`.
        block: &'static str,
        /// What the parser needed at that point, worded for the user.
        expected: String,
        /// What was written instead: a token in backticks, or `end of file`.
        found: String,
    },
    /// A block property that neither efmesh nor SQLMesh defines, usually a typo.
    #[error("unknown property `{name}`")]
    UnknownProperty {
        /// The property as written, lower-cased.
        name: String,
        /// Every property the block accepts, listed in the help.
        known: Vec<&'static str>,
        /// The closest known property, when one is near enough to be a likely typo.
        suggestion: Option<String>,
    },
    /// A property efmesh cannot honour and would build differently without (`allow_partials`,
    /// another gateway, a merge option): refused, with what to do instead.
    #[error("property `{name}` is not supported by efmesh")]
    UnsupportedProperty {
        /// The property, or `KIND parameter` for a kind parameter.
        name: String,
        /// What to do instead.
        why: String,
    },
    /// A property neither efmesh nor SQLMesh knows, in a SQLMesh project: warned about, since
    /// SQLMesh projects carry properties of versions efmesh has not seen.
    #[error("property `{name}` is unknown and ignored")]
    UnknownSqlmeshProperty {
        /// The property as written, lower-cased.
        name: String,
        /// The closest known property, when one is near enough to be a likely typo.
        suggestion: Option<String>,
    },
    /// A model written in another SQL dialect, read as DuckDB because its query parses as
    /// DuckDB SQL.
    #[error("dialect `{dialect}` is read as DuckDB")]
    ForeignDialect {
        /// The dialect the model declares.
        dialect: String,
    },
    /// Jinja in a SQLMesh model or macro file (`JINJA_QUERY_BEGIN`, `{{ }}`, `{% %}`): efmesh
    /// renders only SQLMesh's own macro language, so the file is refused rather than run with
    /// its template text as SQL.
    #[error("Jinja templating (`{what}`) is not supported by efmesh")]
    Jinja {
        /// The Jinja marker found first.
        what: String,
    },
    /// A `JINJA_QUERY_BEGIN` block that does not render: a Jinja syntax or runtime error, or
    /// markers out of place.
    #[error("the Jinja query does not render: {message}")]
    JinjaTemplate {
        /// What minijinja (or the block's shape) says.
        message: String,
    },
    /// A SQLMesh property or kind parameter efmesh reads but does not act on; only a warning, so
    /// SQLMesh projects still load.
    #[error("property `{name}` is ignored by efmesh")]
    IgnoredProperty {
        /// The ignored property, or `KIND parameter` for a kind parameter.
        name: String,
        /// Why efmesh ignores it, shown as the help line.
        why: &'static str,
    },
    /// A property is given twice in one block, or a column twice in `columns`: efmesh will not
    /// guess which one wins.
    #[error("property `{name}` is given twice")]
    DuplicateProperty {
        /// The repeated property, or `columns.<name>` for a repeated column.
        name: String,
    },
    /// A `MODEL` or `AUDIT` block has no `name`, so nothing can refer to it.
    #[error("the MODEL block has no `name`")]
    MissingName,
    /// A model name (in a MODEL block or `external_models.yaml`) is not of the form `schema.table`.
    #[error("`{name}` is not a valid model name: {reason}")]
    InvalidName {
        /// The name as written.
        name: String,
        /// Why not ([`crate::naming::name_problem`]).
        reason: String,
    },
    /// A property's value has the wrong shape or is not one of the allowed values.
    #[error("invalid value for `{property}`: expected {expected}")]
    InvalidValue {
        /// The property (or `kind NAME`) whose value is wrong.
        property: String,
        /// The accepted shape, worded to follow "expected".
        expected: String,
    },
    /// `kind` names a model kind efmesh does not support.
    #[error("unknown model kind `{name}`")]
    UnknownKind {
        /// The kind as written.
        name: String,
        /// The closest supported kind, when one is near enough to be a likely typo.
        suggestion: Option<String>,
    },
    /// A kind is given a parameter it does not take and that is not one of SQLMesh's ignored ones.
    #[error("unknown parameter `{param}` for kind {kind}")]
    UnknownKindParameter {
        /// The kind's name, upper-cased.
        kind: String,
        /// The parameter as written, lower-cased.
        param: String,
        /// The parameters this kind accepts, listed in the help.
        known: Vec<&'static str>,
    },
    /// A kind lacks a parameter it cannot work without, e.g. INCREMENTAL_BY_TIME_RANGE's
    /// `time_column`.
    #[error("kind {kind} needs `{param}`")]
    MissingKindParameter {
        /// The kind's name, upper-cased.
        kind: String,
        /// The required parameter that is missing.
        param: &'static str,
    },
    /// A model whose kind is defined by a query, or an AUDIT block, has no SQL after its block.
    #[error("a {kind} model has no query")]
    MissingQuery {
        /// The model's kind, or `AUDIT` for an audit.
        kind: String,
    },
    /// A SEED or EXTERNAL model has SQL after its block, which would otherwise be silently ignored.
    #[error("a {kind} model must not have a query")]
    UnexpectedQuery {
        /// The model's kind.
        kind: String,
    },
    /// A model file holds more than one query after its block. Other statements before and
    /// after the query are its pre- and post-statements; only one may define its rows.
    #[error("a model file holds exactly one query, found {count}")]
    MultipleStatements {
        /// How many queries were found.
        count: usize,
    },
    /// A model's pre-, post- or on-virtual-update statements are written in a way efmesh
    /// cannot run as SQLMesh would.
    #[error("{message}")]
    ModelStatement {
        /// What is wrong, with what to do about it.
        message: String,
    },
    /// The model's SQL parses but is not a query (e.g. `CREATE TABLE`), so it defines no rows.
    #[error("the model's statement is not a query")]
    NotAQuery,
    /// An `@name` in a query is not a macro efmesh provides: the time macros, and `@this_model`
    /// in audits.
    #[error("unknown macro `@{name}`")]
    UnknownMacro {
        /// The macro as written, without the `@`.
        name: String,
        /// The closest known macro, when one is near enough to be a likely typo.
        suggestion: Option<String>,
    },
    /// A SQLMesh macro call or definition that cannot be expanded: a wrong argument, a
    /// condition that cannot be evaluated while loading, an undefined variable.
    #[error("`@{name}`: {message}")]
    Macro {
        /// The macro (or variable) as written, without the `@`.
        name: String,
        /// What is wrong.
        message: String,
        /// What to do about it.
        help: String,
    },
    /// An EXTERNAL model declares no `columns`, so nothing that reads it could be column-checked.
    #[error("an EXTERNAL model must declare its `columns`")]
    ExternalWithoutColumns,
    /// A `maintenance` policy on a model whose files efmesh cannot compact: only an EXTERNAL
    /// model reading parquet files by path may have one.
    #[error("`maintenance` needs an EXTERNAL model reading parquet files, not {what}")]
    MaintenanceUnsupported {
        /// What the model is instead, e.g. `a FULL model` or `an EXTERNAL engine table`.
        what: String,
    },
    /// Two model files (or a file and `external_models.yaml`) define the same model name.
    #[error("model `{name}` is defined twice")]
    DuplicateModel {
        /// The model name defined twice.
        name: String,
        /// Where the first definition is, as `file:line:column`; the later one is reported.
        first: String,
    },
    /// A SEED model's file cannot be read, so it can be neither hashed nor loaded.
    #[error("seed file `{path}` cannot be read: {message}")]
    SeedUnreadable {
        /// The seed's path, relative to the project root.
        path: String,
        /// The read error reported by the caller.
        message: String,
    },
    /// A seed file is not of the format its extension says (CSV, JSON array, JSON lines), or
    /// has no columns.
    #[error("seed file `{path}` is not valid {format}: {message}")]
    SeedMalformed {
        /// The seed's path, relative to the project root.
        path: String,
        /// The format its extension implies.
        format: String,
        /// What is wrong, with the position when the parser knows it.
        message: String,
    },
    /// A column declared in a SEED model's `columns` is not in its file.
    #[error("seed file `{path}` has no column `{column}`, which `columns` declares")]
    SeedColumnMissing {
        /// The seed's path, relative to the project root.
        path: String,
        /// The declared column.
        column: String,
        /// The file's columns, as written.
        found: Vec<String>,
    },
    /// A seed file has a column its model's `columns` does not declare.
    #[error("seed file `{path}` has column `{column}`, which `columns` does not declare")]
    SeedColumnExtra {
        /// The seed's path, relative to the project root.
        path: String,
        /// The file's column, as written.
        column: String,
        /// The declared columns.
        declared: Vec<String>,
    },
    /// In a SQLMesh project, a seed file's column that `columns` does not declare: left out of
    /// the table, as SQLMesh leaves it out.
    #[error("seed file `{path}` has column `{column}`, which `columns` does not declare; it is not loaded, as in SQLMesh")]
    SeedColumnLeftOut {
        /// The seed's path, relative to the project root.
        path: String,
        /// The file's column, as written.
        column: String,
        /// The declared columns.
        declared: Vec<String>,
    },
    /// `external_models.yaml` is not valid YAML, has an unknown key, or maps a column to something
    /// other than a type string.
    #[error("invalid external_models.yaml: {message}")]
    ExternalYaml {
        /// What is wrong, from the YAML parser or the shape check.
        message: String,
    },

    // ---- SQL analysis ----
    /// sqlparser cannot parse a query (e.g. DuckDB's PIVOT statement): the model still plans from
    /// its tokens, but its columns go unchecked.
    #[error(
        "SQL not fully understood by efmesh's parser; column-level checks are off for this model"
    )]
    FallbackParse {
        /// The parser's message without its position, repeated in the help.
        parser_error: String,
    },
    /// A table reference that names no model or external in the project.
    #[error("unknown table `{name}`")]
    UnknownReference {
        /// The referenced name, lower-cased and dotted as written.
        name: String,
        /// The closest model name, when one is near enough to be a likely typo.
        suggestion: Option<String>,
    },
    /// In a SQLMesh project, a table reference that names no model or external: read from the
    /// engine as it is, as SQLMesh reads it, unchecked.
    #[error("`{name}` is neither a model nor a declared external table; it is read from the database as it is, as SQLMesh reads it")]
    UndeclaredExternal {
        /// The referenced name, lower-cased and dotted as written.
        name: String,
        /// The closest model name, when one is near enough to be a likely typo.
        suggestion: Option<String>,
    },
    /// A query reads a column that none of the sources in scope provides.
    #[error("column `{column}` does not exist in {source_desc}")]
    UnknownColumn {
        /// The column the query reads.
        column: String,
        /// Where it was looked for, e.g. model `src.events`, CTE `a`, or a list of sources.
        source_desc: String,
        /// The columns those sources do provide, listed in the help.
        available: Vec<String>,
        /// The closest available column, when one is near enough to be a likely typo.
        suggestion: Option<String>,
    },
    /// A column declared in `columns` is not returned by the model's query.
    #[error("the query does not return declared column `{column}`")]
    MissingOutputColumn {
        /// The declared column the query does not return.
        column: String,
        /// The columns the query does return.
        returned: Vec<String>,
    },
    /// The query returns a column that `columns` does not declare, so the contract is incomplete.
    #[error("the query returns column `{column}`, which `columns` does not declare")]
    ExtraOutputColumn {
        /// The returned column that is not declared.
        column: String,
        /// The columns `columns` declares.
        declared: Vec<String>,
    },
    /// A model (other than EMBEDDED) declares no `columns`: its output names are inferred from the
    /// query and its types are not a contract.
    #[error("no `columns` declared; output columns are inferred and their types are unchecked")]
    ColumnsUnchecked {
        /// The output columns efmesh derived from the query.
        inferred: Vec<String>,
    },
    /// A model declares no `columns` and its output cannot be derived statically (e.g. an
    /// unaliased expression), so column checks of the models reading it are off.
    #[error(
        "output columns cannot be derived statically; column checks of downstream models are off"
    )]
    ColumnsNotInferable {
        /// Why the output could not be derived; it opens the help line.
        reason: String,
    },
    /// A column named by `grain`, `time_column`, `unique_key` or an SCD kind's `columns` is not
    /// among the model's output columns.
    #[error("{property} column `{column}` is not an output column of the model")]
    KeyColumnMissing {
        /// The property that names the column.
        property: String,
        /// The column that is not in the output.
        column: String,
        /// The model's output columns, listed in the help.
        available: Vec<String>,
    },
    /// Models reference each other in a loop, so there is no order in which to build them.
    #[error("dependency cycle: {}", path.join(" -> "))]
    Cycle {
        /// The model names around the loop, starting from the smallest and repeating it at the end.
        path: Vec<String>,
    },

    // ---- audits ----
    /// A model calls an audit that is neither built in nor defined in an AUDIT file.
    #[error("unknown audit `{name}`")]
    UnknownAudit {
        /// The audit name as called.
        name: String,
        /// The closest built-in or named audit, when one is near enough to be a likely typo.
        suggestion: Option<String>,
    },
    /// A built-in audit is called without an argument it requires, e.g. `columns` for `not_null`.
    #[error("audit `{audit}` needs argument `{arg}`")]
    MissingAuditArgument {
        /// The audit that was called.
        audit: String,
        /// The required argument that is missing.
        arg: String,
    },
    /// A built-in audit is called with an argument it does not take: usually a typo that
    /// would otherwise be ignored silently.
    #[error("audit `{audit}` has no argument `{arg}`")]
    UnknownAuditArgument {
        /// The built-in audit that was called.
        audit: String,
        /// The argument as written.
        arg: String,
        /// The arguments it takes.
        known: Vec<String>,
        /// The closest of them, when one is near enough to be a likely typo.
        suggestion: Option<String>,
    },
    /// An audit argument has a value efmesh cannot use (`scope := 'daily'`).
    #[error("audit `{audit}`: `{arg} := {value}` is not valid")]
    InvalidAuditArgument {
        /// The audit that was called.
        audit: String,
        /// The argument.
        arg: String,
        /// The value as written.
        value: String,
        /// What it may be.
        expected: &'static str,
    },
    /// A built-in audit's argument is not what the audit reads it as (column names, values, a
    /// row count, conditions), so it would reach SQL as something else.
    #[error("audit `{audit}`: `{arg} := {value}`: {reason}")]
    BadAuditArgument {
        /// The audit that was called.
        audit: String,
        /// The argument.
        arg: String,
        /// The value as written.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A model that is rebuilt whole reads itself.
    #[error(
        "`{model}` reads itself, and a {kind} model is rebuilt whole, so there is nothing to read"
    )]
    SelfReference {
        /// The model.
        model: String,
        /// Its kind.
        kind: String,
    },
    /// An incremental model reads itself but does not declare its columns, so its table
    /// cannot be created before the first batch reads it.
    #[error("`{model}` reads itself but does not declare its `columns`")]
    SelfReferenceColumns {
        /// The model.
        model: String,
    },
    /// Two AUDIT blocks define the same audit name.
    #[error("audit `{name}` is defined twice")]
    DuplicateAudit {
        /// The audit name defined twice.
        name: String,
        /// Where the first definition is, as `file:line:column`; the later one is reported.
        first: String,
    },

    // ---- what this build of efmesh cannot do (refused at check, never mid-apply) ----
    /// A model's `end` lies before its `start`, so its history would be empty.
    #[error("`end` ({end}) is before `start` ({start})")]
    EndBeforeStart {
        /// `start` as written.
        start: String,
        /// `end` as written.
        end: String,
    },
    /// The project asks for something efmesh parses but does not build yet. Accepting it and
    /// doing something else would be a silent degradation, so it is refused.
    #[error("{what} is not built yet")]
    NotBuiltYet {
        /// What was asked for, e.g. "`target ducklake` (model `a.b`)".
        what: String,
        /// What to do instead.
        instead: String,
    },
    /// A model needs a capability the configured engine does not have (a parquet target or a
    /// file-reading EXTERNAL on PostgreSQL): refused at `check`, never attempted.
    #[error("model `{model}` needs {needs}, which the {engine} engine cannot do")]
    EngineLacks {
        /// The model.
        model: String,
        /// The engine's name.
        engine: String,
        /// What the model asks for (`target parquet`, `reading files`).
        needs: String,
    },
    /// A model with `target ducklake` in a project without `[ducklake]`.
    #[error("`{model}` has `target ducklake`, but efmesh.toml has no `[ducklake] catalog`")]
    TargetNeedsDuckLake {
        /// The model.
        model: String,
    },
    /// A model with `target parquet` in a project without `[lake] path`.
    #[error("`{model}` has `target parquet`, but efmesh.toml has no `[lake] path`")]
    TargetNeedsLake {
        /// The model.
        model: String,
    },
    /// A kind that a target cannot hold, e.g. a VIEW written as parquet files.
    #[error("a {kind} model cannot have `target {target}`")]
    TargetUnsupportedKind {
        /// The model's kind.
        kind: String,
        /// The target as written.
        target: String,
        /// The kinds the target holds.
        supported: Vec<&'static str>,
    },
    /// `batch_concurrency` above 1 on a kind whose batches must run in order.
    #[error("a {kind} model cannot run batches concurrently (`batch_concurrency {value}`)")]
    BatchConcurrencyUnsupported {
        /// The model's kind.
        kind: String,
        /// The value written.
        value: u32,
    },
}

impl Problem {
    /// Whether this problem stops the command.
    pub fn severity(&self) -> Severity {
        match self {
            Problem::IgnoredProperty { .. }
            | Problem::UnknownSqlmeshProperty { .. }
            | Problem::ForeignDialect { .. }
            | Problem::SqlmeshConfig {
                verdict: "ignored" | "read with its keys sorted",
                ..
            }
            | Problem::FallbackParse { .. }
            | Problem::UndeclaredExternal { .. }
            | Problem::SeedColumnLeftOut { .. }
            | Problem::ColumnsUnchecked { .. }
            | Problem::ColumnsNotInferable { .. } => Severity::Warning,
            _ => Severity::Error,
        }
    }

    /// A stable, kebab-case identifier for tools and `--json` consumers.
    pub fn code(&self) -> &'static str {
        match self {
            Problem::ConfigSyntax { .. } => "config-syntax",
            Problem::MissingEnvVar { .. } => "missing-env-var",
            Problem::ConfigValue { .. } => "config-value",
            Problem::SqlmeshConfig { .. } => "sqlmesh-config",
            Problem::PythonFile { .. } => "python-file",
            Problem::SqlTokenize { .. } => "sql-tokenize",
            Problem::MissingModelBlock => "missing-model-block",
            Problem::MissingAuditBlock => "missing-audit-block",
            Problem::BlockSyntax { .. } => "block-syntax",
            Problem::UnknownProperty { .. } => "unknown-property",
            Problem::UnsupportedProperty { .. } => "unsupported-property",
            Problem::UnknownSqlmeshProperty { .. } => "unknown-sqlmesh-property",
            Problem::ForeignDialect { .. } => "foreign-dialect",
            Problem::Jinja { .. } => "jinja",
            Problem::JinjaTemplate { .. } => "jinja-template",
            Problem::IgnoredProperty { .. } => "ignored-property",
            Problem::DuplicateProperty { .. } => "duplicate-property",
            Problem::MissingName => "missing-name",
            Problem::InvalidName { .. } => "invalid-name",
            Problem::InvalidValue { .. } => "invalid-value",
            Problem::UnknownKind { .. } => "unknown-kind",
            Problem::UnknownKindParameter { .. } => "unknown-kind-parameter",
            Problem::MissingKindParameter { .. } => "missing-kind-parameter",
            Problem::MissingQuery { .. } => "missing-query",
            Problem::UnexpectedQuery { .. } => "unexpected-query",
            Problem::MultipleStatements { .. } => "multiple-statements",
            Problem::NotAQuery => "not-a-query",
            Problem::ModelStatement { .. } => "model-statement",
            Problem::UnknownMacro { .. } => "unknown-macro",
            Problem::Macro { .. } => "macro",
            Problem::ExternalWithoutColumns => "external-without-columns",
            Problem::MaintenanceUnsupported { .. } => "maintenance-unsupported",
            Problem::DuplicateModel { .. } => "duplicate-model",
            Problem::SeedUnreadable { .. } => "seed-unreadable",
            Problem::SeedMalformed { .. } => "seed-malformed",
            Problem::SeedColumnMissing { .. } => "seed-column-missing",
            Problem::SeedColumnExtra { .. } => "seed-column-extra",
            Problem::SeedColumnLeftOut { .. } => "seed-column-left-out",
            Problem::ExternalYaml { .. } => "external-yaml",
            Problem::FallbackParse { .. } => "fallback-parse",
            Problem::UnknownReference { .. } => "unknown-reference",
            Problem::UndeclaredExternal { .. } => "undeclared-external",
            Problem::UnknownColumn { .. } => "unknown-column",
            Problem::MissingOutputColumn { .. } => "missing-output-column",
            Problem::ExtraOutputColumn { .. } => "extra-output-column",
            Problem::ColumnsUnchecked { .. } => "columns-unchecked",
            Problem::ColumnsNotInferable { .. } => "columns-not-inferable",
            Problem::KeyColumnMissing { .. } => "key-column-missing",
            Problem::Cycle { .. } => "cycle",
            Problem::UnknownAudit { .. } => "unknown-audit",
            Problem::MissingAuditArgument { .. } => "missing-audit-argument",
            Problem::UnknownAuditArgument { .. } => "unknown-audit-argument",
            Problem::InvalidAuditArgument { .. } => "invalid-audit-argument",
            Problem::BadAuditArgument { .. } => "bad-audit-argument",
            Problem::SelfReference { .. } => "self-reference",
            Problem::SelfReferenceColumns { .. } => "self-reference-columns",
            Problem::DuplicateAudit { .. } => "duplicate-audit",
            Problem::EndBeforeStart { .. } => "end-before-start",
            Problem::NotBuiltYet { .. } => "not-built-yet",
            Problem::TargetNeedsLake { .. } => "target-needs-lake",
            Problem::TargetNeedsDuckLake { .. } => "target-needs-ducklake",
            Problem::EngineLacks { .. } => "engine-lacks",
            Problem::TargetUnsupportedKind { .. } => "target-unsupported-kind",
            Problem::BatchConcurrencyUnsupported { .. } => "batch-concurrency-unsupported",
        }
    }

    /// What the user should do about it, when efmesh knows.
    pub fn help(&self) -> Option<String> {
        match self {
            Problem::MissingEnvVar { name } => Some(format!("export {name}=... before running efmesh, or remove the ${{{name}}} reference")),
            Problem::UnknownProperty { known, suggestion, .. } => Some(match suggestion {
                Some(s) => format!("did you mean `{s}`? known properties: {}", known.join(", ")),
                None => format!("known properties: {}", known.join(", ")),
            }),
            Problem::IgnoredProperty { why, .. } => Some(why.to_string()),
            Problem::DuplicateProperty { .. } => Some("remove one of them".into()),
            Problem::MissingName => Some("add `name schema.table,` to the MODEL block".into()),
            Problem::InvalidName { .. } => Some("model names are `schema.table`, each part a plain identifier outside efmesh's namespaces (`_efmesh`, `efmesh_state`, `<env>__<schema>`)".into()),
            Problem::UnknownKind { suggestion, .. } => Some(match suggestion {
                Some(s) => format!("did you mean `{s}`?"),
                None => "kinds: FULL, VIEW, EMBEDDED, INCREMENTAL_BY_TIME_RANGE, INCREMENTAL_BY_UNIQUE_KEY, INCREMENTAL_BY_PARTITION, SCD_TYPE_2, SCD_TYPE_2_BY_COLUMN, SEED, EXTERNAL".into(),
            }),
            Problem::UnknownKindParameter { known, .. } => Some(format!("parameters of this kind: {}", known.join(", "))),
            Problem::MissingQuery { .. } => Some("write the model's SELECT after the MODEL block's closing `);`".into()),
            Problem::UnexpectedQuery { .. } => Some("remove the query after the MODEL block".into()),
            Problem::MultipleStatements { .. } => Some("keep one SELECT; the statements before and after it run before and after it is written (pre- and post-statements)".into()),
            Problem::UnknownMacro { suggestion, .. } => Some(match suggestion {
                Some(s) => format!("did you mean `@{s}`?"),
                None => "time macros: @start, @end, and SQLMesh's @start_*, @end_*, @execution_* with _ds, _ts, _tstz, _date, _dt, _dtntz, _epoch, _millis or _hour".into(),
            }),
            Problem::Macro { help, .. } => Some(help.clone()),
            Problem::UnsupportedProperty { why, .. } => Some(why.clone()),
            Problem::UnknownSqlmeshProperty { suggestion, .. } => Some(match suggestion {
                Some(s) => format!("did you mean `{s}`? efmesh reads past it"),
                None => "efmesh reads past it; remove it if it means nothing to SQLMesh either".into(),
            }),
            Problem::Jinja { .. } => Some("efmesh renders SQLMesh's macro language only: rewrite the template with `@DEF`, `@IF`, `@EACH` and `@variable`s (the manual's \"Coming from SQLMesh\", docs/src/sqlmesh.md)".into()),
            Problem::ForeignDialect { .. } => Some("its query parses as DuckDB SQL, so it runs as written; check that functions mean the same in DuckDB, or set `dialect duckdb`".into()),
            Problem::SqlmeshConfig { why, .. } => Some(why.clone()),
            Problem::PythonFile { role: "model" } => Some("efmesh runs SQL models: rewrite it as a `.sql` model with a MODEL block, or move it out of `models/`".into()),
            Problem::PythonFile { .. } => Some("define the macro in SQL, `@DEF(name, (a, b) -> ...);` in `macros/*.sql`, or move the file out of `macros/`".into()),
            Problem::ExternalWithoutColumns => Some("add `columns (name TYPE, ...)` to the MODEL block".into()),
            Problem::MaintenanceUnsupported { .. } => Some("compaction rewrites a model's source files: use it on `kind EXTERNAL (path 'landing/**/*.parquet', format parquet)`, or remove `maintenance`".into()),
            Problem::DuplicateModel { first, .. } => Some(format!("first defined in {first}; rename one of them")),
            Problem::SeedMalformed { .. } => Some("a `.json` seed is one array of objects, a `.jsonl` or `.ndjson` seed one object per line; any other file is read as CSV with a header row".into()),
            Problem::SeedColumnMissing { found, .. } => Some(format!("the file's columns: {}; add the column to the file or remove it from `columns`", found.join(", "))),
            Problem::SeedColumnExtra { declared, .. } => Some(format!("declared: {}; declare it in `columns` or remove it from the file", declared.join(", "))),
            Problem::SeedColumnLeftOut { declared, .. } => Some(format!("declared: {}; declare it in `columns` to load it", declared.join(", "))),
            Problem::ExternalYaml { .. } => Some("each entry needs `name: schema.table` and `columns: {column: type}`".into()),
            Problem::FallbackParse { parser_error } => Some(format!("the model still plans; declare `columns` to keep its output checked (parser said: {parser_error})")),
            Problem::UndeclaredExternal { suggestion, .. } => Some(match suggestion {
                Some(s) => format!("did you mean the model `{s}`? Otherwise declare the table in external_models.yaml to have its columns checked"),
                None => "declare it in external_models.yaml to have its columns checked".into(),
            }),
            Problem::UnknownReference { suggestion, .. } => Some(match suggestion {
                Some(s) => format!("did you mean `{s}`?"),
                None => "declare raw tables as `kind EXTERNAL` models (or in external_models.yaml)".into(),
            }),
            Problem::UnknownColumn { available, suggestion, .. } => {
                let list = available.join(", ");
                Some(match suggestion {
                    Some(s) => format!("did you mean `{s}`? available: {list}"),
                    None => format!("available: {list}"),
                })
            }
            Problem::MissingOutputColumn { returned, .. } => Some(format!("the query returns: {}", returned.join(", "))),
            Problem::ExtraOutputColumn { declared, .. } => Some(format!("declared: {}; add it to `columns` or drop it from the SELECT", declared.join(", "))),
            Problem::ColumnsUnchecked { .. } => Some("declare `columns (name TYPE, ...)` to make the output a contract".into()),
            Problem::ColumnsNotInferable { reason } => Some(format!("{reason}; alias every computed column, or declare `columns`")),
            Problem::KeyColumnMissing { available, .. } => Some(format!("output columns: {}", available.join(", "))),
            Problem::Cycle { .. } => Some("break the cycle by removing one of these references".into()),
            Problem::UnknownAudit { suggestion, .. } => did_you_mean(suggestion).or_else(|| Some("define it in an AUDIT file under audits/, or use a built-in: not_null, unique_values, unique_combination_of_columns, accepted_values, number_of_rows, forall, assert_contiguous, assert_no_gaps, accepted_range, not_accepted_values, at_least_one, not_constant, not_empty_string".into())),
            Problem::MissingAuditArgument { arg, .. } => Some(format!("pass it as `{arg} := ...`")),
            Problem::UnknownAuditArgument { suggestion, known, .. } => did_you_mean(suggestion).or_else(|| Some(format!("it takes: {}", known.join(", ")))),
            Problem::InvalidAuditArgument { expected, .. } => Some(format!("use {expected}")),
            Problem::SelfReferenceColumns { .. } => Some("its table is created before its first batch reads it, so declare every column it returns with its type in the MODEL block, `columns (id INT, ds TEXT, ...)`, as SQLMesh asks of self-referencing models".into()),
            Problem::SelfReference { .. } => Some("only incremental models (INCREMENTAL_BY_TIME_RANGE, INCREMENTAL_BY_UNIQUE_KEY, SCD_TYPE_2) may read their own earlier rows; read the parents instead".into()),
            Problem::BadAuditArgument { arg, .. } => Some(match arg.as_str() {
                "columns" => "name one or more columns of the model: `columns := (a, b)`".into(),
                "column" => "name one column of the model: `column := a`".into(),
                "threshold" => "give the least number of rows, a whole number: `threshold := 10`".into(),
                "is_in" => "list the accepted values: `is_in := ('a', 'b')`".into(),
                _ => "list SQL conditions every row must meet: `criteria := (x > 0)`".into(),
            }),
            Problem::DuplicateAudit { first, .. } => Some(format!("first defined in {first}")),
            Problem::EndBeforeStart { .. } => Some("`end` is the last instant of the history to build; move it after `start`, or remove it to keep the history open".into()),
            Problem::NotBuiltYet { instead, .. } => Some(instead.clone()),
            Problem::EngineLacks { engine, .. } => Some(format!("use `[engine] duckdb = \"...\"` for this project, or change the model so the {engine} engine can build it (`target table`, a table the database already has)")),
            Problem::TargetNeedsDuckLake { .. } => Some("add `[ducklake]` with `catalog = \"meta.sqlite\"` (and `ducklake`, `sqlite_scanner` in `[engine] extensions`) to efmesh.toml, or use `target table`".into()),
            Problem::TargetNeedsLake { .. } => Some("add `[lake]` with `path = \"lake\"` (a folder relative to the project root) to efmesh.toml, or use `target table`".into()),
            Problem::TargetUnsupportedKind { supported, .. } => Some(format!("it holds {} models; use `target table` for this one", supported.join(", "))),
            Problem::BatchConcurrencyUnsupported { kind, .. } if kind.starts_with("INCREMENTAL_BY_UNIQUE_KEY") || kind.starts_with("SCD") => Some("its batches build on each other (each upsert or SCD run reads what the previous one wrote), so they run one at a time; remove `batch_concurrency` or set it to 1".into()),
            Problem::BatchConcurrencyUnsupported { .. } => Some("only INCREMENTAL_BY_TIME_RANGE models are computed in batches that can run at once; remove `batch_concurrency`".into()),
            _ => None,
        }
    }
}

/// A problem pinned to where it was written, ready to render or serialize.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    /// What went wrong; it decides the code, message, help and severity.
    pub problem: Problem,
    /// Where it was written; `None` for project-wide problems such as cycles.
    pub location: Option<Location>,
    /// Extra context lines (`= note: ...`), e.g. which parent a column was looked up in.
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// A diagnostic at `location`.
    pub fn at(problem: Problem, location: Location) -> Self {
        Diagnostic {
            problem,
            location: Some(location),
            notes: vec![],
        }
    }

    /// A diagnostic with no source position (project-wide problems such as cycles).
    pub fn global(problem: Problem) -> Self {
        Diagnostic {
            problem,
            location: None,
            notes: vec![],
        }
    }

    /// Add a note line.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// How bad it is, which only the problem decides.
    pub fn severity(&self) -> Severity {
        self.problem.severity()
    }

    /// Whether this diagnostic stops the command and leaves the project unusable.
    pub fn is_error(&self) -> bool {
        self.severity() == Severity::Error
    }
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sev = match self.severity() {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        match &self.location {
            Some(l) => write!(f, "{l}: {sev}[{}]: {}", self.problem.code(), self.problem)?,
            None => write!(f, "{sev}[{}]: {}", self.problem.code(), self.problem)?,
        }
        if let Some(h) = self.problem.help() {
            write!(f, " (help: {h})")?;
        }
        Ok(())
    }
}

impl Serialize for Diagnostic {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Diagnostic", 7)?;
        st.serialize_field("severity", &self.severity())?;
        st.serialize_field("code", self.problem.code())?;
        st.serialize_field("message", &self.problem.to_string())?;
        st.serialize_field("location", &self.location)?;
        st.serialize_field("help", &self.problem.help())?;
        st.serialize_field("notes", &self.notes)?;
        st.end()
    }
}

/// Sort diagnostics errors first, then by file and position, so output is stable across runs
/// and the problems that stop a command come first.
pub fn sort(diags: &mut [Diagnostic]) {
    fn key(d: &Diagnostic) -> (bool, Option<(&str, u64, u64)>) {
        (
            !d.is_error(),
            d.location
                .as_ref()
                .map(|l| (l.file.as_str(), l.line, l.column)),
        )
    }
    diags.sort_by(|a, b| key(a).cmp(&key(b)));
}
