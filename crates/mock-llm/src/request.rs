//! What the server reads of a chat request: the model, how many tool messages it holds,
//! whether it streams.

use serde_json::Value;

/// Model id echoed when a request names none, and listed when the script names none.
pub const DEFAULT_MODEL: &str = "mock-model";

/// What the server needs from a well-formed chat request.
pub(crate) struct ChatRequest {
    pub(crate) model: String,
    pub(crate) tool_messages: u64,
    /// Whether the model would see the request's tools (see [`StrictProfile::offers_tools`](crate::StrictProfile::offers_tools)).
    pub(crate) tools_offered: bool,
    /// `stream: true`: answer a message step with server-sent events.
    pub(crate) stream: bool,
    /// `stream_options.include_usage`: end the stream with a usage chunk.
    pub(crate) include_usage: bool,
}

pub(crate) fn inspect(body: &Value) -> Result<ChatRequest, String> {
    let Some(object) = body.as_object() else {
        return Err("mock-llm: the request body must be a JSON object".to_string());
    };
    let Some(messages) = object.get("messages").and_then(Value::as_array) else {
        return Err("mock-llm: the request needs a `messages` array".to_string());
    };
    let tool_messages = messages
        .iter()
        .filter(|message| message.get("role").and_then(Value::as_str) == Some("tool"))
        .count() as u64;
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
    Ok(ChatRequest {
        model,
        tool_messages,
        tools_offered: true,
        stream,
        include_usage,
    })
}
