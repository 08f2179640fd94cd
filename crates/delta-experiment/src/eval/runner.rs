//! One trial driven to its verdict the way batch drives a task: a child `delta eval trial`
//! per trial, in its own process group (a Ctrl-C of the driver is passed on once, not
//! sent by the terminal to every trial), its stderr in `trials/<id>/trial.log`. The trial
//! directory says what is next: a verdict is final (never verified twice), a held lock is
//! a trial still running (an orphan of a killed driver: wait for it), anything else runs.

use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::Signal;
use tokio::process::Command;

use super::dir::{
    Durations, ErrorClass, EvalDir, Manifest, TrialError, TrialPaths, TrialRef, TrialResult,
    TrialStatus,
};
use crate::batch::{BatchError, Drive};
use delta_engine::engine::Shutdown;
use delta_engine::run::{RunLock, is_locked_by_other};

/// How long to wait between looks at a trial another process runs.
const OWNER_POLL: Duration = Duration::from_millis(200);

/// How a trial's drive ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TrialDone {
    /// It has its verdict (and its line in `results.jsonl`).
    Verdict(Box<TrialResult>),
    /// A signal stopped it before its verdict: it runs again on the next `eval run`.
    Interrupted(String),
}

/// Runs the trials of an eval with the `delta` binary at `delta`.
#[derive(Debug, Clone)]
pub struct TrialRunner {
    /// The `delta` binary children are started from.
    pub delta: PathBuf,
    /// The eval.
    pub dir: EvalDir,
    /// Its manifest.
    pub manifest: Manifest,
}

impl TrialRunner {
    /// The trial's verdict when it has one, its line appended to `results.jsonl` if the
    /// process that wrote the verdict died before appending it.
    ///
    /// # Errors
    /// When the line cannot be appended.
    pub fn recorded(&self, trial: &TrialRef) -> Result<Option<TrialResult>, BatchError> {
        let Some(verdict) = self.dir.verdict(&trial.id) else {
            return Ok(None);
        };
        if !self.dir.results().contains_key(&trial.id) {
            self.dir.append_result(&verdict)?;
        }
        Ok(Some(verdict))
    }

    /// Drives `trial` until it has a verdict or a signal stops it; `stop` ends the wait
    /// for another owner of the trial.
    ///
    /// # Errors
    /// When the child cannot be started or the trial recorded.
    pub async fn drive_trial(
        &self,
        trial: &TrialRef,
        on_child: &(dyn Fn(Option<u32>) + Send + Sync),
        stop: &Shutdown,
    ) -> Result<TrialDone, BatchError> {
        loop {
            let lock = self.dir.lock_path(&trial.id);
            if is_locked_by_other(&lock).unwrap_or(false) {
                let mut stopped = stop.clone();
                tokio::select! {
                    () = tokio::time::sleep(OWNER_POLL) => continue,
                    _ = stopped.wait() => return Ok(TrialDone::Interrupted(trial.id.clone())),
                }
            }
            if let Some(verdict) = self.recorded(trial)? {
                return Ok(TrialDone::Verdict(Box::new(verdict)));
            }
            let code = self.spawn(trial, on_child).await?;
            on_child(None);
            match code {
                Some(0) => {}
                Some(130) => {
                    return Ok(TrialDone::Interrupted(trial.id.clone()));
                }
                // The trial's process died without a verdict (a crash, the OOM killer):
                // the trial is errored, with its log, rather than run again forever.
                Some(_) | None => {
                    if self.dir.verdict(&trial.id).is_none() {
                        self.record_crash(trial, code)?;
                    }
                }
            }
        }
    }

