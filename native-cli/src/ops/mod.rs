//! Operations on an environment beyond plan and apply.

pub mod audit;
pub mod compact;
pub mod janitor;
pub mod lock;
pub mod passport;
pub mod diff;
pub mod query;
pub mod reality;
pub mod restate;
pub mod run;
pub mod schedule;
pub mod status;
