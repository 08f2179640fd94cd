//! What a finished command prints on stdout: RunResult v2.0 built from the persisted
//! metadata, its text/json/raw renderings, exit codes, the `list-runs` listing, and the
//! JSON Schemas of the run-state files.
//!
//! Persist first, print last (seed 002 §7.1): everything here starts from files already
//! on disk, never from the engine's memory, so what is printed is what a later
//! `cat .delta/{run_id}/metadata.json` shows.

mod exit;
mod list;
mod stream;

use crate::budget::BudgetReport;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use exit::{Exit, exit_code_for};
pub use list::{
    ListedStatus, RunFilter, RunListing, RunListingArray, TreeRow, format_age, list_runs,
    render_runs_json, render_runs_raw, render_runs_text, render_tree_text, tree_rows,
};
pub use stream::{RefusalLine, ResultLine, ResultTag};

use crate::quote::quote_path;
use crate::run::{
    ErrorInfo, ErrorType, FinalStatus, InputType, InteractionRequest, Metadata, RunId, RunPaths,
    RunStateError, RunStatus, Subtree, Timestamp, Usage, read_interaction_request, read_metadata,
};

/// The `schema_version` of [`RunResult`].
pub const RUN_RESULT_SCHEMA_VERSION: &str = "2.0";

/// What can go wrong producing output.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// Reading the run's files failed.
    #[error(transparent)]
    RunState(#[from] RunStateError),
    /// The run has no final status to report.
    #[error(
        "run {run_id} is still RUNNING, so it has no result yet; if its process died, \
         `delta continue --run-id {run_id}` recovers it"
    )]
    NotFinished {
        /// The run.
        run_id: RunId,
    },
    /// The run waits for input but its question is missing.
    #[error(
        "run {run_id} is WAITING_FOR_INPUT but {} is missing; answer with \
         `delta continue --run-id {run_id} -m ANSWER`",
        path.display()
    )]
    MissingInteraction {
        /// The run.
        run_id: RunId,
        /// The missing `interaction/request.json`.
        path: PathBuf,
    },
    /// The workspace to list does not exist.
    #[error("workspace {} does not exist; pass an existing workspace with -w", path.display())]
    WorkspaceNotFound {
        /// The path given.
        path: PathBuf,
    },
    /// `.delta/` could not be listed.
    #[error("cannot list {}: {source}", path.display())]
    List {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// The question of a run that is WAITING_FOR_INPUT.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Interaction {
    /// The question.
    pub prompt: String,
    /// How the answer is collected.
    pub input_type: InputType,
    /// Whether the answer is secret.
    pub sensitive: bool,
}

/// Counters and times of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Metrics {
    /// Think-Act-Observe iterations, over all processes that worked on the run.
    pub iterations: u32,
    /// Milliseconds from `start_time` to `end_time`.
    pub duration_ms: u64,
    /// When the run was created.
    pub start_time: Timestamp,
    /// When it last stopped.
    pub end_time: Timestamp,
    /// Tokens and cost.
    pub usage: Usage,
    /// Each budget's limit and use, when the run has a budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetReport>,
    /// What the run and all its sub-agents spent, when it started any (`usage` is its
    /// own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtree: Option<Subtree>,
}

/// Where the run ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResultMetadata {
    /// `name` from agent.yaml.
    pub agent_name: String,
    /// Absolute workspace directory.
    pub workspace_path: PathBuf,
}

