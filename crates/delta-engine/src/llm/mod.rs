//! The LLM client: credentials, OpenAI chat-completions calls with retries, response
//! parsing and cost estimates. Nothing here prints; every outcome is a return value the
//! engine journals and logs.
//!
//! The engine's side of a call:
//! 1. [`resolve_credentials`] once per run, then [`LlmClient::new`].
//! 2. [`build_request`] from [`ChatMessage`]s, tool definitions and the agent's `llm`
//!    parameters; serialize it once, write those bytes to `request.json`.
//! 3. [`LlmClient::complete`] with the same bytes; write [`Completion::raw_body`] (or, when
//!    the call failed on an answer, [`LlmError::response_body`]) to `response.json`, with
//!    the API key redacted, and [`AttemptRecord`]s to `engine.log`.
//! 4. [`cost_usd`] from [`Completion::usage`].

mod client;
mod credentials;
mod error;
mod message;
mod model;
mod params;
mod pricing;
mod response;
mod stream;

pub use client::{CallProgress, ClientSettings, LlmClient};
pub use credentials::{
    API_KEY_VARIABLES, BASE_URL_VARIABLES, Credentials, CredentialsError, DEFAULT_BASE_URL, Origin,
    Source, env_files, resolve_credentials,
};
pub use error::{AttemptFailure, AttemptRecord, ContextOverflow, LlmError, ResponseBody};
pub use message::{AssistantMessage, ChatMessage, ToolCall, build_request};
pub use model::{Answering, ChatModel};
pub use params::{EXTRA_BODY_KEY, KNOWN_PARAMETERS};
pub use pricing::cost_usd;
pub use response::{Completion, TokenUsage, completion_from_record};
