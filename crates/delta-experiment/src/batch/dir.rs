//! The batch directory, the only state of a batch: `batch.json` (what was asked),
//! `runs/<id>/` (each task's workspace, whose run id is the task id), `results.jsonl` (a
//! line per finished task, appended) and `summary.json` (recomputed from the results).

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::BatchError;
use super::tasks::Task;
use delta_engine::run::{Metadata, RunStatus};
use delta_engine::secrets::Redactor;

/// `batch.json`: what the batch was asked to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The task file, absolute.
    pub tasks_file: PathBuf,
    /// SHA-256 of the task file's bytes, hex: a re-run with an edited file is refused.
    pub tasks_sha256: String,
    /// The agent directory, absolute.
    pub agent: PathBuf,
    /// `--retries`.
    pub retries: u32,
    /// `--max-cost-usd` over the whole batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
    /// `--environment` of `delta batch run`: where every task's tools run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<delta_engine::environment::Kind>,
    /// `--environment-image` of `delta batch run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment_image: Option<String>,
    /// The tasks, as loaded (paths absolute).
    pub tasks: Vec<Task>,
    /// Slurm submissions, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slurm: Vec<Submission>,
}

/// One `sbatch` of the batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Submission {
    /// The job id sbatch printed.
    pub job_id: String,
    /// The tasks of the array, by array index.
    pub tasks: Vec<String>,
    /// When it was submitted (RFC 3339).
    pub submitted_at: String,
}

/// One line of `results.jsonl`: a task that finished (in any final status).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskResult {
    /// The task id (= run id).
    pub id: String,
    /// The run's final status.
    pub status: String,
    /// The final answer (COMPLETED).
    pub result: Option<Value>,
    /// `usage` of the run's metadata.
    pub usage: Value,
    /// Estimated cost in US dollars.
    pub cost_usd: f64,
    /// From the run's creation to its end, in milliseconds.
    pub duration_ms: u64,
    /// Iterations over the run's life.
    pub iterations: u32,
    /// `error` of the run's metadata (FAILED, INTERRUPTED).
    pub error: Option<Value>,
    /// The exit code of the process that ended it.
    pub exit_code: Option<i32>,
}

impl TaskResult {
    /// The result a run's final metadata records.
    #[must_use]
    pub fn from_metadata(metadata: &Metadata, exit_code: Option<i32>) -> Self {
        let end = metadata.end_time.unwrap_or(metadata.updated_at);
        Self {
            id: metadata.run_id.as_str().to_owned(),
            status: metadata.status.to_string(),
            result: metadata.result.clone(),
            usage: serde_json::to_value(&metadata.usage).unwrap_or(Value::Null),
            cost_usd: metadata.usage.total_cost_usd,
            duration_ms: end.millis_since(metadata.created_at),
            iterations: metadata.iterations,
            error: metadata
                .error
                .as_ref()
                .and_then(|e| serde_json::to_value(e).ok()),
            exit_code,
        }
    }

    /// The result of a task the driver gave up on without its run reaching an end: its
    /// child kept being refused, or could not be started (`run` is its run, when one
    /// was created). `error.type` is `BatchTaskError`.
    #[must_use]
    pub fn gave_up(
        id: &str,
        run: Option<&Metadata>,
        exit_code: Option<i32>,
        message: String,
        details: Option<String>,
    ) -> Self {
        let mut error = serde_json::json!({"type": TASK_ERROR, "message": message});
        if let Some(details) = details {
            error["details"] = Value::String(details);
        }
        match run {
            Some(metadata) => Self {
                error: Some(error),
                ..Self::from_metadata(metadata, exit_code)
            },
            None => Self {
                id: id.to_owned(),
                status: RunStatus::Failed.to_string(),
                result: None,
                usage: serde_json::json!({}),
                cost_usd: 0.0,
                duration_ms: 0,
                iterations: 0,
                error: Some(error),
                exit_code,
            },
        }
    }

    /// Whether `self` records the same end of the same run as `other` (the exit code of
    /// whichever process saw it aside).
    #[must_use]
    pub fn same_end(&self, other: &TaskResult) -> bool {
        Self {
            exit_code: None,
            ..self.clone()
        } == Self {
            exit_code: None,
            ..other.clone()
        }
    }

    /// Input plus output tokens.
    #[must_use]
    pub fn tokens(&self) -> (u64, u64) {
        (self.count("input_tokens"), self.count("output_tokens"))
    }

    /// Input tokens the provider read from its cache (part of the input tokens).
    #[must_use]
    pub fn cached_input_tokens(&self) -> u64 {
        self.count("cached_input_tokens")
    }

    fn count(&self, key: &str) -> u64 {
        self.usage.get(key).and_then(Value::as_u64).unwrap_or(0)
    }
}

/// `error.type` of a task the driver gave up on ([`TaskResult::gave_up`]).
pub const TASK_ERROR: &str = "BatchTaskError";

