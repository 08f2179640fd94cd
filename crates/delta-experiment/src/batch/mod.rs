//! `delta batch`: an experiment of many runs of an agent, one per task of a JSON Lines
//! file, on this machine or as a Slurm array job. No daemon and no database: the batch
//! directory on disk is the state, so re-running the same command continues the batch,
//! and `delta batch status` reads it from anywhere the directory is visible.

mod dir;
mod local;
mod lock;
mod runner;
mod slurm;
mod tasks;

use std::path::PathBuf;

pub use dir::{
    BatchDir, Manifest, Submission, Summary, TASK_ERROR, TaskResult, append_jsonl, read_jsonl,
    summarize,
};
pub(crate) use dir::{percentile, read_json, write_json};
pub use local::{
    BatchObserver, Drive, LocalOutcome, Progress, drive_pool, pool_runtime, run_local,
};
pub use lock::DriverLock;
pub(crate) use lock::{driven_elsewhere_help, driven_help};
pub(crate) use runner::copy_dir;
pub use runner::{Next, TaskRunner};
pub use slurm::{ArrayJob, JobState, SlurmOptions, job_states, run_worker, submit, submit_array};
pub(crate) use slurm::{SUBMISSION_WAIT, recorded};
pub use tasks::{Task, TaskFileError, load_tasks};

/// What `delta batch run` was asked.
#[derive(Debug, Clone)]
pub struct BatchSpec {
    /// The task file.
    pub tasks_file: PathBuf,
    /// The agent directory.
    pub agent: PathBuf,
    /// The batch directory.
    pub out: PathBuf,
    /// FAILED tasks (transient LLM errors) continued again, per task.
    pub retries: u32,
    /// No task starts once the batch's estimated cost reaches this.
    pub max_cost_usd: Option<f64>,
    /// Where every task's tools run (`--environment`, `--environment-image`).
    pub environment: delta_engine::environment::EnvironmentChoice,
}

/// Why a batch cannot run or be read.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// The task file has problems (exit 126).
    #[error(transparent)]
    Tasks(#[from] TaskFileError),
    /// The agent's configuration is unusable (exit 126).
    #[error(transparent)]
    Config(#[from] delta_engine::config::ConfigError),
    /// The batch directory holds another batch (a different task file or agent).
    #[error(
        "{} holds a batch of another task file or agent ({what} differs)",
        dir.display()
    )]
    Mismatch {
        /// The batch directory.
        dir: PathBuf,
        /// What differs.
        what: &'static str,
    },
    /// The directory holds no batch: it has no `batch.json`, or does not exist.
    #[error(
        "{} is not a batch directory: {}",
        dir.display(),
        if *exists { "it has no batch.json" } else { "it does not exist" }
    )]
    NotABatch {
        /// The directory given.
        dir: PathBuf,
        /// Whether the directory itself exists.
        exists: bool,
    },
    /// A file of the batch cannot be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A file of the batch is not what the engine wrote.
    #[error("{} is damaged: {problem}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// A child `delta` (or `sbatch`) could not be started.
    #[error("cannot start {}: {source}", program.display())]
    Spawn {
        /// The program.
        program: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A task's child ended without leaving a run.
    #[error("task {id} left no run in {} (see .delta-batch.log there)", workspace.display())]
    NoRun {
        /// The task.
        id: String,
        /// Its workspace.
        workspace: PathBuf,
    },
    /// `sbatch` refused the job.
    #[error("sbatch refused the job: {0}")]
    Sbatch(String),
    /// Another driver holds the batch directory.
    #[error("{} is being driven by another `delta batch`: {holder}", dir.display())]
    Driven {
        /// The batch directory.
        dir: PathBuf,
        /// Who: pid, process, host and since when.
        holder: String,
    },
    /// The batch directory's lock records a driver on another host, which cannot be
    /// checked from here.
    #[error(
        "{} is recorded as driven from another host ({holder}), which cannot be checked from here",
        dir.display()
    )]
    DrivenElsewhere {
        /// The batch directory.
        dir: PathBuf,
        /// Who: pid, process, host and since when.
        holder: String,
    },
    /// `delta batch worker` was given an index no submission has.
    #[error("no task at index {index} of submission {submission} in batch.json")]
    NoSuchIndex {
        /// The array index.
        index: usize,
        /// The submission.
        submission: usize,
    },
}

