//! The one exit-code table: every command ends in one of these, and `--help` prints them.

use crate::state::Outcome;
use crate::Error;
use std::process::ExitCode;

/// How a command ended, as the process exit code scripts and agents branch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: it did what was asked.
    Ok,
    /// 1: an error (a bad project, an engine or state failure), a failed check (`status
    /// --check` unhealthy, a blocking audit violation, a failing test), or a cancelled apply.
    Failure,
    /// 2: awaiting a human (a plan with changes and no `--yes` off a terminal, a `run` tick
    /// blocked by unapplied changes), or `test` files that cannot run.
    Waiting,
    /// 3: the environment's lock is held by another apply, run or restate.
    Locked,
}

/// `efmesh --help`'s account of the table.
pub const HELP: &str = "\
Exit codes:
  0  ok
  1  error (bad project, engine or state failure)
  2  awaiting a human (a plan with changes, applied without --yes in a non-TTY; a `run`
     tick blocked by unapplied changes)
  3  the environment's lock is held by another apply, run or restate (try again later)";

impl Exit {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::Failure => 1,
            Exit::Waiting => 2,
            Exit::Locked => 3,
        }
    }

    /// How a command that failed with `e` ends.
    pub fn of_error(e: &Error) -> Exit {
        match e {
            Error::LockHeld { .. } => Exit::Locked,
            Error::Engine(crate::engine::EngineError::Locked { .. }) => Exit::Locked,
            _ => Exit::Failure,
        }
    }

    /// How a `run` tick that ended with `outcome` ends.
    pub fn of_outcome(outcome: Outcome) -> Exit {
        match outcome {
            Outcome::Ok => Exit::Ok,
            Outcome::Error => Exit::Failure,
            Outcome::AwaitingHuman => Exit::Waiting,
            Outcome::LockHeld => Exit::Locked,
        }
    }

    /// The outcome label the metrics textfile records for it.
    pub fn outcome(self) -> &'static str {
        match self {
            Exit::Ok => "ok",
            Exit::Failure => "error",
            Exit::Waiting => "awaiting-human",
            Exit::Locked => "lock-held",
        }
    }

    /// From a code a library report chose (`efmesh test`'s 0, 1 or 2).
    pub fn from_code(code: u8) -> Exit {
        match code {
            0 => Exit::Ok,
            2 => Exit::Waiting,
            3 => Exit::Locked,
            _ => Exit::Failure,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_lists_every_code_once() {
        for e in [Exit::Ok, Exit::Failure, Exit::Waiting, Exit::Locked] {
            assert_eq!(Exit::from_code(e.code()), e);
            assert!(HELP.contains(&format!("  {}  ", e.code())), "{e:?}");
        }
    }
}
