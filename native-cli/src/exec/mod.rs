//! The executor: builds what a plan needs and promotes it.

pub mod apply;
pub mod audits;
pub(crate) mod dag;
pub mod metrics;
pub mod seeds;
