//! Chat messages in the OpenAI wire format: what the engine sends (`ChatMessage`,
//! `build_request`) and what the model answers (`AssistantMessage`, `ToolCall`).

use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value, json};

/// A function call requested by the model. `arguments` is the model's raw JSON text, kept
/// as sent so the engine can journal it and report a parse error in the model's own words.
///
/// Serializes to (and deserializes from) the wire form
/// `{"id", "type": "function", "function": {"name", "arguments"}}`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(from = "WireToolCall")]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

#[derive(Deserialize)]
struct WireToolCall {
    id: String,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    arguments: String,
}

impl From<WireToolCall> for ToolCall {
    fn from(wire: WireToolCall) -> Self {
        ToolCall {
            id: wire.id,
            name: wire.function.name,
            arguments: wire.function.arguments,
        }
    }
}

impl ToolCall {
    /// The wire form as a JSON value, `arguments` as the model wrote them.
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        })
    }

    /// The wire form sent back to the model inside an assistant message. Arguments that
    /// are not a JSON object are sent as `{}`: Ollama rejects the whole request ("invalid
    /// tool call arguments", HTTP 400) otherwise, and the tool's observation already tells
    /// the model what was wrong with what it wrote.
    fn to_request_json(&self) -> Value {
        let arguments = match serde_json::from_str::<Value>(&self.arguments) {
            Ok(Value::Object(_)) => self.arguments.as_str(),
            Ok(_) | Err(_) => "{}",
        };
        json!({
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": arguments},
        })
    }
}

impl Serialize for ToolCall {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

/// The assistant's reply: text, tool calls, or both.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AssistantMessage {
    pub content: Option<String>,
    pub tool_calls: Vec<ToolCall>,
}

/// One message of the conversation sent to the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChatMessage {
    System {
        content: String,
    },
    User {
        content: String,
    },
    Assistant(AssistantMessage),
    /// The observation for the tool call whose id is `tool_call_id`.
    Tool {
        tool_call_id: String,
        content: String,
    },
}

impl ChatMessage {
    pub fn system(content: impl Into<String>) -> Self {
        ChatMessage::System {
            content: content.into(),
        }
    }

    pub fn user(content: impl Into<String>) -> Self {
        ChatMessage::User {
            content: content.into(),
        }
    }

    pub fn tool(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        ChatMessage::Tool {
            tool_call_id: tool_call_id.into(),
            content: content.into(),
        }
    }

    /// The wire form as a JSON value. An assistant message always carries a string
    /// `content`, empty when the model said nothing: OpenAI accepts `null` beside tool
    /// calls, but llama-cpp-python's validator answers HTTP 500 to it and Ollama's 400 to
    /// a missing one, while every server accepts `""`. `tool_calls` only when there are
    /// some: the OpenAI API rejects an empty array.
    pub fn to_json(&self) -> Value {
        match self {
            ChatMessage::System { content } => json!({"role": "system", "content": content}),
            ChatMessage::User { content } => json!({"role": "user", "content": content}),
            ChatMessage::Assistant(message) => {
                let mut wire = Map::new();
                wire.insert("role".into(), "assistant".into());
                let content = message.content.clone().unwrap_or_default();
                wire.insert("content".into(), content.into());
                if !message.tool_calls.is_empty() {
                    let calls = message
                        .tool_calls
                        .iter()
                        .map(ToolCall::to_request_json)
                        .collect();
                    wire.insert("tool_calls".into(), Value::Array(calls));
                }
                Value::Object(wire)
            }
            ChatMessage::Tool {
                tool_call_id,
                content,
            } => json!({"role": "tool", "tool_call_id": tool_call_id, "content": content}),
        }
    }
}

impl From<AssistantMessage> for ChatMessage {
    fn from(message: AssistantMessage) -> Self {
        ChatMessage::Assistant(message)
    }
}

impl Serialize for ChatMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

/// Keys the engine owns; a passthrough parameter cannot replace them.
const RESERVED_KEYS: [&str; 3] = ["model", "messages", "tools"];

/// `tool_choice` sent with tools unless the agent's `llm.tool_choice` says otherwise.
/// It is OpenAI's default anyway, but llama-cpp-python's function-calling chat formats
/// offer the tools to the model only when `tool_choice` is set: without it the model
/// never sees them.
const DEFAULT_TOOL_CHOICE: &str = "auto";

/// Builds a chat-completions request body.
///
/// `tools` are OpenAI tool definitions (`{"type": "function", "function": {…}}`), omitted
/// from the body when empty, and sent with `tool_choice: "auto"` unless `params` has a
/// `tool_choice`. `params` are the agent's other `llm` settings (temperature, max_tokens,
/// top_p, …), copied as they are; a `model`, `messages` or `tools` key among them is
/// ignored because the explicit arguments own those.
pub fn build_request(
    model: &str,
    messages: &[ChatMessage],
    tools: &[Value],
    params: &Map<String, Value>,
) -> Value {
    let mut body: Map<String, Value> = params
        .iter()
        .filter(|(key, _)| !RESERVED_KEYS.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    body.insert("model".into(), model.into());
    body.insert(
        "messages".into(),
        Value::Array(messages.iter().map(ChatMessage::to_json).collect()),
    );
    // Without it most servers send no usage in a stream, and the run's usage would be
    // unknown.
    if body.get("stream") == Some(&Value::Bool(true)) {
        body.entry("stream_options")
            .or_insert_with(|| json!({"include_usage": true}));
    }
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools.to_vec()));
        body.entry("tool_choice")
            .or_insert_with(|| DEFAULT_TOOL_CHOICE.into());
    }
    Value::Object(body)
}