/// The `--format json` output of `delta run` and `delta continue`.
///
/// Exactly one of `result` (COMPLETED), `error` (FAILED, INTERRUPTED) and `interaction`
/// (WAITING_FOR_INPUT) is present; the schema enforces it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "Delta Engine RunResult v2.0 (stdout of --format json)",
    extend("allOf" = [
        {
            "if": {"properties": {"status": {"const": "COMPLETED"}}},
            "then": {"required": ["result"]},
            "else": {"not": {"required": ["result"]}}
        },
        {
            "if": {"properties": {"status": {"enum": ["FAILED", "INTERRUPTED"]}}},
            "then": {"required": ["error"]},
            "else": {"not": {"required": ["error"]}}
        },
        {
            "if": {"properties": {"status": {"const": "WAITING_FOR_INPUT"}}},
            "then": {"required": ["interaction"]},
            "else": {"not": {"required": ["interaction"]}}
        }
    ])
)]
pub struct RunResult {
    /// Always "2.0".
    #[schemars(extend("const" = "2.0"))]
    pub schema_version: String,
    /// The run's id.
    pub run_id: RunId,
    /// How the run stopped.
    pub status: FinalStatus,
    /// The final answer (COMPLETED only): an object or array when the model's answer
    /// parsed as one, else its text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
    /// Why it stopped (FAILED and INTERRUPTED only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorInfo>,
    /// The pending question (WAITING_FOR_INPUT only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interaction: Option<Interaction>,
    /// Counters and times.
    pub metrics: Metrics,
    /// Agent and workspace.
    pub metadata: ResultMetadata,
}

impl RunResult {
    /// Builds the result of a stopped run from its metadata and, when it is
    /// WAITING_FOR_INPUT, its interaction request.
    ///
    /// An INTERRUPTED run without a recorded error (the Janitor's transition) gets an
    /// `Interrupted` error, so consumers always find `error` where the schema says.
    ///
    /// # Errors
    /// [`OutputError::NotFinished`] for a RUNNING run, [`OutputError::MissingInteraction`]
    /// when a waiting run has no request.
    pub fn from_metadata(
        metadata: &Metadata,
        interaction: Option<&InteractionRequest>,
    ) -> Result<Self, OutputError> {
        let status = metadata
            .status
            .as_final()
            .ok_or_else(|| OutputError::NotFinished {
                run_id: metadata.run_id.clone(),
            })?;
        let (mut result, mut error, mut pending) = (None, None, None);
        match status {
            FinalStatus::Completed => {
                result = Some(metadata.result.clone().unwrap_or(serde_json::Value::Null));
            }
            FinalStatus::Failed => {
                error = Some(metadata.error.clone().unwrap_or_else(|| {
                    ErrorInfo::new(
                        ErrorType::EngineError,
                        "the run failed without a recorded error",
                    )
                }));
            }
            FinalStatus::Interrupted => {
                error = Some(metadata.error.clone().unwrap_or_else(|| {
                    ErrorInfo::new(
                        ErrorType::Interrupted,
                        "the run was interrupted before it finished",
                    )
                }));
            }
            FinalStatus::WaitingForInput => {
                let request = interaction.ok_or_else(|| OutputError::MissingInteraction {
                    run_id: metadata.run_id.clone(),
                    path: RunPaths::new(&metadata.work_dir, &metadata.run_id).interaction_request(),
                })?;
                pending = Some(Interaction {
                    prompt: request.prompt.clone(),
                    input_type: request.input_type,
                    sensitive: request.sensitive,
                });
            }
        }
        let end_time = metadata.end_time.unwrap_or(metadata.updated_at);
        Ok(Self {
            schema_version: RUN_RESULT_SCHEMA_VERSION.to_owned(),
            run_id: metadata.run_id.clone(),
            status,
            result,
            error,
            interaction: pending,
            metrics: Metrics {
                iterations: metadata.iterations,
                duration_ms: end_time.millis_since(metadata.created_at),
                start_time: metadata.created_at,
                end_time,
                usage: metadata.usage.clone(),
                budget: metadata.budget,
                subtree: metadata.subtree.clone(),
            },
            metadata: ResultMetadata {
                agent_name: metadata.agent_name.clone(),
                workspace_path: metadata.work_dir.clone(),
            },
        })
    }

    /// Reads `metadata.json` (and `interaction/request.json` when waiting) of the run at
    /// `paths` and builds its result: the persist-first, print-last path.
    ///
    /// # Errors
    /// Reading errors naming the file, and those of [`Self::from_metadata`].
    pub fn load(paths: &RunPaths) -> Result<Self, OutputError> {
        let metadata = read_metadata(&paths.metadata())?;
        let interaction = match metadata.status {
            RunStatus::WaitingForInput => read_interaction_request(paths)?,
            RunStatus::Running
            | RunStatus::Completed
            | RunStatus::Failed
            | RunStatus::Interrupted => None,
        };
        Self::from_metadata(&metadata, interaction.as_ref())
    }

