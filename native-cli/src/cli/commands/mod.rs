//! One file per command: each turns its arguments into library calls and prints the result.

pub(crate) mod apply;
pub(crate) mod audit;
pub(crate) mod check;
pub(crate) mod compact;
pub(crate) mod completions;
pub(crate) mod diff;
pub(crate) mod graph;
pub(crate) mod init;
pub(crate) mod janitor;
pub(crate) mod lineage;
pub(crate) mod man;
pub(crate) mod migrate;
pub(crate) mod passport;
pub(crate) mod plan;
pub(crate) mod query;
pub(crate) mod render;
pub(crate) mod restate;
pub(crate) mod run;
pub(crate) mod schedule;
pub(crate) mod status;
pub(crate) mod test;
