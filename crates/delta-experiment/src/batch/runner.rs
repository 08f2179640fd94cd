//! One task, driven to an end the way `delta run` and `delta continue` drive any run: as a
//! child `delta` process in the task's workspace. A child per task is what lets a batch
//! survive anything one run does (a crash, `kill -9`, a leak) and give each run its own
//! environment; the child goes through the one launch path like every other run.
//!
//! Every wait is bounded or stoppable. A child that leaves the task where it was (it
//! refused, or could not be started; the workspace could not be made) is an attempt
//! without progress: after [`MAX_ATTEMPTS`] of them in a row, with a doubling backoff
//! between them, the task is recorded with why. Waiting for another owner of the run,
//! backing off and copying the workspace all end as soon as the driver is asked to stop.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt as _;
use tokio::process::Command;

use super::BatchError;
use super::dir::{BatchDir, Manifest, TaskResult};
use super::lock::TaskLock;
use super::tasks::Task;
use delta_engine::engine::Shutdown;
use delta_engine::run::{
    Metadata, RunId, RunPaths, RunStatus, is_being_created, is_locked_by_other,
};
use delta_engine::secrets::{Redactor, keep_tail, pump_redacted};

/// How long to wait between looks at a run (or a task) another process still drives.
const OWNER_POLL: Duration = Duration::from_millis(200);

/// Attempts in a row that leave a task where it was before the driver records it as
/// given up (`error.type` `BatchTaskError`); a re-run of the batch tries it again.
pub const MAX_ATTEMPTS: u32 = 4;

/// The wait after the first attempt without progress, doubled after each (0.5 s, 1 s,
/// 2 s: 3.5 s in all before a task is given up).
const BACKOFF: Duration = Duration::from_millis(500);

/// Deaths of a child by a signal (kill -9, the OOM killer) after which the task is
/// recorded as its run stands instead of being resumed again.
const MAX_DEATHS: u32 = 3;

/// Bytes of a child's stderr kept (redacted) for the record of a task given up.
const STDERR_TAIL: usize = 2000;

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
    /// RUNNING and its owner alive (another driver, an orphan of a killed one), or being
    /// created by another process: wait.
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

