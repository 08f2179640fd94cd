//! The eval directory, the only state of an eval: `eval.json` (what was asked), `images/`
//! (build logs and the image cache's locks), `trials/<trial>/` (each trial's workspace,
//! agent and verifier output and `verdict.json`), `results.jsonl` (a line per finished
//! trial, appended) and `summary.json` (the report, recomputed from the results).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::task::Task;
use crate::batch::{BatchError, Submission, append_jsonl, read_json, read_jsonl, write_json};

/// `eval.json`: what the eval was asked to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The task set as given (absolute).
    pub tasks_source: PathBuf,
    /// The agent directory (absolute); `None` for `--oracle`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<PathBuf>,
    /// `--oracle`: `solution/solve.sh` instead of an agent.
    pub oracle: bool,
    /// `-k`: trials per task.
    pub attempts: u32,
    /// `--task-filter` patterns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub task_filter: Vec<String>,
    /// `--timeout-multiplier`: scales the agent, verifier and build timeouts.
    pub timeout_multiplier: f64,
    /// Budgets of each trial's run.
    #[serde(default)]
    pub limits: TrialLimits,
    /// The tasks, as loaded.
    pub tasks: Vec<Task>,
    /// Slurm submissions, oldest first (their `tasks` are trial ids).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slurm: Vec<Submission>,
}

impl Manifest {
    /// Every trial of the eval, task by task, attempt by attempt.
    #[must_use]
    pub fn trials(&self) -> Vec<TrialRef> {
        self.tasks
            .iter()
            .enumerate()
            .flat_map(|(index, task)| {
                (1..=self.attempts).map(move |attempt| TrialRef {
                    id: trial_id(&task.id, attempt),
                    task: index,
                    attempt,
                })
            })
            .collect()
    }

    /// The trial `id`, when the eval has it.
    #[must_use]
    pub fn trial(&self, id: &str) -> Option<TrialRef> {
        self.trials().into_iter().find(|t| t.id == id)
    }

    /// What differs between this eval and `other` in what makes an eval itself (the
    /// tasks and their contents when `tasks` says this manifest has them all, the agent,
    /// the attempts, the oracle, the filter).
    #[must_use]
    pub fn differs(&self, other: &Manifest, tasks: bool) -> Option<&'static str> {
        let names = |m: &Manifest| {
            m.tasks
                .iter()
                .map(|t| (t.name.clone(), t.content_hash.clone()))
                .collect::<Vec<_>>()
        };
        if tasks && names(self) != names(other) {
            Some("its tasks or their files differ")
        } else if self.agent != other.agent || self.oracle != other.oracle {
            Some("its agent differs")
        } else if self.attempts != other.attempts {
            Some("its attempts (-k) differ")
        } else if self.task_filter != other.task_filter {
            Some("its --task-filter differs")
        } else {
            None
        }
    }
}

/// A trial of a manifest: task index and attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrialRef {
    /// `<task id>.<attempt>`: the trial's directory and its run's id.
    pub id: String,
    /// Index into the manifest's tasks.
    pub task: usize,
    /// 1-based.
    pub attempt: u32,
}

/// The trial id of `task`'s `attempt`.
#[must_use]
pub fn trial_id(task: &str, attempt: u32) -> String {
    format!("{task}.{attempt}")
}

/// Budgets given on the command line for every trial's run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrialLimits {
    /// `--max-iterations`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
    /// `--max-cost-usd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
    /// `--max-tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// `--max-duration`, in milliseconds (the shorter of it and the task's agent timeout
    /// applies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_duration_ms: Option<u64>,
}

/// A trial's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrialStatus {
    /// Verified, main reward ≥ 1.
    Passed,
    /// Verified, main reward below 1.
    Failed,
    /// No valid reward: the environment, the engine or the verifier failed.
    Errored,
}

