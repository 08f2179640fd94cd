//! The local executor: `--jobs N` tasks at a time on this machine, each a child `delta`.
//! SIGINT or SIGTERM stops launching and is passed on, once, to every running task, whose
//! run ends INTERRUPTED and resumable; the next `delta batch run` picks it up. A task
//! that is not in a child at that moment (backing off, waiting for another owner,
//! copying its workspace) stops at once. A result that cannot be recorded (a full disk)
//! stops launching too: the tasks left stay pending for the next `delta batch run`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use tokio::signal::unix::{SignalKind, signal};
use tokio::task::JoinSet;

use super::dir::{BatchDir, Manifest, TaskResult};
use super::runner::TaskRunner;
use super::tasks::Task;
use super::{BatchError, pending};
use crate::engine::{Shutdown, ShutdownTrigger, StopSignal};

/// Where a batch stands, for a progress display.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Tasks finished in this process.
    pub done: usize,
    /// Tasks this process set out to do.
    pub todo: usize,
    /// Tasks of the batch.
    pub total: usize,
    /// Since this process started them.
    pub elapsed: Duration,
}

/// Watches a local batch (the CLI renders; the library never prints).
pub trait BatchObserver {
    /// `todo` of the batch's `total` tasks are about to run.
    fn started(&mut self, todo: usize, total: usize);
    /// A task finished.
    fn finished(&mut self, result: &TaskResult, progress: Progress);
    /// A task could not be driven (its result could not be recorded).
    fn failed(&mut self, task: &str, error: BatchError);
    /// Launching stopped: a signal, or the batch's cost budget.
    fn stopping(&mut self, why: &str);
}

/// How a local batch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalOutcome {
    /// Every task was driven to a final status.
    Finished,
    /// A signal stopped it; re-run to go on.
    Interrupted,
    /// The batch's cost budget stopped launching.
    BudgetSpent,
}

/// Drives the pending tasks of the batch in `dir`, `jobs` at a time, with `delta` as the
/// child binary.
///
/// # Errors
/// When the batch directory cannot be read or written.
pub fn run_local(
    dir: &BatchDir,
    manifest: &Manifest,
    delta: &std::path::Path,
    jobs: usize,
    observer: &mut dyn BatchObserver,
) -> Result<LocalOutcome, BatchError> {
    let runtime = TaskRunner::runtime(
        tokio::runtime::Builder::new_multi_thread().worker_threads(2),
        dir,
    )?;
    let runner = TaskRunner::new(delta, dir, manifest);
    let outcome = runtime.block_on(async {
        let todo = pending(dir, manifest)?;
        drive_all(runner, manifest, todo, jobs.max(1), observer).await
    })?;
    // A workspace copy still under way stops at its next chunk: no need to wait for it.
    runtime.shutdown_timeout(Duration::from_secs(1));
    dir.write_summary(manifest)?;
    Ok(outcome)
}

/// Drives `todo`, `jobs` at a time, until each is recorded or a signal stops them; the
/// one loop of the local executor and of a Slurm array task (`todo` its one task).
pub(super) async fn drive_all(
    runner: TaskRunner,
    manifest: &Manifest,
    todo: Vec<Task>,
    jobs: usize,
    observer: &mut dyn BatchObserver,
) -> Result<LocalOutcome, BatchError> {
    let io = |source| BatchError::Io {
        path: runner.dir.root().to_path_buf(),
        source,
    };
    let mut interrupt = signal(SignalKind::interrupt()).map_err(io)?;
    let mut terminate = signal(SignalKind::terminate()).map_err(io)?;
    let (trigger, halt) = Shutdown::manual();
    observer.started(todo.len(), manifest.tasks.len());
    let children: Arc<Mutex<HashMap<String, u32>>> = Arc::default();
    let started = Instant::now();
    let total = todo.len();
    let mut queue = todo.into_iter();
    let mut running = JoinSet::new();
    let mut outcome = LocalOutcome::Finished;
    let mut broken = false;
    let mut done = 0;
    loop {
        while outcome == LocalOutcome::Finished && !broken && running.len() < jobs {
            if over_budget(&runner.dir, manifest) {
                observer.stopping("the batch's cost budget (--max-cost-usd) is spent");
                outcome = LocalOutcome::BudgetSpent;
                break;
            }
            let Some(task) = queue.next() else {
                break;
            };
            let runner = runner.clone();
            let children = Arc::clone(&children);
            let retries = manifest.retries;
            let halt = halt.clone();
            running.spawn(async move {
                let id = task.id.clone();
                let pids = Arc::clone(&children);
                let result = runner
                    .drive(
                        &task,
                        retries,
                        move |pid| {
                            let mut pids = pids
                                .lock()
                                .unwrap_or_else(std::sync::PoisonError::into_inner);
                            match pid {
                                Some(pid) => pids.insert(id.clone(), pid),
                                None => pids.remove(&id),
                            };
                        },
                        &halt,
                    )
                    .await;
                (task.id, result)
            });
        }
        if running.is_empty() {
            break;
        }
        tokio::select! {
            joined = running.join_next() => {
                let Some(Ok((id, result))) = joined else { continue };
                match result {
                    Ok(Some(result)) => {
                        done += 1;
                        observer.finished(&result, Progress {
                            done,
                            todo: total,
                            total: manifest.tasks.len(),
                            elapsed: started.elapsed(),
                        });
                    }
                    // Stopped by the signal before it had an end to record.
                    Ok(None) => {}
                    Err(error) => {
                        observer.failed(&id, error);
                        if !broken {
                            broken = true;
                            observer.stopping(
                                "the batch directory cannot be written to; no new task starts \
                                 (the tasks left stay pending for the next `delta batch run`)",
                            );
                        }
                    }
                }
            }
            _ = interrupt.recv() => {
                outcome = stop(&children, &trigger, StopSignal::Interrupt, observer, outcome);
            }
            _ = terminate.recv() => {
                outcome = stop(&children, &trigger, StopSignal::Terminate, observer, outcome);
            }
        }
    }
    Ok(outcome)
}

/// Stops launching, stops every task's waits, and passes SIGINT on to every running
/// child, the first time.
fn stop(
    children: &Mutex<HashMap<String, u32>>,
    trigger: &ShutdownTrigger,
    signal: StopSignal,
    observer: &mut dyn BatchObserver,
    outcome: LocalOutcome,
) -> LocalOutcome {
    if outcome == LocalOutcome::Interrupted {
        return outcome;
    }
    trigger.trigger(signal);
    observer.stopping("interrupted: no new task starts; running tasks are being interrupted");
    let pids = children
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for pid in pids.values() {
        if let Ok(pid) = i32::try_from(*pid) {
            // Already gone is fine: it finished on its own.
            let _ = kill(Pid::from_raw(pid), Signal::SIGINT);
        }
    }
    LocalOutcome::Interrupted
}

/// Whether the batch's recorded cost has reached `--max-cost-usd`.
fn over_budget(dir: &BatchDir, manifest: &Manifest) -> bool {
    manifest.max_cost_usd.is_some_and(|limit| {
        let spent: f64 = dir.results().values().map(|r| r.cost_usd).sum();
        spent >= limit
    })
}