impl BatchError {
    /// How to fix it, when the message does not say.
    #[must_use]
    pub fn help(&self) -> Option<String> {
        match self {
            BatchError::Tasks(_) => Some(
                "fix the lines above; nothing was created or run (format: docs/batch.md)"
                    .to_owned(),
            ),
            BatchError::Mismatch { .. } => Some(
                "give another --out for a new batch, or re-run with the task file and agent \
                 it was started with"
                    .to_owned(),
            ),
            BatchError::NotABatch { .. } => Some(
                "give the --out directory of a `delta batch run TASKS.jsonl --agent DIR --out \
                 BATCH_DIR`, which writes batch.json"
                    .to_owned(),
            ),
            BatchError::Sbatch(_) => {
                Some("check the --slurm-arg values and that sbatch works here".to_owned())
            }
            BatchError::Driven { dir, .. } => Some(lock::driven_help(
                "batch",
                &format!("delta batch status {}", dir.display()),
            )),
            BatchError::DrivenElsewhere { dir, .. } => Some(lock::driven_elsewhere_help(dir)),
            BatchError::Config(_)
            | BatchError::Io { .. }
            | BatchError::Corrupt { .. }
            | BatchError::Spawn { .. }
            | BatchError::NoRun { .. }
            | BatchError::NoSuchIndex { .. } => None,
        }
    }
}

/// Checks a batch before anything runs and opens its directory: the task file (every
/// problem by line), the agent's configuration, what each task's child `delta run`
/// would refuse (`check_tasks`), and, for an existing batch directory, that it holds
/// this batch. Creates the directory for a new batch, takes its [`DriverLock`] (one live
/// driver per directory) and writes `batch.json`. The tasks returned are those of the
/// task file, which the directory's `batch.json` matches (by hash).
///
/// # Errors
/// [`BatchError`]; for bad inputs nothing has been created.
pub fn prepare(spec: &BatchSpec) -> Result<(BatchDir, Manifest, DriverLock), BatchError> {
    let tasks = load_tasks(&spec.tasks_file)?;
    let cwd = std::env::current_dir().map_err(|source| BatchError::Io {
        path: PathBuf::from("."),
        source,
    })?;
    let root = std::path::absolute(&spec.out).unwrap_or(spec.out.clone());
    let dir = BatchDir::new(root.clone());
    let agent = delta_engine::config::load_agent(&spec.agent, &cwd)?;
    let problems = check_tasks(&tasks, &agent, &cwd, &dir)?;
    if !problems.is_empty() {
        return Err(BatchError::Tasks(TaskFileError {
            path: spec.tasks_file.clone(),
            problems,
        }));
    }
    let bytes = std::fs::read(&spec.tasks_file).map_err(|source| BatchError::Io {
        path: spec.tasks_file.clone(),
        source,
    })?;
    let manifest = Manifest {
        tasks_file: std::path::absolute(&spec.tasks_file).unwrap_or(spec.tasks_file.clone()),
        tasks_sha256: sha256_hex(&bytes),
        agent: agent.home,
        retries: spec.retries,
        max_cost_usd: spec.max_cost_usd,
        environment: spec.environment.kind,
        environment_image: spec.environment.image.clone(),
        tasks,
        slurm: Vec::new(),
    };
    std::fs::create_dir_all(root.join("runs")).map_err(|source| BatchError::Io {
        path: root.clone(),
        source,
    })?;
    let lock = DriverLock::acquire(&root, "batch")?;
    if dir.manifest_path().exists() {
        let mut existing = dir.read_manifest()?;
        if existing.tasks_sha256 != manifest.tasks_sha256 {
            return Err(BatchError::Mismatch {
                dir: root,
                what: "the task file",
            });
        }
        if existing.agent != manifest.agent {
            return Err(BatchError::Mismatch {
                dir: root,
                what: "the agent",
            });
        }
        existing.retries = spec.retries;
        existing.max_cost_usd = spec.max_cost_usd;
        existing.tasks = manifest.tasks;
        existing.environment = spec.environment.kind;
        existing
            .environment_image
            .clone_from(&spec.environment.image);
        dir.write_manifest(&existing)?;
        return Ok((dir, existing, lock));
    }
    dir.write_manifest(&manifest)?;
    Ok((dir, manifest, lock))
}

