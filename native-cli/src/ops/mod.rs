//! Operations on an environment beyond plan and apply.

pub mod audit;
pub mod compact;
pub mod diff;
pub mod html_page;
pub mod janitor;
pub mod lock;
pub mod passport;
pub mod query;
pub mod reality;
pub mod restate;
pub mod run;
pub mod schedule;
pub mod status;

use crate::state::StateStore;
use crate::Error;
use efmesh_core::plan::Pointer;
use std::collections::BTreeMap;

/// The pointers of an environment that must exist: the operations that read what an
/// environment serves (audit, passport, query, diff) refuse one never applied, all in the same
/// words.
pub(crate) fn served(
    state: &mut dyn StateStore,
    env: &str,
) -> Result<BTreeMap<String, Pointer>, Error> {
    let pointers = state.environment(env)?;
    if pointers.is_empty() {
        return Err(Error::Argument {
            message: format!("environment `{env}` does not exist (nothing was ever applied to it)"),
            help: Some(format!("apply it first with `efmesh apply {env}`")),
        });
    }
    Ok(pointers)
}
