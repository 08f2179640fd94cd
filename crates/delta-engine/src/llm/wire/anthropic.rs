//! Anthropic Messages (`POST {base_url}/v1/messages`): the engine's conversation as a
//! Messages request, a `message` answer parsed, its event stream reassembled. The shapes
//! and rules are Anthropic's API reference (summarised in docs/model-servers.md).
//!
//! The conversation maps as follows: the system messages before the first other message
//! become the top-level `system` blocks; user messages and later system messages user
//! `text` blocks; an assistant message its thinking blocks (as they came, from the
//! THOUGHT's `passback`), its text and its `tool_use` blocks, in the answer's order; the
//! tool messages after it one user message of `tool_result` blocks (`is_error` when the
//! call failed), followed by any system text journaled meanwhile, as the API wants results
//! first. Consecutive turns of one role are merged into one, which the API would do anyway.

use delta_scenario::ModelApi;
use serde_json::{Map, Value, json};

use super::{Parts, PromptCache, WireRequest, function_parts};
use crate::llm::message::{AssistantMessage, ChatMessage, ToolCall};
use crate::llm::response::{ParsedBody, TokenUsage, count, error_text};
use crate::llm::stream::{Data, data};

/// Parameters the Messages API takes (A-SDK `MessageCreateParams`) that an agent may set;
/// `stop` and `parallel_tool_calls` are chat's, translated.
pub(super) const PARAMETERS: &[&str] = &[
    "max_tokens",
    "temperature",
    "top_p",
    "top_k",
    "stop",
    "stop_sequences",
    "tool_choice",
    "parallel_tool_calls",
    "stream",
    "thinking",
    "metadata",
    "service_tier",
];

/// `max_tokens` when the agent sets none (the API requires it): within every current
/// model's output limit.
pub const DEFAULT_MAX_TOKENS: u64 = 8192;

/// Room left for the answer beside the thinking budget, when `max_tokens` is not set and
/// `thinking.budget_tokens` would not fit under [`DEFAULT_MAX_TOKENS`].
const ANSWER_ROOM: u64 = 4096;

/// Keys the engine owns or translates.
const ENGINE_KEYS: [&str; 8] = [
    "model",
    "messages",
    "tools",
    "system",
    "max_tokens",
    "stop",
    "tool_choice",
    "parallel_tool_calls",
];

/// What the model says when it refused without any text (`stop_reason: refusal`).
pub(crate) const REFUSED: &str = "the model refused to answer (stop_reason: refusal)";

pub(super) fn body(request: &WireRequest<'_>) -> Value {
    let params = request.params;
    let mut body = request.passthrough(&ENGINE_KEYS);
    body.insert("max_tokens".into(), max_tokens(params).into());
    if let Some(stop) = params.get("stop") {
        let stops = match stop {
            Value::String(_) => json!([stop]),
            Value::Null
            | Value::Bool(_)
            | Value::Number(_)
            | Value::Array(_)
            | Value::Object(_) => stop.clone(),
        };
        body.insert("stop_sequences".into(), stops);
    }
    let cache = request.options.prompt_cache == PromptCache::Auto;
    let leading = request
        .messages
        .iter()
        .take_while(|message| matches!(message, ChatMessage::System { .. }))
        .count();
    let mut system: Vec<Value> = request.messages[..leading]
        .iter()
        .filter_map(|message| match message {
            ChatMessage::System { content } if !content.is_empty() => {
                Some(json!({"type": "text", "text": content}))
            }
            ChatMessage::System { .. }
            | ChatMessage::User { .. }
            | ChatMessage::Assistant(_)
            | ChatMessage::Tool { .. } => None,
        })
        .collect();
    if cache {
        mark_last(&mut system);
    }
    if !system.is_empty() {
        body.insert("system".into(), Value::Array(system));
    }
    let mut turns = turns(&request.messages[leading..]);
    if cache {
        let users: Vec<usize> = turns
            .iter()
            .enumerate()
            .filter(|(_, (role, _))| *role == "user")
            .map(|(index, _)| index)
            .rev()
            .take(2)
            .collect();
        for index in users {
            mark_last(&mut turns[index].1);
        }
    }
    let messages = turns
        .into_iter()
        .map(|(role, blocks)| json!({"role": role, "content": blocks}))
        .collect();
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                let (name, description, parameters) = function_parts(tool);
                let mut tool = json!({"name": name, "input_schema": parameters});
                if !description.is_null() {
                    tool["description"] = description.clone();
                }
                tool
            })
            .collect();
        if cache {
            mark_last(&mut tools);
        }
        body.insert("tools".into(), Value::Array(tools));
        body.insert("tool_choice".into(), tool_choice(params));
    }
    Value::Object(body)
}

