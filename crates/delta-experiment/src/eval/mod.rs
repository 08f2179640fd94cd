//! `delta eval`: benchmarks in Harbor's task format. Every (task, attempt) is a trial run
//! through the batch machinery's pool or Slurm array: a fresh container of the task's
//! image, the agent (or the oracle's `solve.sh`) under the task's timeout, then the task's
//! verifier in the same container, whose reward decides the trial. The eval directory is
//! the state (resumable like a batch), and the report's statistics are recomputed from
//! its `results.jsonl`. Format, trial and formulas: docs/eval.md.

pub mod compare;
mod dir;
pub mod report;
pub mod reward;
mod runner;
pub mod stats;
pub mod task;
mod taskset;
pub mod trial;

use std::path::PathBuf;

pub use dir::{
    Durations, ErrorClass, EvalDir, Manifest, TrialError, TrialLimits, TrialPaths, TrialRef,
    TrialResult, TrialStatus, trial_id,
};
pub use runner::{TrialDone, TrialRunner, pending};
pub use taskset::{TaskSet, load_task_set};

use std::path::Path;

use crate::batch::{
    ArrayJob, BatchError, BatchObserver, DriverLock, LocalOutcome, SlurmOptions, Submission,
    drive_pool, pool_runtime, submit_array, write_json,
};

/// What `delta eval run` was asked.
#[derive(Debug, Clone)]
pub struct EvalSpec {
    /// The task set: a directory of tasks, one task, or a file listing them.
    pub tasks: PathBuf,
    /// The agent directory (`None` with `oracle`).
    pub agent: Option<PathBuf>,
    /// Run `solution/solve.sh` instead of an agent.
    pub oracle: bool,
    /// The eval directory.
    pub out: PathBuf,
    /// Trials per task.
    pub attempts: u32,
    /// Glob patterns on task names.
    pub task_filter: Vec<String>,
    /// Scales the agent, verifier and build timeouts.
    pub timeout_multiplier: f64,
    /// Budgets of each trial's run.
    pub limits: TrialLimits,
}

/// Why an eval cannot run or be read.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// The eval's inputs have problems (exit 126): every one, each naming its place.
    #[error("the eval has {} problem(s):\n{}", problems.len(), problems.join("\n"))]
    Problems {
        /// `place: what is wrong; the fix`.
        problems: Vec<String>,
    },
    /// The directory is not an eval directory.
    #[error("{} is not an eval directory: it has no eval.json (`delta eval run --out` writes one)", dir.display())]
    NotAnEval {
        /// The directory.
        dir: PathBuf,
    },
    /// Another `delta eval run` drives this directory.
    #[error("{} is being driven by another `delta eval run`: {holder}", dir.display())]
    Driven {
        /// The eval directory.
        dir: PathBuf,
        /// Who: pid, process, host and since when.
        holder: String,
    },
    /// The directory's lock records a driver on another host, which cannot be checked
    /// from here.
    #[error(
        "{} is recorded as driven by a `delta eval run` on another host, which this host \
         cannot check: {holder}",
        dir.display()
    )]
    DrivenElsewhere {
        /// The eval directory.
        dir: PathBuf,
        /// Who: pid, process, host and since when.
        holder: String,
    },
    /// A file of the eval cannot be read or written, or a child started.
    #[error(transparent)]
    Batch(#[from] BatchError),
}

impl EvalError {
    /// The driver lock's refusals said of an eval rather than a batch.
    fn from_lock(error: BatchError) -> Self {
        match error {
            BatchError::Driven { dir, holder } => EvalError::Driven { dir, holder },
            BatchError::DrivenElsewhere { dir, holder } => {
                EvalError::DrivenElsewhere { dir, holder }
            }
            BatchError::Tasks(_)
            | BatchError::Config(_)
            | BatchError::Io { .. }
            | BatchError::Corrupt { .. }
            | BatchError::Mismatch { .. }
            | BatchError::Spawn { .. }
            | BatchError::Sbatch(_)
            | BatchError::NoRun { .. }
            | BatchError::NotABatch { .. }
            | BatchError::NoSuchIndex { .. } => EvalError::Batch(error),
        }
    }
}

impl EvalError {
    /// How to fix it, when the message does not say.
    #[must_use]
    pub fn help(&self) -> Option<String> {
        match self {
            EvalError::Problems { .. } => Some(
                "fix the problems above; nothing was created or run (format: docs/eval.md)"
                    .to_owned(),
            ),
            EvalError::NotAnEval { .. } => {
                Some("give the --out directory of a `delta eval run`".to_owned())
            }
            EvalError::Driven { dir, .. } => Some(crate::batch::driven_help(
                "eval",
                &format!("delta eval report {}", dir.display()),
            )),
            EvalError::DrivenElsewhere { dir, .. } => {
                Some(crate::batch::driven_elsewhere_help(dir))
            }
            EvalError::Batch(error) => error.help(),
        }
    }
}

