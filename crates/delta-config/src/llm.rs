//! The choices of `llm:` in agent.yaml that the engine reads itself.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Whether the engine asks the provider to cache the prompt's prefix (`llm.prompt_cache`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PromptCache {
    /// Anthropic: `cache_control` breakpoints on the tools, the system prompt and the last
    /// two user turns; Responses (and chat at api.openai.com): a `prompt_cache_key` per run.
    #[default]
    Auto,
    /// Neither breakpoints nor a cache key (providers that cache on their own still may).
    Off,
}
