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
    Error,
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
    #[error("invalid efmesh.toml: {message}")]
    ConfigSyntax { message: String },
    #[error("environment variable `{name}` is not set")]
    MissingEnvVar { name: String },
    #[error("invalid value for `{key}`: {message}")]
    ConfigValue { key: String, message: String },

    // ---- files ----
    #[error("cannot parse SQL: {message}")]
    SqlTokenize { message: String },
    #[error("model file does not start with a MODEL (...) block")]
    MissingModelBlock,
    #[error("audit file does not start with an AUDIT (...) block")]
    MissingAuditBlock,
    #[error("syntax error in {block} block: expected {expected}, found {found}")]
    BlockSyntax { block: &'static str, expected: String, found: String },
    #[error("unknown property `{name}`")]
    UnknownProperty { name: String, known: Vec<&'static str>, suggestion: Option<String> },
    #[error("property `{name}` is ignored by efmesh")]
    IgnoredProperty { name: String, why: &'static str },
    #[error("property `{name}` is given twice")]
    DuplicateProperty { name: String },
    #[error("the MODEL block has no `name`")]
    MissingName,
    #[error("`{name}` is not a valid model name")]
    InvalidName { name: String },
    #[error("invalid value for `{property}`: expected {expected}")]
    InvalidValue { property: String, expected: String },
    #[error("unknown model kind `{name}`")]
    UnknownKind { name: String, suggestion: Option<String> },
    #[error("unknown parameter `{param}` for kind {kind}")]
    UnknownKindParameter { kind: String, param: String, known: Vec<&'static str> },
    #[error("kind {kind} needs `{param}`")]
    MissingKindParameter { kind: String, param: &'static str },
    #[error("a {kind} model has no query")]
    MissingQuery { kind: String },
    #[error("a {kind} model must not have a query")]
    UnexpectedQuery { kind: String },
    #[error("a model file holds exactly one query, found {count} statements")]
    MultipleStatements { count: usize },
    #[error("the model's statement is not a query")]
    NotAQuery,
    #[error("unknown macro `@{name}`")]
    UnknownMacro { name: String, suggestion: Option<String> },
    #[error("an EXTERNAL model must declare its `columns`")]
    ExternalWithoutColumns,
    #[error("model `{name}` is defined twice")]
    DuplicateModel { name: String, first: String },
    #[error("seed file `{path}` cannot be read: {message}")]
    SeedUnreadable { path: String, message: String },
    #[error("invalid external_models.yaml: {message}")]
    ExternalYaml { message: String },

    // ---- SQL analysis ----
    #[error("SQL not fully understood by efmesh's parser; column-level checks are off for this model")]
    FallbackParse { parser_error: String },
    #[error("unknown table `{name}`")]
    UnknownReference { name: String, suggestion: Option<String> },
    #[error("column `{column}` does not exist in {source_desc}")]
    UnknownColumn { column: String, source_desc: String, available: Vec<String>, suggestion: Option<String> },
    #[error("the query does not return declared column `{column}`")]
    MissingOutputColumn { column: String, returned: Vec<String> },
    #[error("the query returns column `{column}`, which `columns` does not declare")]
    ExtraOutputColumn { column: String, declared: Vec<String> },
    #[error("no `columns` declared; output columns are inferred and their types are unchecked")]
    ColumnsUnchecked { inferred: Vec<String> },
    #[error("output columns cannot be derived statically; column checks of downstream models are off")]
    ColumnsNotInferable { reason: String },
    #[error("{property} column `{column}` is not an output column of the model")]
    KeyColumnMissing { property: String, column: String, available: Vec<String> },
    #[error("dependency cycle: {}", path.join(" -> "))]
    Cycle { path: Vec<String> },

    // ---- audits ----
    #[error("unknown audit `{name}`")]
    UnknownAudit { name: String, suggestion: Option<String> },
    #[error("audit `{audit}` needs argument `{arg}`")]
    MissingAuditArgument { audit: String, arg: &'static str },
    #[error("audit `{name}` is defined twice")]
    DuplicateAudit { name: String, first: String },
}

impl Problem {
    /// Whether this problem stops the command.
    pub fn severity(&self) -> Severity {
        match self {
            Problem::IgnoredProperty { .. }
            | Problem::FallbackParse { .. }
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
            Problem::SqlTokenize { .. } => "sql-tokenize",
            Problem::MissingModelBlock => "missing-model-block",
            Problem::MissingAuditBlock => "missing-audit-block",
            Problem::BlockSyntax { .. } => "block-syntax",
            Problem::UnknownProperty { .. } => "unknown-property",
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
            Problem::UnknownMacro { .. } => "unknown-macro",
            Problem::ExternalWithoutColumns => "external-without-columns",
            Problem::DuplicateModel { .. } => "duplicate-model",
            Problem::SeedUnreadable { .. } => "seed-unreadable",
            Problem::ExternalYaml { .. } => "external-yaml",
            Problem::FallbackParse { .. } => "fallback-parse",
            Problem::UnknownReference { .. } => "unknown-reference",
            Problem::UnknownColumn { .. } => "unknown-column",
            Problem::MissingOutputColumn { .. } => "missing-output-column",
            Problem::ExtraOutputColumn { .. } => "extra-output-column",
            Problem::ColumnsUnchecked { .. } => "columns-unchecked",
            Problem::ColumnsNotInferable { .. } => "columns-not-inferable",
            Problem::KeyColumnMissing { .. } => "key-column-missing",
            Problem::Cycle { .. } => "cycle",
            Problem::UnknownAudit { .. } => "unknown-audit",
            Problem::MissingAuditArgument { .. } => "missing-audit-argument",
            Problem::DuplicateAudit { .. } => "duplicate-audit",
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
            Problem::InvalidName { .. } => Some("model names are `schema.table`".into()),
            Problem::UnknownKind { suggestion, .. } => Some(match suggestion {
                Some(s) => format!("did you mean `{s}`?"),
                None => "kinds: FULL, VIEW, EMBEDDED, INCREMENTAL_BY_TIME_RANGE, INCREMENTAL_BY_UNIQUE_KEY, SCD_TYPE_2, SCD_TYPE_2_BY_COLUMN, SEED, EXTERNAL".into(),
            }),
            Problem::UnknownKindParameter { known, .. } => Some(format!("parameters of this kind: {}", known.join(", "))),
            Problem::MissingQuery { .. } => Some("write the model's SELECT after the MODEL block's closing `);`".into()),
            Problem::UnexpectedQuery { .. } => Some("remove the query after the MODEL block".into()),
            Problem::MultipleStatements { .. } => Some("pre- and post-statements are not supported; keep one SELECT".into()),
            Problem::UnknownMacro { suggestion, .. } => Some(match suggestion {
                Some(s) => format!("did you mean `@{s}`?"),
                None => "time macros: @start, @end, @start_ds, @end_ds, @start_ts, @end_ts, @start_date, @end_date, @start_dt, @end_dt".into(),
            }),
            Problem::ExternalWithoutColumns => Some("add `columns (name TYPE, ...)` to the MODEL block".into()),
            Problem::DuplicateModel { first, .. } => Some(format!("first defined in {first}; rename one of them")),
            Problem::ExternalYaml { .. } => Some("each entry needs `name: schema.table` and `columns: {column: type}`".into()),
            Problem::FallbackParse { parser_error } => Some(format!("the model still plans; declare `columns` to keep its output checked (parser said: {parser_error})")),
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
            Problem::UnknownAudit { suggestion, .. } => did_you_mean(suggestion).or_else(|| Some("define it in an AUDIT file under audits/, or use a built-in: not_null, unique_values, unique_combination_of_columns, accepted_values, number_of_rows, forall, assert_contiguous, assert_no_gaps".into())),
            Problem::MissingAuditArgument { arg, .. } => Some(format!("pass it as `{arg} := ...`")),
            Problem::DuplicateAudit { first, .. } => Some(format!("first defined in {first}")),
            _ => None,
        }
    }
}

/// A problem pinned to where it was written, ready to render or serialize.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub problem: Problem,
    pub location: Option<Location>,
    /// Extra context lines (`= note: ...`), e.g. which parent a column was looked up in.
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// A diagnostic at `location`.
    pub fn at(problem: Problem, location: Location) -> Self {
        Diagnostic { problem, location: Some(location), notes: vec![] }
    }

    /// A diagnostic with no source position (project-wide problems such as cycles).
    pub fn global(problem: Problem) -> Self {
        Diagnostic { problem, location: None, notes: vec![] }
    }

    /// Add a note line.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    pub fn severity(&self) -> Severity {
        self.problem.severity()
    }

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
    diags.sort_by(|a, b| {
        let key = |d: &Diagnostic| {
            let pos = d.location.as_ref().map(|l| (l.file.clone(), l.line, l.column)).unwrap_or_default();
            (!d.is_error(), pos)
        };
        key(a).cmp(&key(b))
    });
}