/// `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Tasks in the task file.
    pub tasks: usize,
    /// Finished tasks by final status (their latest result).
    pub by_status: BTreeMap<String, usize>,
    /// Tasks without a result yet.
    pub pending: usize,
    /// Input tokens over the finished tasks.
    pub input_tokens: u64,
    /// Output tokens over the finished tasks.
    pub output_tokens: u64,
    /// Input tokens the provider read from its cache, over the finished tasks (part of
    /// `input_tokens`; left out when none were).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_input_tokens: u64,
    /// Estimated cost over the finished tasks, US dollars.
    pub cost_usd: f64,
    /// Median task duration (ms), over finished tasks.
    pub p50_duration_ms: u64,
    /// 95th percentile task duration (ms).
    pub p95_duration_ms: u64,
}

/// A batch directory.
#[derive(Debug, Clone)]
pub struct BatchDir {
    root: PathBuf,
}

impl BatchDir {
    /// The batch directory at `root` (absolute).
    #[must_use]
    pub fn new(root: PathBuf) -> Self {
        Self { root }
    }

    /// Its path.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `batch.json`.
    #[must_use]
    pub fn manifest_path(&self) -> PathBuf {
        self.root.join("batch.json")
    }

    /// `runs/<id>/`: the task's workspace.
    #[must_use]
    pub fn workspace(&self, id: &str) -> PathBuf {
        self.root.join("runs").join(id)
    }

    /// `runs/<id>/.delta/<id>/metadata.json`.
    #[must_use]
    pub fn metadata_path(&self, id: &str) -> PathBuf {
        self.workspace(id)
            .join(".delta")
            .join(id)
            .join("metadata.json")
    }

    /// `results.jsonl`.
    #[must_use]
    pub fn results_path(&self) -> PathBuf {
        self.root.join("results.jsonl")
    }

    /// `slurm/`.
    #[must_use]
    pub fn slurm_dir(&self) -> PathBuf {
        self.root.join("slurm")
    }

    /// Reads `batch.json`.
    ///
    /// # Errors
    /// [`BatchError::NotABatch`] when it is missing, else when it is unreadable.
    pub fn read_manifest(&self) -> Result<Manifest, BatchError> {
        let read = read_json(&self.manifest_path());
        if let Err(BatchError::Io { source, .. }) = &read
            && source.kind() == std::io::ErrorKind::NotFound
        {
            return Err(BatchError::NotABatch {
                dir: self.root.clone(),
                exists: self.root.is_dir(),
            });
        }
        read
    }

    /// Writes `batch.json` (replaced atomically), with every task's secrets masked
    /// ([`Task::redactor`]): a key given in a task's `env` stays in the task file the
    /// user wrote, and reaches no file of the batch.
    ///
    /// # Errors
    /// I/O errors.
    pub fn write_manifest(&self, manifest: &Manifest) -> Result<(), BatchError> {
        let bytes = serde_json::to_vec_pretty(manifest).map_err(|e| BatchError::Corrupt {
            path: self.manifest_path(),
            problem: e.to_string(),
        })?;
        let redactor = manifest
            .tasks
            .iter()
            .fold(Redactor::default(), |all, task| {
                let agent = task.agent.as_deref().unwrap_or(&manifest.agent);
                all.union(&task.redactor(&self.workspace(&task.id), agent))
            });
        write_atomic(&self.manifest_path(), &redactor.redact_bytes(&bytes))
    }

    /// Appends one line to `results.jsonl` ([`append_jsonl`]).
    ///
    /// # Errors
    /// I/O errors.
    pub fn append_result(&self, result: &TaskResult) -> Result<(), BatchError> {
        append_jsonl(&self.results_path(), result)
    }

    /// The latest result of each task, by id ([`read_jsonl`]: a torn last line or a
    /// foreign line is skipped).
    #[must_use]
    pub fn results(&self) -> BTreeMap<String, TaskResult> {
        read_jsonl::<TaskResult>(&self.results_path())
            .into_iter()
            .map(|result| (result.id.clone(), result))
            .collect()
    }

    /// The run of task `id` as its metadata says, when it has one.
    #[must_use]
    pub fn run_metadata(&self, id: &str) -> Option<Metadata> {
        delta_engine::run::read_metadata(&self.metadata_path(id)).ok()
    }

    /// Recomputes and writes `summary.json` from the results of the tasks in `manifest`.
    ///
    /// # Errors
    /// I/O errors.
    pub fn write_summary(&self, manifest: &Manifest) -> Result<Summary, BatchError> {
        let summary = summarize(manifest, &self.results());
        write_json(&self.root.join("summary.json"), &summary)?;
        Ok(summary)
    }
}

/// Whether a run in `status` is done for the batch: COMPLETED, or ended in a way a
/// re-run does not retry.
#[must_use]
pub fn is_completed(metadata: &Metadata) -> bool {
    metadata.status == RunStatus::Completed
}

