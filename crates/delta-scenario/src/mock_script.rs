//! The mock-llm script (`schemas/mock-script.schema.json`): which answer each chat request
//! gets. Scenarios carry one (`mock`, `mock_file`) and `delta export --format scenario`
//! writes one; mock-llm reads them (parsing, with file, line and column, is its own).

use std::num::NonZeroU64;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// Usage reported when a `message` step gives none (or leaves a field out).
pub const DEFAULT_PROMPT_TOKENS: u64 = 10;
/// See [`DEFAULT_PROMPT_TOKENS`].
pub const DEFAULT_COMPLETION_TOKENS: u64 = 5;

/// A scripted conversation for `mock-llm`: which answer each model request gets, whichever
/// API it comes through (chat completions, Anthropic Messages, OpenAI Responses).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "mock-llm script")]
pub struct Script {
    /// How a request is matched to a step. Default: `sequential`.
    #[serde(default, skip_serializing_if = "Mode::is_default")]
    pub mode: Mode,
    /// Model ids listed by `GET /v1/models`. Default: `["mock-model"]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<String>,
    /// The answers, in order. Each entry is exactly one of `message`, `error`,
    /// `drop_connection` or `malformed`.
    pub steps: Vec<Step>,
}

/// How a request is matched to a step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Step N answers the N-th chat request to arrive (counting from 0), across all clients.
    #[default]
    Sequential,
    /// Step N answers any request whose conversation already holds N tool results
    /// (messages with role `tool`, Anthropic `tool_result` blocks, Responses
    /// `function_call_output` items), so concurrent and resumed runs each get the same
    /// answers in the same order.
    ByConversation,
}

impl Mode {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// One scripted answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// Answer with an assistant message: a `chat.completion`, an Anthropic `message` or a
    /// `response` object, as the request's API returns it (streamed when asked).
    Message(MessageStep),
    /// Answer with an HTTP error status.
    Error(ErrorStep),
    /// Close the connection without sending any response. Its fields may be left out
    /// entirely (`drop_connection:` or `drop_connection: {}`).
    #[serde(deserialize_with = "null_as_default")]
    #[schemars(with = "Option<DropConnectionStep>")]
    DropConnection(DropConnectionStep),
    /// Answer `200 OK` with a body that is not a valid `chat.completion` object.
    Malformed(MalformedStep),
}

impl Step {
    /// Milliseconds to wait before answering.
    pub fn delay_ms(&self) -> u64 {
        match self {
            Self::Message(step) => step.delay_ms,
            Self::Error(step) => step.delay_ms,
            Self::DropConnection(step) => step.delay_ms,
            Self::Malformed(step) => step.delay_ms,
        }
    }

    /// How many consecutive steps this entry counts as.
    pub fn repeat(&self) -> NonZeroU64 {
        match self {
            Self::Message(step) => step.repeat,
            Self::Error(step) => step.repeat,
            Self::DropConnection(step) => step.repeat,
            Self::Malformed(step) => step.repeat,
        }
    }
}

/// An assistant message. With no `tool_calls` it ends an agent's run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageStep {
    /// The message text; `null` in the response when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Tool calls the assistant makes, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Token usage to report. Default: 10 prompt and 5 completion tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// `choices[0].finish_reason`. Default: `tool_calls` when there are tool calls, else `stop`.
    /// Other APIs get its equivalent: `length` is Anthropic's `max_tokens` and an
    /// `incomplete` response (`max_output_tokens`), `content_filter` Anthropic's `refusal`
    /// and an `incomplete` response (`content_filter`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// The model's reasoning: chat's `reasoning_content`, an Anthropic `thinking` block
    /// (with a signature the strict profile checks when it comes back) when the request
    /// enables thinking, a Responses `reasoning` item (its summary; `encrypted_content` when
    /// the request includes it) for a reasoning model. Anthropic and Responses reasoning
    /// models reason anyway: without it they get a short default text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Anthropic only: a `redacted_thinking` block with this `data`, after the thinking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redacted_reasoning: Option<String>,
    /// Milliseconds to wait before answering (other requests are served meanwhile).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delay_ms: u64,
    /// When the answer is streamed: send the role chunk and the first piece of the content,
    /// then hold the rest of the stream until this file exists, so a test can see a client
    /// show text while the answer is still arriving.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_hold_until: Option<PathBuf>,
    /// How many consecutive steps this entry counts as. Default: 1.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub repeat: NonZeroU64,
}

