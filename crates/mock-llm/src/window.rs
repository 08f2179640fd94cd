//! A context window for the mock: requests whose size passes it are answered with a
//! server's context-length error instead of a step, as OpenAI, vLLM or llama.cpp would.

use std::fmt;
use std::str::FromStr;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use delta_scenario::ModelApi;
use serde_json::json;

use crate::api_error::anthropic_body;

/// Bytes of request body the mock counts as one token: a tokenizer's average on English
/// and JSON, applied to the whole body so the count needs no model.
pub const BYTES_PER_TOKEN: u64 = 4;

/// A request's prompt size as the mock counts it: its body's bytes divided by
/// [`BYTES_PER_TOKEN`], rounded up.
#[must_use]
pub fn prompt_tokens(body_bytes: usize) -> u64 {
    u64::try_from(body_bytes)
        .unwrap_or(u64::MAX)
        .div_ceil(BYTES_PER_TOKEN)
}

/// The mock's context window: requests over `tokens` get `shape`'s error (HTTP 400),
/// use up no step, and are recorded with `step: null`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextWindow {
    /// The window in the mock's tokens ([`prompt_tokens`]).
    pub tokens: u64,
    /// Whose error to answer with.
    pub shape: OverflowShape,
}

/// Whose context-length error the mock answers with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OverflowShape {
    /// `code: context_length_exceeded`, "This model's maximum context length is …".
    #[default]
    OpenAi,
    /// vLLM's `BadRequestError` body without an `error` wrapper.
    Vllm,
    /// llama.cpp's server: `type: exceed_context_size_error` with `n_prompt_tokens` and
    /// `n_ctx`.
    LlamaCpp,
    /// Older llama.cpp: an `invalid_request_error` whose message gives no numbers.
    LlamaCppLegacy,
}

impl OverflowShape {
    /// The names `--context-error` takes.
    pub const NAMES: [&'static str; 4] = ["openai", "vllm", "llama.cpp", "llama.cpp-legacy"];

    fn name(self) -> &'static str {
        match self {
            OverflowShape::OpenAi => Self::NAMES[0],
            OverflowShape::Vllm => Self::NAMES[1],
            OverflowShape::LlamaCpp => Self::NAMES[2],
            OverflowShape::LlamaCppLegacy => Self::NAMES[3],
        }
    }
}

impl fmt::Display for OverflowShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for OverflowShape {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        [
            OverflowShape::OpenAi,
            OverflowShape::Vllm,
            OverflowShape::LlamaCpp,
            OverflowShape::LlamaCppLegacy,
        ]
        .into_iter()
        .find(|shape| shape.name() == text)
        .ok_or_else(|| format!("expected one of: {}", Self::NAMES.join(", ")))
    }
}

impl ContextWindow {
    /// The error for a request of `prompt` tokens to `api`, when it is over the window:
    /// `shape`'s for chat completions, OpenAI's for Responses (its `param` is `input`),
    /// and Anthropic's `prompt is too long: N tokens > M maximum` [exact] (digest A5,
    /// OBS:66513829784) for Messages.
    pub(crate) fn reject(&self, api: ModelApi, prompt: u64) -> Option<Response> {
        if prompt <= self.tokens {
            return None;
        }
        let window = self.tokens;
        let shape = match api {
            ModelApi::Chat => self.shape,
            ModelApi::Responses => OverflowShape::OpenAi,
            ModelApi::Anthropic => {
                let message = format!("prompt is too long: {prompt} tokens > {window} maximum");
                let body = anthropic_body("invalid_request_error", &message);
                return Some((StatusCode::BAD_REQUEST, axum::Json(body)).into_response());
            }
        };
        let body = match shape {
            OverflowShape::OpenAi => json!({"error": {
                "message": format!("This model's maximum context length is {window} tokens. However, your messages resulted in {prompt} tokens. Please reduce the length of the messages."),
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }}),
            OverflowShape::Vllm => json!({
                "object": "error",
                "message": format!("This model's maximum context length is {window} tokens. However, you requested {prompt} tokens in the messages, Please reduce the length of the messages."),
                "type": "BadRequestError",
                "param": null,
                "code": 400,
            }),
            OverflowShape::LlamaCpp => json!({"error": {
                "code": 400,
                "message": format!("request ({prompt} tokens) exceeds the available context size ({window} tokens), try increasing it"),
                "type": "exceed_context_size_error",
                "n_prompt_tokens": prompt,
                "n_ctx": window,
            }}),
            OverflowShape::LlamaCppLegacy => json!({"error": {
                "code": 400,
                "message": "the request exceeds the available context size. try increasing the context size or enable context shift",
                "type": "invalid_request_error",
            }}),
        };
        Some((StatusCode::BAD_REQUEST, axum::Json(body)).into_response())
    }
}