/// The summary of `results` for the tasks of `manifest`.
#[must_use]
pub fn summarize(manifest: &Manifest, results: &BTreeMap<String, TaskResult>) -> Summary {
    let mut by_status = BTreeMap::new();
    let (mut input_tokens, mut output_tokens, mut cost_usd) = (0, 0, 0.0);
    let mut cached_input_tokens = 0;
    let mut durations = Vec::new();
    let mut finished = 0;
    for task in &manifest.tasks {
        let Some(result) = results.get(&task.id) else {
            continue;
        };
        finished += 1;
        *by_status.entry(result.status.clone()).or_insert(0) += 1;
        let (input, output) = result.tokens();
        input_tokens += input;
        output_tokens += output;
        cached_input_tokens += result.cached_input_tokens();
        cost_usd += result.cost_usd;
        durations.push(result.duration_ms);
    }
    durations.sort_unstable();
    Summary {
        tasks: manifest.tasks.len(),
        by_status,
        pending: manifest.tasks.len() - finished,
        input_tokens,
        output_tokens,
        cached_input_tokens,
        cost_usd,
        p50_duration_ms: percentile(&durations, 50),
        p95_duration_ms: percentile(&durations, 95),
    }
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

/// The nearest-rank percentile of sorted `values` (0 when empty).
pub(crate) fn percentile(values: &[u64], p: usize) -> u64 {
    if values.is_empty() {
        return 0;
    }
    let rank = (p * values.len()).div_ceil(100).max(1);
    values[rank - 1]
}

/// Reads the JSON file `path` (a manifest: batch.json, eval.json).
///
/// # Errors
/// When it is missing, unreadable or not a `T`.
pub(crate) fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, BatchError> {
    let bytes = std::fs::read(path).map_err(|source| BatchError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_slice(&bytes).map_err(|e| BatchError::Corrupt {
        path: path.to_path_buf(),
        problem: e.to_string(),
    })
}

/// Writes `value` as pretty JSON to `path`, replacing it atomically.
///
/// # Errors
/// I/O errors.
pub(crate) fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), BatchError> {
    let bytes = serde_json::to_vec_pretty(value).map_err(|e| BatchError::Corrupt {
        path: path.to_path_buf(),
        problem: e.to_string(),
    })?;
    write_atomic(path, &bytes)
}

/// Appends `value` as one line to the JSON Lines file at `path` (created), with one
/// `write(2)`, so that concurrent writers (array tasks on other nodes included) never
/// interleave lines. Under an exclusive `flock(2)` of the file, a torn last line that a
/// crash left (no newline; see [`delta_engine::journal::parse_jsonl`]) is cut off first, as a
/// journal's is, so that the new line starts on a line of its own instead of extending
/// the fragment into a line nobody can read.
///
/// # Errors
/// I/O errors, naming the file.
pub fn append_jsonl<T: Serialize>(path: &Path, value: &T) -> Result<(), BatchError> {
    let mut line = serde_json::to_vec(value).map_err(|e| BatchError::Corrupt {
        path: path.to_path_buf(),
        problem: e.to_string(),
    })?;
    line.push(b'\n');
    let io = |source| BatchError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .map_err(io)?;
    // Held for the few writes below only; the kernel drops it if this process dies.
    let mut file = Flock::lock(file, FlockArg::LockExclusive)
        .map_err(|(_, errno)| io(std::io::Error::from(errno)))?;
    let len = file.metadata().map_err(io)?.len();
    let mut last = [0u8; 1];
    if len > 0 && file.read_at(&mut last, len - 1).map_err(io)? == 1 && last[0] != b'\n' {
        let bytes =
            delta_engine::run::read_regular_file(path, delta_engine::run::MAX_JOURNAL_BYTES)
                .map_err(io)?;
        let read = delta_engine::journal::parse_jsonl::<serde::de::IgnoredAny>(&bytes);
        if let Some(tail) = read.torn_tail {
            file.set_len(tail.offset).map_err(io)?;
        }
    }
    file.write_all(&line).map_err(io)
}

/// The values of the JSON Lines file at `path`, in order; a missing or unreadable file
/// reads as empty. Lines that are not a `T` (damage, another program's lines) and a torn
/// last line are skipped: what a reader of a batch's progress needs is every intact
/// record.
#[must_use]
pub fn read_jsonl<T: DeserializeOwned>(path: &Path) -> Vec<T> {
    let bytes = delta_engine::run::read_regular_file(path, delta_engine::run::MAX_JOURNAL_BYTES)
        .unwrap_or_default();
    delta_engine::journal::parse_jsonl::<T>(&bytes)
        .lines
        .into_iter()
        .filter_map(|line| line.value.ok())
        .collect()
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), BatchError> {
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    let io = |source| BatchError::Io {
        path: path.to_path_buf(),
        source,
    };
    std::fs::write(&tmp, bytes).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        assert_eq!(percentile(&[], 50), 0);
        assert_eq!(percentile(&[7], 95), 7);
        let values: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&values, 50), 50);
        assert_eq!(percentile(&values, 95), 95);
        assert_eq!(percentile(&[1, 2, 3], 50), 2);
    }
}