impl TrialStatus {
    /// `passed`, `failed`, `errored`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            TrialStatus::Passed => "passed",
            TrialStatus::Failed => "failed",
            TrialStatus::Errored => "errored",
        }
    }
}

/// Why a trial errored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// The image could not be built from `environment/`.
    EnvironmentBuild,
    /// The container could not be started (or the image pulled).
    EnvironmentStart,
    /// The engine could not run the agent (launch refused, or the run FAILED on the
    /// engine, a tool it could not turn into an observation, or the agent's
    /// configuration).
    AgentEngine,
    /// The run FAILED on the model's API after its retries.
    ModelApi,
    /// The trial's process died before it recorded a verdict.
    TrialCrashed,
    /// `--oracle` and the task has no `solution/solve.sh`.
    NoSolution,
    /// test.sh ran past `[verifier] timeout_sec`.
    VerifierTimeout,
    /// test.sh could not be run.
    VerifierCrashed,
    /// test.sh wrote neither reward.txt nor reward.json.
    RewardMissing,
    /// The reward file is empty, not a number (or numbers), or not finite.
    RewardInvalid,
}

impl ErrorClass {
    /// The name written to files.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::EnvironmentBuild => "environment_build",
            ErrorClass::EnvironmentStart => "environment_start",
            ErrorClass::AgentEngine => "agent_engine",
            ErrorClass::ModelApi => "model_api",
            ErrorClass::TrialCrashed => "trial_crashed",
            ErrorClass::NoSolution => "no_solution",
            ErrorClass::VerifierTimeout => "verifier_timeout",
            ErrorClass::VerifierCrashed => "verifier_crashed",
            ErrorClass::RewardMissing => "reward_missing",
            ErrorClass::RewardInvalid => "reward_invalid",
        }
    }
}

/// An errored trial's error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialError {
    /// Its class.
    pub class: ErrorClass,
    /// What happened.
    pub message: String,
    /// The log that shows it, relative to the eval directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
}

/// How long each phase of a trial took, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Durations {
    /// Building (or finding) the image.
    pub build: u64,
    /// The agent (or the oracle), from its launch to its end, its container's start
    /// included.
    pub agent: u64,
    /// The verifier, copying the tests in and the output out included.
    pub verifier: u64,
    /// Removing the container at the end.
    #[serde(default)]
    pub cleanup: u64,
    /// The whole trial, as its process saw it.
    pub total: u64,
}

/// Where a trial's files are, relative to the eval directory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrialPaths {
    /// `trials/<id>`.
    pub trial: String,
    /// The run's directory (`trials/<id>/workspace/.delta/<id>`), when an agent ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// The verifier's output (`trials/<id>/verifier`), when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verifier: Option<String>,
    /// The agent's ATIF trajectory, when an agent ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory: Option<String>,
}

/// One line of `results.jsonl`, and a trial's `verdict.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialResult {
    /// The task's name.
    pub task: String,
    /// 1-based.
    pub attempt: u32,
    /// The trial's id.
    pub trial: String,
    /// passed, failed or errored.
    pub status: TrialStatus,
    /// The main reward; `null` when errored.
    pub reward: Option<f64>,
    /// Every named reward the verifier wrote (reward.txt's number is `reward`).
    #[serde(default)]
    pub rewards: BTreeMap<String, f64>,
    /// Why it errored.
    pub error: Option<TrialError>,
    /// `usage` of the run's metadata (`null` for the oracle).
    pub usage: Value,
    /// Estimated cost in US dollars.
    pub cost_usd: f64,
    /// How long each phase took.
    pub durations_ms: Durations,
    /// The agent's run (its id is the trial's), `null` for the oracle.
    pub run_id: Option<String>,
    /// The run's final status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_status: Option<String>,
    /// Where the trial's files are.
    pub paths: TrialPaths,
    /// The image the trial ran in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// test.sh's exit code (recorded, not used: the reward files decide, as in Harbor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verifier_exit_code: Option<i32>,
    /// solve.sh's exit code (the oracle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_exit_code: Option<i32>,
}

