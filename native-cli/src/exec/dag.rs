//! Building a plan's models in parallel (`--jobs N`), in dependency order.
//!
//! A model starts as soon as every ancestor that this plan builds is done, so independent
//! branches build at the same time, each worker on its own engine connection and state
//! connection (DuckDB runs concurrent transactions on different tables). A failed model blocks
//! only its descendants: the rest of the DAG completes, and every failure is reported at the
//! end. Nothing is promoted then, exactly as when one model fails in a sequential apply.

use crate::engine::Engine;
use crate::exec::apply::{build_model, BatchContext, ModelDone};
use crate::state::StateStore;
use crate::Error;
use chrono::{DateTime, Utc};
use efmesh_core::plan::{Action, Plan};
use std::collections::HashSet;
use std::sync::{Condvar, Mutex};

/// Where each model of the work list stands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Waiting,
    Running,
    Done,
    Failed,
    /// An ancestor failed; it never starts.
    Blocked,
}

struct Board {
    slots: Vec<Slot>,
    results: Vec<Option<ModelDone>>,
    errors: Vec<(usize, Error)>,
}

/// Build `work` (in plan order, parents first) with up to `jobs` workers. The calling thread is
/// one of them, with `engine` and `state`; the others get their own connections.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_parallel(
    cx: &BatchContext,
    plan: &Plan,
    work: &[&Action],
    now: DateTime<Utc>,
    jobs: usize,
    engine: &mut dyn Engine,
    state: &mut dyn StateStore,
) -> Result<Vec<ModelDone>, Error> {
    let project = cx.project;
    let index: Vec<usize> = work
        .iter()
        .map(|a| {
            project.index_of(&a.model).ok_or_else(|| {
                Error::Render(format!("plan names `{}`, which the project lacks", a.model))
            })
        })
        .collect::<Result<_, _>>()?;
    // each model waits for its ancestors in the work list (through models the plan does not
    // build, such as an EMBEDDED one in between)
    let deps: Vec<Vec<usize>> = index
        .iter()
        .map(|&i| {
            let ancestors: HashSet<usize> = project.dag.ancestors(i).into_iter().collect();
            (0..work.len())
                .filter(|&k| ancestors.contains(&index[k]))
                .collect()
        })
        .collect();
    let workers = jobs.min(work.len()).max(1);
    let mut engines: Vec<Box<dyn Engine + Send>> = vec![];
    let mut states: Vec<Box<dyn StateStore + Send>> = vec![];
    for _ in 1..workers {
        engines.push(engine.another_connection()?);
        states.push(state.reopen()?);
    }
    let board = Mutex::new(Board {
        slots: vec![Slot::Waiting; work.len()],
        results: (0..work.len()).map(|_| None).collect(),
        errors: vec![],
    });
    let changed = Condvar::new();
    let worker = |engine: &mut dyn Engine, state: &mut dyn StateStore| loop {
        let mut b = board.lock().unwrap_or_else(|p| p.into_inner());
        let k = loop {
            // blocked: an ancestor failed or was blocked
            for (k, dk) in deps.iter().enumerate() {
                if b.slots[k] == Slot::Waiting
                    && dk
                        .iter()
                        .any(|&d| matches!(b.slots[d], Slot::Failed | Slot::Blocked))
                {
                    b.slots[k] = Slot::Blocked;
                }
            }
            let ready = (0..work.len()).find(|&k| {
                b.slots[k] == Slot::Waiting && deps[k].iter().all(|&d| b.slots[d] == Slot::Done)
            });
            if let Some(k) = ready {
                break Some(k);
            }
            if !b
                .slots
                .iter()
                .any(|s| matches!(s, Slot::Waiting | Slot::Running))
            {
                break None;
            }
            b = changed.wait(b).unwrap_or_else(|p| p.into_inner());
        };
        let Some(k) = k else {
            changed.notify_all();
            return;
        };
        b.slots[k] = Slot::Running;
        drop(b);
        let result = build_model(cx, plan, work[k], now, engine, state);
        let mut b = board.lock().unwrap_or_else(|p| p.into_inner());
        match result {
            Ok(done) => {
                b.slots[k] = Slot::Done;
                b.results[k] = Some(done);
            }
            Err(e) => {
                tracing::error!(model = work[k].model.as_str(), error = %e, "model failed; its descendants will not be built, the rest goes on");
                b.slots[k] = Slot::Failed;
                b.errors.push((k, e));
            }
        }
        drop(b);
        changed.notify_all();
    };
    std::thread::scope(|scope| {
        for (mut e, mut s) in engines.into_iter().zip(states) {
            let worker = &worker;
            scope.spawn(move || worker(e.as_mut(), s.as_mut()));
        }
        worker(engine, state);
    });
    let b = board.into_inner().unwrap_or_else(|p| p.into_inner());
    let blocked: Vec<String> = (0..work.len())
        .filter(|&k| b.slots[k] == Slot::Blocked)
        .map(|k| work[k].model.clone())
        .collect();
    let mut errors = b.errors;
    errors.sort_by_key(|(k, _)| *k);
    match errors.len() {
        0 => Ok(b
            .results
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect()),
        1 if blocked.is_empty() => Err(errors.remove(0).1),
        _ => Err(Error::ModelsFailed {
            errors: errors.into_iter().map(|(_, e)| e).collect(),
            blocked,
        }),
    }
}
