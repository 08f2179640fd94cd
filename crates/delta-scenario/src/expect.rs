//! What must be observed after a step: [`Expect`] and the expectations on each thing a
//! step leaves behind (metadata, journal, requests, tool executions, files).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::matcher::{ExitMatch, TextMatch, ValueMatch};

/// What must be observed after a step. Every given expectation must hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The exit code (one, or a list of acceptable ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<ExitMatch>,
    /// Standard output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout: Option<TextMatch>,
    /// Standard error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<TextMatch>,
    /// `.delta/{run_id}/metadata.json` of the step's run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<MetadataExpect>,
    /// `.delta/{run_id}/journal.jsonl` of the step's run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal: Option<JournalExpect>,
    /// The chat requests mock-llm has received so far (all steps together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<RequestsExpect>,
    /// `io/tool_executions/{execution_ref}/` of the run's tool calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_executions: Vec<ToolExecutionExpect>,
    /// Files that must exist (with some content) or not exist.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileExpect>,
    /// The number of run directories in `{workspace}/.delta/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_count: Option<usize>,
    /// Texts that no file under a directory may contain (e.g. the API key).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub no_file_contains: Vec<NoFileContains>,
}

impl Expect {
    /// Every text matcher, with the kind of text it is for (for load-time checks).
    pub fn text_matchers(&self) -> Vec<(&'static str, &TextMatch)> {
        let mut all: Vec<(&'static str, &TextMatch)> = Vec::new();
        all.extend(self.stdout.iter().map(|t| ("stdout", t)));
        all.extend(self.stderr.iter().map(|t| ("stderr", t)));
        all.extend(
            self.files
                .iter()
                .flat_map(|f| &f.text)
                .map(|t| ("files", t)),
        );
        for exec in &self.tool_executions {
            all.extend(
                [&exec.stdout, &exec.stderr]
                    .into_iter()
                    .flatten()
                    .map(|t| ("tool_executions", t)),
            );
        }
        for request in self.requests.iter().flat_map(|r| r.items.iter()) {
            all.extend(
                [&request.text, &request.body]
                    .into_iter()
                    .flatten()
                    .map(|t| ("requests", t)),
            );
        }
        all
    }
}

/// Checks on `metadata.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetadataExpect {
    /// The `status` field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// JSON pointer → matcher.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, ValueMatch>,
}

/// Checks on the journal's events.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JournalExpect {
    /// The event types, exactly, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub types: Option<Vec<String>>,
    /// Event types that must appear in this order, others allowed in between.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub types_in_order: Option<Vec<String>>,
    /// The type of the first event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<String>,
    /// The type of the last event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<String>,
    /// Event type → exactly how many events of that type.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub count: BTreeMap<String, usize>,
    /// Checks on single events.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EventExpect>,
}

/// Checks on one journal event, picked by type and position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventExpect {
    /// The event type.
    #[serde(rename = "type")]
    pub type_: String,
    /// Which event of that type: 0 is the first, -1 the last. Default: 0.
    #[serde(default)]
    pub nth: i64,
    /// JSON pointer into the event's `payload` → matcher.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub payload: BTreeMap<String, ValueMatch>,
}

/// Checks on the chat requests mock-llm received.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestsExpect {
    /// How many, exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
    /// Checks on single requests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<RequestExpect>,
}

/// Checks on one chat request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestExpect {
    /// Which request, from 0 in arrival order; -1 is the last.
    pub index: i64,
    /// The text of all its messages (each message's content, tool calls' arguments
    /// included), one per line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<TextMatch>,
    /// The request body as compact JSON text (strings JSON-escaped), e.g. to find a tool
    /// description among the offered tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<TextMatch>,
    /// JSON pointer into the request body → matcher.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub json: BTreeMap<String, ValueMatch>,
}

/// Checks on the recorded execution of one tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolExecutionExpect {
    /// Which call: the n-th `ACTION_RESULT` of the journal, from 0; -1 is the last.
    #[serde(default)]
    pub nth: i64,
    /// `stdout.log`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout: Option<TextMatch>,
    /// `stderr.log`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<TextMatch>,
    /// The number in `exit_code.txt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
}

/// A file that must (or must not) exist.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileExpect {
    /// The path, with placeholders (e.g. `{workspace}/.delta/VERSION`).
    pub path: String,
    /// Whether it must exist. Default: true.
    // Left out when true; the schema still says what the default is.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    #[schemars(extend("default" = true))]
    pub exists: bool,
    /// Its content (implies `exists`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<TextMatch>,
}

fn yes() -> bool {
    true
}

fn is_true(value: &bool) -> bool {
    *value
}

/// A text that must not appear in any file under a directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoFileContains {
    /// The directory, searched recursively (symbolic links are not followed).
    pub dir: String,
    /// The text.
    pub text: String,
}
