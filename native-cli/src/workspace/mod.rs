//! The project on disk: finding it, reading it, opening its backends, and the [`Efmesh`] facade
//! over all of that.

pub mod backends;
mod builder;
pub mod discover;
pub mod init;
pub mod plan_cache;
mod project;
pub(crate) mod read;

pub use builder::{ModelDef, ProjectBuilder};
pub use project::{
    migrate, plan_dir, plan_dir_checked, state_for_dir, Efmesh, Graph, GraphModel, RenderOptions,
    Rendered,
};
pub use read::{check, CheckReport};
