//! `metadata.json`: the run's status and summary, replaced atomically on every change.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::tree::{CalledBy, ChildRef, Subtree};
use super::{ProcessIdentity, RunId, RunStateError, Timestamp, write_json};
use crate::budget::{BudgetReport, Exceeded};
use crate::llm::CallUsage;
use crate::secrets::Redactor;

/// Version of the `metadata.json` layout written by this engine.
pub const METADATA_SCHEMA_VERSION: &str = "1.0";

/// Where a run is in its life.
///
/// ```text
/// RUNNING ─┬─> COMPLETED | FAILED | INTERRUPTED | WAITING_FOR_INPUT
/// any non-RUNNING state ──(delta continue)──> RUNNING
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RunStatus {
    /// A process is (or was, until it died) working on the run.
    Running,
    /// An asynchronous `ask_human` is waiting for `delta continue -m ANSWER`.
    WaitingForInput,
    /// The model answered without tool calls; `result` holds its answer.
    Completed,
    /// An unrecoverable error ended the run; `error` says which.
    Failed,
    /// Stopped by a signal, by the iteration budget (`error.type` `MaxIterationsReached`),
    /// or found orphaned by the Janitor.
    Interrupted,
}

impl RunStatus {
    /// Every status, in the order of the spec's enum.
    pub const ALL: [RunStatus; 5] = [
        RunStatus::Running,
        RunStatus::WaitingForInput,
        RunStatus::Completed,
        RunStatus::Failed,
        RunStatus::Interrupted,
    ];

    /// The name written to files, e.g. `WAITING_FOR_INPUT`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "RUNNING",
            RunStatus::WaitingForInput => "WAITING_FOR_INPUT",
            RunStatus::Completed => "COMPLETED",
            RunStatus::Failed => "FAILED",
            RunStatus::Interrupted => "INTERRUPTED",
        }
    }

    /// Whether `delta continue` accepts the run without the Janitor (seed 002 §6.2's
    /// `--resumable`: everything but RUNNING).
    #[must_use]
    pub fn is_resumable(self) -> bool {
        match self {
            RunStatus::Running => false,
            RunStatus::WaitingForInput
            | RunStatus::Completed
            | RunStatus::Failed
            | RunStatus::Interrupted => true,
        }
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The status a process leaves a run in when it stops (every run status but RUNNING);
/// RUN_END events and RunResult carry one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum FinalStatus {
    /// The model gave its final answer.
    Completed,
    /// An unrecoverable error.
    Failed,
    /// A signal or the iteration budget stopped it.
    Interrupted,
    /// It exits to wait for an asynchronous `ask_human` answer.
    WaitingForInput,
}

impl From<FinalStatus> for RunStatus {
    fn from(status: FinalStatus) -> Self {
        match status {
            FinalStatus::Completed => RunStatus::Completed,
            FinalStatus::Failed => RunStatus::Failed,
            FinalStatus::Interrupted => RunStatus::Interrupted,
            FinalStatus::WaitingForInput => RunStatus::WaitingForInput,
        }
    }
}

impl RunStatus {
    /// The status as a [`FinalStatus`]; `None` for RUNNING.
    #[must_use]
    pub fn as_final(self) -> Option<FinalStatus> {
        match self {
            RunStatus::Running => None,
            RunStatus::WaitingForInput => Some(FinalStatus::WaitingForInput),
            RunStatus::Completed => Some(FinalStatus::Completed),
            RunStatus::Failed => Some(FinalStatus::Failed),
            RunStatus::Interrupted => Some(FinalStatus::Interrupted),
        }
    }
}

/// A string that names no [`RunStatus`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown run status {0:?}; expected one of RUNNING, WAITING_FOR_INPUT, COMPLETED, FAILED, INTERRUPTED"
)]
pub struct UnknownStatus(pub String);

impl FromStr for RunStatus {
    type Err = UnknownStatus;

    /// Accepts the written names case-insensitively (`failed` works on a command line).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RunStatus::ALL
            .into_iter()
            .find(|status| status.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownStatus(s.to_owned()))
    }
}

