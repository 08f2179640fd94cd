//! OpenAI Responses (`POST {base_url}/responses`), used statelessly: every request
//! carries the whole conversation as `input` items with `store: false`, reasoning items go
//! back with their `encrypted_content` (asked for with `include`), and
//! `previous_response_id` is never sent. The shapes are OpenAI's API reference
//! (summarised in docs/model-servers.md).
//!
//! The conversation maps as follows: the system messages before the first other message
//! become `instructions`; user and later system messages `message` items; an assistant
//! message its reasoning items (as they came, from the THOUGHT's `passback`), an assistant
//! `message` item with its text and a `function_call` item per call, in the answer's order;
//! tool messages `function_call_output` items. A `function_call` goes back with its server
//! id (`fc_…`) when its answer's reasoning items go back too, so that the service can tell
//! when one is missing; item `status` is never sent.

use delta_scenario::ModelApi;
use serde_json::{Value, json};

use super::{Parts, WireRequest, function_parts};
use crate::llm::message::{AssistantMessage, ChatMessage, ToolCall};
use crate::llm::response::{ParsedBody, TokenUsage, count, error_text};
use crate::llm::stream::{Data, data};

/// Parameters the Responses API takes (O-SDK `response_create_params.py`) that an agent
/// may set; `max_tokens` and `reasoning_effort` are chat's, translated.
pub(super) const PARAMETERS: &[&str] = &[
    "max_tokens",
    "max_output_tokens",
    "temperature",
    "top_p",
    "top_logprobs",
    "tool_choice",
    "parallel_tool_calls",
    "reasoning",
    "reasoning_effort",
    "include",
    "stream",
    "metadata",
    "prompt_cache_key",
    "prompt_cache_retention",
    "safety_identifier",
    "service_tier",
    "text",
    "truncation",
    "user",
    "max_tool_calls",
];

/// Keys the engine owns or translates.
const ENGINE_KEYS: [&str; 10] = [
    "model",
    "input",
    "instructions",
    "tools",
    "store",
    "include",
    "previous_response_id",
    "max_tokens",
    "reasoning_effort",
    "reasoning",
];

/// What `include` asks for so that reasoning can go back statelessly (O-SDK: "enables
/// reasoning items to be used in multi-turn conversations when using the Responses API
/// statelessly").
const ENCRYPTED_REASONING: &str = "reasoning.encrypted_content";

/// The item fields a reasoning item goes back without: `status` is refused by some
/// backends on input items (digest §D2 rule 20).
const NOT_SENT_BACK: [&str; 1] = ["status"];

