//! What the server reads of a model request, whichever API it comes through: the model,
//! how many tool results its conversation holds (for `by_conversation` scripts), whether
//! it streams, and what the model is asked to show of its reasoning.

use delta_scenario::ModelApi;
use serde_json::Value;

/// Model id echoed when a request names none, and listed when the script names none.
pub const DEFAULT_MODEL: &str = "mock-model";

/// What the server needs from a well-formed request.
pub(crate) struct ModelRequest {
    pub(crate) api: ModelApi,
    pub(crate) model: String,
    /// Tool results in the conversation: `tool` messages, `tool_result` blocks or
    /// `function_call_output` items.
    pub(crate) tool_results: u64,
    /// Whether the model would see the request's tools (see [`StrictProfile::offers_tools`](crate::StrictProfile::offers_tools)).
    pub(crate) tools_offered: bool,
    /// `stream: true`: answer a message step with server-sent events.
    pub(crate) stream: bool,
    /// Chat: `stream_options.include_usage`, end the stream with a usage chunk.
    pub(crate) include_usage: bool,
    /// Anthropic: `thinking` is enabled (or adaptive), so the answer starts with a
    /// thinking block.
    pub(crate) thinking: bool,
    /// Responses: the model reasons (a reasoning model), so the answer starts with a
    /// reasoning item.
    pub(crate) reasoning: bool,
    /// Responses: `include` asks for `reasoning.encrypted_content`.
    pub(crate) encrypted: bool,
}

/// Whether a Responses model reasons. OpenAI's GPT-4 family and GPT-3.5 do not (they
/// refuse `reasoning` and `include: ["reasoning.encrypted_content"]`); the o-series,
/// GPT-5 and anything else mock-llm is asked for do.
pub(crate) fn is_reasoning_model(model: &str) -> bool {
    !["gpt-4", "gpt-3.5", "chatgpt-4o"]
        .iter()
        .any(|family| model.starts_with(family))
}

pub(crate) fn inspect(api: ModelApi, body: &Value) -> Result<ModelRequest, String> {
    let Some(object) = body.as_object() else {
        return Err("mock-llm: the request body must be a JSON object".to_string());
    };
    let conversation = match api {
        ModelApi::Chat | ModelApi::Anthropic => object
            .get("messages")
            .and_then(Value::as_array)
            .ok_or("mock-llm: the request needs a `messages` array")?,
        ModelApi::Responses => match object.get("input") {
            Some(Value::Array(items)) => items,
            Some(Value::String(_)) => &Vec::new(),
            _ => return Err("mock-llm: the request needs an `input` array or string".to_string()),
        },
    };
    let tool_results = conversation
        .iter()
        .map(|entry| tool_results(api, entry))
        .sum();
    let model = object
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_MODEL)
        .to_string();
    let stream = object.get("stream").and_then(Value::as_bool) == Some(true);
    let include_usage = object
        .get("stream_options")
        .and_then(|options| options.get("include_usage"))
        .and_then(Value::as_bool)
        == Some(true);
    let thinking = api == ModelApi::Anthropic
        && object
            .get("thinking")
            .and_then(|thinking| thinking.get("type"))
            .and_then(Value::as_str)
            .is_some_and(|kind| kind == "enabled" || kind == "adaptive");
    let reasoning = api == ModelApi::Responses && is_reasoning_model(&model);
    let encrypted = api == ModelApi::Responses
        && object
            .get("include")
            .and_then(Value::as_array)
            .is_some_and(|include| {
                include
                    .iter()
                    .any(|entry| entry.as_str() == Some("reasoning.encrypted_content"))
            });
    Ok(ModelRequest {
        api,
        model,
        tool_results,
        tools_offered: true,
        stream,
        include_usage,
        thinking,
        reasoning,
        encrypted,
    })
}

/// The tool results one message (or input item) holds.
fn tool_results(api: ModelApi, entry: &Value) -> u64 {
    let is = |key: &str, value: &str| entry.get(key).and_then(Value::as_str) == Some(value);
    match api {
        ModelApi::Chat => u64::from(is("role", "tool")),
        ModelApi::Responses => u64::from(is("type", "function_call_output")),
        ModelApi::Anthropic => entry
            .get("content")
            .and_then(Value::as_array)
            .map_or(0, |blocks| {
                blocks
                    .iter()
                    .filter(|block| {
                        block.get("type").and_then(Value::as_str) == Some("tool_result")
                    })
                    .count() as u64
            }),
    }
}
