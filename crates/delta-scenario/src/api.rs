//! [`ModelApi`]: the wire APIs a model is asked through. The engine's `llm.api` picks one
//! for an agent; each mock-llm profile serves one; an exported scenario's mock profile
//! follows the API its run was recorded against.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The wire API a model is asked through.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ModelApi {
    /// OpenAI's chat completions, `POST {base_url}/chat/completions`: OpenAI and every
    /// OpenAI-compatible server (vLLM, llama.cpp, Ollama, OpenRouter, LiteLLM, …).
    #[default]
    Chat,
    /// OpenAI's Responses API, `POST {base_url}/responses`, used statelessly.
    Responses,
    /// Anthropic's Messages API, `POST {base_url}/v1/messages`.
    Anthropic,
}

impl ModelApi {
    /// Every API, in the order the docs list them.
    pub const ALL: [ModelApi; 3] = [ModelApi::Chat, ModelApi::Responses, ModelApi::Anthropic];

    /// The name agent.yaml's `llm.api` spells it with.
    pub fn name(self) -> &'static str {
        match self {
            ModelApi::Chat => "chat",
            ModelApi::Responses => "responses",
            ModelApi::Anthropic => "anthropic",
        }
    }

    /// Whether it is the default (`chat`), which an agent need not write.
    pub fn is_default(&self) -> bool {
        *self == ModelApi::default()
    }
}

impl fmt::Display for ModelApi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