/// The agent's `max_tokens`, else [`DEFAULT_MAX_TOKENS`] or, when thinking's budget
/// would not fit under it, the budget with [`ANSWER_ROOM`] (the API wants the budget below
/// `max_tokens`).
fn max_tokens(params: &Map<String, Value>) -> u64 {
    if let Some(max) = params.get("max_tokens").and_then(Value::as_u64) {
        return max;
    }
    let budget = params
        .get("thinking")
        .and_then(|thinking| thinking.get("budget_tokens"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    DEFAULT_MAX_TOKENS.max(budget.saturating_add(ANSWER_ROOM))
}

/// Chat's `tool_choice` (and `parallel_tool_calls`) in the Messages API's shape:
/// `auto` unless the agent says otherwise.
fn tool_choice(params: &Map<String, Value>) -> Value {
    let mut choice = match params.get("tool_choice") {
        None => json!({"type": "auto"}),
        Some(Value::String(mode)) => match mode.as_str() {
            "required" => json!({"type": "any"}),
            "none" => json!({"type": "none"}),
            _ => json!({"type": "auto"}),
        },
        Some(Value::Object(named)) => match named.get("function").and_then(|f| f.get("name")) {
            Some(name) => json!({"type": "tool", "name": name}),
            // Already in the Messages API's shape.
            None => Value::Object(named.clone()),
        },
        Some(other @ (Value::Null | Value::Bool(_) | Value::Number(_) | Value::Array(_))) => {
            other.clone()
        }
    };
    if params.get("parallel_tool_calls") == Some(&Value::Bool(false)) && choice["type"] != "none" {
        choice["disable_parallel_tool_use"] = true.into();
    }
    choice
}

/// Puts a `cache_control` breakpoint on the last block of `blocks`.
fn mark_last(blocks: &mut [Value]) {
    if let Some(last) = blocks.last_mut() {
        last["cache_control"] = json!({"type": "ephemeral"});
    }
}

/// The conversation after the system prompt as turns of blocks, merged by role.
fn turns(messages: &[ChatMessage]) -> Vec<(&'static str, Vec<Value>)> {
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in messages {
        let (role, blocks) = match message {
            ChatMessage::System { content } | ChatMessage::User { content } => {
                ("user", text(content).into_iter().collect())
            }
            ChatMessage::Assistant(assistant) => ("assistant", assistant_blocks(assistant)),
            ChatMessage::Tool {
                tool_call_id,
                content,
                is_error,
            } => {
                let mut block = json!({"type": "tool_result", "tool_use_id": tool_call_id});
                if !content.is_empty() {
                    block["content"] = content.as_str().into();
                }
                if *is_error {
                    block["is_error"] = true.into();
                }
                ("user", vec![block])
            }
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, merged)) if *last == role => merged.extend(blocks),
            Some(_) | None => turns.push((role, blocks)),
        }
    }
    turns
}

/// A text block, unless the text is empty (the API refuses empty text blocks).
fn text(content: &str) -> Option<Value> {
    (!content.is_empty()).then(|| json!({"type": "text", "text": content}))
}

fn tool_use(call: &ToolCall) -> Value {
    let input = serde_json::from_str::<Value>(call.request_arguments()).unwrap_or_default();
    json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input})
}

