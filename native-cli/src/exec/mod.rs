//! The executor: builds what a plan needs and promotes it.
//!
//! - `apply.rs`: one plan, from recording snapshots to promotion; `--jobs` through `dag.rs`.
//! - `build.rs`: one model (its physics, batches, whole audits); `batches.rs`: its batches.
//! - `materializer.rs`: engine tables or lake files, the one difference between targets.
//! - `render.rs`: the one renderer; `audited.rs`: writes that audit before they commit.
//! - `dag.rs`: a scheduler for items with dependencies, knowing nothing of the above.

pub mod apply;
mod audited;
pub mod audits;
mod batches;
mod build;
mod context;
pub(crate) mod dag;
mod materializer;
pub mod metrics;
mod render;
pub mod seeds;
