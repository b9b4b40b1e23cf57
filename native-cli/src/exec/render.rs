//! The one renderer of an apply: every query the executor runs is a model rendered here, with
//! references pointing at the physics this plan pins and macros bound to an interval.

use crate::Error;
use chrono::{DateTime, NaiveDateTime, Utc};
use efmesh_core::interval::Range;
use efmesh_core::model::Model;
use efmesh_core::model_sql::{render_model, render_statement, RelationTarget};
use efmesh_core::project::Project;
use efmesh_core::sql::statements::{RuntimeStage, StagedStatement};
use std::collections::HashMap;

/// Renders models of one project against one plan's physics.
pub(crate) struct Renderer<'a> {
    project: &'a Project,
    target: RelationTarget,
    /// The apply's clock, which `@execution_ds` and its siblings bind to.
    execution: NaiveDateTime,
}

impl<'a> Renderer<'a> {
    /// References resolve through `names` (model → qualified physical relation).
    /// `now` is the apply's clock: the execution time of every query it renders.
    pub(crate) fn new(
        project: &'a Project,
        names: &HashMap<String, String>,
        now: DateTime<Utc>,
    ) -> Renderer<'a> {
        Renderer {
            project,
            target: RelationTarget::Physical(names.clone()),
            execution: now.naive_utc(),
        }
    }

    /// The execution time the apply's queries are rendered with.
    pub(crate) fn execution(&self) -> NaiveDateTime {
        self.execution
    }

    /// Model `i` with its macros bound to `[start, end)`.
    pub(crate) fn range(
        &self,
        i: usize,
        start: NaiveDateTime,
        end: NaiveDateTime,
    ) -> Result<String, Error> {
        let times = efmesh_core::time::MacroTimes {
            start,
            end,
            execution: self.execution,
        };
        render_model(self.project, i, &self.target, &times, false)
            .map_err(|e| Error::Render(e.to_string()))
    }

    /// Model `i`'s statements of `list` (its pre- or post-statements) as they run at `stage`,
    /// with macros bound to `[start, end)` and `@this_model` as `this_model`.
    pub(crate) fn statements(
        &self,
        list: &[StagedStatement],
        stage: RuntimeStage,
        (start, end): (NaiveDateTime, NaiveDateTime),
        this_model: &str,
    ) -> Result<Vec<String>, Error> {
        let times = efmesh_core::time::MacroTimes {
            start,
            end,
            execution: self.execution,
        };
        list.iter()
            .filter_map(|s| s.at(stage))
            .map(|q| {
                render_statement(self.project, q, &self.target, &times, this_model)
                    .map_err(|e| Error::Render(e.to_string()))
            })
            .collect()
    }

    /// Model `i` for one batch.
    pub(crate) fn batch(&self, i: usize, b: Range) -> Result<String, Error> {
        self.range(i, b.start, b.end)
    }

    /// Model `i` as a build renders it at `now`: its whole history so far.
    pub(crate) fn whole(&self, i: usize, now: DateTime<Utc>) -> Result<String, Error> {
        let end = complete_until(&self.project.models[i], now);
        let start = model_start(self.project, i, end);
        self.range(i, start, end.max(start))
    }

    /// Model `i` bound to an empty interval at the current edge: its columns, no rows.
    pub(crate) fn at_edge(&self, i: usize, now: DateTime<Utc>) -> Result<String, Error> {
        let edge = complete_until(&self.project.models[i], now);
        self.range(i, edge, edge)
    }
}

/// The last complete interval edge before `now`, or the end of a closed history (`end`) when
/// that comes first: what a build renders up to, and what whole-table audits cover.
pub(crate) fn complete_until(m: &Model, now: DateTime<Utc>) -> NaiveDateTime {
    efmesh_core::interval::complete_until(m.history_end(), now.naive_utc(), m.interval_unit())
}

/// Where a build of model `i` up to `end` starts: its history's start, else one day before.
pub(crate) fn model_start(project: &Project, i: usize, end: NaiveDateTime) -> NaiveDateTime {
    project
        .history_start(i)
        .unwrap_or(end - chrono::Duration::days(1))
        .min(end)
}
