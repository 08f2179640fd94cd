//! A successful model call, whichever API answered: the neutral [`Completion`] the engine
//! journals, and the token counts with what the provider cached.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::AttemptRecord;
use super::message::AssistantMessage;

/// Token counts reported by the server, in the engine's terms: `prompt_tokens` counts every
/// prompt token, those read from and written to the provider's cache included (OpenAI's
/// `prompt_tokens`; Anthropic's `input_tokens` plus its two cache counts), so budgets and
/// windows mean the same whatever the API.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TokenUsage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    pub cached_tokens: u64,
    /// Prompt tokens written to the provider's cache (Anthropic's cache creation).
    pub cache_write_tokens: u64,
    /// Completion tokens spent reasoning, when the server says.
    pub reasoning_tokens: Option<u64>,
}

/// The token counts of one call as journaled (THOUGHT's `usage`) and summed into the run's
/// usage: `TokenUsage` without what is only the API's business.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CallUsage {
    /// Every prompt token, those read from and written to the provider's cache included.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// Prompt tokens written to the provider's cache.
    #[serde(default)]
    pub cache_write_tokens: u64,
}

impl From<TokenUsage> for CallUsage {
    fn from(usage: TokenUsage) -> Self {
        CallUsage {
            input_tokens: usage.prompt_tokens,
            output_tokens: usage.completion_tokens,
            cached_input_tokens: usage.cached_tokens,
            cache_write_tokens: usage.cache_write_tokens,
        }
    }
}

/// The outcome of a successful call.
#[derive(Clone, Debug)]
pub struct Completion {
    /// The response body exactly as received, for `response.json`; for a streamed call,
    /// the completion reassembled from the events.
    pub raw_body: Vec<u8>,
    /// The server-sent events exactly as received, when the call was streamed
    /// (`stream: true`), for `response.sse`.
    pub stream: Option<Vec<u8>>,
    /// The model's message, its reasoning and what must go back with it included.
    pub message: AssistantMessage,
    pub usage: Option<TokenUsage>,
    /// The model that answered, as the server names it (often a dated snapshot).
    pub model: Option<String>,
    /// Why the model stopped, in the API's own words (`stop`, `end_turn`, `incomplete`…).
    pub finish_reason: Option<String>,
    /// Whether the token limit cut the answer (chat's `length`, Anthropic's
    /// `max_tokens`, an `incomplete` response for `max_output_tokens`).
    pub truncated: bool,
    /// The model's reasoning, apart from its answer: `reasoning_content` (DeepSeek, vLLM,
    /// llama.cpp's server) or `reasoning` (Ollama, OpenRouter, newer vLLM), Anthropic's
    /// thinking, the summaries of Responses reasoning items.
    pub reasoning: Option<String>,
    /// Failed attempts before the successful one, each with the wait that followed it.
    pub attempts: Vec<AttemptRecord>,
    /// Wall time of the whole call, retries and waits included.
    pub duration: Duration,
}

/// The parsed fields of a completion body.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ParsedBody {
    pub message: AssistantMessage,
    pub usage: Option<TokenUsage>,
    pub model: Option<String>,
    pub finish_reason: Option<String>,
    pub truncated: bool,
}

impl Completion {
    /// The completion of `parsed`, whose body is `raw_body`.
    pub(crate) fn new(
        parsed: ParsedBody,
        raw_body: Vec<u8>,
        stream: Option<Vec<u8>>,
        attempts: Vec<AttemptRecord>,
        duration: Duration,
    ) -> Self {
        Completion {
            raw_body,
            stream,
            reasoning: parsed.message.reasoning.clone(),
            message: parsed.message,
            usage: parsed.usage,
            model: parsed.model,
            finish_reason: parsed.finish_reason,
            truncated: parsed.truncated,
            attempts,
            duration,
        }
    }
}

/// The human-readable part of an error value: `{"message": …}`, or a bare string, or the
/// JSON itself.
pub(crate) fn error_text(error: &Value) -> String {
    match error {
        Value::String(text) => text.clone(),
        Value::Object(fields) => match fields.get("message") {
            Some(Value::String(text)) => text.clone(),
            Some(_) | None => error.to_string(),
        },
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::Array(_) => error.to_string(),
    }
}

/// A count at `path` (keys) of `value`, when it is a non-negative integer.
pub(crate) fn count(value: &Value, path: &[&str]) -> Option<u64> {
    path.iter()
        .try_fold(value, |value, key| value.get(*key))
        .and_then(Value::as_u64)
}
