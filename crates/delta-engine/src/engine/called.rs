//! What one LLM call produced when it did not stop the run: the model's answer, or the
//! server's word that the request did not fit the context window (which `window` retries
//! with a smaller request).

use crate::llm::{AssistantMessage, ContextOverflow, TokenUsage};

/// The model's answer to one request.
pub(super) struct Answer {
    pub invocation_id: String,
    /// The message, its reasoning and what goes back with it included.
    pub message: AssistantMessage,
    /// The prompt's size as the server counted it, when it said.
    pub prompt_tokens: Option<u64>,
    pub usage: Option<TokenUsage>,
    /// Whether the token limit cut the answer.
    pub truncated: bool,
}

/// How one request ended when it did not stop the run.
pub(super) enum Called {
    Answer(Answer),
    /// The server answered that the request does not fit the model's context window.
    Overflow {
        invocation_id: String,
        overflow: ContextOverflow,
        /// The error as the user reads it.
        error: String,
    },
}