/// The kind of a run's error, `error.type` in metadata and RunResult.
///
/// The set is open (seed 002 §5 ends its list with `...`): unknown names read back as
/// [`ErrorType::Other`] and are written unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ErrorType {
    /// The iteration budget ran out; status INTERRUPTED, exit code 1, continuable.
    MaxIterationsReached,
    /// A signal (Ctrl+C, SIGTERM) stopped the run, or the Janitor found it orphaned;
    /// status INTERRUPTED, exit code 130.
    Interrupted,
    /// The engine itself failed (I/O error on the run directory, a bug).
    EngineError,
    /// A tool failure the engine could not turn into an observation.
    ToolExecutionError,
    /// The LLM API failed after retries (network, authentication, rate limit).
    LlmError,
    /// The agent's configuration is unusable; exit code 126.
    ConfigError,
    /// A budget on cost, tokens or time was spent; status INTERRUPTED, exit code 1,
    /// continuable with a larger budget. `error.budget` says which.
    BudgetExceeded,
    /// The final answer never satisfied the output schema; status FAILED.
    OutputSchemaViolation,
    /// The model's final answer was cut by the token limit twice in a row; status
    /// INTERRUPTED, exit code 1, continuable (raise `llm.max_tokens` first).
    OutputTruncated,
    /// A Claude Code hook answered `continue: false`; status INTERRUPTED, exit code 1,
    /// continuable. The message is its `stopReason`.
    HookStopped,
    /// A Claude Code `UserPromptSubmit` hook refused the task or the instruction; status
    /// FAILED, before the model saw it. The message is the hook's reason.
    PromptBlocked,
    /// Any other name, kept verbatim.
    Other(String),
}

impl ErrorType {
    /// The name written to files.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            ErrorType::MaxIterationsReached => "MaxIterationsReached",
            ErrorType::Interrupted => "Interrupted",
            ErrorType::EngineError => "EngineError",
            ErrorType::ToolExecutionError => "ToolExecutionError",
            ErrorType::LlmError => "LlmError",
            ErrorType::ConfigError => "ConfigError",
            ErrorType::BudgetExceeded => "BudgetExceeded",
            ErrorType::OutputSchemaViolation => "OutputSchemaViolation",
            ErrorType::OutputTruncated => "OutputTruncated",
            ErrorType::HookStopped => "HookStopped",
            ErrorType::PromptBlocked => "PromptBlocked",
            ErrorType::Other(name) => name,
        }
    }

    fn from_name(name: String) -> Self {
        match name.as_str() {
            "MaxIterationsReached" => ErrorType::MaxIterationsReached,
            "Interrupted" => ErrorType::Interrupted,
            "EngineError" => ErrorType::EngineError,
            "ToolExecutionError" => ErrorType::ToolExecutionError,
            "LlmError" => ErrorType::LlmError,
            "ConfigError" => ErrorType::ConfigError,
            "BudgetExceeded" => ErrorType::BudgetExceeded,
            "OutputSchemaViolation" => ErrorType::OutputSchemaViolation,
            "OutputTruncated" => ErrorType::OutputTruncated,
            "HookStopped" => ErrorType::HookStopped,
            "PromptBlocked" => ErrorType::PromptBlocked,
            _ => ErrorType::Other(name),
        }
    }
}

impl fmt::Display for ErrorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ErrorType {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(ErrorType::from_name)
    }
}

impl JsonSchema for ErrorType {
    fn schema_name() -> Cow<'static, str> {
        "ErrorType".into()
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "minLength": 1,
            "description": "Kind of error. Known kinds: MaxIterationsReached (iteration budget spent; INTERRUPTED, exit 1), Interrupted (signal or orphaned process; INTERRUPTED, exit 130), EngineError, ToolExecutionError, LlmError, ConfigError (exit 126), BudgetExceeded (a cost, tokens or duration budget spent; INTERRUPTED, exit 1), OutputSchemaViolation (the final answer never satisfied the output schema; FAILED), OutputTruncated (the final answer cut by the token limit twice; INTERRUPTED, exit 1), HookStopped (a Claude Code hook answered continue: false; INTERRUPTED, exit 1), PromptBlocked (a UserPromptSubmit hook refused the prompt; FAILED). Other names may appear.",
            "examples": ["MaxIterationsReached", "Interrupted", "EngineError", "ToolExecutionError", "LlmError", "ConfigError", "BudgetExceeded", "OutputSchemaViolation", "OutputTruncated", "HookStopped", "PromptBlocked"]
        })
    }
}