/// An assistant turn's blocks: the passback's thinking blocks as they came, and the text
/// and tool calls where its markers put them; what no marker places comes after, text
/// first.
fn assistant_blocks(assistant: &AssistantMessage) -> Vec<Value> {
    let mut blocks = Vec::new();
    let mut text_placed = false;
    let mut placed: Vec<&str> = Vec::new();
    let content = assistant.content.as_deref().unwrap_or_default();
    let items = assistant
        .passback
        .as_ref()
        .filter(|passback| passback.api == ModelApi::Anthropic)
        .map_or(&[][..], |passback| &passback.items);
    for item in items {
        match item["type"].as_str() {
            Some("text") if item.get("text").is_none() => {
                if !text_placed {
                    blocks.extend(text(content));
                    text_placed = true;
                }
            }
            Some("tool_use") => {
                let id = item["id"].as_str().unwrap_or_default();
                if let Some(call) = assistant.tool_calls.iter().find(|call| call.id == id) {
                    blocks.push(tool_use(call));
                    placed.push(id);
                }
            }
            Some(_) | None => blocks.push(item.clone()),
        }
    }
    if !text_placed {
        blocks.extend(text(content));
    }
    blocks.extend(
        assistant
            .tool_calls
            .iter()
            .filter(|call| !placed.contains(&call.id.as_str()))
            .map(tool_use),
    );
    blocks
}

/// Parses a `message` body (A-SDK `types/message.py`).
pub(super) fn parse_body(body: &[u8]) -> Result<ParsedBody, String> {
    let message: Value =
        serde_json::from_slice(body).map_err(|error| format!("not JSON: {error}"))?;
    match message["type"].as_str() {
        Some("message") => {}
        Some("error") => {
            return Err(format!(
                "not a message, but an error: {}",
                error_text(&message["error"])
            ));
        }
        _ => return Err("not a message (no `type: message`)".to_owned()),
    }
    let blocks = message["content"]
        .as_array()
        .ok_or_else(|| "the message has no `content` array".to_owned())?;
    let mut parts = Parts::default();
    for (index, block) in blocks.iter().enumerate() {
        match block["type"].as_str() {
            Some("text") => {
                if parts.texts.is_empty() {
                    parts.items.push(json!({"type": "text"}));
                }
                parts.texts.push(block["text"].as_str().unwrap_or_default());
            }
            Some("tool_use") => {
                let id = block["id"]
                    .as_str()
                    .ok_or_else(|| format!("tool_use block {index} has no id"))?;
                let name = block["name"]
                    .as_str()
                    .ok_or_else(|| format!("tool_use block {index} has no name"))?;
                // A stream's unparsable arguments are kept as the model wrote them.
                let arguments = match &block["input"] {
                    Value::String(raw) => raw.clone(),
                    Value::Null => "{}".to_owned(),
                    input @ (Value::Bool(_)
                    | Value::Number(_)
                    | Value::Array(_)
                    | Value::Object(_)) => input.to_string(),
                };
                parts.tool_calls.push(ToolCall {
                    id: id.to_owned(),
                    name: name.to_owned(),
                    arguments,
                });
                parts.items.push(json!({"type": "tool_use", "id": id}));
            }
            Some("thinking") => {
                parts
                    .reasoning
                    .push(block["thinking"].as_str().unwrap_or_default());
                parts.items.push(block.clone());
                parts.opaque = true;
            }
            Some("redacted_thinking") => {
                parts.items.push(block.clone());
                parts.opaque = true;
            }
            // Server tools' blocks and future ones: not the engine's to answer.
            Some(_) | None => {}
        }
    }
    let stop_reason = message["stop_reason"].as_str().map(str::to_owned);
    let mut answer = parts.message(ModelApi::Anthropic);
    if stop_reason.as_deref() == Some("refusal")
        && answer.content.as_deref().is_none_or(str::is_empty)
    {
        answer.content = Some(REFUSED.to_owned());
    }
    Ok(ParsedBody {
        message: answer,
        usage: usage(&message["usage"]),
        model: message["model"].as_str().map(str::to_owned),
        truncated: stop_reason.as_deref() == Some("max_tokens"),
        finish_reason: stop_reason,
    })
}

