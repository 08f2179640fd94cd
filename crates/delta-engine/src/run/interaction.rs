//! `interaction/`: the files of an asynchronous `ask_human` (seed 000 §2.5.3).

use std::fmt;
use std::io::ErrorKind;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{RunPaths, RunStateError, Timestamp, write_json};
use crate::secrets::Redactor;

/// How the answer should be collected and shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum InputType {
    /// Free text.
    Text,
    /// A secret: not echoed when typed.
    Password,
    /// A yes/no answer.
    Confirmation,
}

impl InputType {
    /// The name written to files.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            InputType::Text => "text",
            InputType::Password => "password",
            InputType::Confirmation => "confirmation",
        }
    }
}

impl fmt::Display for InputType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `interaction/request.json`: the question an asynchronous `ask_human` waits on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "Delta Engine interaction request (.delta/{run_id}/interaction/request.json)")]
pub struct InteractionRequest {
    /// Id of the request; the HUMAN_INPUT_REQUEST and HUMAN_INPUT_RECEIVED journal events
    /// carry the same id.
    pub request_id: String,
    /// When the question was asked.
    pub timestamp: Timestamp,
    /// The question, shown to the human as is.
    pub prompt: String,
    /// How the answer should be collected.
    pub input_type: InputType,
    /// Whether the answer is secret (hide it while typing and in summaries).
    pub sensitive: bool,
}

/// Writes `interaction/request.json` atomically, creating `interaction/`, with the secrets
/// of `redactor` (the run's) masked: the model writes the question.
///
/// # Errors
/// [`RunStateError::Io`] naming the file.
pub fn write_interaction_request(
    paths: &RunPaths,
    request: &InteractionRequest,
    redactor: &Redactor,
) -> Result<(), RunStateError> {
    fs_err::create_dir_all(paths.interaction_dir())?;
    write_json(&paths.interaction_request(), request, redactor)
}

/// Reads `interaction/request.json`; `None` when there is none.
///
/// # Errors
/// [`RunStateError::Io`] when it cannot be read, [`RunStateError::InteractionCorrupt`]
/// when it is not a valid request.
pub fn read_interaction_request(
    paths: &RunPaths,
) -> Result<Option<InteractionRequest>, RunStateError> {
    let path = paths.interaction_request();
    let bytes = match fs_err::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(source.into()),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|source| RunStateError::InteractionCorrupt {
            line: source.line(),
            column: source.column(),
            message: super::serde_message(&source),
            path,
        })
}

/// Reads `interaction/response.txt`; `None` when the human has not answered yet.
///
/// One trailing line break is removed, because `echo yes > response.txt` and editors add
/// one that the human did not mean as part of the answer.
///
/// # Errors
/// [`RunStateError::Io`] when it cannot be read or is not UTF-8.
pub fn read_interaction_response(paths: &RunPaths) -> Result<Option<String>, RunStateError> {
    let path = paths.interaction_response();
    match fs_err::read_to_string(&path) {
        Ok(mut text) => {
            if text.ends_with('\n') {
                text.pop();
                if text.ends_with('\r') {
                    text.pop();
                }
            }
            Ok(Some(text))
        }
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(source) => Err(source.into()),
    }
}

/// Removes `interaction/` once its answer has been journaled (seed 000 §2.5.2: the engine
/// deletes both files after reading the response). A missing directory is fine.
///
/// # Errors
/// [`RunStateError::Io`] when it exists but cannot be removed.
pub fn clear_interaction(paths: &RunPaths) -> Result<(), RunStateError> {
    let dir = paths.interaction_dir();
    match fs_err::remove_dir_all(&dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(source) => Err(source.into()),
    }
}
