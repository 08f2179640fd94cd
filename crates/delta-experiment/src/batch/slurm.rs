//! The Slurm executor: the pending tasks become one array job. Each array task runs
//! `delta batch worker BATCH_DIR --index I --submission S`, which drives its task exactly
//! as the local executor does. Nothing runs as root and nothing is installed on the nodes:
//! the `delta` binary must be on a path every node sees, as the batch directory must be.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use super::dir::{BatchDir, Manifest, Submission, TaskResult};
use super::local::{BatchObserver, Progress, drive_all};
use super::runner::TaskRunner;
use super::{BatchError, pending};

/// What `--executor slurm` was given.
#[derive(Debug, Clone, Default)]
pub struct SlurmOptions {
    /// `--slurm-arg` values, written as `#SBATCH` lines (e.g. `--partition=debug`).
    pub args: Vec<String>,
    /// `--array-parallelism`: at most this many array tasks at once (`%M`).
    pub parallelism: Option<u32>,
}

/// Writes `slurm/batch.sbatch` for the pending tasks and submits it with `sbatch`.
/// Returns the submission (job id, tasks by array index), recorded in `batch.json`; `None`
/// when nothing is pending.
///
/// # Errors
/// When the script cannot be written or sbatch refuses it.
pub fn submit(
    dir: &BatchDir,
    manifest: &mut Manifest,
    delta: &Path,
    options: &SlurmOptions,
) -> Result<Option<Submission>, BatchError> {
    let todo = pending(dir, manifest)?;
    if todo.is_empty() {
        dir.write_summary(manifest)?;
        return Ok(None);
    }
    let ids: Vec<String> = todo.into_iter().map(|t| t.id).collect();
    let job = ArrayJob {
        command: "batch",
        unit: "task",
        root: dir.root(),
        ids: &ids,
        submission: manifest.slurm.len(),
    };
    let submission = submit_array(&job, delta, options)?;
    manifest.slurm.push(submission.clone());
    dir.write_manifest(manifest)?;
    Ok(Some(submission))
}

/// One array job of a `delta` command that has a `worker` subcommand (`batch`, `eval`):
/// array task I of submission S runs `delta COMMAND worker ROOT --index I --submission S`.
#[derive(Debug, Clone, Copy)]
pub struct ArrayJob<'a> {
    /// The command: `batch` or `eval`.
    pub command: &'static str,
    /// What one array task drives, for the script's comment: `task`, `trial`.
    pub unit: &'static str,
    /// The command's directory, seen by every node.
    pub root: &'a Path,
    /// What each array task drives, by array index.
    pub ids: &'a [String],
    /// The submission's number (its index in the directory's list of submissions).
    pub submission: usize,
}

/// Writes `ROOT/slurm/COMMAND.sbatch` for `job` and submits it with `sbatch --parsable`;
/// returns the submission to record (the job id, `job`'s ids by array index).
///
/// # Errors
/// When the script cannot be written or sbatch refuses it.
pub fn submit_array(
    job: &ArrayJob<'_>,
    delta: &Path,
    options: &SlurmOptions,
) -> Result<Submission, BatchError> {
    let slurm_dir = job.root.join("slurm");
    std::fs::create_dir_all(&slurm_dir).map_err(|source| BatchError::Io {
        path: slurm_dir.clone(),
        source,
    })?;
    let script_path = slurm_dir.join(format!("{}.sbatch", job.command));
    let script = script(job, &slurm_dir, delta, options);
    std::fs::write(&script_path, script).map_err(|source| BatchError::Io {
        path: script_path.clone(),
        source,
    })?;
    let output = Command::new("sbatch")
        .arg("--parsable")
        .arg(&script_path)
        .current_dir(job.root)
        .output()
        .map_err(|source| BatchError::Spawn {
            program: "sbatch".into(),
            source,
        })?;
    if !output.status.success() {
        return Err(BatchError::Sbatch(
            String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        ));
    }
    // `--parsable` prints `jobid` or `jobid;cluster`.
    let stdout = String::from_utf8_lossy(&output.stdout);
    Ok(Submission {
        job_id: stdout
            .trim()
            .split(';')
            .next()
            .unwrap_or_default()
            .to_owned(),
        tasks: job.ids.to_vec(),
        submitted_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    })
}