/// Why a run failed or was interrupted: `error` in metadata and RunResult.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorInfo {
    /// Kind of error.
    #[serde(rename = "type")]
    pub error_type: ErrorType,
    /// One-line description for humans.
    pub message: String,
    /// Longer explanation (the underlying cause, what to do).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<String>,
    /// The spent budget, its limit and use (`error.type` `BudgetExceeded` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Exceeded>,
}

impl ErrorInfo {
    /// An error without details.
    #[must_use]
    pub fn new(error_type: ErrorType, message: impl Into<String>) -> Self {
        Self {
            error_type,
            message: message.into(),
            details: None,
            budget: None,
        }
    }

    /// The same error with `details` set.
    #[must_use]
    pub fn with_details(mut self, details: impl Into<String>) -> Self {
        self.details = Some(details.into());
        self
    }
}

/// Token and cost totals of one model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelUsage {
    /// Number of LLM calls.
    pub calls: u64,
    /// Prompt tokens, as the API reported them.
    pub input_tokens: u64,
    /// Completion tokens, as the API reported them.
    pub output_tokens: u64,
    /// Prompt tokens the provider read from its cache (part of `input_tokens`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_input_tokens: u64,
    /// Prompt tokens the provider wrote to its cache (part of `input_tokens`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
    /// Estimated cost in US dollars (0 when the model's price is unknown).
    pub cost_usd: f64,
    /// Calls whose response reported no usable token counts: the totals leave them out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub calls_without_usage: u64,
}

/// Token and cost totals of a run, overall and per model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    /// Prompt tokens over all calls, those read from and written to the provider's cache
    /// included.
    pub input_tokens: u64,
    /// Completion tokens over all calls.
    pub output_tokens: u64,
    /// Prompt tokens the provider read from its cache, over all calls (part of
    /// `input_tokens`; 0, and left out, when none were).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_input_tokens: u64,
    /// Prompt tokens the provider wrote to its cache, over all calls (part of
    /// `input_tokens`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
    /// Estimated cost over all calls, in US dollars.
    pub total_cost_usd: f64,
    /// The same totals per model name.
    pub model_usage: BTreeMap<String, ModelUsage>,
    /// Why the cost is an estimate or incomplete (e.g. a model without a known price).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_note: Option<String>,
    /// True when some response reported no usable token counts (`calls_without_usage` in
    /// `model_usage` says how many): the totals are a lower bound, not 0-token calls.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub incomplete: bool,
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

impl Usage {
    /// Adds one LLM call of `model` to the totals, none of its tokens cached.
    pub fn record(&mut self, model: &str, input_tokens: u64, output_tokens: u64, cost_usd: f64) {
        let usage = CallUsage {
            input_tokens,
            output_tokens,
            ..CallUsage::default()
        };
        self.record_call(model, &usage, cost_usd);
    }

    /// Adds one LLM call of `model` with `usage` and `cost_usd` to the totals.
    pub fn record_call(&mut self, model: &str, usage: &CallUsage, cost_usd: f64) {
        self.input_tokens += usage.input_tokens;
        self.output_tokens += usage.output_tokens;
        self.cached_input_tokens += usage.cached_input_tokens;
        self.cache_write_tokens += usage.cache_write_tokens;
        self.total_cost_usd += cost_usd;
        let entry = self.model_usage.entry(model.to_owned()).or_default();
        entry.calls += 1;
        entry.input_tokens += usage.input_tokens;
        entry.output_tokens += usage.output_tokens;
        entry.cached_input_tokens += usage.cached_input_tokens;
        entry.cache_write_tokens += usage.cache_write_tokens;
        entry.cost_usd += cost_usd;
    }

