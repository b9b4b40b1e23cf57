//! The project on disk.

pub mod discover;
pub mod init;
pub mod plan_cache;
