//! Strict profiles: requests validated the way a real service validates them, and
//! rejected with the status and error body that service sends. A lenient mock lets a
//! client bug through that a real service refuses; these profiles refuse it too.
//!
//! One module per API: [`chat`] (OpenAI, llama-cpp-python, vLLM, Ollama, DeepSeek),
//! [`anthropic`] (the Messages API) and [`responses`] (OpenAI's Responses API). The rules
//! of the last two come from the digest of the official references
//! (/work/notes/model-apis.md in the project's workplace, summarised in
//! docs/model-servers.md); each cites its source and says whether the wording is the
//! service's own (`[exact]`) or the closest documented form (`[approx]`).

mod anthropic;
mod chat;
mod responses;

use delta_scenario::{MockProfile, ModelApi};
use serde_json::{Value, json};

use crate::api_error::anthropic_body;
use chat::ChatServer;
pub use chat::OPENAI_PARAMETERS;

/// What the validators read of a request's headers (their values are never kept).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Credentials {
    /// An `x-api-key` header (Anthropic's key).
    pub(crate) api_key: bool,
    /// An `Authorization` header.
    pub(crate) authorization: bool,
    /// The `anthropic-version` header's value.
    pub(crate) anthropic_version: Option<String>,
}

/// Request validation as a [`MockProfile`]'s server does it. A lenient profile accepts
/// every request; the strict ones answer as their server does:
///
/// - `openai` (api.openai.com): 400 `invalid_request_error`, unknown parameters refused,
///   tool messages must answer the preceding assistant's tool calls;
/// - `llama-cpp` (llama-cpp-python's server with `--chat_format
///   chatml-function-calling`): a request its pydantic models refuse is answered HTTP 500
///   `internal_server_error`; tools are offered to the model only when `tool_choice` is set;
/// - `vllm` (started with `--enable-auto-tool-choice --tool-call-parser …`): 400
///   `BadRequestError`;
/// - `ollama` (its `/v1` layer): 400 `invalid_request_error`; tool-call arguments must be
///   a JSON object; content may be null only beside tool calls;
/// - `deepseek` (thinking mode): OpenAI's rules, and the `reasoning_content` of an
///   assistant turn with tool calls must come back;
/// - `anthropic` (`POST /v1/messages`): Anthropic's error shape, its block and pairing
///   rules, thinking signatures checked, at most 4 `cache_control` breakpoints;
/// - `responses` (`POST /v1/responses`): OpenAI's error shape, item shapes and pairing,
///   encrypted reasoning checked, stored items refused when `store` is false.
pub trait StrictProfile {
    /// Checks a parsed request body sent to this profile's own API with the headers a
    /// well-behaved client sends; `Err` is the answer the real server gives.
    ///
    /// # Errors
    /// The [`Rejection`] the server answers the request with.
    fn check(self, body: &Value) -> Result<(), Rejection>;

    /// Whether the model gets to see the request's tools. llama-cpp-python's
    /// `chatml-function-calling` renders the tools into the prompt only when
    /// `tool_choice` is set and is not `"none"`: without it the model never calls one.
    fn offers_tools(self, body: &Value) -> bool;
}

impl StrictProfile for MockProfile {
    fn check(self, body: &Value) -> Result<(), Rejection> {
        let Some(api) = self.api() else {
            return Ok(());
        };
        let credentials = Credentials {
            api_key: true,
            authorization: true,
            anthropic_version: Some(anthropic::VERSION.to_owned()),
        };
        check_request(self, api, &credentials, body)
    }

    fn offers_tools(self, body: &Value) -> bool {
        match chat_server(self) {
            Some(server) => server.offers_tools(body),
            None => body
                .get("tools")
                .and_then(Value::as_array)
                .is_some_and(|tools| !tools.is_empty()),
        }
    }
}

fn chat_server(profile: MockProfile) -> Option<ChatServer> {
    match profile {
        MockProfile::Openai => Some(ChatServer::Openai),
        MockProfile::LlamaCpp => Some(ChatServer::LlamaCpp),
        MockProfile::Vllm => Some(ChatServer::Vllm),
        MockProfile::Ollama => Some(ChatServer::Ollama),
        MockProfile::Deepseek => Some(ChatServer::Deepseek),
        MockProfile::Anthropic | MockProfile::Responses | MockProfile::Lenient => None,
    }
}

/// Checks a request that came to `api`'s route. A lenient profile accepts anything; a
/// profile of another API answers 404, as that service has no such route.
pub(crate) fn check_request(
    profile: MockProfile,
    api: ModelApi,
    credentials: &Credentials,
    body: &Value,
) -> Result<(), Rejection> {
    let Some(served) = profile.api() else {
        return Ok(());
    };
    if served != api {
        let message = format!(
            "mock-llm (strict {profile}) serves the {served} API only; this request came to \
             the {api} API's route: point the client at {served}'s endpoint or use another \
             profile"
        );
        return Err(match served {
            ModelApi::Anthropic => Rejection {
                status: 404,
                body: anthropic_body("not_found_error", &message),
            },
            ModelApi::Chat | ModelApi::Responses => Rejection {
                status: 404,
                body: json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": "not_found"}}),
            },
        });
    }
    match (chat_server(profile), api) {
        (Some(server), _) => server.check(body),
        (None, ModelApi::Anthropic) => anthropic::check(credentials, body),
        (None, ModelApi::Responses) => responses::check(credentials, body),
        (None, ModelApi::Chat) => Ok(()),
    }
}

/// A name `--strict` does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown strict profile `{0}`; use one of: openai, llama-cpp, vllm, ollama, deepseek, \
     anthropic, responses"
)]
pub struct UnknownProfile(pub String);

/// The strict profile named `name` (`--strict`'s values: every profile but `lenient`).
///
/// # Errors
/// [`UnknownProfile`] for any other name.
pub fn strict_profile(name: &str) -> Result<MockProfile, UnknownProfile> {
    MockProfile::STRICT
        .into_iter()
        .find(|profile| profile.name() == name)
        .ok_or_else(|| UnknownProfile(name.to_owned()))
}

/// A refused request: the HTTP status and JSON body to answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    pub status: u16,
    pub body: Value,
}

/// What is wrong with a request, before it is dressed as a server's error.
struct Issue {
    message: String,
    /// OpenAI's `param`, e.g. `messages.[2].content` or `input[1].call_id`.
    param: Option<String>,
    code: Option<&'static str>,
    /// The status, where the service answers other than 400 (401, 404).
    status: u16,
}

fn issue(message: impl Into<String>, param: impl Into<String>) -> Issue {
    Issue {
        message: message.into(),
        param: Some(param.into()),
        code: None,
        status: 400,
    }
}

/// A required parameter the request leaves out, in OpenAI's words.
fn missing(param: impl Into<String>) -> Issue {
    let param = param.into();
    issue(format!("Missing required parameter: '{param}'."), param)
}

/// The kind a JSON value has, in the words of the services' messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