    /// Records the trial as errored (`trial_crashed`), under its lock.
    fn record_crash(&self, trial: &TrialRef, code: Option<i32>) -> Result<(), BatchError> {
        let Ok(_lock) = RunLock::try_acquire(&self.dir.lock_path(&trial.id)) else {
            // Someone else took the trial on meanwhile; the loop waits for it.
            return Ok(());
        };
        let task = &self.manifest.tasks[trial.task];
        let log = self.dir.trial_dir(&trial.id).join("trial.log");
        let result = TrialResult {
            task: task.name.clone(),
            attempt: trial.attempt,
            trial: trial.id.clone(),
            status: TrialStatus::Errored,
            reward: None,
            rewards: Default::default(),
            error: Some(TrialError {
                class: ErrorClass::TrialCrashed,
                message: match code {
                    Some(code) => format!("the trial's process exited {code} without a verdict"),
                    None => {
                        "the trial's process was killed by a signal before its verdict".to_owned()
                    }
                },
                log: Some(self.dir.relative(&log)),
            }),
            usage: serde_json::Value::Null,
            cost_usd: 0.0,
            durations_ms: Durations::default(),
            run_id: None,
            run_status: None,
            paths: TrialPaths {
                trial: self.dir.relative(&self.dir.trial_dir(&trial.id)),
                ..TrialPaths::default()
            },
            image: None,
            verifier_exit_code: None,
            agent_exit_code: None,
        };
        self.dir.write_verdict(&result)?;
        self.dir.append_result(&result)
    }

    /// Runs `delta eval trial ROOT --trial ID` in its own process group, its stderr in the
    /// trial's log; `on_child` learns its pid. Its exit code, 130 when SIGINT or SIGTERM
    /// ended it, `None` when another signal did.
    async fn spawn(
        &self,
        trial: &TrialRef,
        on_child: &(dyn Fn(Option<u32>) + Send + Sync),
    ) -> Result<Option<i32>, BatchError> {
        let trial_dir = self.dir.trial_dir(&trial.id);
        std::fs::create_dir_all(&trial_dir).map_err(|source| BatchError::Io {
            path: trial_dir.clone(),
            source,
        })?;
        let mut command = Command::new(&self.delta);
        command
            .arg("eval")
            .arg("trial")
            .arg(self.dir.root())
            .arg("--trial")
            .arg(&trial.id)
            .current_dir(&trial_dir);
        let status = run_child(command, &trial_dir.join("trial.log"), on_child).await?;
        // A Ctrl-C passed on before the trial installed its handlers (it was starting)
        // ends it by the signal itself: stopped, as a trial that exits 130 is.
        let stopped = status.signal().is_some_and(|signal| {
            signal == Signal::SIGINT as i32 || signal == Signal::SIGTERM as i32
        });
        Ok(if stopped { Some(130) } else { status.code() })
    }
}

impl Drive for TrialRunner {
    type Unit = TrialRef;
    type Done = TrialDone;

    fn id(unit: &TrialRef) -> String {
        unit.id.clone()
    }

    async fn drive(
        &self,
        unit: TrialRef,
        on_child: Box<dyn Fn(Option<u32>) + Send + Sync>,
        stop: Shutdown,
    ) -> Result<Option<TrialDone>, BatchError> {
        self.drive_trial(&unit, on_child.as_ref(), &stop)
            .await
            .map(Some)
    }
}

/// Runs `command` (a trial's `delta` child) in its own process group, with no input, its
/// stderr appended to `log`, to its end; `on_child` learns its pid.
///
/// # Errors
/// When the log cannot be opened or the child started or waited for.
async fn run_child(
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

/// The trials still to do: every trial without a verdict. A verdict without its line in
/// `results.jsonl` (its process died between the two) gets its line now, without running
/// or verifying the trial again.
///
/// # Errors
/// When a line cannot be appended.
pub fn pending(runner: &TrialRunner) -> Result<Vec<TrialRef>, BatchError> {
    let results = runner.dir.results();
    let mut todo = Vec::new();
    for trial in runner.manifest.trials() {
        if results.contains_key(&trial.id) {
            continue;
        }
        let running = is_locked_by_other(&runner.dir.lock_path(&trial.id)).unwrap_or(false);
        if running || runner.recorded(&trial)?.is_none() {
            todo.push(trial);
        }
    }
    Ok(todo)
}