/// Checks each task as its child `delta run` will check it, with the task's `env` over
/// this process's environment (what the child sees): its agent, the credentials (the
/// `.env` of the workspace it will have, of the agent, of the project), the LLM and
/// output settings, `DELTA_FSYNC` and a price for a cost budget
/// ([`delta_engine::launch::check_settings`]). What the task line itself carries (budgets,
/// message, `env`) was checked by [`load_tasks`] with the CLI's own parsers. Returns
/// every task's problem (`task ID: …`).
///
/// # Errors
/// [`BatchError::Config`] for an agent that cannot be loaded.
fn check_tasks(
    tasks: &[Task],
    agent: &delta_engine::config::Agent,
    cwd: &std::path::Path,
    dir: &BatchDir,
) -> Result<Vec<String>, BatchError> {
    let mut problems = Vec::new();
    for task in tasks {
        let own;
        let agent = match &task.agent {
            Some(other) => {
                own = delta_engine::config::load_agent(other, cwd)?;
                &own
            }
            None => agent,
        };
        // The workspace the child will run in: the task's own when it has one already,
        // else the copy of `workspace_from` it will get.
        let workspace = dir.workspace(&task.id);
        let env_dir = match &task.workspace_from {
            Some(from) if !workspace.exists() => from.clone(),
            Some(_) | None => workspace,
        };
        let env = |name: &str| {
            task.env
                .get(name)
                .cloned()
                .or_else(|| delta_engine::launch::env_var(name))
        };
        if let Err(error) =
            delta_engine::launch::check_settings(&env_dir, agent, task.max_cost_usd, env)
        {
            let help = error
                .help()
                .map(|help| format!("; {help}"))
                .unwrap_or_default();
            problems.push(format!("task {}: {error}{help}", task.id));
        }
    }
    Ok(problems)
}

/// The tasks still to do: every task but those COMPLETED and recorded. A COMPLETED run
/// without its line in `results.jsonl` (its driver died after the run ended) is recorded
/// now, without running it again.
///
/// # Errors
/// When a result cannot be recorded.
pub fn pending(dir: &BatchDir, manifest: &Manifest) -> Result<Vec<Task>, BatchError> {
    let results = dir.results();
    let mut todo = Vec::new();
    for task in &manifest.tasks {
        let recorded = results.get(&task.id);
        match dir.run_metadata(&task.id) {
            Some(metadata)
                if dir::is_completed(&metadata) || runner::stopped_by_budget(&metadata) =>
            {
                if recorded.is_none_or(|r| r.status != metadata.status.to_string()) {
                    dir.append_result(&TaskResult::from_metadata(&metadata, None))?;
                }
            }
            // Recorded as failed for good: retried only while retries are allowed.
            Some(metadata)
                if recorded.is_some()
                    && metadata.status == delta_engine::run::RunStatus::Failed
                    && manifest.retries == 0 => {}
            Some(_) | None => todo.push(task.clone()),
        }
    }
    Ok(todo)
}

fn sha256_hex(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