impl Default for MessageStep {
    fn default() -> Self {
        Self {
            content: None,
            tool_calls: Vec::new(),
            usage: None,
            finish_reason: None,
            reasoning: None,
            redacted_reasoning: None,
            delay_ms: 0,
            stream_hold_until: None,
            repeat: one(),
        }
    }
}

/// One tool call of an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// The tool-call id. Default: `call_<step>_<i>` (step number, then position in the list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool (function) name.
    pub name: String,
    /// The arguments. A string is sent verbatim (so it may be malformed JSON); any other
    /// value is serialized as JSON. Default: `{}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
}

/// Token usage reported in the response; `total_tokens` is their sum. Each API reports it
/// in its own fields: Anthropic's `input_tokens` leaves out the cached and cache-written
/// tokens, which `prompt_tokens` here includes. With `mock-llm --prompt-cache` the prompt's
/// tokens are counted from the request instead, and the cached ones found by the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    /// Every prompt token, cached ones included. Default: 10.
    #[serde(default = "default_prompt_tokens")]
    pub prompt_tokens: u64,
    /// Default: 5.
    #[serde(default = "default_completion_tokens")]
    pub completion_tokens: u64,
    /// Prompt tokens read from the provider's cache. Default: 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_tokens: u64,
    /// Prompt tokens written to the provider's cache. Default: 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
}

impl Default for Usage {
    fn default() -> Self {
        Self {
            prompt_tokens: DEFAULT_PROMPT_TOKENS,
            completion_tokens: DEFAULT_COMPLETION_TOKENS,
            cached_tokens: 0,
            cache_write_tokens: 0,
        }
    }
}

/// An HTTP error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorStep {
    /// The HTTP status code (200–599).
    #[serde(deserialize_with = "status_code")]
    #[schemars(range(min = 200, max = 599))]
    pub status: u16,
    /// The response body. A string is sent verbatim as `text/plain`; any other value is sent
    /// as JSON. Default: an OpenAI-style error object
    /// `{"error": {"message", "type", "param", "code"}}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    /// Seconds to send in a `Retry-After` header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u64>,
    /// Milliseconds to wait before answering (other requests are served meanwhile).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delay_ms: u64,
    /// How many consecutive steps this entry counts as. Default: 1.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub repeat: NonZeroU64,
}

/// Close the connection without a response (the client sees a connection error).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DropConnectionStep {
    /// Milliseconds to wait before closing the connection.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delay_ms: u64,
    /// How many consecutive steps this entry counts as. Default: 1.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub repeat: NonZeroU64,
}

impl Default for DropConnectionStep {
    fn default() -> Self {
        Self {
            delay_ms: 0,
            repeat: one(),
        }
    }
}

/// `200 OK` with `Content-Type: application/json` and a body that is not a valid completion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MalformedStep {
    /// The body. A string is sent verbatim (e.g. `not json`, or truncated JSON); any other
    /// value is sent as JSON (e.g. `{choices: []}` for a wrong-shape completion).
    pub body: Value,
    /// Milliseconds to wait before answering (other requests are served meanwhile).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delay_ms: u64,
    /// How many consecutive steps this entry counts as. Default: 1.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub repeat: NonZeroU64,
}

fn one() -> NonZeroU64 {
    NonZeroU64::MIN
}

fn is_one(n: &NonZeroU64) -> bool {
    *n == NonZeroU64::MIN
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn default_prompt_tokens() -> u64 {
    DEFAULT_PROMPT_TOKENS
}

fn default_completion_tokens() -> u64 {
    DEFAULT_COMPLETION_TOKENS
}

/// Lets a step whose fields all have defaults be written with no value at all.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Option::<T>::deserialize(deserializer).map(Option::unwrap_or_default)
}

/// Checks the status inside deserialization so a bad one is reported at its line and column.
fn status_code<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u16, D::Error> {
    let status = u16::deserialize(deserializer)?;
    if (200..=599).contains(&status) {
        Ok(status)
    } else {
        Err(serde::de::Error::custom(format!(
            "status {status} is not an HTTP status code mock-llm can send; use 200-599"
        )))
    }
}

impl Script {
    /// The number of steps, counting each entry `repeat` times (saturating).
    pub fn len(&self) -> u64 {
        self.steps
            .iter()
            .fold(0u64, |sum, step| sum.saturating_add(step.repeat().get()))
    }

    /// Whether the script has no steps at all.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }
}

/// The JSON Schema (draft 2020-12) of the script format, as committed in
/// `schemas/mock-script.schema.json`.
pub fn script_schema() -> Value {
    Value::from(schemars::schema_for!(Script))
}
