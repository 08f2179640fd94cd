//! One task, driven to an end the way `delta run` and `delta continue` drive any run: as a
//! child `delta` process in the task's workspace. A child per task is what lets a batch
//! survive anything one run does (a crash, `kill -9`, a leak) and give each run its own
//! environment; the child goes through the one launch path like every other run.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use super::BatchError;
use super::dir::{BatchDir, Manifest, TaskResult};
use super::tasks::Task;
use crate::run::{RunStatus, is_locked_by_other};

/// How long to wait between looks at a run another process still drives.
const OWNER_POLL: Duration = Duration::from_millis(200);

/// What to do with a task, from what its run directory says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// No run yet: start it.
    Start,
    /// COMPLETED: record it if needed, never run it again.
    Done,
    /// INTERRUPTED, or RUNNING with a dead owner (the Janitor takes it over): continue.
    Resume,
    /// FAILED: retry (continue with a message) when retries allow.
    Failed,
    /// WAITING_FOR_INPUT: nobody in a batch answers; recorded as is.
    Waiting,
    /// RUNNING and its owner alive (another driver, an orphan of a killed one): wait.
    Busy,
}

/// Runs tasks of a batch with the `delta` binary at `delta`.
#[derive(Debug, Clone)]
pub struct TaskRunner {
    /// The `delta` binary children are started from.
    pub delta: PathBuf,
    /// The batch.
    pub dir: BatchDir,
    /// The batch's agent.
    pub agent: PathBuf,
    /// `--environment` and `--environment-image` for every run.
    pub environment: Vec<String>,
}

impl TaskRunner {
    /// The runner of `manifest`'s tasks in `dir`, with `delta` as the child binary.
    #[must_use]
    pub fn new(delta: &Path, dir: &BatchDir, manifest: &Manifest) -> Self {
        Self {
            delta: delta.to_path_buf(),
            dir: dir.clone(),
            agent: manifest.agent.clone(),
            environment: manifest
                .environment
                .map(|kind| ["--environment".to_owned(), kind.as_str().to_owned()])
                .into_iter()
                .flatten()
                .chain(
                    manifest
                        .environment_image
                        .iter()
                        .flat_map(|image| ["--environment-image".to_owned(), image.clone()]),
                )
                .collect(),
        }
    }

    /// The tokio runtime `builder` makes, for either executor to drive tasks on.
    pub(super) fn runtime(
        builder: &mut tokio::runtime::Builder,
        root: &Path,
    ) -> Result<tokio::runtime::Runtime, BatchError> {
        builder
            .enable_all()
            .build()
            .map_err(|source| BatchError::Io {
                path: root.to_path_buf(),
                source,
            })
    }

    /// What the task's run directory says is next.
    #[must_use]
    pub fn next(&self, task: &Task) -> Next {
        let Some(metadata) = self.dir.run_metadata(&task.id) else {
            self.clear_unborn_run(task);
            return Next::Start;
        };
        match metadata.status {
            RunStatus::Completed => Next::Done,
            // The task's own budgets ended it: that is its outcome, not an accident.
            RunStatus::Interrupted if stopped_by_budget(&metadata) => Next::Done,
            RunStatus::Interrupted => Next::Resume,
            RunStatus::Failed => Next::Failed,
            RunStatus::WaitingForInput => Next::Waiting,
            RunStatus::Running => {
                let lock = self
                    .dir
                    .workspace(&task.id)
                    .join(".delta")
                    .join(&task.id)
                    .join("run.lock");
                if is_locked_by_other(&lock).unwrap_or(false) {
                    Next::Busy
                } else {
                    Next::Resume
                }
            }
        }
    }

