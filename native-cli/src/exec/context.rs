//! What every model and batch of one apply shares, and what it reports as it goes.

use crate::exec::render::Renderer;
use crate::lake::publish::LakeContext;
use crate::Error;
use efmesh_core::project::Project;
use serde::Serialize;
use std::collections::HashMap;

/// The log target of the per-model and per-batch progress events (`building`, `built`,
/// `backfilling`, `backfilled`). At a terminal the CLI's progress view shows the same facts
/// as one line per model and a live bar, so it hides these events below `debug` there; off a
/// terminal they are logfmt lines as always. A library user's subscriber can filter on it.
pub const PROGRESS: &str = "efmesh::progress";

/// One interval batch an apply computed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchDone {
    /// The model.
    pub model: String,
    /// The batch's first instant.
    pub start: String,
    /// The first instant after it.
    pub end: String,
}

/// What every batch of one apply shares.
pub(crate) struct BatchContext<'a> {
    pub(crate) project: &'a Project,
    /// Model → qualified physical relation, as the plan pins it.
    pub(crate) names: &'a HashMap<String, String>,
    /// The one renderer of this apply.
    pub(crate) render: &'a Renderer<'a>,
    pub(crate) retries: u32,
    pub(crate) lake: &'a LakeContext<'a>,
    pub(crate) env: &'a str,
    pub(crate) progress: Option<&'a ProgressHook>,
    pub(crate) fence: Option<&'a crate::ops::lock::Fence>,
    /// The most engine connections one model's batches may hold at once (`None`: no limit):
    /// the engine's connection limit shared out among the models building in parallel.
    pub(crate) connections_per_model: Option<usize>,
    /// The project root: seed files the engine cannot read are read from here.
    pub(crate) root: &'a std::path::Path,
}

impl BatchContext<'_> {
    /// Stop before a write when our environment lock is gone.
    pub(crate) fn fenced(&self) -> Result<(), Error> {
        self.fence.map_or(Ok(()), |f| f.check())
    }
}

impl BatchContext<'_> {
    /// Tell the progress hook, if any, how far a model's backfill is.
    pub(crate) fn report(&self, model: &str, done: usize, total: usize) {
        self.tell(Progress::Batches(BatchProgress { model, done, total }));
    }

    /// Tell the progress hook, if any, what just happened.
    pub(crate) fn tell(&self, event: Progress<'_>) {
        if let Some(hook) = self.progress {
            (hook.0)(event);
        }
    }
}

/// How far one model's backfill is: `done` of `total` batches have committed. Reported before
/// each batch starts and once after the last, so `done == total` means the model is finished.
#[derive(Debug, Clone, Copy)]
pub struct BatchProgress<'a> {
    /// The model being backfilled.
    pub model: &'a str,
    /// Batches committed so far.
    pub done: usize,
    /// Batches this apply computes for the model.
    pub total: usize,
}

/// What an apply tells a progress display as it goes: enough for one line per model and a
/// live bar per running one, without parsing log lines. Models build on several threads under
/// `--jobs`, so events of different models interleave; those of one model come in order
/// (`Started`, any `Batches`, `Finished`).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Progress<'a> {
    /// The plan serves this model from physics that already exists (a version another
    /// environment built, a metadata-only or non-breaking change upstream): nothing is computed
    /// for it. Told once every model this apply builds is done.
    Reused {
        /// The model.
        model: &'a str,
    },
    /// The model's work (building its physics, or computing its batches) starts.
    Started {
        /// The model.
        model: &'a str,
        /// The batches this apply computes for it (0: it is built whole).
        batches: usize,
    },
    /// How far its batches are.
    Batches(BatchProgress<'a>),
    /// The model's work ended, successfully or not.
    Finished(ModelFinished<'a>),
}

/// How one model's work ended, for [`Progress::Finished`].
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ModelFinished<'a> {
    /// The model.
    pub model: &'a str,
    /// It failed (the error itself is returned by the apply).
    pub failed: bool,
    /// Its physics was built by this apply (not only new intervals computed into it).
    pub built: bool,
    /// The batches computed.
    pub batches: usize,
    /// How long its work took.
    pub duration: std::time::Duration,
}

/// A callback for [`Progress`]: a newtype so `ApplyOptions` stays `Debug` and `Clone`.
#[derive(Clone)]
pub struct ProgressHook(pub std::sync::Arc<dyn Fn(Progress<'_>) + Send + Sync>);

impl std::fmt::Debug for ProgressHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressHook")
    }
}
