//! [`MockProfile`]: the real servers whose request validation mock-llm reproduces, with
//! the names scenarios, `delta export --mock-profile` and `mock-llm --strict` spell them.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::api::ModelApi;

/// The real server whose request validation mock-llm reproduces.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MockProfile {
    /// The OpenAI API.
    #[default]
    Openai,
    /// llama-cpp-python's server with `--chat_format chatml-function-calling`.
    LlamaCpp,
    /// vLLM with `--enable-auto-tool-choice`.
    Vllm,
    /// Ollama's OpenAI-compatible layer.
    Ollama,
    /// DeepSeek's chat API in thinking mode: the reasoning of an assistant turn with tool
    /// calls must be passed back.
    Deepseek,
    /// Anthropic's Messages API (`POST /v1/messages`).
    Anthropic,
    /// OpenAI's Responses API (`POST /v1/responses`).
    Responses,
    /// No validation: any request of any API is answered.
    Lenient,
}

impl MockProfile {
    /// Every profile, in the order `--help` lists them.
    pub const ALL: [MockProfile; 8] = [
        MockProfile::Openai,
        MockProfile::LlamaCpp,
        MockProfile::Vllm,
        MockProfile::Ollama,
        MockProfile::Deepseek,
        MockProfile::Anthropic,
        MockProfile::Responses,
        MockProfile::Lenient,
    ];

    /// The profiles that validate requests: the values of `mock-llm --strict`.
    pub const STRICT: [MockProfile; 7] = [
        MockProfile::Openai,
        MockProfile::LlamaCpp,
        MockProfile::Vllm,
        MockProfile::Ollama,
        MockProfile::Deepseek,
        MockProfile::Anthropic,
        MockProfile::Responses,
    ];

    /// The profile's name, as scenarios, `--mock-profile` and `--strict` spell it.
    pub fn name(self) -> &'static str {
        match self {
            MockProfile::Openai => "openai",
            MockProfile::LlamaCpp => "llama-cpp",
            MockProfile::Vllm => "vllm",
            MockProfile::Ollama => "ollama",
            MockProfile::Deepseek => "deepseek",
            MockProfile::Anthropic => "anthropic",
            MockProfile::Responses => "responses",
            MockProfile::Lenient => "lenient",
        }
    }

    /// The wire API its server speaks; `None` for the lenient mock, which serves all.
    pub fn api(self) -> Option<ModelApi> {
        match self {
            MockProfile::Openai
            | MockProfile::LlamaCpp
            | MockProfile::Vllm
            | MockProfile::Ollama
            | MockProfile::Deepseek => Some(ModelApi::Chat),
            MockProfile::Anthropic => Some(ModelApi::Anthropic),
            MockProfile::Responses => Some(ModelApi::Responses),
            MockProfile::Lenient => None,
        }
    }

    /// The strict profile of the real service behind `api`: what an exported run recorded
    /// against that API is checked with by default.
    pub fn of_api(api: ModelApi) -> MockProfile {
        match api {
            ModelApi::Chat => MockProfile::Openai,
            ModelApi::Responses => MockProfile::Responses,
            ModelApi::Anthropic => MockProfile::Anthropic,
        }
    }

    /// Whose requests the profile judges, in a few words.
    pub fn description(self) -> &'static str {
        match self {
            MockProfile::Openai => "The OpenAI API (the default)",
            MockProfile::LlamaCpp => {
                "llama-cpp-python's server (`--chat_format chatml-function-calling`)"
            }
            MockProfile::Vllm => "vLLM with `--enable-auto-tool-choice`",
            MockProfile::Ollama => "Ollama's OpenAI-compatible layer",
            MockProfile::Deepseek => "DeepSeek's chat API in thinking mode",
            MockProfile::Anthropic => "Anthropic's Messages API",
            MockProfile::Responses => "OpenAI's Responses API",
            MockProfile::Lenient => "No request checks",
        }
    }

    /// The `mock-llm --strict` value, or `None` for a lenient mock.
    pub fn strict_name(self) -> Option<&'static str> {
        (self != MockProfile::Lenient).then(|| self.name())
    }

    /// Whether it is the default (`openai`), which a scenario need not write.
    pub fn is_default(&self) -> bool {
        *self == MockProfile::default()
    }
}

impl fmt::Display for MockProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no [`MockProfile`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownMockProfile(pub String);

impl fmt::Display for UnknownMockProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = MockProfile::ALL.map(MockProfile::name).to_vec();
        write!(
            f,
            "unknown mock profile `{}`; use one of: {}",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownMockProfile {}

impl FromStr for MockProfile {
    type Err = UnknownMockProfile;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        MockProfile::ALL
            .into_iter()
            .find(|profile| profile.name() == name)
            .ok_or_else(|| UnknownMockProfile(name.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_serde_spellings_and_parse_back() {
        for profile in MockProfile::ALL {
            let yaml = serde_json::to_value(profile).unwrap();
            assert_eq!(yaml, profile.name());
            assert_eq!(profile.name().parse::<MockProfile>(), Ok(profile));
            assert_eq!(
                serde_json::from_value::<MockProfile>(yaml).unwrap(),
                profile
            );
        }
        assert_eq!(
            "llamacpp".parse::<MockProfile>().unwrap_err().to_string(),
            "unknown mock profile `llamacpp`; use one of: openai, llama-cpp, vllm, ollama, deepseek, anthropic, responses, lenient"
        );
    }

    #[test]
    fn every_profile_but_lenient_is_a_strict_one() {
        let strict: Vec<_> = MockProfile::ALL
            .into_iter()
            .filter(|p| p.strict_name().is_some())
            .collect();
        assert_eq!(strict, MockProfile::STRICT);
        assert!(MockProfile::Openai.is_default());
    }
}
