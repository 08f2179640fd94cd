//! The JSON documents `delta-sessions` prints on stdout, one type per command.
//!
//! Output streams are bytes. A stream that is valid UTF-8 is given as a plain string. One
//! that is not is given twice: `stdout` holds a readable copy (invalid sequences replaced by
//! U+FFFD) and `stdout_base64` holds the exact bytes (standard alphabet, padded). So a
//! consumer that needs exact bytes decodes `*_base64` when present and uses the string
//! otherwise.

use std::path::PathBuf;

use base64::Engine as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::store::Status;

/// `start`: the new session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StartOutput {
    /// The session's id: `sess_` and 12 hex digits.
    #[schemars(regex(pattern = r"^sess_[0-9a-f]{12}$"))]
    pub session_id: String,
    /// The interpreter as given (`bash` when none was).
    pub command: String,
    /// The directory the interpreter starts in (where `start` ran).
    pub work_dir: PathBuf,
    /// Always `active`.
    pub status: Status,
}

/// `exec`: the command's complete result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExecOutput {
    /// Everything the command wrote to stdout: exact when it is valid UTF-8, otherwise a
    /// readable copy with U+FFFD for invalid bytes (the exact bytes are in `stdout_base64`).
    pub stdout: String,
    /// The exact stdout bytes, present only when they are not valid UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("contentEncoding" = "base64"))]
    pub stdout_base64: Option<String>,
    /// Everything the command wrote to stderr, encoded like `stdout`.
    pub stderr: String,
    /// The exact stderr bytes, present only when they are not valid UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("contentEncoding" = "base64"))]
    pub stderr_base64: Option<String>,
    /// The command's status; 124 when it was stopped at its timeout.
    pub exit_code: i32,
    /// Wall-clock time from handing the command to the interpreter to its completion.
    pub execution_time_ms: u64,
    /// Present (true) only when the command ran past `--timeout` and was stopped.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
    /// Present (true) only when a stream was larger than the cap (4 MiB): its first and
    /// last 2 MiB are given, with a marker in place of the middle saying how much was left
    /// out.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub output_truncated: bool,
    /// Present (true) only when the interpreter is gone after this command (`builtin exit`
    /// in bash, `exit` in another shell, `os._exit` in Python, a crash, or a command that
    /// would not stop): later `exec` calls will fail.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub session_ended: bool,
    /// What happened and what to do, when something needs explaining.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// `end`: the session is over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EndOutput {
    /// Always `terminated`.
    pub status: Status,
    /// The session's id: `sess_` and 12 hex digits.
    #[schemars(regex(pattern = r"^sess_[0-9a-f]{12}$"))]
    pub session_id: String,
}

/// Status as `list` reports it: the recorded status, or `dead` when the session was never
/// ended but its process is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ListStatus {
    Active,
    Terminated,
    Exited,
    Dead,
}

/// `list`: one element per session, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ListEntry {
    /// The session's id: `sess_` and 12 hex digits.
    #[schemars(regex(pattern = r"^sess_[0-9a-f]{12}$"))]
    pub session_id: String,
    /// The interpreter as given to `start`.
    pub command: String,
    pub status: ListStatus,
    /// RFC 3339 UTC with milliseconds.
    pub created_at: String,
    /// When the latest command ran; null before the first.
    pub last_executed_at: Option<String>,
    /// How many commands the session has run.
    pub execution_count: u64,
    /// The directory the session started in.
    pub work_dir: PathBuf,
}

/// `cleanup`: the sessions whose directories were removed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CleanupOutput {
    /// Ids of the removed sessions, sorted.
    pub removed: Vec<String>,
}

/// Any failure: printed on stdout, with a non-zero exit code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorOutput {
    /// What went wrong.
    pub error: String,
    /// What to do about it.
    pub hint: String,
}

/// A byte stream as (readable text, exact bytes when the text is not exact).
pub fn encode_stream(bytes: Vec<u8>) -> (String, Option<String>) {
    match String::from_utf8(bytes) {
        Ok(text) => (text, None),
        Err(error) => {
            let bytes = error.into_bytes();
            let text = String::from_utf8_lossy(&bytes).into_owned();
            (
                text,
                Some(base64::engine::general_purpose::STANDARD.encode(&bytes)),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_is_plain_and_anything_else_also_carries_base64() {
        assert_eq!(
            encode_stream(b"h\xc3\xa9\n".to_vec()),
            ("hé\n".to_owned(), None)
        );
        assert_eq!(
            encode_stream(vec![0xff, b'a', 0]),
            ("\u{fffd}a\u{0}".to_owned(), Some("/2EA".to_owned()))
        );
    }
}
