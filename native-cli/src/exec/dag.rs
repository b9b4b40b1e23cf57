//! A scheduler for work items with dependencies, run on a few lanes at once. It knows nothing
//! of models or applies: a lane is a closure that does item `k` on the connections it owns,
//! and the scheduler only decides which item runs next.
//!
//! An item starts once every item it depends on is done. What a failure does is the caller's
//! choice: block only the items that depend on it (the rest of a DAG completes), or stop
//! handing out work (a model's batches).

use std::sync::{Condvar, Mutex};

/// What happens to the rest of the work when an item fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnFailure {
    /// Items depending on it (directly or not) never start; everything else goes on.
    BlockDependents,
    /// Nothing new starts; items already running finish.
    Stop,
}

/// One lane: does item `k` and says how it went.
pub(crate) type Lane<'a, T, E> = dyn FnMut(usize) -> Result<T, E> + 'a;
/// A lane that runs on a thread of its own.
pub(crate) type SendLane<'a, T, E> = dyn FnMut(usize) -> Result<T, E> + Send + 'a;

/// How the work went.
pub(crate) struct Outcome<T, E> {
    /// Each item's result, `None` when it failed or never ran.
    pub results: Vec<Option<T>>,
    /// The items that failed, with their errors, in item order.
    pub errors: Vec<(usize, E)>,
    /// Items that never started because an item they depend on failed (or work stopped).
    pub blocked: Vec<usize>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Waiting,
    Running,
    Done,
    Failed,
    Blocked,
}

struct Board<T, E> {
    slots: Vec<Slot>,
    results: Vec<Option<T>>,
    errors: Vec<(usize, E)>,
    stopped: bool,
}

/// Run items `0..deps.len()` (`deps[k]`: the items `k` waits for) on `local` (this thread)
/// and `others` (one thread each).
pub(crate) fn run<'a, T: Send, E: Send>(
    deps: &[Vec<usize>],
    on_failure: OnFailure,
    local: &mut Lane<'a, T, E>,
    others: Vec<Box<SendLane<'a, T, E>>>,
) -> Outcome<T, E> {
    let n = deps.len();
    let board = Mutex::new(Board {
        slots: vec![Slot::Waiting; n],
        results: (0..n).map(|_| None).collect(),
        errors: vec![],
        stopped: false,
    });
    let changed = Condvar::new();
    let next = |b: &mut Board<T, E>| -> Option<Option<usize>> {
        // an item behind a failure (or after a stop) never starts
        for (k, dk) in deps.iter().enumerate() {
            if b.slots[k] == Slot::Waiting
                && (b.stopped
                    || dk
                        .iter()
                        .any(|&d| matches!(b.slots[d], Slot::Failed | Slot::Blocked)))
            {
                b.slots[k] = Slot::Blocked;
            }
        }
        let ready = (0..n).find(|&k| {
            b.slots[k] == Slot::Waiting && deps[k].iter().all(|&d| b.slots[d] == Slot::Done)
        });
        match ready {
            Some(k) => Some(Some(k)),
            None if b
                .slots
                .iter()
                .any(|s| matches!(s, Slot::Waiting | Slot::Running)) =>
            {
                None
            }
            None => Some(None),
        }
    };
    let drive = |lane: &mut Lane<'a, T, E>| loop {
        let mut b = board.lock().unwrap_or_else(|p| p.into_inner());
        let k = loop {
            match next(&mut b) {
                Some(k) => break k,
                None => b = changed.wait(b).unwrap_or_else(|p| p.into_inner()),
            }
        };
        let Some(k) = k else {
            changed.notify_all();
            return;
        };
        b.slots[k] = Slot::Running;
        drop(b);
        let result = lane(k);
        let mut b = board.lock().unwrap_or_else(|p| p.into_inner());
        match result {
            Ok(r) => {
                b.slots[k] = Slot::Done;
                b.results[k] = Some(r);
            }
            Err(e) => {
                b.slots[k] = Slot::Failed;
                b.errors.push((k, e));
                b.stopped |= on_failure == OnFailure::Stop;
            }
        }
        drop(b);
        changed.notify_all();
    };
    std::thread::scope(|scope| {
        for mut lane in others {
            let drive = &drive;
            scope.spawn(move || drive(lane.as_mut()));
        }
        drive(local);
    });
    let mut b = board.into_inner().unwrap_or_else(|p| p.into_inner());
    b.errors.sort_by_key(|(k, _)| *k);
    Outcome {
        blocked: (0..n).filter(|&k| b.slots[k] == Slot::Blocked).collect(),
        results: b.results,
        errors: b.errors,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn dependents_of_a_failure_never_start_and_the_rest_completes() {
        // 0 -> 1 -> 2, 3 independent; 1 fails
        let deps = vec![vec![], vec![0], vec![1], vec![]];
        let ran = AtomicUsize::new(0);
        let job = |k: usize| {
            ran.fetch_add(1, Ordering::SeqCst);
            if k == 1 {
                Err(format!("{k} broke"))
            } else {
                Ok(k * 10)
            }
        };
        let mut local = job;
        let other: Box<SendLane<'_, usize, String>> = Box::new(job);
        let out = run(&deps, OnFailure::BlockDependents, &mut local, vec![other]);
        assert_eq!(out.results, vec![Some(0), None, None, Some(30)]);
        assert_eq!(out.errors, vec![(1, "1 broke".to_string())]);
        assert_eq!(out.blocked, vec![2]);
        assert_eq!(ran.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn a_stop_starts_nothing_new() {
        let deps = vec![vec![]; 6];
        let mut local = |k: usize| if k == 0 { Err(()) } else { Ok(k) };
        let out = run(&deps, OnFailure::Stop, &mut local, vec![]);
        assert_eq!(out.errors.len(), 1);
        assert_eq!(out.blocked, vec![1, 2, 3, 4, 5]);
    }
}