    /// The process exit code for this result; see [`Exit::for_run`].
    #[must_use]
    pub fn exit_code(&self) -> Exit {
        Exit::for_run(self.status.into(), self.error.as_ref())
    }
}

const RULE: &str = "-------------------";

/// `--format text`: the human summary of seed 002 §4.2.1, ending with a newline.
///
/// ```text
/// --- Run Summary ---
/// Run ID:     20251014_0430_aaaa
/// Status:     COMPLETED
/// Duration:   2m 30s
/// -------------------
/// Result:
/// { …pretty JSON, or the text as is… }
/// -------------------
/// ```
///
/// FAILED and INTERRUPTED show `Error:` and `Details:`; INTERRUPTED and
/// WAITING_FOR_INPUT add the command that resumes the run.
#[must_use]
pub fn render_text(result: &RunResult) -> String {
    let mut out = String::new();
    let mut line = |text: &str| {
        out.push_str(text);
        out.push('\n');
    };
    line("--- Run Summary ---");
    line(&format!("Run ID:     {}", result.run_id));
    line(&format!("Status:     {}", RunStatus::from(result.status)));
    line(&format!(
        "Duration:   {}",
        format_duration(result.metrics.duration_ms)
    ));
    line(RULE);
    let continue_cmd = format!(
        "delta continue --run-id {} -w {}",
        result.run_id,
        quote_path(&result.metadata.workspace_path)
    );
    match result.status {
        FinalStatus::Completed => {
            line("Result:");
            let value = result.result.as_ref().unwrap_or(&serde_json::Value::Null);
            line(&result_text(value, true));
        }
        FinalStatus::Failed | FinalStatus::Interrupted => {
            if let Some(error) = &result.error {
                line(&format!("Error: {}", error.message));
                if let Some(details) = &error.details {
                    line(&format!("Details: {details}"));
                }
            }
            if result.status == FinalStatus::Interrupted {
                line(RULE);
                line(&format!("To resume: {continue_cmd}"));
            }
        }
        FinalStatus::WaitingForInput => {
            if let Some(interaction) = &result.interaction {
                line("Waiting for input:");
                line(&interaction.prompt);
                line(&format!("Input type: {}", interaction.input_type));
            }
            line(RULE);
            line(&format!("To answer: {continue_cmd} -m ANSWER"));
        }
    }
    line(RULE);
    out
}

/// `--format json`: the pretty-printed RunResult, ending with a newline.
#[must_use]
pub fn render_json(result: &RunResult) -> String {
    let mut text = serde_json::to_string_pretty(result).unwrap_or_default();
    text.push('\n');
    text
}

/// `--format raw`: for COMPLETED, the result alone — a string exactly as the model wrote it
/// (no newline added), an object or array (or other JSON value) as compact JSON plus a
/// newline; for any other status, nothing (callers rely on the exit code).
#[must_use]
pub fn render_raw(result: &RunResult) -> String {
    match (result.status, &result.result) {
        (FinalStatus::Completed, Some(serde_json::Value::String(text))) => text.clone(),
        (FinalStatus::Completed, Some(value)) => result_text(value, false) + "\n",
        (FinalStatus::Completed, None)
        | (FinalStatus::Failed | FinalStatus::Interrupted | FinalStatus::WaitingForInput, _) => {
            String::new()
        }
    }
}

/// A result value as text: strings as they are, anything else as JSON.
fn result_text(value: &serde_json::Value, pretty: bool) -> String {
    if let serde_json::Value::String(text) = value {
        text.clone()
    } else if pretty {
        serde_json::to_string_pretty(value).unwrap_or_default()
    } else {
        value.to_string()
    }
}

/// A duration for humans: `850ms`, `45s`, `2m 30s`, `1h 5m 0s`.
#[must_use]
pub fn format_duration(ms: u64) -> String {
    let secs = ms / 1000;
    match secs {
        0 => format!("{ms}ms"),
        1..60 => format!("{secs}s"),
        60..3600 => format!("{}m {}s", secs / 60, secs % 60),
        _ => format!("{}h {}m {}s", secs / 3600, secs % 3600 / 60, secs % 60),
    }
}
