//! The LLM client: credentials, calls to the agent's model API (OpenAI chat completions,
//! Anthropic Messages, OpenAI Responses: one file each under `wire/`) with retries,
//! response parsing and cost estimates. Nothing here prints; every outcome is a return
//! value the engine journals and logs.
//!
//! The engine's side of a call:
//! 1. [`resolve_credentials`] once per run, then [`LlmClient::new`].
//! 2. [`WireRequest::body`] from [`ChatMessage`]s, tool definitions and the agent's `llm`
//!    parameters; serialize it once, write those bytes to `request.json`.
//! 3. [`LlmClient::complete`] with the same bytes; write [`Completion::raw_body`] (or, when
//!    the call failed on an answer, [`LlmError::response_body`]) to `response.json`, with
//!    the API key redacted, and [`AttemptRecord`]s to `engine.log`.
//! 4. [`cost_usd`] from [`Completion::usage`] and the prices.

mod client;
mod credentials;
mod error;
mod message;
mod model;
mod params;
mod pricing;
mod response;
mod stream;
mod wire;

pub use client::{CallProgress, ClientSettings, LlmClient};
pub use credentials::{
    ANTHROPIC_BASE_URL, ANTHROPIC_BASE_URL_VARIABLES, ANTHROPIC_KEY_VARIABLES, API_KEY_VARIABLES,
    BASE_URL_VARIABLES, Credentials, CredentialsError, DEFAULT_BASE_URL, KEY_VARIABLES, Origin,
    Source, env_files, is_openai_endpoint, resolve_credentials, resolve_credentials_for,
};
pub use delta_scenario::ModelApi;
pub use error::{AttemptFailure, AttemptRecord, ContextOverflow, LlmError, ResponseBody};
pub use message::{AssistantMessage, ChatMessage, Passback, ToolCall};
pub use model::{Answering, ChatModel};
pub use params::{EXTRA_BODY_KEY, KNOWN_PARAMETERS};
pub use pricing::{Prices, Pricing, cost_usd, prices};
pub use response::{CallUsage, Completion, TokenUsage};
pub use wire::{
    PromptCache, WireOptions, WireRequest, build_request, completion_from_record,
    conversation_keys, endpoint, known_parameters,
};