    /// Adds one LLM call of `model` whose token counts are unknown: counted as a call,
    /// never as 0 tokens, and the usage marked incomplete.
    pub fn record_unknown(&mut self, model: &str) {
        self.incomplete = true;
        let entry = self.model_usage.entry(model.to_owned()).or_default();
        entry.calls += 1;
        entry.calls_without_usage += 1;
    }

    /// Adds `other`'s totals (another run's, e.g. a sub-agent's): every count and cost,
    /// per model too; its note joins this one's, and incomplete stays incomplete. The one
    /// place usages are added up, so a field added to [`Usage`] is added here.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.total_cost_usd += other.total_cost_usd;
        for (model, usage) in &other.model_usage {
            self.model_usage
                .entry(model.clone())
                .or_default()
                .add(usage);
        }
        self.cost_note = match (self.cost_note.take(), &other.cost_note) {
            (Some(mine), Some(theirs)) if mine != *theirs => Some(format!("{mine}; {theirs}")),
            (Some(mine), _) => Some(mine),
            (None, theirs) => theirs.clone(),
        };
        self.incomplete |= other.incomplete;
    }

    /// Input plus output tokens: what a tokens budget counts.
    #[must_use]
    pub fn tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

impl ModelUsage {
    fn add(&mut self, other: &ModelUsage) {
        self.calls += other.calls;
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cost_usd += other.cost_usd;
        self.calls_without_usage += other.calls_without_usage;
    }
}

/// What a new run's metadata starts from; see [`Metadata::new`].
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataInit {
    /// The run's id.
    pub run_id: RunId,
    /// `name` from agent.yaml.
    pub agent_name: String,
    /// Absolute agent directory.
    pub agent_home: PathBuf,
    /// Absolute workspace directory.
    pub work_dir: PathBuf,
    /// `W001`… when the workspace is one of the agent's numbered workspaces.
    pub workspace_id: Option<String>,
    /// The task (`-m`).
    pub task: String,
    /// The iteration budget of this process.
    pub max_iterations: u32,
}

/// The contents of `.delta/{run_id}/metadata.json`.
///
/// Invariants kept by the transition methods: `result` is set only while COMPLETED,
/// `error` only while FAILED or INTERRUPTED, `end_time` only while not RUNNING.
///
/// `schema_version` and `process_start_time` (clock ticks, a PID-reuse check beside
/// `start_time`) are this engine's own: always written, optional for other
/// implementations.
// The union of seed 000 §2.1.4 and seed 002 §3.5 (DESIGN.md "Run lifecycle"); the schema
// requires the spec's fields, named as DESIGN.md lists them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(
    title = "Delta Engine run metadata (.delta/{run_id}/metadata.json)",
    transform = ours_optional
)]
pub struct Metadata {
    /// Version of this file's layout ("1.0"; empty when another implementation did not
    /// write one).
    #[serde(default)]
    pub schema_version: String,
    /// The run's id, also the name of its directory.
    pub run_id: RunId,
    /// Current status.
    pub status: RunStatus,
    /// The task the run was started with.
    pub task: String,
    /// `name` from agent.yaml.
    pub agent_name: String,
    /// Absolute agent directory.
    pub agent_home: PathBuf,
    /// Absolute workspace directory (the agent's CWD).
    pub work_dir: PathBuf,
    /// `W001`… when the workspace is one of the agent's numbered workspaces, else null.
    pub workspace_id: Option<String>,
    /// When the run was created.
    pub created_at: Timestamp,
    /// When this file was last written.
    pub updated_at: Timestamp,
    /// When the run last stopped (null while RUNNING).
    pub end_time: Option<Timestamp>,
    /// Think-Act-Observe iterations so far, over all processes that worked on the run.
    pub iterations: u32,
    /// The iteration budget of the current (or last) process.
    pub max_iterations: u32,
    /// Why the run failed or was interrupted (null otherwise).
    pub error: Option<ErrorInfo>,
    /// The final answer while COMPLETED: an object or array when the model's answer parsed
    /// as one, else the text (null otherwise).
    pub result: Option<serde_json::Value>,
    /// Tokens and cost.
    pub usage: Usage,
    /// Each budget's limit and use, when the run has a budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetReport>,
    /// Process id of the process that owns (or last owned) the run.
    pub pid: u32,
    /// Host that process runs on.
    pub hostname: String,
    /// Its name (`/proc/PID/comm` on Linux, e.g. `delta`).
    pub process_name: String,
    /// When that process started working on the run: at creation, and again when
    /// `delta continue` takes it over.
    pub start_time: Timestamp,
    /// Its start time in clock ticks since boot (`/proc/PID/stat` field 22; null where
    /// unavailable). With `pid` it identifies the process even after the pid is reused.
    pub process_start_time: Option<u64>,
    /// The run this one was forked from and the last event taken from its journal (only
    /// on a fork, `delta fork`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<ParentRef>,
    /// The recorded run whose LLM answers this run replayed (only on a replay, `delta
    /// replay`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_of: Option<ReplayRef>,
    /// The run whose agent tool started this one, and how deep it is (only on a
    /// sub-agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub called_by: Option<CalledBy>,
    /// The sub-agent runs this run's agent tools started, in order (only on a parent).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<ChildRef>,
    /// What this run and all its descendants spent (only on a parent; `usage` is this
    /// run's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtree: Option<Subtree>,
    /// The run's own identity, 32 random lowercase hex digits made when it was created
    /// (forks and replays get their own): the OpenTelemetry trace id of its exports, so
    /// two runs with the same id in two workspaces are two traces. Absent in runs created
    /// before it existed (`delta export` then derives one, docs/export-and-view.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
    /// Where the tools of the process that took the run last execute, and what that
    /// enforces (absent on the host); RUN_START holds the first process's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<crate::environment::EnvironmentReport>,
}