/// Anthropic's usage in the engine's terms: its `input_tokens` leave out what was read
/// from and written to the cache (A-SDK: the three add up to the prompt).
fn usage(usage: &Value) -> Option<TokenUsage> {
    let uncached = count(usage, &["input_tokens"])?;
    let completion_tokens = count(usage, &["output_tokens"])?;
    let cached_tokens = count(usage, &["cache_read_input_tokens"]).unwrap_or(0);
    let cache_write_tokens = count(usage, &["cache_creation_input_tokens"]).unwrap_or(0);
    let prompt_tokens = uncached
        .saturating_add(cached_tokens)
        .saturating_add(cache_write_tokens);
    Some(TokenUsage {
        prompt_tokens,
        completion_tokens,
        total_tokens: prompt_tokens.saturating_add(completion_tokens),
        cached_tokens,
        cache_write_tokens,
        reasoning_tokens: None,
    })
}

/// The `message` the events describe (A-STREAM): `message_start`'s message, each block
/// from its `content_block_start` with its deltas joined (text, thinking, signature,
/// `partial_json` parsed at the block's end), `message_delta`'s stop reason and usage
/// (cumulative). `ping` and unknown events are ignored; an `error` event fails it.
pub(super) fn assemble(events: &[u8]) -> Result<Vec<u8>, String> {
    let mut message: Option<Value> = None;
    let mut blocks: Vec<Value> = Vec::new();
    let mut partial: Vec<String> = Vec::new();
    let mut stopped = false;
    for payload in data(events)? {
        let Data::Event(event) = payload else {
            continue;
        };
        let index = event["index"]
            .as_u64()
            .and_then(|index| usize::try_from(index).ok())
            .unwrap_or(0);
        match event["type"].as_str() {
            Some("message_start") => message = Some(event["message"].clone()),
            Some("content_block_start") => {
                while blocks.len() <= index {
                    blocks.push(Value::Null);
                    partial.push(String::new());
                }
                blocks[index] = event["content_block"].clone();
            }
            Some("content_block_delta") => {
                let block = blocks
                    .get_mut(index)
                    .ok_or_else(|| format!("a delta for block {index}, which never started"))?;
                let delta = &event["delta"];
                let append = |block: &mut Value, field: &str, piece: &Value| {
                    let joined = format!(
                        "{}{}",
                        block[field].as_str().unwrap_or_default(),
                        piece.as_str().unwrap_or_default()
                    );
                    block[field] = joined.into();
                };
                match delta["type"].as_str() {
                    Some("text_delta") => append(block, "text", &delta["text"]),
                    Some("thinking_delta") => append(block, "thinking", &delta["thinking"]),
                    Some("signature_delta") => append(block, "signature", &delta["signature"]),
                    Some("input_json_delta") => {
                        partial[index].push_str(delta["partial_json"].as_str().unwrap_or_default());
                    }
                    Some(_) | None => {}
                }
            }
            Some("content_block_stop") => {
                if let Some(block) = blocks.get_mut(index)
                    && block["type"] == "tool_use"
                {
                    let json = partial[index].trim();
                    block["input"] = if json.is_empty() {
                        json!({})
                    } else {
                        serde_json::from_str(json).unwrap_or_else(|_| json.into())
                    };
                }
            }
            Some("message_delta") => {
                let message = message
                    .as_mut()
                    .ok_or("a message_delta before message_start")?;
                for key in ["stop_reason", "stop_sequence"] {
                    if let Some(value) = event["delta"].get(key) {
                        message[key] = value.clone();
                    }
                }
                if let Some(usage) = event["usage"].as_object() {
                    for (key, value) in usage {
                        message["usage"][key.as_str()] = value.clone();
                    }
                }
            }
            Some("message_stop") => stopped = true,
            Some("error") => {
                return Err(format!(
                    "the stream reported an error: {}",
                    error_text(&event["error"])
                ));
            }
            Some(_) | None => {}
        }
    }
    let mut message = message.ok_or("the event stream holds no message_start")?;
    if !stopped {
        return Err("the event stream ended before the message did".to_owned());
    }
    message["content"] = Value::Array(blocks);
    serde_json::to_vec(&message).map_err(|error| error.to_string())
}

