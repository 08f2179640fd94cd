//! The batch directory, the only state of a batch: `batch.json` (what was asked),
//! `runs/<id>/` (each task's workspace, whose run id is the task id), `results.jsonl` (a
//! line per finished task, appended) and `summary.json` (recomputed from the results).

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::BatchError;
use super::tasks::Task;
use crate::run::{Metadata, RunStatus};

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
    /// When it is missing or unreadable.
    pub fn read_manifest(&self) -> Result<Manifest, BatchError> {
        let path = self.manifest_path();
        let bytes = std::fs::read(&path).map_err(|source| BatchError::Io {
            path: path.clone(),
            source,
        })?;
        serde_json::from_slice(&bytes).map_err(|e| BatchError::Corrupt {
            path,
            problem: e.to_string(),
        })
    }

    /// Writes `batch.json` (replaced atomically).
    ///
    /// # Errors
    /// I/O errors.
    pub fn write_manifest(&self, manifest: &Manifest) -> Result<(), BatchError> {
        let bytes = serde_json::to_vec_pretty(manifest).map_err(|e| BatchError::Corrupt {
            path: self.manifest_path(),
            problem: e.to_string(),
        })?;
        write_atomic(&self.manifest_path(), &bytes)
    }

    /// Appends one line to `results.jsonl` with one `write(2)`, so concurrent workers
    /// (array tasks on other nodes included) never interleave lines.
    ///
    /// # Errors
    /// I/O errors.
    pub fn append_result(&self, result: &TaskResult) -> Result<(), BatchError> {
        let path = self.results_path();
        let mut line = serde_json::to_vec(result).map_err(|e| BatchError::Corrupt {
            path: path.clone(),
            problem: e.to_string(),
        })?;
        line.push(b'\n');
        let io = |source| BatchError::Io {
            path: path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io)?;
        file.write_all(&line).map_err(io)
    }

    /// The latest result of each task, by id (a torn or foreign line is skipped).
    #[must_use]
    pub fn results(&self) -> BTreeMap<String, TaskResult> {
        let text = std::fs::read_to_string(self.results_path()).unwrap_or_default();
        text.lines()
            .filter_map(|line| serde_json::from_str::<TaskResult>(line).ok())
            .map(|result| (result.id.clone(), result))
            .collect()
    }

    /// The run of task `id` as its metadata says, when it has one.
    #[must_use]
    pub fn run_metadata(&self, id: &str) -> Option<Metadata> {
        crate::run::read_metadata(&self.metadata_path(id)).ok()
    }

    /// Recomputes and writes `summary.json` from the results of the tasks in `manifest`.
    ///
    /// # Errors
    /// I/O errors.
    pub fn write_summary(&self, manifest: &Manifest) -> Result<Summary, BatchError> {
        let summary = summarize(manifest, &self.results());
        let bytes = serde_json::to_vec_pretty(&summary).map_err(|e| BatchError::Corrupt {
            path: self.root.join("summary.json"),
            problem: e.to_string(),
        })?;
        write_atomic(&self.root.join("summary.json"), &bytes)?;
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
fn percentile(values: &[u64], p: usize) -> u64 {
    if values.is_empty() {
        return 0;
    }
    let rank = (p * values.len()).div_ceil(100).max(1);
    values[rank - 1]
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
