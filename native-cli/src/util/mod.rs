//! Small helpers every layer uses.

pub mod atomic_file;
pub mod bounded_read;
pub mod clock;
pub mod pg_url;
pub mod process;