impl TrialResult {
    /// Input and output tokens.
    #[must_use]
    pub fn tokens(&self) -> (u64, u64) {
        let get = |key: &str| self.usage.get(key).and_then(Value::as_u64).unwrap_or(0);
        (get("input_tokens"), get("output_tokens"))
    }

    /// The reward counted when errored trials count as 0.
    #[must_use]
    pub fn reward_or_zero(&self) -> f64 {
        self.reward.unwrap_or(0.0)
    }
}

/// An eval directory.
#[derive(Debug, Clone)]
pub struct EvalDir {
    root: PathBuf,
}

impl EvalDir {
    /// The eval directory at `root` (absolute).
    #[must_use]
    pub fn new(root: PathBuf) -> Self {
        Self { root }
    }

    /// Its path.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `eval.json`.
    #[must_use]
    pub fn manifest_path(&self) -> PathBuf {
        self.root.join("eval.json")
    }

    /// `results.jsonl`.
    #[must_use]
    pub fn results_path(&self) -> PathBuf {
        self.root.join("results.jsonl")
    }

    /// `summary.json`.
    #[must_use]
    pub fn summary_path(&self) -> PathBuf {
        self.root.join("summary.json")
    }

    /// `images/`: build logs and the locks that make parallel trials build an image once.
    #[must_use]
    pub fn images_dir(&self) -> PathBuf {
        self.root.join("images")
    }

    /// `trials/<id>/`.
    #[must_use]
    pub fn trial_dir(&self, id: &str) -> PathBuf {
        self.root.join("trials").join(id)
    }

    /// `trials/<id>/verdict.json`: the trial's result, written before its line.
    #[must_use]
    pub fn verdict_path(&self, id: &str) -> PathBuf {
        self.trial_dir(id).join("verdict.json")
    }

    /// `trials/<id>/trial.lock`: held by the process running the trial.
    #[must_use]
    pub fn lock_path(&self, id: &str) -> PathBuf {
        self.trial_dir(id).join("trial.lock")
    }

    /// `trials/<id>/workspace`: the run's workspace, mounted at the task's workdir.
    #[must_use]
    pub fn workspace(&self, id: &str) -> PathBuf {
        self.trial_dir(id).join("workspace")
    }

    /// `path` relative to the eval directory, for results (the directory can move).
    #[must_use]
    pub fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// Reads `eval.json`.
    ///
    /// # Errors
    /// When it is missing or unreadable.
    pub fn read_manifest(&self) -> Result<Manifest, BatchError> {
        read_json(&self.manifest_path())
    }

    /// Writes `eval.json` (replaced atomically).
    ///
    /// # Errors
    /// I/O errors.
    pub fn write_manifest(&self, manifest: &Manifest) -> Result<(), BatchError> {
        write_json(&self.manifest_path(), manifest)
    }

    /// Appends a trial's line to `results.jsonl`.
    ///
    /// # Errors
    /// I/O errors.
    pub fn append_result(&self, result: &TrialResult) -> Result<(), BatchError> {
        append_jsonl(&self.results_path(), result)
    }

    /// The latest result of each trial, by trial id.
    #[must_use]
    pub fn results(&self) -> BTreeMap<String, TrialResult> {
        read_jsonl::<TrialResult>(&self.results_path())
            .into_iter()
            .map(|result| (result.trial.clone(), result))
            .collect()
    }

    /// The trial's verdict, when it has one.
    #[must_use]
    pub fn verdict(&self, id: &str) -> Option<TrialResult> {
        let bytes = std::fs::read(self.verdict_path(id)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Writes the trial's verdict (replaced atomically: it is there whole or not at all).
    ///
    /// # Errors
    /// I/O errors.
    pub fn write_verdict(&self, result: &TrialResult) -> Result<(), BatchError> {
        write_json(&self.verdict_path(&result.trial), result)
    }
}
