//! What every model and batch of one apply shares, and what it reports as it goes.

use crate::exec::render::Renderer;
use crate::lake::publish::LakeContext;
use crate::Error;
use efmesh_core::project::Project;
use serde::Serialize;
use std::collections::HashMap;

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
        if let Some(hook) = self.progress {
            (hook.0)(BatchProgress { model, done, total });
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

/// A callback for [`BatchProgress`]: a newtype so `ApplyOptions` stays `Debug` and `Clone`.
#[derive(Clone)]
pub struct ProgressHook(pub std::sync::Arc<dyn Fn(BatchProgress<'_>) + Send + Sync>);

impl std::fmt::Debug for ProgressHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressHook")
    }
}