/// How a child ended: its exit code (`None`: killed by a signal) and the end of its
/// stderr, redacted.
struct Ended {
    code: Option<i32>,
    tail: String,
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
            // `delta run --run-id` takes over a creation that was abandoned; one that is
            // under way belongs to its creator.
            return match RunId::parse(&task.id) {
                Ok(id) if is_being_created(&RunPaths::new(&self.dir.workspace(&task.id), &id)) => {
                    Next::Busy
                }
                Ok(_) | Err(_) => Next::Start,
            };
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
    /// with a transient LLM error are continued again after a backoff. A task that makes
    /// no progress `MAX_ATTEMPTS` times in a row is recorded with why.
    ///
    /// `stop` ends every wait at once and starts no new child; `on_child` learns each
    /// child's pid (and `None` when it is gone), so that the caller can pass a signal on.
    /// `None`: stopped before the task had a result to record.
    ///
    /// # Errors
    /// When the result cannot be recorded, or the task's lock taken.
    pub async fn drive(
        &self,
        task: &Task,
        retries: u32,
        on_child: impl Fn(Option<u32>),
        stop: &Shutdown,
    ) -> Result<Option<TaskResult>, BatchError> {
        // One driver per task: another (a Slurm array task of another submission) drives
        // it now; its result is recorded by it, and seen below once it is done.
        let _lock = loop {
            if let Some(lock) = TaskLock::try_acquire(self.dir.root(), &task.id)? {
                break lock;
            }
            if sleep_or_stop(OWNER_POLL, stop).await {
                return Ok(None);
            }
        };
        let mut retries_left = retries;
        let mut launched = false;
        let mut stuck = 0;
        let mut deaths = 0;
        let mut exit_code = None;
        loop {
            if stop.requested().is_some() {
                return Ok(None);
            }
            let before = fingerprint(self.dir.run_metadata(&task.id).as_ref());
            let next = self.next(task);
            let (args, message) = match next {
                Next::Busy => {
                    if sleep_or_stop(OWNER_POLL, stop).await {
                        return Ok(None);
                    }
                    continue;
                }
                Next::Start => {
                    if let Err(error) = self.prepare_workspace(task, stop).await {
                        stuck += 1;
                        let why = format!("its workspace could not be prepared: {error}");
                        if stuck >= MAX_ATTEMPTS {
                            return self.give_up(task, exit_code, why, None).map(Some);
                        }
                        if sleep_or_stop(backoff(stuck), stop).await {
                            return Ok(None);
                        }
                        continue;
                    }
                    // A stop during the copy left no workspace: none is made by a child.
                    if stop.requested().is_some() {
                        return Ok(None);
                    }
                    (self.start_args(task), Some(task.message.as_str()))
                }
                Next::Resume => (self.continue_args(task, None), None),
                Next::Failed if retries_left > 0 && self.transient(task) => {
                    retries_left -= 1;
                    let backoff = BACKOFF * (retries - retries_left);
                    if sleep_or_stop(backoff, stop).await {
                        return Ok(None);
                    }
                    (
                        self.continue_args(
                            task,
                            Some("The last attempt failed with a transient error of the model's API; go on with the task."),
                        ),
                        None,
                    )
                }
                Next::Done | Next::Waiting | Next::Failed => {
                    return self.record(task, exit_code, !launched).map(Some);
                }
            };
            launched = true;
            let why = match self.spawn(task, &args, message, &on_child, stop).await {
                // EMFILE, EAGAIN, ENOMEM: this attempt did not happen.
                Err(error) => (format!("{error}"), None),
                Ok(ended) => {
                    on_child(None);
                    exit_code = ended.code;
                    match ended.code {
                        // Our own stop: the run stays INTERRUPTED, resumable by the next
                        // `delta batch run`, and is not recorded as an end. A signal from
                        // elsewhere ended the run as it stands.
                        Some(130) if stop.requested().is_some() => return Ok(None),
                        Some(130) => return self.record(task, exit_code, false).map(Some),
                        // Killed by a signal (kill -9, the OOM killer): the run stays
                        // RUNNING with a dead owner, and the next turn resumes it through
                        // the Janitor; a few times.
                        None => {
                            deaths += 1;
                            if deaths <= MAX_DEATHS {
                                continue;
                            }
                            if self.dir.run_metadata(&task.id).is_some() {
                                return self.record(task, None, false).map(Some);
                            }
                            let why = format!(
                                "`delta {}` was killed by a signal {deaths} times",
                                args.first().map_or("run", String::as_str)
                            );
                            return self.give_up(task, None, why, None).map(Some);
                        }
                        Some(code) => {
                            let after = fingerprint(self.dir.run_metadata(&task.id).as_ref());
                            if after != before {
                                stuck = 0;
                                continue;
                            }
                            let status = after.map(|(status, ..)| status);
                            let tail = (!ended.tail.is_empty()).then_some(ended.tail);
                            (refusal(&args, code, status), tail)
                        }
                    }
                }
            };
            stuck += 1;
            if stuck >= MAX_ATTEMPTS {
                return self.give_up(task, exit_code, why.0, why.1).map(Some);
            }
            if sleep_or_stop(backoff(stuck), stop).await {
                return Ok(None);
            }
        }
    }

    /// Whether the task's FAILED run failed on the model's API (worth a retry).
    fn transient(&self, task: &Task) -> bool {
        self.dir
            .run_metadata(&task.id)
            .and_then(|m| m.error)
            .is_some_and(|e| e.error_type == delta_engine::run::ErrorType::LlmError)
    }

    /// Records the task's run as it ended. `check` (the run ended before this driver
    /// launched anything: another driver ran it) records it only when `results.jsonl`
    /// does not hold that end already, so that no end is recorded twice.
    fn record(
        &self,
        task: &Task,
        exit_code: Option<i32>,
        check: bool,
    ) -> Result<TaskResult, BatchError> {
        let metadata = self
            .dir
            .run_metadata(&task.id)
            .ok_or_else(|| BatchError::NoRun {
                id: task.id.clone(),
                workspace: self.dir.workspace(&task.id),
            })?;
        let result = TaskResult::from_metadata(&metadata, exit_code);
        if check
            && let Some(recorded) = self.dir.results().remove(&task.id)
            && recorded.same_end(&result)
        {
            return Ok(recorded);
        }
        self.dir.append_result(&result)?;
        Ok(result)
    }

    /// Records a task the driver gives up on, with why and the end of its child's stderr.
    fn give_up(
        &self,
        task: &Task,
        exit_code: Option<i32>,
        why: String,
        details: Option<String>,
    ) -> Result<TaskResult, BatchError> {
        let log = self.dir.workspace(&task.id).join(".delta-batch.log");
        let message = format!(
            "the batch driver gave up on this task after {MAX_ATTEMPTS} attempts in a row \
             without progress: {why}; see {}",
            log.display()
        );
        let result = TaskResult::gave_up(
            &task.id,
            self.dir.run_metadata(&task.id).as_ref(),
            exit_code,
            message,
            details,
        );
        self.dir.append_result(&result)?;
        Ok(result)
    }

