//! The last line of `--format jsonl`: after every journal line the run appended, one
//! `{"type": "RESULT", ...}` line, always, whatever ended the run or kept it from starting.

use schemars::JsonSchema;
use serde::Serialize;

use super::{Exit, RUN_RESULT_SCHEMA_VERSION, RunResult};
use crate::run::{ErrorInfo, FinalStatus, RunId};

/// The `type` of the RESULT line.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
pub enum ResultTag {
    /// The only value.
    #[serde(rename = "RESULT")]
    Result,
}

/// The RESULT line of a run that was driven: its RunResult v2.0, with the line's `type` and
/// the process's exit code.
#[derive(Debug, Serialize)]
pub struct ResultLine<'a> {
    /// `RESULT`.
    #[serde(rename = "type")]
    pub line_type: ResultTag,
    /// The run's result, as `--format json` prints it.
    #[serde(flatten)]
    pub result: &'a RunResult,
    /// The exit code the process ends with.
    pub exit_code: u8,
    /// `delta replay`: its outcome (`identical` or the first divergence), as its
    /// `--format json` prints it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<&'a serde_json::Value>,
}

/// The RESULT line when no run could be driven: a configuration error (126), a command
/// line that lacks what the run needs (2), a run id that is taken (1). The run, if it
/// exists, is unchanged.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "RESULT line of a run that could not be driven")]
pub struct RefusalLine {
    /// `RESULT`.
    #[serde(rename = "type")]
    pub line_type: ResultTag,
    /// Always "2.0".
    #[schemars(extend("const" = "2.0"))]
    pub schema_version: String,
    /// The run asked for (`delta continue`), or null when no run was created.
    pub run_id: Option<RunId>,
    /// Always FAILED: nothing was driven.
    #[schemars(extend("const" = "FAILED"))]
    pub status: FinalStatus,
    /// What refused: `type` ConfigError (exit 126), UsageError (2) or LaunchError (1).
    pub error: ErrorInfo,
    /// The exit code the process ends with.
    pub exit_code: u8,
}

impl RefusalLine {
    /// The line for a refusal with `exit`, `message` and `help`.
    #[must_use]
    pub fn new(run_id: Option<RunId>, exit: Exit, message: String, help: Option<String>) -> Self {
        let error_type = match exit {
            Exit::Config => crate::run::ErrorType::ConfigError,
            Exit::Usage => crate::run::ErrorType::Other("UsageError".to_owned()),
            Exit::Success | Exit::Failure | Exit::WaitingForInput | Exit::Interrupted => {
                crate::run::ErrorType::Other("LaunchError".to_owned())
            }
        };
        let mut error = ErrorInfo::new(error_type, message);
        error.details = help;
        Self {
            line_type: ResultTag::Result,
            schema_version: RUN_RESULT_SCHEMA_VERSION.to_owned(),
            run_id,
            status: FinalStatus::Failed,
            error,
            exit_code: exit.code(),
        }
    }
}
