//! What this build of efmesh can build: the refusals `check` makes about models, so that
//! nothing a model file asks for is accepted and then done differently, or refused halfway
//! through an apply.
//!
//! The config's own refusals (an object-store lake URL, `[ducklake]`, PostgreSQL) are made
//! where the config is parsed, next to the value's position in `efmesh.toml`.

use crate::config::{Config, EngineTarget};
use crate::diagnostic::{Diagnostic, Problem};
use crate::model::{ExternalSource, Kind, Model, Target};

/// Every model-level refusal for `models` under `config`, at the line that asks for it.
pub fn check(config: &Config, models: &[Model]) -> Vec<Diagnostic> {
    let mut out = vec![];
    for m in models {
        let at = || {
            m.target_location
                .clone()
                .unwrap_or_else(|| m.name_location.clone())
        };
        if !m.target.holds(&m.kind) {
            out.push(Diagnostic::at(
                Problem::TargetUnsupportedKind {
                    kind: m.kind.name().into(),
                    target: m.target.label().into(),
                    supported: m.target.kinds().unwrap_or_default().to_vec(),
                },
                at(),
            ));
        } else if m.target == Target::Ducklake && config.engine.ducklake.is_none() {
            out.push(Diagnostic::at(
                Problem::TargetNeedsDuckLake {
                    model: m.name.clone(),
                },
                at(),
            ));
        } else if m.target == Target::Parquet && config.lake_path.is_none() {
            out.push(Diagnostic::at(
                Problem::TargetNeedsLake {
                    model: m.name.clone(),
                },
                at(),
            ));
        }
        if let Some(needs) = engine_lacks(config, m) {
            out.push(Diagnostic::at(
                Problem::EngineLacks {
                    model: m.name.clone(),
                    engine: "PostgreSQL".into(),
                    needs: needs.into(),
                },
                at(),
            ));
        }
        if let (Some(n), Some(loc)) = (
            m.batching.concurrency,
            m.batching.concurrency_location.as_ref(),
        ) {
            let time_range = matches!(m.kind, Kind::IncrementalByTimeRange { .. });
            let ordered = matches!(
                m.kind,
                Kind::IncrementalByUniqueKey { .. }
                    | Kind::ScdType2 { .. }
                    | Kind::ScdType2ByColumn { .. }
            );
            let problem = if n == 0 {
                Some(Problem::InvalidValue {
                    property: "batch_concurrency".into(),
                    expected: "a whole number of at least 1".into(),
                })
            } else if !(time_range || (ordered && n == 1)) {
                Some(Problem::BatchConcurrencyUnsupported {
                    kind: m.kind.name().into(),
                    value: n,
                })
            } else if n > 1 && m.target == Target::Parquet {
                Some(Problem::NotBuiltYet {
                    what: format!(
                        "`batch_concurrency {n}` with `target parquet` (model `{}`)",
                        m.name
                    ),
                    instead: "a parquet version publishes one partition at a time; remove `batch_concurrency` or set it to 1".into(),
                })
            } else {
                None
            };
            out.extend(problem.map(|p| Diagnostic::at(p, loc.clone())));
        }
    }
    out
}

/// What model `m` asks of the engine that PostgreSQL cannot give: DuckDB reads files and URLs
/// and writes parquet; a PostgreSQL server does neither from SQL.
fn engine_lacks(config: &Config, m: &Model) -> Option<&'static str> {
    if !matches!(config.engine.target, EngineTarget::Postgres { .. }) {
        return None;
    }
    match (&m.kind, m.target) {
        (_, Target::Parquet) => Some("`target parquet` (parquet files in the lake)"),
        (
            Kind::External {
                source: ExternalSource::Files { .. } | ExternalSource::Url { .. },
            },
            _,
        ) => Some("reading files or URLs (a file-based EXTERNAL model)"),
        _ => None,
    }
}
