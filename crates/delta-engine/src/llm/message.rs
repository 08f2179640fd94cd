//! The engine's conversation, provider-neutral: what it sends (`ChatMessage`) and what the
//! model answers (`AssistantMessage`, `ToolCall`, the opaque items a `Passback` carries
//! back). Its serialization is the chat-completions wire form, which is also what the
//! token estimator counts; the other APIs translate it (`super::wire`).

use delta_scenario::ModelApi;
use schemars::JsonSchema;
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

    /// The arguments as sent back to the model. Arguments that are not a JSON object are
    /// sent as `{}`: Ollama rejects the whole request ("invalid tool call arguments", HTTP
    /// 400) otherwise, Anthropic's `input` must be an object, and the tool's observation
    /// already tells the model what was wrong with what it wrote.
    pub(crate) fn request_arguments(&self) -> &str {
        match serde_json::from_str::<Value>(&self.arguments) {
            Ok(Value::Object(_)) => self.arguments.as_str(),
            Ok(_) | Err(_) => "{}",
        }
    }

    /// The wire form sent back to the model inside an assistant message.
    fn to_request_json(&self) -> Value {
        let arguments = self.request_arguments();
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

/// The assistant's reply: text, tool calls, or both, and what of its reasoning must go
/// back to the model with it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AssistantMessage {
    pub content: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    /// The reasoning text (journaled as THOUGHT's `reasoning`); sent back only to a chat
    /// server that needs it (`llm.reasoning_passback: [reasoning_content]`).
    pub reasoning: Option<String>,
    /// The answer's opaque items, for the request that carries the turn back.
    pub passback: Option<Passback>,
}

/// What an answer must carry back to the model on later requests, exactly as it came: in
/// the API's own shapes, for the API it came from (journaled in THOUGHT's `passback`).
///
/// - `anthropic`: the `thinking` and `redacted_thinking` blocks (their `signature` and
///   `data` included), with `{"type": "text"}` and `{"type": "tool_use", "id"}` markers
///   keeping the order of the answer's blocks;
/// - `responses`: the `reasoning` items (`encrypted_content` included) and
///   `{"type": "message"}` / `{"type": "function_call", "id", "call_id"}` markers keeping
///   the order of the answer's items and its calls' server ids;
/// - `chat`: one object of the assistant message's fields that `llm.reasoning_passback`
///   names (e.g. OpenRouter's `reasoning_details`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Passback {
    /// The API whose shapes the items are in; another API's requests leave them out.
    pub api: ModelApi,
    /// The items, verbatim.
    pub items: Vec<Value>,
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
    /// The observation for the tool call whose id is `tool_call_id`; `is_error` when the
    /// call failed or could not run (Anthropic's `tool_result.is_error`).
    Tool {
        tool_call_id: String,
        content: String,
        is_error: bool,
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
            is_error: false,
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
                ..
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