pub(super) fn body(request: &WireRequest<'_>) -> Value {
    let params = request.params;
    let mut body = request.passthrough(&ENGINE_KEYS);
    if let Some(max) = params.get("max_output_tokens").or(params.get("max_tokens")) {
        body.insert("max_output_tokens".into(), max.clone());
    }
    let mut reasoning = params.get("reasoning").cloned();
    if let Some(effort) = params.get("reasoning_effort") {
        let reasoning = reasoning.get_or_insert_with(|| json!({}));
        if reasoning.get("effort").is_none() {
            reasoning["effort"] = effort.clone();
        }
    }
    let mut include: Vec<Value> = params
        .get("include")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(reasoning) = reasoning {
        // A model that does not reason refuses encrypted reasoning ("Encrypted content is
        // not supported with this model."), so it is asked for only with `reasoning`.
        if !include.iter().any(|entry| entry == ENCRYPTED_REASONING) {
            include.push(ENCRYPTED_REASONING.into());
        }
        body.insert("reasoning".into(), reasoning);
    }
    if !include.is_empty() {
        body.insert("include".into(), Value::Array(include));
    }
    body.insert("store".into(), false.into());
    let leading = request
        .messages
        .iter()
        .take_while(|message| matches!(message, ChatMessage::System { .. }))
        .count();
    let instructions: Vec<&str> = request.messages[..leading]
        .iter()
        .filter_map(|message| match message {
            ChatMessage::System { content } => Some(content.as_str()),
            ChatMessage::User { .. } | ChatMessage::Assistant(_) | ChatMessage::Tool { .. } => None,
        })
        .collect();
    if !instructions.is_empty() {
        body.insert("instructions".into(), instructions.join("\n\n").into());
    }
    let mut input = Vec::new();
    for message in &request.messages[leading..] {
        match message {
            ChatMessage::System { content } => {
                input.push(json!({"type": "message", "role": "system", "content": content}));
            }
            ChatMessage::User { content } => {
                input.push(json!({"type": "message", "role": "user", "content": content}));
            }
            ChatMessage::Assistant(assistant) => input.extend(assistant_items(assistant)),
            ChatMessage::Tool {
                tool_call_id,
                content,
                ..
            } => input.push(json!({
                "type": "function_call_output",
                "call_id": tool_call_id,
                "output": content,
            })),
        }
    }
    body.insert("input".into(), Value::Array(input));
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|tool| {
                let (name, description, parameters) = function_parts(tool);
                let mut tool = json!({
                    "type": "function",
                    "name": name,
                    "parameters": parameters,
                    // Sent explicitly: its default is not stated (digest §E), and strict
                    // schemas need every property required, which agents' are not.
                    "strict": false,
                });
                if !description.is_null() {
                    tool["description"] = description.clone();
                }
                tool
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        body.entry("tool_choice").or_insert_with(|| "auto".into());
    }
    if let Some(key) = &request.options.cache_key {
        body.entry("prompt_cache_key")
            .or_insert_with(|| key.as_str().into());
    }
    Value::Object(body)
}

fn function_call(call: &ToolCall, id: Option<&Value>) -> Value {
    let mut item = json!({
        "type": "function_call",
        "call_id": call.id,
        "name": call.name,
        "arguments": call.request_arguments(),
    });
    if let Some(id) = id {
        item["id"] = id.clone();
    }
    item
}

/// An assistant turn's items: its reasoning items as they came and its message and calls
/// where the passback's markers put them; what no marker places comes after, the message
/// first. Reasoning items without `encrypted_content` cannot be resolved when nothing is
/// stored, so they stay out, and the calls then go without their ids.
fn assistant_items(assistant: &AssistantMessage) -> Vec<Value> {
    let items = assistant
        .passback
        .as_ref()
        .filter(|passback| passback.api == ModelApi::Responses)
        .map_or(&[][..], |passback| &passback.items);
    let reasoning = || items.iter().filter(|item| item["type"] == "reasoning");
    let whole = reasoning().all(|item| item["encrypted_content"].is_string());
    let message = assistant
        .content
        .as_deref()
        .filter(|text| !text.is_empty())
        .map(|text| json!({"type": "message", "role": "assistant", "content": text}));
    let mut out = Vec::new();
    let mut message_placed = false;
    let mut placed: Vec<&str> = Vec::new();
    for item in items {
        match item["type"].as_str() {
            Some("reasoning") if whole => {
                let mut item = item.clone();
                if let Some(fields) = item.as_object_mut() {
                    for field in NOT_SENT_BACK {
                        fields.remove(field);
                    }
                }
                out.push(item);
            }
            Some("message") if !message_placed => {
                out.extend(message.clone());
                message_placed = true;
            }
            Some("function_call") => {
                let call_id = item["call_id"].as_str().unwrap_or_default();
                if let Some(call) = assistant.tool_calls.iter().find(|c| c.id == call_id) {
                    out.push(function_call(call, whole.then_some(&item["id"])));
                    placed.push(call_id);
                }
            }
            Some(_) | None => {}
        }
    }
    if !message_placed {
        out.extend(message);
    }
    out.extend(
        assistant
            .tool_calls
            .iter()
            .filter(|call| !placed.contains(&call.id.as_str()))
            .map(|call| function_call(call, None)),
    );
    out
}

