//! The local executor: `--jobs N` tasks at a time on this machine, each a child `delta`.
//! SIGINT or SIGTERM stops launching and is passed on, once, to every running task, whose
//! run ends INTERRUPTED and resumable; the next `delta batch run` picks it up. A task
//! that is not in a child at that moment (backing off, waiting for another owner,
//! copying its workspace) stops at once. A result that cannot be recorded (a full disk)
//! stops launching too: the tasks left stay pending for the next `delta batch run`.

use std::collections::HashMap;
use std::future::Future;
use std::path::Path;
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
use delta_engine::engine::{Shutdown, ShutdownTrigger, StopSignal};

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

/// Watches a local batch (the CLI renders; the library never prints). `R` is what a
/// finished unit reports: a task's result line for `delta batch`, a trial's for `delta eval`.
pub trait BatchObserver<R = TaskResult> {
    /// `todo` of the batch's `total` tasks are about to run.
    fn started(&mut self, todo: usize, total: usize);
    /// A task finished.
    fn finished(&mut self, result: &R, progress: Progress);
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

/// One kind of unit the pool drives to its end through child processes: a batch's task,
/// an eval's trial. The pool owns the concurrency, the signals and the progress; the
/// driver owns what a unit is and how its children are started and recorded.
pub trait Drive: Clone + Send + Sync + 'static {
    /// What is driven.
    type Unit: Send + 'static;
    /// What a driven unit reports.
    type Done: Send + 'static;
    /// The unit's id, for the observer and the children's pids.
    fn id(unit: &Self::Unit) -> String;
    /// Drives `unit` to its end; `on_child` learns the pid of each child it starts (and
    /// `None` once it is gone), so that a Ctrl-C reaches it; `stop` ends its waits and
    /// starts no new child. `None`: stopped before the unit had an end to record.
    fn drive(
        &self,
        unit: Self::Unit,
        on_child: Box<dyn Fn(Option<u32>) + Send + Sync>,
        stop: Shutdown,
    ) -> impl Future<Output = Result<Option<Self::Done>, BatchError>> + Send;
}

/// The batch's tasks as units of the pool.
#[derive(Clone)]
struct BatchTasks {
    runner: TaskRunner,
    retries: u32,
}

impl Drive for BatchTasks {
    type Unit = Task;
    type Done = TaskResult;

    fn id(unit: &Task) -> String {
        unit.id.clone()
    }

    async fn drive(
        &self,
        unit: Task,
        on_child: Box<dyn Fn(Option<u32>) + Send + Sync>,
        stop: Shutdown,
    ) -> Result<Option<TaskResult>, BatchError> {
        self.runner
            .drive(&unit, self.retries, on_child, &stop)
            .await
    }
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
    let runtime = pool_runtime(dir.root())?;
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

/// Drives the batch's tasks `todo` in the pool, `jobs` at a time, launching none once the
/// batch's cost budget is spent; the local executor's and a Slurm array task's (`todo` its
/// one task).
///
/// # Errors
/// When the signal handlers cannot be installed.
pub(super) async fn drive_all(
    runner: TaskRunner,
    manifest: &Manifest,
    todo: Vec<Task>,
    jobs: usize,
    observer: &mut dyn BatchObserver,
) -> Result<LocalOutcome, BatchError> {
    let dir = runner.dir.clone();
    let budget = || {
        over_budget(&dir, manifest).then_some("the batch's cost budget (--max-cost-usd) is spent")
    };
    let driver = BatchTasks {
        runner,
        retries: manifest.retries,
    };
    drive_pool(
        driver,
        todo,
        manifest.tasks.len(),
        dir.root(),
        jobs,
        observer,
        &budget,
    )
    .await
}

/// The runtime a local pool runs on: two workers, enough to wait on children.
///
/// # Errors
/// When it cannot be built.
pub fn pool_runtime(root: &Path) -> Result<tokio::runtime::Runtime, BatchError> {
    TaskRunner::runtime(
        tokio::runtime::Builder::new_multi_thread().worker_threads(2),
        root,
    )
}

/// The pool: drives `todo` (of `total` units), `jobs` at a time, until every unit is done,
/// a signal stops launching (passed on, once, to every running child, and ending every
/// unit's waits), `budget` says why no unit may start any more, or a unit's end cannot be
/// recorded. `root` names the directory in errors. The one loop of the local executors
/// (batch and eval) and of a batch's Slurm array task (`todo` its one task).
///
/// # Errors
/// When the signal handlers cannot be installed.
pub async fn drive_pool<D: Drive>(
    driver: D,
    todo: Vec<D::Unit>,
    total: usize,
    root: &Path,
    jobs: usize,
    observer: &mut dyn BatchObserver<D::Done>,
    budget: &dyn Fn() -> Option<&'static str>,
) -> Result<LocalOutcome, BatchError> {
    let io = |source| BatchError::Io {
        path: root.to_path_buf(),
        source,
    };
    let mut interrupt = signal(SignalKind::interrupt()).map_err(io)?;
    let mut terminate = signal(SignalKind::terminate()).map_err(io)?;
    let (trigger, halt) = Shutdown::manual();
    observer.started(todo.len(), total);
    let children: Arc<Mutex<HashMap<String, u32>>> = Arc::default();
    let started = Instant::now();
    let todo_count = todo.len();
    let mut queue = todo.into_iter();
    let mut running = JoinSet::new();
    let mut outcome = LocalOutcome::Finished;
    let mut broken = false;
    let mut done = 0;
    loop {
        while outcome == LocalOutcome::Finished && !broken && running.len() < jobs {
            if let Some(why) = budget() {
                observer.stopping(why);
                outcome = LocalOutcome::BudgetSpent;
                break;
            }
            let Some(unit) = queue.next() else {
                break;
            };
            let driver = driver.clone();
            let children = Arc::clone(&children);
            let halt = halt.clone();
            running.spawn(async move {
                let id = D::id(&unit);
                let key = id.clone();
                let on_child = Box::new(move |pid: Option<u32>| {
                    let mut pids = children
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    match pid {
                        Some(pid) => pids.insert(key.clone(), pid),
                        None => pids.remove(&key),
                    };
                });
                (id, driver.drive(unit, on_child, halt).await)
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
                            todo: todo_count,
                            total,
                            elapsed: started.elapsed(),
                        });
                    }
                    // Stopped by the signal before it had an end to record.
                    Ok(None) => {}
                    Err(error) => {
                        observer.failed(&id, error);
                        if !broken {
                            broken = true;
                            observer.stopping(&format!(
                                "{} cannot be written to; nothing new starts (what is left \
                                 stays pending for the next run)",
                                root.display()
                            ));
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

/// Stops launching, stops every unit's waits, and passes SIGINT on to every running
/// child, the first time.
fn stop<R>(
    children: &Mutex<HashMap<String, u32>>,
    trigger: &ShutdownTrigger,
    signal: StopSignal,
    observer: &mut dyn BatchObserver<R>,
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