    /// Drives `task` until its run has a final status (waiting for another owner first,
    /// resuming a run that died), and records it in `results.jsonl`. `retries` FAILED runs
    /// with a transient LLM error are continued again after a backoff.
    ///
    /// # Errors
    /// When the child cannot be started or the workspace prepared.
    pub async fn drive(
        &self,
        task: &Task,
        retries: u32,
        on_child: impl Fn(Option<u32>),
    ) -> Result<TaskResult, BatchError> {
        let mut retries_left = retries;
        let mut deaths = 0;
        let mut exit_code = None;
        loop {
            let next = self.next(task);
            let args = match next {
                Next::Busy => {
                    tokio::time::sleep(OWNER_POLL).await;
                    continue;
                }
                Next::Start => {
                    self.prepare_workspace(task)?;
                    self.start_args(task)
                }
                Next::Resume => self.continue_args(task, None),
                Next::Failed if retries_left > 0 && self.transient(task) => {
                    retries_left -= 1;
                    let backoff = Duration::from_millis(500 * u64::from(retries - retries_left));
                    tokio::time::sleep(backoff).await;
                    self.continue_args(
                        task,
                        Some("The last attempt failed with a transient error of the model's API; go on with the task."),
                    )
                }
                Next::Done | Next::Waiting | Next::Failed => return self.record(task, exit_code),
            };
            let code = self.spawn(task, &args, &on_child).await?;
            on_child(None);
            match code {
                Some(code) => exit_code = Some(code),
                // Killed by a signal (kill -9, the OOM killer): the run stays RUNNING
                // with a dead owner, and the next turn resumes it through the Janitor.
                None => {
                    deaths += 1;
                    if deaths > 3 {
                        return self.record(task, None);
                    }
                }
            }
            // A run a signal interrupted (Ctrl-C of the batch) stays INTERRUPTED for the
            // next `delta batch run`; the caller stops launching.
            if exit_code == Some(130) {
                return self.record(task, exit_code);
            }
        }
    }

    /// Removes a run directory a signal or `kill -9` left while the run was being created:
    /// no metadata, an empty or missing journal and no owner. Nothing was recorded in it,
    /// so nothing is lost, and the task's run id can be created again.
    fn clear_unborn_run(&self, task: &Task) {
        let run_dir = self.dir.workspace(&task.id).join(".delta").join(&task.id);
        let journal_empty =
            std::fs::metadata(run_dir.join("journal.jsonl")).map_or(true, |m| m.len() == 0);
        if run_dir.is_dir()
            && journal_empty
            && !is_locked_by_other(&run_dir.join("run.lock")).unwrap_or(true)
        {
            // If it cannot be removed, `delta run` says why in the task's log.
            let _ = std::fs::remove_dir_all(&run_dir);
        }
    }

    /// Whether the task's FAILED run failed on the model's API (worth a retry).
    fn transient(&self, task: &Task) -> bool {
        self.dir
            .run_metadata(&task.id)
            .and_then(|m| m.error)
            .is_some_and(|e| e.error_type == crate::run::ErrorType::LlmError)
    }

    fn record(&self, task: &Task, exit_code: Option<i32>) -> Result<TaskResult, BatchError> {
        let metadata = self
            .dir
            .run_metadata(&task.id)
            .ok_or_else(|| BatchError::NoRun {
                id: task.id.clone(),
                workspace: self.dir.workspace(&task.id),
            })?;
        let result = TaskResult::from_metadata(&metadata, exit_code);
        self.dir.append_result(&result)?;
        Ok(result)
    }

    /// The task's fresh workspace: a copy of `workspace_from`, or an empty directory.
    fn prepare_workspace(&self, task: &Task) -> Result<(), BatchError> {
        let workspace = self.dir.workspace(&task.id);
        if let Some(from) = &task.workspace_from
            && !workspace.exists()
        {
            copy_dir(from, &workspace)?;
        }
        std::fs::create_dir_all(&workspace).map_err(|source| BatchError::Io {
            path: workspace,
            source,
        })
    }

    fn start_args(&self, task: &Task) -> Vec<String> {
        let agent = task.agent.as_deref().unwrap_or(&self.agent);
        let mut args = vec![
            "run".to_owned(),
            "--agent".to_owned(),
            agent.display().to_string(),
            "--run-id".to_owned(),
            task.id.clone(),
            "-m".to_owned(),
            task.message.clone(),
        ];
        args.extend(self.common_args(task));
        args
    }