/// A fresh random run identity for [`Metadata::trace_id`].
#[must_use]
pub fn new_trace_id() -> String {
    format!("{:032x}", uuid::Uuid::new_v4().as_u128())
}

/// Where a fork comes from: the parent run and the seq its journal was cut at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ParentRef {
    /// The parent run's id.
    pub run_id: RunId,
    /// The last event of the parent's journal that the fork's journal starts with.
    pub seq: u64,
    /// The parent's workspace, when the fork lives in another one (`--work-dir-from`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_dir: Option<PathBuf>,
}

/// The recorded run a replay plays back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReplayRef {
    /// The recorded run's id.
    pub run_id: RunId,
    /// Its workspace, when the replay runs in another one (`--workspace-from`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_dir: Option<PathBuf>,
}

impl Metadata {
    /// Metadata of a run that `identity` starts now: status RUNNING, nothing done yet.
    #[must_use]
    pub fn new(init: MetadataInit, identity: &ProcessIdentity, now: Timestamp) -> Self {
        Self {
            schema_version: METADATA_SCHEMA_VERSION.to_owned(),
            run_id: init.run_id,
            status: RunStatus::Running,
            task: init.task,
            agent_name: init.agent_name,
            agent_home: init.agent_home,
            work_dir: init.work_dir,
            workspace_id: init.workspace_id,
            created_at: now,
            updated_at: now,
            end_time: None,
            iterations: 0,
            max_iterations: init.max_iterations,
            error: None,
            result: None,
            usage: Usage::default(),
            budget: None,
            pid: identity.pid,
            hostname: identity.hostname.clone(),
            process_name: identity.process_name.clone(),
            process_start_time: identity.start_ticks,
            start_time: now,
            parent: None,
            replay_of: None,
            called_by: None,
            children: Vec::new(),
            subtree: None,
            trace_id: Some(new_trace_id()),
            environment: None,
        }
    }

    /// The process identity recorded for the run's owner, for liveness checks.
    #[must_use]
    pub fn process_identity(&self) -> ProcessIdentity {
        ProcessIdentity {
            pid: self.pid,
            hostname: self.hostname.clone(),
            process_name: self.process_name.clone(),
            start_ticks: self.process_start_time,
        }
    }

    /// `delta continue` takes the run over: `identity` becomes the owner (from `now`), status
    /// RUNNING with a fresh budget of `max_iterations`; the previous result, error and end
    /// time are cleared because they described the previous process's stop.
    pub fn resume(&mut self, identity: &ProcessIdentity, max_iterations: u32, now: Timestamp) {
        self.set_owner(identity, now);
        self.max_iterations = max_iterations;
        self.set_status(RunStatus::Running, now);
    }

