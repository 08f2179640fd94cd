//! The LLM client: credentials, OpenAI chat-completions calls with retries, response
//! parsing and cost estimates. Nothing here prints; every outcome is a return value the
//! engine journals and logs.

mod message;
mod pricing;

pub use message::{AssistantMessage, ChatMessage, ToolCall, build_request};
pub use pricing::cost_usd;