    /// The task's fresh workspace: a copy of `workspace_from`, or an empty directory. The
    /// copy is made beside it (`runs/.ID.copying`) and renamed into place, so that a copy
    /// that fails half way never becomes a workspace; special files are left out.
    async fn prepare_workspace(&self, task: &Task, stop: &Shutdown) -> Result<(), BatchError> {
        let workspace = self.dir.workspace(&task.id);
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| BatchError::Io { path, source }
        };
        if let Some(from) = &task.workspace_from
            && !workspace.exists()
        {
            let staging = self
                .dir
                .root()
                .join("runs")
                .join(format!(".{}.copying", task.id));
            let (from, to, halt) = (from.clone(), staging.clone(), stop.clone());
            let copied = tokio::task::spawn_blocking(move || {
                let _ = std::fs::remove_dir_all(&to);
                let mut skipped = Vec::new();
                copy_dir(&from, &to, &halt, &mut skipped).map(|()| skipped)
            })
            .await
            .map_err(|error| io(&staging)(std::io::Error::other(error)))?;
            let skipped = match copied {
                Ok(skipped) => skipped,
                Err(error) => {
                    let _ = std::fs::remove_dir_all(&staging);
                    return Err(error);
                }
            };
            if stop.requested().is_some() {
                let _ = std::fs::remove_dir_all(&staging);
                return Ok(());
            }
            std::fs::rename(&staging, &workspace).map_err(io(&workspace))?;
            if !skipped.is_empty() {
                let note: String = skipped
                    .iter()
                    .map(|line| format!("delta batch: workspace_from: {line}\n"))
                    .collect();
                append_log(&workspace, note.as_bytes());
            }
        }
        std::fs::create_dir_all(&workspace).map_err(io(&workspace))
    }

    fn start_args(&self, task: &Task) -> Vec<String> {
        let agent = task.agent.as_deref().unwrap_or(&self.agent);
        // The message goes on stdin (`-m -`): argv cannot carry one of a few hundred KB,
        // nor a NUL, nor tell a message from a flag.
        let mut args = vec![
            "run".to_owned(),
            "--agent".to_owned(),
            agent.display().to_string(),
            "--run-id".to_owned(),
            task.id.clone(),
            "-m".to_owned(),
            "-".to_owned(),
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
        // Checked when the task file was loaded, by the parsers the child uses.
        args.extend(self.environment.iter().cloned());
        args.extend(task.limit_args().unwrap_or_default());
        args
    }

    /// Runs `delta args…` for `task` in its own process group (a Ctrl-C of the batch is
    /// forwarded by the driver, once, rather than reaching every run from the terminal),
    /// `message` on its stdin, its stderr redacted into the task's workspace
    /// (`.delta-batch.log`). `on_child` learns its pid.
    async fn spawn(
        &self,
        task: &Task,
        args: &[String],
        message: Option<&str>,
        on_child: &impl Fn(Option<u32>),
        stop: &Shutdown,
    ) -> Result<Ended, BatchError> {
        let workspace = self.dir.workspace(&task.id);
        let mut child = Command::new(&self.delta)
            .args(args)
            .envs(&task.env)
            .current_dir(&workspace)
            .stdin(if message.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(false)
            .spawn()
            .map_err(|source| BatchError::Spawn {
                program: self.delta.clone(),
                source,
            })?;
        on_child(child.id());
        // A stop that came between the check before this child and its registration
        // found no pid to signal: the child hears it here.
        if stop.requested().is_some()
            && let Some(pid) = child.id().and_then(|pid| i32::try_from(pid).ok())
        {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGINT,
            );
        }
        if let (Some(mut stdin), Some(message)) = (child.stdin.take(), message) {
            let message = message.as_bytes().to_vec();
            tokio::spawn(async move {
                // A child that exits before reading it all fails on its own terms.
                let _ = stdin.write_all(&message).await;
            });
        }
        let redactor = task.redactor(&workspace, task.agent.as_deref().unwrap_or(&self.agent));
        let pump = child
            .stderr
            .take()
            .map(|stderr| tokio::spawn(pump_stderr(stderr, workspace, redactor)));
        let status = child.wait().await.map_err(|source| BatchError::Spawn {
            program: self.delta.clone(),
            source,
        })?;
        let tail = match pump {
            // A process the child left behind may hold its stderr open: the tail is what
            // arrived by then.
            Some(pump) => tokio::time::timeout(Duration::from_secs(1), pump)
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default(),
            None => String::new(),
        };
        Ok(Ended {
            code: status.code(),
            tail,
        })
    }
}

/// What a run's metadata says of its progress; a child that changed none of it did
/// nothing.
fn fingerprint(metadata: Option<&Metadata>) -> Option<(RunStatus, String, u32)> {
    metadata.map(|m| (m.status, m.updated_at.to_string(), m.iterations))
}

