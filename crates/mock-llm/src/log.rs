//! The request log: every chat request kept in order, in memory for the library's
//! callers and as one JSON line each in the `--record` file.

use std::fs::File;
use std::io::Write as _;
use std::path::PathBuf;

use axum::http::StatusCode;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::api_error::error_response;

/// One chat request as recorded (one JSON line of the `--record` file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// Arrival order of chat requests, from 0.
    pub index: u64,
    /// The step that answered it; `null` for a request rejected as invalid or over the
    /// context window (HTTP 400).
    pub step: Option<u64>,
    /// The request path, e.g. `/v1/chat/completions`.
    pub path: String,
    /// The request body as JSON; a body that is not JSON is kept as a string.
    pub body: Value,
    /// Whether an `Authorization` header was sent. Its value is never recorded.
    pub has_authorization: bool,
}

/// The requests a server received, and where they are written.
pub(crate) struct Log {
    arrivals: u64,
    next_sequential: u64,
    kept: Option<Vec<RecordedRequest>>,
    file: Option<(PathBuf, File)>,
}

impl Log {
    /// A log writing to `file` when given, and keeping the requests in memory when `keep`.
    pub(crate) fn new(file: Option<(PathBuf, File)>, keep: bool) -> Self {
        Self {
            arrivals: 0,
            next_sequential: 0,
            kept: keep.then(Vec::new),
            file,
        }
    }

    /// The requests kept so far (none unless kept).
    pub(crate) fn kept(&self) -> Vec<RecordedRequest> {
        self.kept.clone().unwrap_or_default()
    }

    /// The step of the next request of a `sequential` script.
    pub(crate) fn next_sequential(&mut self) -> u64 {
        let step = self.next_sequential;
        self.next_sequential += 1;
        step
    }

    /// Records one request, the step that answers it (`None`: refused before any step was
    /// picked), in memory and in the record file.
    pub(crate) fn append(
        &mut self,
        step: Option<u64>,
        path: &str,
        body: Value,
        has_authorization: bool,
    ) -> Result<(), RecordError> {
        let record = RecordedRequest {
            index: self.arrivals,
            step,
            path: path.to_string(),
            body,
            has_authorization,
        };
        self.arrivals += 1;
        if let Some((file_path, file)) = self.file.as_mut() {
            let written = serde_json::to_string(&record)
                .map_err(std::io::Error::from)
                .and_then(|mut line| {
                    line.push('\n');
                    // One write per line: a reader never sees half a record.
                    file.write_all(line.as_bytes())
                });
            if let Err(err) = written {
                return Err(RecordError(format!(
                    "mock-llm: cannot write record file {}: {err}",
                    file_path.display()
                )));
            }
        }
        if let Some(kept) = self.kept.as_mut() {
            kept.push(record);
        }
        Ok(())
    }
}

/// The record file could not be written; the request is answered with HTTP 500 saying so,
/// since the library has no other channel to report it.
pub(crate) struct RecordError(String);

impl RecordError {
    pub(crate) fn into_response(self) -> Response {
        error_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            &self.0,
            "server_error",
            "mock_llm_record_failed",
        )
    }
}