    fn continue_args(&self, task: &Task, message: Option<&str>) -> Vec<String> {
        let mut args = vec![
            "continue".to_owned(),
            "--run-id".to_owned(),
            task.id.clone(),
        ];
        if let Some(message) = message {
            args.extend(["-m".to_owned(), message.to_owned()]);
        }
        args.extend(self.common_args(task));
        args
    }

    /// The flags `run` and `continue` share: the workspace, no questions, the budgets.
    fn common_args(&self, task: &Task) -> Vec<String> {
        let mut args = vec![
            "-w".to_owned(),
            self.dir.workspace(&task.id).display().to_string(),
            "-y".to_owned(),
            "--no-ask-human".to_owned(),
            "--format".to_owned(),
            "json".to_owned(),
        ];
        args.extend(self.environment.iter().cloned());
        if let Some(n) = task.max_iterations {
            args.extend(["--max-iterations".to_owned(), n.to_string()]);
        }
        if let Some(usd) = task.max_cost_usd {
            args.extend(["--max-cost-usd".to_owned(), usd.to_string()]);
        }
        if let Some(tokens) = task.max_tokens {
            args.extend(["--max-tokens".to_owned(), tokens.to_string()]);
        }
        if let Some(duration) = &task.max_duration {
            args.extend(["--max-duration".to_owned(), duration.clone()]);
        }
        args
    }

    /// Runs `delta args…` for `task` in its own process group (a Ctrl-C of the batch is
    /// forwarded by the driver, once, rather than reaching every run from the terminal),
    /// its output in the task's workspace (`.delta-batch.log`). `on_child` learns its pid.
    async fn spawn(
        &self,
        task: &Task,
        args: &[String],
        on_child: &impl Fn(Option<u32>),
    ) -> Result<Option<i32>, BatchError> {
        let workspace = self.dir.workspace(&task.id);
        let mut command = Command::new(&self.delta);
        command.args(args).envs(&task.env).current_dir(&workspace);
        let status = run_child(command, &workspace.join(".delta-batch.log"), on_child).await?;
        Ok(status.code())
    }
}

/// Runs `command` (a `delta` child of a batch or an eval) in its own process group, with
/// no input, its stderr appended to `log`, to its end; `on_child` learns its pid.
///
/// # Errors
/// When the log cannot be opened or the child started or waited for.
pub(crate) async fn run_child(
    mut command: Command,
    log: &Path,
    on_child: &(impl Fn(Option<u32>) + ?Sized),
) -> Result<std::process::ExitStatus, BatchError> {
    let io = |source| BatchError::Io {
        path: log.to_path_buf(),
        source,
    };
    let stderr = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(io)?;
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .process_group(0)
        .kill_on_drop(false)
        .spawn()
        .map_err(|source| BatchError::Spawn {
            program: PathBuf::from(command.as_std().get_program()),
            source,
        })?;
    on_child(child.id());
    child.wait().await.map_err(io)
}

/// Whether the run's own iteration, cost, tokens or time budget stopped it.
#[must_use]
pub fn stopped_by_budget(metadata: &crate::run::Metadata) -> bool {
    metadata.error.as_ref().is_some_and(|e| {
        matches!(
            e.error_type,
            crate::run::ErrorType::MaxIterationsReached | crate::run::ErrorType::BudgetExceeded
        )
    })
}

/// Copies the directory `from` to `to` (files, directories and symlinks as links).
pub(crate) fn copy_dir(from: &Path, to: &Path) -> Result<(), BatchError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| BatchError::Io { path, source }
    };
    std::fs::create_dir_all(to).map_err(io(to))?;
    for entry in std::fs::read_dir(from).map_err(io(from))? {
        let entry = entry.map_err(io(from))?;
        let source = entry.path();
        let target = to.join(entry.file_name());
        let kind = entry.file_type().map_err(io(&source))?;
        if kind.is_dir() {
            copy_dir(&source, &target)?;
        } else if kind.is_symlink() {
            let link = std::fs::read_link(&source).map_err(io(&source))?;
            std::os::unix::fs::symlink(link, &target).map_err(io(&target))?;
        } else {
            std::fs::copy(&source, &target).map_err(io(&target))?;
        }
    }
    Ok(())
}