/// Why a child's attempt left the task where it was, for the record.
fn refusal(args: &[String], code: i32, status: Option<RunStatus>) -> String {
    let command = args.first().map_or("run", String::as_str);
    match status {
        Some(status) => {
            format!("`delta {command}` exited with code {code} and left the run {status}")
        }
        None => format!("`delta {command}` exited with code {code} without creating the run"),
    }
}

/// The backoff after the `stuck`-th attempt without progress.
fn backoff(stuck: u32) -> Duration {
    BACKOFF * 2_u32.saturating_pow(stuck.saturating_sub(1).min(8))
}

/// Sleeps `duration` unless `stop` comes first; whether it did.
async fn sleep_or_stop(duration: Duration, stop: &Shutdown) -> bool {
    if stop.requested().is_some() {
        return true;
    }
    let mut stop = stop.clone();
    tokio::select! {
        () = tokio::time::sleep(duration) => false,
        _ = stop.wait() => true,
    }
}

/// Copies a child's stderr into `.delta-batch.log` of `workspace` through `redactor`,
/// and returns its last [`STDERR_TAIL`] bytes. A log that cannot be written (a full
/// disk) loses the copy, not the child.
async fn pump_stderr(
    stderr: tokio::process::ChildStderr,
    workspace: PathBuf,
    redactor: Redactor,
) -> String {
    let log = tokio::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(workspace.join(".delta-batch.log"))
        .await
        .ok();
    let mut tail = Vec::new();
    pump_redacted(stderr, log, &redactor, |bytes| {
        keep_tail(&mut tail, bytes, STDERR_TAIL);
    })
    .await;
    String::from_utf8_lossy(&tail).trim().to_owned()
}

/// Appends `bytes` to the task's `.delta-batch.log` (best effort: it is a log).
fn append_log(workspace: &Path, bytes: &[u8]) {
    use std::io::Write as _;
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(workspace.join(".delta-batch.log"))
    {
        let _ = file.write_all(bytes);
    }
}

/// Whether the run's own iteration, cost, tokens or time budget stopped it.
#[must_use]
pub fn stopped_by_budget(metadata: &delta_engine::run::Metadata) -> bool {
    metadata.error.as_ref().is_some_and(|e| {
        matches!(
            e.error_type,
            delta_engine::run::ErrorType::MaxIterationsReached
                | delta_engine::run::ErrorType::BudgetExceeded
        )
    })
}

/// Copies the directory `from` to `to`: directories, regular files (their permissions
/// kept) and symlinks (as links). A FIFO, socket or device is left out and named in
/// `skipped`: opening a FIFO would block, reading a device may never end. Stops between
/// files, and between chunks of a large one, once `stop` is requested.
pub(crate) fn copy_dir(
    from: &Path,
    to: &Path,
    stop: &Shutdown,
    skipped: &mut Vec<String>,
) -> Result<(), BatchError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| BatchError::Io { path, source }
    };
    std::fs::create_dir_all(to).map_err(io(to))?;
    for entry in std::fs::read_dir(from).map_err(io(from))? {
        if stop.requested().is_some() {
            return Ok(());
        }
        let entry = entry.map_err(io(from))?;
        let source = entry.path();
        let target = to.join(entry.file_name());
        let kind = entry.file_type().map_err(io(&source))?;
        if kind.is_dir() {
            copy_dir(&source, &target, stop, skipped)?;
        } else if kind.is_symlink() {
            let link = std::fs::read_link(&source).map_err(io(&source))?;
            std::os::unix::fs::symlink(link, &target).map_err(io(&target))?;
        } else if kind.is_file() {
            copy_file(&source, &target, stop, skipped)?;
        } else {
            skipped.push(format!(
                "{} was left out: it is not a regular file, a directory or a symlink",
                source.display()
            ));
        }
    }
    Ok(())
}

/// Copies one regular file in chunks, opened without blocking (it may have been replaced
/// by a FIFO since it was listed) and checked to be a regular file still.
fn copy_file(
    source: &Path,
    target: &Path,
    stop: &Shutdown,
    skipped: &mut Vec<String>,
) -> Result<(), BatchError> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    const CHUNK: u64 = 1 << 20;
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| BatchError::Io { path, source }
    };
    let mut input = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(source)
        .map_err(io(source))?;
    let meta = input.metadata().map_err(io(source))?;
    if !meta.is_file() {
        skipped.push(format!(
            "{} was left out: it is no longer a regular file",
            source.display()
        ));
        return Ok(());
    }
    let mut output = std::fs::File::create(target).map_err(io(target))?;
    loop {
        if stop.requested().is_some() {
            return Ok(());
        }
        let copied =
            std::io::copy(&mut (&mut input).take(CHUNK), &mut output).map_err(io(target))?;
        if copied < CHUNK {
            break;
        }
    }
    output.flush().map_err(io(target))?;
    std::fs::set_permissions(target, meta.permissions()).map_err(io(target))
}
