//! "Now", in one place: the clock decides which intervals are due, so tests and reproducible
//! backfills set it with `EFMESH_NOW` (an ISO UTC instant) instead of waiting for time to pass.

use chrono::{DateTime, Utc};

/// The environment variable that overrides the clock.
pub const NOW_VAR: &str = "EFMESH_NOW";

/// The current instant, or `EFMESH_NOW` when it is set to a valid instant.
pub fn now() -> DateTime<Utc> {
    std::env::var(NOW_VAR)
        .ok()
        .and_then(|v| efmesh_core::time::parse_instant(&v).ok())
        .map(|t| t.and_utc())
        .unwrap_or_else(Utc::now)
}