/// Parses a `response` body (O-SDK `types/responses/response.py`).
pub(super) fn parse_body(body: &[u8]) -> Result<ParsedBody, String> {
    let response: Value =
        serde_json::from_slice(body).map_err(|error| format!("not JSON: {error}"))?;
    if response["object"] != "response" {
        return Err(
            match response.get("error").filter(|error| !error.is_null()) {
                Some(error) => format!("not a response, but an error: {}", error_text(error)),
                None => "not a response (no `object: response`)".to_owned(),
            },
        );
    }
    let status = response["status"].as_str().unwrap_or_default();
    if status == "failed" {
        return Err(format!(
            "the response failed: {}",
            error_text(&response["error"])
        ));
    }
    let output = response["output"]
        .as_array()
        .ok_or_else(|| "the response has no `output` array".to_owned())?;
    let mut parts = Parts::default();
    for (index, item) in output.iter().enumerate() {
        match item["type"].as_str() {
            Some("message") => {
                for part in item["content"].as_array().into_iter().flatten() {
                    match part["type"].as_str() {
                        Some("output_text") => {
                            parts.texts.push(part["text"].as_str().unwrap_or_default());
                        }
                        Some("refusal") => {
                            parts
                                .texts
                                .push(part["refusal"].as_str().unwrap_or_default());
                        }
                        Some(_) | None => {}
                    }
                }
                parts.items.push(json!({"type": "message"}));
            }
            Some("function_call") => {
                let call_id = item["call_id"]
                    .as_str()
                    .ok_or_else(|| format!("output item {index} (function_call) has no call_id"))?;
                let name = item["name"]
                    .as_str()
                    .ok_or_else(|| format!("output item {index} (function_call) has no name"))?;
                parts.tool_calls.push(ToolCall {
                    id: call_id.to_owned(),
                    name: name.to_owned(),
                    arguments: item["arguments"].as_str().unwrap_or("{}").to_owned(),
                });
                parts
                    .items
                    .push(json!({"type": "function_call", "id": item["id"], "call_id": call_id}));
            }
            Some("reasoning") => {
                for summary in item["summary"].as_array().into_iter().flatten() {
                    parts
                        .reasoning
                        .push(summary["text"].as_str().unwrap_or_default());
                }
                parts.items.push(item.clone());
                parts.opaque = true;
            }
            // Built-in tools' items: not the engine's to answer.
            Some(_) | None => {}
        }
    }
    let reason = response["incomplete_details"]["reason"].as_str();
    let finish_reason = match (status, reason) {
        ("incomplete", Some(reason)) => format!("incomplete: {reason}"),
        (status, _) => status.to_owned(),
    };
    Ok(ParsedBody {
        message: parts.message(ModelApi::Responses),
        usage: usage(&response["usage"]),
        model: response["model"].as_str().map(str::to_owned),
        truncated: status == "incomplete" && reason == Some("max_output_tokens"),
        finish_reason: (!finish_reason.is_empty()).then_some(finish_reason),
    })
}

/// The Responses API's usage: `cached_tokens` part of `input_tokens` (B2),
/// `reasoning_tokens` part of `output_tokens`.
fn usage(usage: &Value) -> Option<TokenUsage> {
    let prompt_tokens = count(usage, &["input_tokens"])?;
    let completion_tokens = count(usage, &["output_tokens"])?;
    Some(TokenUsage {
        prompt_tokens,
        completion_tokens,
        total_tokens: count(usage, &["total_tokens"])
            .unwrap_or(prompt_tokens.saturating_add(completion_tokens)),
        cached_tokens: count(usage, &["input_tokens_details", "cached_tokens"])
            .unwrap_or(0)
            .min(prompt_tokens),
        cache_write_tokens: count(usage, &["input_tokens_details", "cache_write_tokens"])
            .unwrap_or(0),
        reasoning_tokens: count(usage, &["output_tokens_details", "reasoning_tokens"]),
    })
}