/// Checks an eval before anything runs and opens its directory: `-k`, the timeout
/// multiplier, the agent's configuration, every task of the set, and `--out` (new, empty,
/// or holding this very eval). Every problem is reported at once; nothing is created
/// unless there is none. Takes the directory's [`DriverLock`] (one live driver per eval
/// directory) before writing `eval.json`. Returns the directory, its manifest, the lock,
/// held until dropped, and the warnings of the tasks' `task.toml`s (unknown or
/// unsupported keys).
///
/// # Errors
/// [`EvalError::Problems`] for bad inputs; [`EvalError::Driven`] while another driver
/// holds the directory; I/O errors creating the directory.
pub fn prepare(spec: &EvalSpec) -> Result<Prepared, EvalError> {
    let mut problems = Vec::new();
    if spec.attempts == 0 {
        problems.push(
            "-k 0: an eval needs at least one attempt per task; give -k 1 or more".to_owned(),
        );
    }
    if !(spec.timeout_multiplier.is_finite() && spec.timeout_multiplier > 0.0) {
        problems.push(format!(
            "--timeout-multiplier {}: not a positive number; give e.g. 1 or 2.5",
            spec.timeout_multiplier
        ));
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    let agent = match (&spec.agent, spec.oracle) {
        (Some(agent), false) => match delta_engine::config::load_agent(agent, &cwd) {
            Ok(loaded) => Some(loaded.home),
            Err(error) => {
                problems.push(format!("--agent {}: {error}", agent.display()));
                None
            }
        },
        (None, false) => {
            problems.push(
                "no agent: give --agent DIR, or --oracle to run the tasks' solutions".to_owned(),
            );
            None
        }
        (_, true) => None,
    };
    let set = load_task_set(&spec.tasks, &spec.task_filter, &mut problems);
    let root = std::path::absolute(&spec.out).unwrap_or_else(|_| spec.out.clone());
    let dir = EvalDir::new(root.clone());
    let manifest = Manifest {
        tasks_source: std::path::absolute(&spec.tasks).unwrap_or_else(|_| spec.tasks.clone()),
        agent,
        oracle: spec.oracle,
        attempts: spec.attempts,
        task_filter: spec.task_filter.clone(),
        timeout_multiplier: spec.timeout_multiplier,
        limits: spec.limits.clone(),
        tasks: set.tasks,
        slurm: Vec::new(),
    };
    let existing = match out_state(&dir, &spec.out) {
        Ok(existing) => existing,
        Err(problem) => {
            problems.push(problem);
            None
        }
    };
    let tasks_loaded = problems.is_empty();
    if let Some(existing) = &existing
        && let Some(what) = manifest.differs(existing, tasks_loaded)
    {
        problems.push(format!(
            "--out {}: holds another eval ({what}); give another --out for a new eval, or \
             re-run the command it was started with",
            spec.out.display()
        ));
    }
    if !problems.is_empty() {
        return Err(EvalError::Problems { problems });
    }
    let manifest = match existing {
        Some(mut existing) => {
            existing.timeout_multiplier = manifest.timeout_multiplier;
            existing.limits = manifest.limits;
            existing.tasks_source = manifest.tasks_source;
            existing.tasks = manifest.tasks;
            existing
        }
        None => manifest,
    };
    fs_err::create_dir_all(root.join("trials")).map_err(|source| BatchError::Io {
        path: root.clone(),
        source,
    })?;
    let lock = DriverLock::acquire(&root, "eval").map_err(EvalError::from_lock)?;
    dir.write_manifest(&manifest)?;
    Ok(Prepared {
        dir,
        manifest,
        lock,
        warnings: set.warnings,
    })
}

/// An eval ready to drive, as [`prepare`] leaves it.
#[derive(Debug)]
pub struct Prepared {
    /// The eval directory.
    pub dir: EvalDir,
    /// Its manifest, as written.
    pub manifest: Manifest,
    /// The directory's driver lock, held until dropped.
    pub lock: DriverLock,
    /// What the tasks' `task.toml`s hold that is ignored.
    pub warnings: Vec<String>,
}

/// The eval in `--out` (shown as `shown`), when there is one; a problem when `--out`
/// holds something else.
fn out_state(dir: &EvalDir, shown: &std::path::Path) -> Result<Option<Manifest>, String> {
    let root = dir.root();
    if !root.exists() {
        return Ok(None);
    }
    if !root.is_dir() {
        return Err(format!(
            "--out {}: not a directory; give a new or empty directory",
            shown.display()
        ));
    }
    if dir.manifest_path().is_file() {
        return dir
            .read_manifest()
            .map(Some)
            .map_err(|error| format!("--out {}: {error}; give another --out", shown.display()));
    }
    if root.join("batch.json").exists() {
        return Err(format!(
            "--out {}: holds a `delta batch`, not an eval; give another --out",
            shown.display()
        ));
    }
    let empty = fs_err::read_dir(root).is_ok_and(|mut entries| entries.next().is_none());
    if empty {
        Ok(None)
    } else {
        Err(format!(
            "--out {}: not empty and holds no eval (no eval.json); give a new or empty \
             directory",
            shown.display()
        ))
    }
}

/// The directory `dir` as an eval, with its manifest.
///
/// # Errors
/// [`EvalError::NotAnEval`] without `eval.json`, else its read errors.
pub fn open(dir: &std::path::Path) -> Result<(EvalDir, Manifest), EvalError> {
    let root = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let eval = EvalDir::new(root.clone());
    if !eval.manifest_path().is_file() {
        return Err(EvalError::NotAnEval { dir: root });
    }
    let manifest = eval.read_manifest()?;
    Ok((eval, manifest))
}

/// Drives the eval's pending trials on this machine, `jobs` at a time, each a child of the
/// `delta` binary at `delta`; then writes `summary.json`.
///
/// # Errors
/// When the eval directory cannot be read or written.
pub fn run_local(
    dir: &EvalDir,
    manifest: &Manifest,
    delta: &Path,
    jobs: usize,
    observer: &mut dyn BatchObserver<TrialDone>,
) -> Result<LocalOutcome, EvalError> {
    let runner = TrialRunner {
        delta: delta.to_path_buf(),
        dir: dir.clone(),
        manifest: manifest.clone(),
    };
    let runtime = pool_runtime(dir.root())?;
    let outcome = runtime.block_on(async {
        let todo = pending(&runner)?;
        let total = manifest.trials().len();
        drive_pool(
            runner,
            todo,
            total,
            dir.root(),
            jobs.max(1),
            observer,
            &|| None,
        )
        .await
    })?;
    write_summary(dir, manifest)?;
    Ok(outcome)
}

/// Recomputes `summary.json` (the report) from `results.jsonl`.
///
/// # Errors
/// I/O errors.
pub fn write_summary(dir: &EvalDir, manifest: &Manifest) -> Result<report::Report, EvalError> {
    let report = report::report(manifest, &dir.results());
    write_json(&dir.summary_path(), &report)?;
    Ok(report)
}

/// Submits the eval's pending trials as one Slurm array job; `None` when nothing is
/// pending. The submission is recorded in `eval.json`.
///
/// # Errors
/// When the script cannot be written or sbatch refuses it.
pub fn submit(
    dir: &EvalDir,
    manifest: &mut Manifest,
    delta: &Path,
    options: &SlurmOptions,
) -> Result<Option<Submission>, EvalError> {
    let runner = TrialRunner {
        delta: delta.to_path_buf(),
        dir: dir.clone(),
        manifest: manifest.clone(),
    };
    let todo = pending(&runner)?;
    if todo.is_empty() {
        write_summary(dir, manifest)?;
        return Ok(None);
    }
    let ids: Vec<String> = todo.into_iter().map(|t| t.id).collect();
    let job = ArrayJob {
        command: "eval",
        unit: "trial",
        root: dir.root(),
        ids: &ids,
        submission: manifest.slurm.len(),
    };
    let submission = submit_array(&job, delta, options)?;
    manifest.slurm.push(submission.clone());
    dir.write_manifest(manifest)?;
    Ok(Some(submission))
}

/// `delta eval worker`: drives the trial at `index` of `submission` (default: the last)
/// as the local executor does, then recomputes `summary.json`.
///
/// # Errors
/// An unknown index, or the errors of driving the trial.
pub fn run_worker(
    dir: &EvalDir,
    delta: &Path,
    index: usize,
    submission: Option<usize>,
) -> Result<TrialDone, EvalError> {
    let manifest = crate::batch::recorded(
        submission,
        crate::batch::SUBMISSION_WAIT,
        || dir.read_manifest(),
        |m| m.slurm.len(),
    )?;
    let number = submission.unwrap_or(manifest.slurm.len().saturating_sub(1));
    let trial = manifest
        .slurm
        .get(number)
        .and_then(|s| s.tasks.get(index))
        .and_then(|id| manifest.trial(id))
        .ok_or(BatchError::NoSuchIndex {
            index,
            submission: number,
        })?;
    let runner = TrialRunner {
        delta: delta.to_path_buf(),
        dir: dir.clone(),
        manifest: manifest.clone(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| BatchError::Io {
            path: dir.root().to_path_buf(),
            source,
        })?;
    let done = runtime.block_on(runner.drive_trial(
        &trial,
        &|_| {},
        &delta_engine::engine::Shutdown::never(),
    ))?;
    write_summary(dir, &manifest)?;
    Ok(done)
}