/// The text a `text_delta` carries.
pub(super) fn text_piece(event: &Value) -> Option<String> {
    (event["type"] == "content_block_delta" && event["delta"]["type"] == "text_delta")
        .then(|| event["delta"]["text"].as_str().map(str::to_owned))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::message::Passback;
    use crate::llm::wire::WireOptions;

    fn tools() -> Vec<Value> {
        vec![
            json!({"type": "function", "function": {"name": "ls", "description": "List.", "parameters": {"type": "object"}}}),
        ]
    }

    fn request_body(messages: &[ChatMessage], params: &Map<String, Value>) -> Value {
        WireRequest {
            api: ModelApi::Anthropic,
            model: "claude-sonnet-4-5",
            messages,
            tools: &tools(),
            params,
            options: &WireOptions::default(),
        }
        .body()
    }

    /// The digest's A2.7 request, from the engine's conversation.
    #[test]
    fn the_conversation_becomes_system_blocks_turns_and_breakpoints() {
        let thinking =
            json!({"type": "thinking", "thinking": "I should read it.", "signature": "EqoB"});
        let call = ToolCall {
            id: "toolu_01".into(),
            name: "ls".into(),
            arguments: r#"{"path":"README.md"}"#.into(),
        };
        let messages = vec![
            ChatMessage::system("You are Delta."),
            ChatMessage::user("Summarise README.md"),
            ChatMessage::Assistant(AssistantMessage {
                content: None,
                tool_calls: vec![call],
                reasoning: Some("I should read it.".into()),
                passback: Some(Passback {
                    api: ModelApi::Anthropic,
                    items: vec![
                        thinking.clone(),
                        json!({"type": "tool_use", "id": "toolu_01"}),
                    ],
                }),
            }),
            ChatMessage::Tool {
                tool_call_id: "toolu_01".into(),
                content: "# Delta".into(),
                is_error: true,
            },
            ChatMessage::system("Be brief."),
        ];
        let mut params = Map::new();
        params.insert("stop".into(), json!("END"));
        let marker = json!({"type": "ephemeral"});
        assert_eq!(
            request_body(&messages, &params),
            json!({
                "model": "claude-sonnet-4-5",
                "max_tokens": 8192,
                "stop_sequences": ["END"],
                "system": [{"type": "text", "text": "You are Delta.", "cache_control": marker}],
                "tools": [{"name": "ls", "description": "List.", "input_schema": {"type": "object"}, "cache_control": marker}],
                "tool_choice": {"type": "auto"},
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "Summarise README.md", "cache_control": marker}]},
                    {"role": "assistant", "content": [thinking,
                        {"type": "tool_use", "id": "toolu_01", "name": "ls", "input": {"path": "README.md"}}]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_01", "content": "# Delta", "is_error": true},
                        {"type": "text", "text": "Be brief.", "cache_control": marker}]},
                ],
            })
        );
    }

    #[test]
    fn max_tokens_and_tool_choice_are_translated() {
        let mut params = Map::new();
        params.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": 10_000}),
        );
        params.insert("tool_choice".into(), json!("required"));
        params.insert("parallel_tool_calls".into(), json!(false));
        let body = request_body(&[ChatMessage::user("hi")], &params);
        assert_eq!(body["max_tokens"], 14_096);
        assert_eq!(
            body["tool_choice"],
            json!({"type": "any", "disable_parallel_tool_use": true})
        );
        assert!(body.get("parallel_tool_calls").is_none());
        params.insert("max_tokens".into(), json!(20_000));
        params.insert(
            "tool_choice".into(),
            json!({"type": "function", "function": {"name": "ls"}}),
        );
        let body = request_body(&[ChatMessage::user("hi")], &params);
        assert_eq!(body["max_tokens"], 20_000);
        assert_eq!(body["tool_choice"]["name"], "ls");
    }

    /// A-SDK `tests/lib/streaming/fixtures/tool_use_response.txt`, verbatim, and a thinking
    /// block's events (digest A4).
    #[test]
    fn a_stream_is_reassembled_into_its_message() {
        let events = concat!(
            "event: message_start\n",
            "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_019Q1hrJbZG26Fb9BQhrkHEr\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-20250514\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":377,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":1,\"service_tier\":\"standard\"}}}\n\n",
            "event: content_block_start\n",
            "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
            "event: ping\n",
            "data: {\"type\": \"ping\"}\n\n",
            "event: content_block_delta\n",
            "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"I'll check the current weather in Paris for you.\"}}\n\n",
            "event: content_block_stop\n",
            "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
            "event: content_block_start\n",
            "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_01NRLabsLyVHZPKxbKvkfSMn\",\"name\":\"get_weather\",\"caller\":{\"type\":\"direct\"},\"input\":{}}}\n\n",
            "event: content_block_delta\n",
            "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n\n",
            "event: content_block_delta\n",
            "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"locati\"}}\n\n",
            "event: content_block_delta\n",
            "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"on\\\": \\\"Paris\\\"}\"}}\n\n",
            "event: content_block_stop\n",
            "data: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
            "event: message_delta\n",
            "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":65}}\n\n",
            "event: message_stop\n",
            "data: {\"type\":\"message_stop\"}\n\n",
        );
        let body = assemble(events.as_bytes()).unwrap();
        let parsed = parse_body(&body).unwrap();
        assert_eq!(
            parsed.message.content.as_deref(),
            Some("I'll check the current weather in Paris for you.")
        );
        assert_eq!(
            parsed.message.tool_calls,
            vec![ToolCall {
                id: "toolu_01NRLabsLyVHZPKxbKvkfSMn".into(),
                name: "get_weather".into(),
                arguments: r#"{"location":"Paris"}"#.into()
            }]
        );
        assert_eq!(parsed.finish_reason.as_deref(), Some("tool_use"));
        assert_eq!(
            parsed.usage,
            Some(TokenUsage {
                prompt_tokens: 377,
                completion_tokens: 65,
                total_tokens: 442,
                ..TokenUsage::default()
            })
        );
        assert_eq!(
            parsed.message.passback, None,
            "no thinking, nothing to pass back"
        );
        let thinking = concat!(
            "data: {\"type\":\"message_start\",\"message\":{\"type\":\"message\",\"content\":[],\"usage\":{\"input_tokens\":10,\"cache_read_input_tokens\":2000,\"cache_creation_input_tokens\":90,\"output_tokens\":1}}}\n",
            "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n",
            "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Simple educ\"}}\n",
            "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"c3ludGhldGlj\"}}\n",
            "data: {\"type\":\"content_block_stop\",\"index\":0}\n",
            "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"opaque\"}}\n",
            "data: {\"type\":\"content_block_stop\",\"index\":1}\n",
            "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},\"usage\":{\"output_tokens\":20}}\n",
            "data: {\"type\":\"message_stop\"}\n",
        );
        let parsed = parse_body(&assemble(thinking.as_bytes()).unwrap()).unwrap();
        assert!(parsed.truncated);
        assert_eq!(parsed.message.reasoning.as_deref(), Some("Simple educ"));
        assert_eq!(
            parsed.message.passback.unwrap().items,
            vec![
                json!({"type": "thinking", "thinking": "Simple educ", "signature": "c3ludGhldGlj"}),
                json!({"type": "redacted_thinking", "data": "opaque"}),
            ]
        );
        let usage = parsed.usage.unwrap();
        assert_eq!(
            (
                usage.prompt_tokens,
                usage.cached_tokens,
                usage.cache_write_tokens
            ),
            (2100, 2000, 90)
        );
    }

    #[test]
    fn errors_and_cut_streams_are_reasons_and_refusals_say_so() {
        let error = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
        assert!(
            assemble(error.as_bytes())
                .unwrap_err()
                .contains("Overloaded")
        );
        let cut = "data: {\"type\":\"message_start\",\"message\":{\"type\":\"message\",\"content\":[]}}\n";
        assert!(
            assemble(cut.as_bytes())
                .unwrap_err()
                .contains("ended before")
        );
        let refusal = br#"{"type":"message","content":[],"stop_reason":"refusal","usage":{"input_tokens":1,"output_tokens":1}}"#;
        assert_eq!(
            parse_body(refusal).unwrap().message.content.as_deref(),
            Some(REFUSED)
        );
        let not = br#"{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}"#;
        assert_eq!(
            parse_body(not).unwrap_err(),
            "not a message, but an error: bad"
        );
    }
}