    /// `identity` owns the run from `now` (`start_time`): the process a liveness check
    /// and the Janitor look for.
    pub fn set_owner(&mut self, identity: &ProcessIdentity, now: Timestamp) {
        self.start_time = now;
        self.pid = identity.pid;
        self.hostname.clone_from(&identity.hostname);
        self.process_name.clone_from(&identity.process_name);
        self.process_start_time = identity.start_ticks;
    }

    /// The run finished with `result`.
    pub fn complete(&mut self, result: serde_json::Value, now: Timestamp) {
        self.set_status(RunStatus::Completed, now);
        self.result = Some(result);
    }

    /// The run failed with `error`.
    pub fn fail(&mut self, error: ErrorInfo, now: Timestamp) {
        self.set_status(RunStatus::Failed, now);
        self.error = Some(error);
    }

    /// The run was stopped; `error.type` says whether by a signal (`Interrupted`) or by the
    /// budget (`MaxIterationsReached`).
    pub fn interrupt(&mut self, error: ErrorInfo, now: Timestamp) {
        self.set_status(RunStatus::Interrupted, now);
        self.error = Some(error);
    }

    /// The run waits for an answer to `interaction/request.json`.
    pub fn wait_for_input(&mut self, now: Timestamp) {
        self.set_status(RunStatus::WaitingForInput, now);
    }

    /// Marks the file as changed at `now` without changing the status (e.g. after an
    /// iteration or a usage update).
    pub fn touch(&mut self, now: Timestamp) {
        self.updated_at = now;
    }

    fn set_status(&mut self, status: RunStatus, now: Timestamp) {
        self.status = status;
        self.updated_at = now;
        self.end_time = match status {
            RunStatus::Running => None,
            RunStatus::WaitingForInput
            | RunStatus::Completed
            | RunStatus::Failed
            | RunStatus::Interrupted => Some(now),
        };
        self.error = None;
        self.result = None;
    }
}

/// Drops this engine's own fields from the schema's `required`: the spec does not ask other
/// implementations for them, and reading tolerates their absence (`schema_version` reads as
/// empty, `process_start_time` as null).
fn ours_optional(schema: &mut Schema) {
    if let Some(serde_json::Value::Array(required)) = schema.get_mut("required") {
        required.retain(|name| {
            !name
                .as_str()
                .is_some_and(|name| ["schema_version", "process_start_time"].contains(&name))
        });
    }
    if let Some(serde_json::Value::Object(properties)) = schema.get_mut("properties")
        && let Some(serde_json::Value::Object(version)) = properties.get_mut("schema_version")
    {
        version.remove("default");
    }
}

/// Replaces `path` with `metadata` atomically: a reader sees the old file or the new one,
/// never a mix, and a crash mid-write leaves the old file in place. The secrets of
/// `redactor` (the run's) are masked: a result, an error or a task can quote a key.
///
/// # Errors
/// [`RunStateError::Io`] naming the file.
pub fn write_metadata(
    path: &Path,
    metadata: &Metadata,
    redactor: &Redactor,
) -> Result<(), RunStateError> {
    write_json(path, metadata, redactor)
}

/// Reads `metadata.json`.
///
/// # Errors
/// [`RunStateError::MetadataMissing`] when the file does not exist,
/// [`RunStateError::Io`] when it cannot be read, [`RunStateError::MetadataCorrupt`] (with
/// line and column) when it is not valid metadata.
pub fn read_metadata(path: &Path) -> Result<Metadata, RunStateError> {
    let bytes = super::read_regular_file(path, super::MAX_METADATA_BYTES).map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            RunStateError::MetadataMissing {
                path: path.to_path_buf(),
            }
        } else {
            RunStateError::Io(source)
        }
    })?;
    serde_json::from_slice(&bytes).map_err(|source| RunStateError::MetadataCorrupt {
        path: path.to_path_buf(),
        line: source.line(),
        column: source.column(),
        message: super::serde_message(&source),
    })
}