/// The `response` the events describe: the terminal event's (`response.completed`,
/// `response.incomplete`, `response.failed`), its output rebuilt from the
/// `response.output_item.done` events when the terminal one leaves it empty (their items
/// carry the whole `encrypted_content`, the `added` ones may not, O-SDK).
pub(super) fn assemble(events: &[u8]) -> Result<Vec<u8>, String> {
    let mut done_items: Vec<(u64, Value)> = Vec::new();
    let mut terminal: Option<Value> = None;
    for payload in data(events)? {
        let Data::Event(event) = payload else {
            continue;
        };
        match event["type"].as_str() {
            Some("response.output_item.done") => {
                done_items.push((
                    event["output_index"].as_u64().unwrap_or(0),
                    event["item"].clone(),
                ));
            }
            Some("response.completed" | "response.incomplete" | "response.failed") => {
                terminal = Some(event["response"].clone());
            }
            Some("error") => {
                return Err(format!(
                    "the stream reported an error: {}",
                    error_text(&event)
                ));
            }
            Some(_) | None => {}
        }
    }
    let mut response =
        terminal.ok_or("the event stream ended before the response did (no response.completed)")?;
    let empty = response["output"].as_array().is_none_or(Vec::is_empty);
    if empty && !done_items.is_empty() {
        done_items.sort_by_key(|(index, _)| *index);
        response["output"] = Value::Array(done_items.into_iter().map(|(_, item)| item).collect());
    }
    serde_json::to_vec(&response).map_err(|error| error.to_string())
}