/// The array job's script.
fn script(job: &ArrayJob<'_>, slurm_dir: &Path, delta: &Path, options: &SlurmOptions) -> String {
    let last = job.ids.len().saturating_sub(1);
    let array = match options.parallelism {
        Some(m) => format!("0-{last}%{m}"),
        None => format!("0-{last}"),
    };
    let mut text = format!(
        "#!/bin/sh\n\
         # Written by `delta {command} run --executor slurm`: one array task per pending {unit}.\n\
         #SBATCH --job-name=delta-{command}\n\
         #SBATCH --array={array}\n\
         #SBATCH --output={out}/%A_%a.out\n\
         #SBATCH --ntasks=1\n",
        command = job.command,
        unit = job.unit,
        out = slurm_dir.display()
    );
    for arg in &options.args {
        text.push_str(&format!("#SBATCH {arg}\n"));
    }
    text.push_str(&format!(
        "exec {delta} {command} worker {root} --index \"$SLURM_ARRAY_TASK_ID\" --submission {submission}\n",
        delta = shell_quote(&delta.display().to_string()),
        command = job.command,
        root = shell_quote(&job.root.display().to_string()),
        submission = job.submission,
    ));
    text
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// `delta batch worker`: drives the task at `index` of `submission` (default: the last)
/// and records it, as the local executor would (SIGINT and SIGTERM, `scancel`'s, are
/// passed on to its run the same way). `None`: a signal stopped it first.
///
/// # Errors
/// An unknown index, or the errors of driving the task.
pub fn run_worker(
    dir: &BatchDir,
    delta: &Path,
    index: usize,
    submission: Option<usize>,
) -> Result<Option<TaskResult>, BatchError> {
    let manifest = recorded(
        submission,
        SUBMISSION_WAIT,
        || dir.read_manifest(),
        |m| m.slurm.len(),
    )?;
    let number = submission.unwrap_or(manifest.slurm.len().saturating_sub(1));
    let id = manifest
        .slurm
        .get(number)
        .and_then(|s| s.tasks.get(index))
        .ok_or(BatchError::NoSuchIndex {
            index,
            submission: number,
        })?;
    let mut task =
        manifest
            .tasks
            .iter()
            .find(|t| &t.id == id)
            .cloned()
            .ok_or(BatchError::NoSuchIndex {
                index,
                submission: number,
            })?;
    // batch.json holds the tasks with their secrets masked: a task whose `env` carried
    // one is read again from the task file it was submitted with.
    if task
        .env
        .values()
        .any(|value| value.contains(delta_engine::secrets::REDACTED))
    {
        task = task_from_file(&manifest, &task.id)?;
    }
    let runner = TaskRunner::new(delta, dir, &manifest);
    let runtime = TaskRunner::runtime(
        &mut tokio::runtime::Builder::new_current_thread(),
        dir.root(),
    )?;
    let mut only = Only::default();
    runtime.block_on(drive_all(runner, &manifest, vec![task], 1, &mut only))?;
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    if let Some(error) = only.error {
        return Err(error);
    }
    dir.write_summary(&manifest)?;
    Ok(only.result)
}

/// How long a worker waits for its submission to be recorded. The submitter records it in
/// the manifest when `sbatch` has answered with the job id, and an idle cluster starts the
/// first array tasks before that.
pub(crate) const SUBMISSION_WAIT: Duration = Duration::from_secs(30);

/// The manifest `read` returns once it records submission `number` (`count`: how many it
/// records), read again every 100 ms until then, for at most `wait`; then as it is, and the
/// caller says the index is unknown. Without a number there is nothing to wait for.
pub(crate) fn recorded<M, E>(
    number: Option<usize>,
    wait: Duration,
    read: impl Fn() -> Result<M, E>,
    count: impl Fn(&M) -> usize,
) -> Result<M, E> {
    let deadline = Instant::now() + wait;
    loop {
        let manifest = read()?;
        let waiting = number.is_some_and(|number| number >= count(&manifest));
        if !waiting || Instant::now() >= deadline {
            return Ok(manifest);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Task `id` as the task file of `manifest` has it, when the file is still the one the
/// batch was started with.
fn task_from_file(manifest: &Manifest, id: &str) -> Result<super::Task, BatchError> {
    let bytes = std::fs::read(&manifest.tasks_file).map_err(|source| BatchError::Io {
        path: manifest.tasks_file.clone(),
        source,
    })?;
    if super::sha256_hex(&bytes) != manifest.tasks_sha256 {
        return Err(BatchError::Corrupt {
            path: manifest.tasks_file.clone(),
            problem: "it changed since the batch was submitted, and its tasks' env (masked in \
                      batch.json) is read from it"
                .to_owned(),
        });
    }
    super::load_tasks(&manifest.tasks_file)?
        .into_iter()
        .find(|task| task.id == id)
        .ok_or_else(|| BatchError::Corrupt {
            path: manifest.tasks_file.clone(),
            problem: format!("it has no task {id}"),
        })
}

/// What became of a worker's one task.
#[derive(Default)]
struct Only {
    result: Option<TaskResult>,
    error: Option<BatchError>,
}

impl BatchObserver for Only {
    fn started(&mut self, _todo: usize, _total: usize) {}

    fn finished(&mut self, result: &TaskResult, _progress: Progress) {
        self.result = Some(result.clone());
    }

    fn failed(&mut self, _task: &str, error: BatchError) {
        self.error = Some(error);
    }

    fn stopping(&mut self, _why: &str) {}
}

/// A Slurm job's array tasks by state, as `squeue` shows them (empty when the job is no
/// longer queued or running, or squeue is not here).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct JobState {
    /// The job id.
    pub job_id: String,
    /// `PENDING`, `RUNNING`, … with their counts; empty when squeue knows the job no more.
    pub states: std::collections::BTreeMap<String, usize>,
    /// Whether squeue could be asked.
    pub squeue: bool,
}

/// The state of `job_id`'s array tasks from `squeue`.
#[must_use]
pub fn job_states(job_id: &str) -> JobState {
    let output = Command::new("squeue")
        .args(["-h", "-r", "-j", job_id, "-o", "%T"])
        .output();
    let mut states = std::collections::BTreeMap::new();
    let squeue = match output {
        Ok(output) => {
            for line in String::from_utf8_lossy(&output.stdout).lines() {
                let state = line.trim();
                if !state.is_empty() {
                    *states.entry(state.to_owned()).or_insert(0) += 1;
                }
            }
            true
        }
        Err(_) => false,
    };
    JobState {
        job_id: job_id.to_owned(),
        states,
        squeue,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::cell::Cell;

    use super::*;

    #[test]
    fn a_worker_started_before_its_submission_is_recorded_waits_for_it() {
        let reads = Cell::new(0);
        let read = || {
            reads.set(reads.get() + 1);
            Ok::<usize, ()>(if reads.get() < 3 { 1 } else { 2 })
        };
        let submissions = recorded(Some(1), Duration::from_secs(5), read, |n| *n).unwrap();
        assert_eq!((submissions, reads.get()), (2, 3));
    }

    #[test]
    fn a_submission_never_recorded_is_given_up_on() {
        let read = || Ok::<usize, ()>(0);
        let submissions = recorded(Some(0), Duration::from_millis(250), read, |n| *n).unwrap();
        assert_eq!(submissions, 0);
        let last = recorded(None, Duration::from_secs(5), read, |n| *n).unwrap();
        assert_eq!(last, 0);
    }
}