/// The text a `response.output_text.delta` carries.
pub(super) fn text_piece(event: &Value) -> Option<String> {
    (event["type"] == "response.output_text.delta")
        .then(|| event["delta"].as_str().map(str::to_owned))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;

    use crate::llm::message::Passback;
    use crate::llm::wire::WireOptions;

    fn request_body(messages: &[ChatMessage], params: &Map<String, Value>) -> Value {
        let tools = vec![
            json!({"type": "function", "function": {"name": "ls", "description": "List.", "parameters": {"type": "object"}}}),
        ];
        WireRequest {
            api: ModelApi::Responses,
            model: "gpt-5",
            messages,
            tools: &tools,
            params,
            options: &WireOptions {
                cache_key: Some("delta-run".into()),
                ..WireOptions::default()
            },
        }
        .body()
    }

    /// The digest's B1.4 request, from the engine's conversation.
    #[test]
    fn the_conversation_becomes_instructions_and_input_items() {
        let reasoning = json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAB", "status": "completed"});
        let call = ToolCall {
            id: "call_1".into(),
            name: "ls".into(),
            arguments: r#"{"location":"Boston, MA"}"#.into(),
        };
        let messages = vec![
            ChatMessage::system("You are Delta."),
            ChatMessage::user("Weather in Boston?"),
            ChatMessage::Assistant(AssistantMessage {
                content: None,
                tool_calls: vec![call],
                reasoning: None,
                passback: Some(Passback {
                    api: ModelApi::Responses,
                    items: vec![
                        reasoning,
                        json!({"type": "function_call", "id": "fc_1", "call_id": "call_1"}),
                    ],
                }),
            }),
            ChatMessage::tool("call_1", "{\"temp\":15}"),
        ];
        let mut params = Map::new();
        params.insert("reasoning_effort".into(), json!("medium"));
        params.insert("max_tokens".into(), json!(8192));
        assert_eq!(
            request_body(&messages, &params),
            json!({
                "model": "gpt-5",
                "instructions": "You are Delta.",
                "input": [
                    {"type": "message", "role": "user", "content": "Weather in Boston?"},
                    {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAB"},
                    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "ls", "arguments": "{\"location\":\"Boston, MA\"}"},
                    {"type": "function_call_output", "call_id": "call_1", "output": "{\"temp\":15}"},
                ],
                "tools": [{"type": "function", "name": "ls", "description": "List.", "parameters": {"type": "object"}, "strict": false}],
                "tool_choice": "auto",
                "store": false,
                "include": ["reasoning.encrypted_content"],
                "reasoning": {"effort": "medium"},
                "max_output_tokens": 8192,
                "prompt_cache_key": "delta-run",
            })
        );
    }

    #[test]
    fn reasoning_without_encrypted_content_stays_out_and_its_calls_lose_their_ids() {
        let assistant = AssistantMessage {
            content: Some("Let me look.".into()),
            tool_calls: vec![ToolCall {
                id: "call_1".into(),
                name: "ls".into(),
                arguments: "not json".into(),
            }],
            reasoning: None,
            passback: Some(Passback {
                api: ModelApi::Responses,
                items: vec![
                    json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": null}),
                    json!({"type": "message"}),
                    json!({"type": "function_call", "id": "fc_1", "call_id": "call_1"}),
                ],
            }),
        };
        assert_eq!(
            assistant_items(&assistant),
            vec![
                json!({"type": "message", "role": "assistant", "content": "Let me look."}),
                json!({"type": "function_call", "call_id": "call_1", "name": "ls", "arguments": "{}"}),
            ]
        );
        let body = request_body(&[ChatMessage::user("hi")], &Map::new());
        assert!(
            body.get("include").is_none(),
            "no reasoning asked for, none included"
        );
    }

    #[test]
    fn answers_and_streams_are_parsed_with_their_reasoning_and_usage() {
        let response = json!({
            "id": "resp_1", "object": "response", "status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"}, "model": "gpt-5",
            "output": [
                {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Plan."}], "encrypted_content": "enc", "status": "completed"},
                {"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": "Hi", "annotations": []}]},
            ],
            "usage": {"input_tokens": 2000, "input_tokens_details": {"cached_tokens": 1920}, "output_tokens": 30, "output_tokens_details": {"reasoning_tokens": 20}, "total_tokens": 2030},
        });
        let parsed = parse_body(response.to_string().as_bytes()).unwrap();
        assert!(parsed.truncated);
        assert_eq!(
            parsed.finish_reason.as_deref(),
            Some("incomplete: max_output_tokens")
        );
        assert_eq!(parsed.message.content.as_deref(), Some("Hi"));
        assert_eq!(parsed.message.reasoning.as_deref(), Some("Plan."));
        assert_eq!(
            parsed.message.passback.as_ref().unwrap().items[0]["encrypted_content"],
            "enc"
        );
        assert_eq!(
            parsed.usage,
            Some(TokenUsage {
                prompt_tokens: 2000,
                completion_tokens: 30,
                total_tokens: 2030,
                cached_tokens: 1920,
                cache_write_tokens: 0,
                reasoning_tokens: Some(20),
            })
        );
        let mut terminal = response.clone();
        terminal["output"] = json!([]);
        let stream = format!(
            "event: response.created\ndata: {}\n\nevent: response.output_item.done\ndata: {}\n\nevent: response.output_item.done\ndata: {}\n\nevent: response.incomplete\ndata: {}\n\n",
            json!({"type": "response.created", "sequence_number": 0, "response": {"status": "in_progress"}}),
            json!({"type": "response.output_item.done", "sequence_number": 1, "output_index": 1, "item": response["output"][1]}),
            json!({"type": "response.output_item.done", "sequence_number": 2, "output_index": 0, "item": response["output"][0]}),
            json!({"type": "response.incomplete", "sequence_number": 3, "response": terminal}),
        );
        let assembled: Value =
            serde_json::from_slice(&assemble(stream.as_bytes()).unwrap()).unwrap();
        assert_eq!(assembled, response);
        assert!(
            assemble(b"data: {\"type\":\"response.created\"}\n")
                .unwrap_err()
                .contains("ended before")
        );
    }
}
