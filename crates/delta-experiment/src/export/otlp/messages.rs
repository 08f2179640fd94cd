//! The content attributes of a `chat` span in the shapes the GenAI semantic conventions
//! give them (gen-ai-input-messages.json, gen-ai-output-messages.json): the messages the
//! request carried, rebuilt from `io/invocations/ID/request.json` (the exact bytes sent),
//! and the answer, from its THOUGHT, with the finish reason every output message needs.

use serde_json::{Value, json};

use delta_engine::journal::Thought;
use delta_engine::llm::ModelApi;
use delta_engine::run::RunPaths;
use delta_engine::trajectory::LlmCall;

/// The request body of invocation `id`, when it is readable JSON.
pub(super) fn read_request(paths: &RunPaths, id: &str) -> Option<Value> {
    read_json(&paths.invocation_request(id))
}

/// The `id` the server gave its answer (`chatcmpl-…`), when it did.
pub(super) fn response_id(paths: &RunPaths, id: &str) -> Option<String> {
    read_json(&paths.invocation_response(id))?
        .get("id")?
        .as_str()
        .map(str::to_owned)
}

fn read_json(path: &std::path::Path) -> Option<Value> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// `gen_ai.input.messages` of a request to `api`: each message with its role and parts
/// (`text`, `reasoning`, `tool_call`, `tool_call_response`), in the order sent. None when
/// the request is not of that API's shape.
pub(super) fn input_messages(request: &Value, api: ModelApi) -> Option<Value> {
    match api {
        ModelApi::Chat => chat_input(request),
        ModelApi::Anthropic => anthropic_input(request),
        ModelApi::Responses => responses_input(request),
    }
}

/// Chat Completions: `messages`, tool results as `tool` messages.
fn chat_input(request: &Value) -> Option<Value> {
    let messages = request.get("messages")?.as_array()?;
    Some(Value::Array(
        messages
            .iter()
            .map(|message| {
                let role = message
                    .get("role")
                    .and_then(Value::as_str)
                    .unwrap_or("user");
                let mut parts = Vec::new();
                if role == "tool" {
                    parts.push(tool_response_part(
                        message.get("tool_call_id"),
                        message.get("content"),
                    ));
                } else {
                    parts.extend(text_part(&text_of(message.get("content"))));
                    for call in array(message.get("tool_calls")) {
                        let function = call.get("function");
                        parts.push(tool_call_part(
                            str_of(call.get("id")),
                            str_of(function.and_then(|f| f.get("name"))),
                            str_of(function.and_then(|f| f.get("arguments"))),
                        ));
                    }
                }
                json!({"role": role, "parts": parts})
            })
            .collect(),
    ))
}

/// Anthropic Messages: the top-level `system`, then `messages` of content blocks; a user
/// turn of tool results alone is the conventions' `tool` message.
fn anthropic_input(request: &Value) -> Option<Value> {
    let messages = request.get("messages")?.as_array()?;
    let mut out = Vec::new();
    let system = text_of(request.get("system"));
    if !system.is_empty() {
        out.push(json!({"role": "system", "parts": [{"type": "text", "content": system}]}));
    }
    for message in messages {
        let role = message
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or("user");
        let blocks = match message.get("content") {
            Some(Value::Array(blocks)) => blocks.iter().collect(),
            Some(text @ Value::String(_)) => vec![text],
            Some(Value::Null | Value::Bool(_) | Value::Number(_) | Value::Object(_)) | None => {
                Vec::new()
            }
        };
        let parts: Vec<Value> = blocks
            .into_iter()
            .filter_map(|block| match block {
                Value::String(text) => text_part(text),
                Value::Null
                | Value::Bool(_)
                | Value::Number(_)
                | Value::Array(_)
                | Value::Object(_) => anthropic_part(block),
            })
            .collect();
        let all_results = !parts.is_empty()
            && parts
                .iter()
                .all(|part| part["type"] == "tool_call_response");
        let role = if all_results { "tool" } else { role };
        out.push(json!({"role": role, "parts": parts}));
    }
    Some(Value::Array(out))
}

/// One Messages content block as a part; None for blocks without readable content
/// (redacted thinking, images).
fn anthropic_part(block: &Value) -> Option<Value> {
    match block.get("type").and_then(Value::as_str)? {
        "text" => text_part(str_of(block.get("text"))),
        "thinking" => {
            let thinking = str_of(block.get("thinking"));
            (!thinking.is_empty()).then(|| json!({"type": "reasoning", "content": thinking}))
        }
        "tool_use" => Some(json!({
            "type": "tool_call",
            "id": str_of(block.get("id")),
            "name": str_of(block.get("name")),
            "arguments": block.get("input").cloned().unwrap_or_else(|| json!({})),
        })),
        "tool_result" => Some(tool_response_part(
            block.get("tool_use_id"),
            block.get("content"),
        )),
        _ => None,
    }
}

/// OpenAI Responses: `instructions`, then the `input` items; consecutive function calls
/// make one assistant message, each `function_call_output` a `tool` message.
fn responses_input(request: &Value) -> Option<Value> {
    let input = request.get("input")?;
    let mut out = Vec::new();
    let instructions = text_of(request.get("instructions"));
    if !instructions.is_empty() {
        out.push(json!({"role": "system", "parts": [{"type": "text", "content": instructions}]}));
    }
    if let Some(text) = input.as_str() {
        out.push(json!({"role": "user", "parts": text_part(text).into_iter().collect::<Vec<_>>()}));
        return Some(Value::Array(out));
    }
    for item in input.as_array()? {
        let (role, part) = match item.get("type").and_then(Value::as_str) {
            Some("function_call") => (
                "assistant",
                Some(tool_call_part(
                    str_of(item.get("call_id")),
                    str_of(item.get("name")),
                    str_of(item.get("arguments")),
                )),
            ),
            Some("function_call_output") => (
                "tool",
                Some(tool_response_part(item.get("call_id"), item.get("output"))),
            ),
            Some("reasoning") => {
                let summary: Vec<&str> = array(item.get("summary"))
                    .filter_map(|part| part.get("text").and_then(Value::as_str))
                    .collect();
                let summary = summary.join("\n");
                (
                    "assistant",
                    (!summary.is_empty()).then(|| json!({"type": "reasoning", "content": summary})),
                )
            }
            Some("message") | None => (
                item.get("role").and_then(Value::as_str).unwrap_or("user"),
                text_part(&text_of(item.get("content"))),
            ),
            Some(_) => continue,
        };
        let Some(part) = part else { continue };
        match out.last_mut() {
            // An assistant turn's reasoning, text and calls come as separate items.
            Some(last) if role == "assistant" && last["role"] == "assistant" => {
                if let Some(parts) = last["parts"].as_array_mut() {
                    parts.push(part);
                }
            }
            Some(_) | None => out.push(json!({"role": role, "parts": [part]})),
        }
    }
    Some(Value::Array(out))
}

/// A `text` part, unless the text is empty.
fn text_part(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"type": "text", "content": text}))
}

/// A `tool_call_response` part for call `id` answered with `content`.
fn tool_response_part(id: Option<&Value>, content: Option<&Value>) -> Value {
    json!({
        "type": "tool_call_response",
        "id": id.cloned().unwrap_or(Value::Null),
        "response": text_of(content),
    })
}

fn str_of(value: Option<&Value>) -> &str {
    value.and_then(Value::as_str).unwrap_or_default()
}

fn array(value: Option<&Value>) -> impl Iterator<Item = &Value> {
    value.and_then(Value::as_array).into_iter().flatten()
}

/// A message's `content`: a string, or the text of an array of parts.
fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Some(Value::Null | Value::Bool(_) | Value::Number(_) | Value::Object(_)) | None => {
            String::new()
        }
    }
}

/// A `tool_call` part: the arguments as the JSON they are when they parse, else as text.
fn tool_call_part(id: &str, name: &str, arguments: &str) -> Value {
    let arguments =
        serde_json::from_str::<Value>(arguments).unwrap_or_else(|_| Value::from(arguments));
    json!({"type": "tool_call", "id": id, "name": name, "arguments": arguments})
}

/// `gen_ai.output.messages` of an answered call: one assistant message (the engine asks
/// for one choice) with its reasoning, text and tool calls, and `finish_reason`.
pub(super) fn output_messages(thought: &Thought, finish_reason: &str) -> Value {
    let mut parts = Vec::new();
    if let Some(reasoning) = thought.reasoning.as_deref().filter(|r| !r.is_empty()) {
        parts.push(json!({"type": "reasoning", "content": reasoning}));
    }
    if !thought.content.is_empty() || thought.tool_calls.is_empty() {
        parts.push(json!({"type": "text", "content": thought.content}));
    }
    for call in &thought.tool_calls {
        parts.push(tool_call_part(&call.id, &call.name, &call.arguments));
    }
    json!([{"role": "assistant", "parts": parts, "finish_reason": finish_reason}])
}

/// The finish reason of an answered call in the conventions' words (`stop`, `length`,
/// `content_filter`, `tool_call`): OpenAI's `tool_calls` and `function_call` are
/// `tool_call`; a server that gave none is judged by the answer.
pub(super) fn finish_reason(call: Option<&LlmCall>, thought: &Thought) -> String {
    match call.and_then(|c| c.finish_reason.as_deref()) {
        Some("tool_calls" | "function_call") => "tool_call".to_owned(),
        Some(reason) if !reason.is_empty() => reason.to_owned(),
        Some(_) | None if thought.tool_calls.is_empty() => "stop".to_owned(),
        Some(_) | None => "tool_call".to_owned(),
    }
}

/// `error.type` of a call that brought no answer: the HTTP status a server refused it
/// with, `timeout`, `cancelled`, `connection_error`, `malformed_response`, else the
/// conventions' fallback `_OTHER`.
pub(super) fn error_type(call: &LlmCall) -> String {
    let error = call.error.as_deref().unwrap_or_default();
    if call.status.as_deref() == Some("CANCELLED") || error.starts_with("cancelled") {
        return "cancelled".to_owned();
    }
    if let Some(status) = error
        .split("answered HTTP ")
        .nth(1)
        .and_then(|rest| rest.get(..3))
        .filter(|code| code.chars().all(|c| c.is_ascii_digit()))
    {
        return if error.contains("not a chat completion") {
            "malformed_response".to_owned()
        } else {
            status.to_owned()
        };
    }
    if error.contains("did not respond within") {
        "timeout".to_owned()
    } else if error.starts_with("cannot reach") {
        "connection_error".to_owned()
    } else {
        "_OTHER".to_owned()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use delta_engine::journal::ToolCall;

    #[test]
    fn a_request_becomes_input_messages_with_roles_and_parts() {
        let request = json!({"messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "List files"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{\"d\":\".\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
        ]});
        assert_eq!(
            input_messages(&request, ModelApi::Chat).unwrap(),
            json!([
                {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
                {"role": "user", "parts": [{"type": "text", "content": "List files"}]},
                {"role": "assistant", "parts": [
                    {"type": "tool_call", "id": "c1", "name": "ls", "arguments": {"d": "."}}
                ]},
                {"role": "tool", "parts": [
                    {"type": "tool_call_response", "id": "c1", "response": "a.txt"}
                ]},
            ])
        );
        assert_eq!(input_messages(&json!({"input": []}), ModelApi::Chat), None);
    }

    /// The conversation both APIs' tests send, in the conventions' shape: a system prompt,
    /// a question, an answer with its reasoning and a call `id`, and the call's result.
    fn listing_conversation(id: &str) -> Vec<Value> {
        vec![
            json!({"role": "system", "parts": [{"type": "text", "content": "Be brief."}]}),
            json!({"role": "user", "parts": [{"type": "text", "content": "List files"}]}),
            json!({"role": "assistant", "parts": [
                {"type": "reasoning", "content": "ls will do"},
                {"type": "text", "content": "Listing."},
                {"type": "tool_call", "id": id, "name": "ls", "arguments": {"d": "."}}
            ]}),
            json!({"role": "tool", "parts": [
                {"type": "tool_call_response", "id": id, "response": "a.txt"}
            ]}),
        ]
    }

    #[test]
    fn an_anthropic_request_keeps_its_system_thinking_calls_and_results() {
        let request = json!({
            "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "List files"}]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "ls will do", "signature": "sig"},
                    {"type": "text", "text": "Listing."},
                    {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {"d": "."}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}
                ]},
                {"role": "user", "content": "Thanks"},
            ]
        });
        let mut expected = listing_conversation("toolu_1");
        expected.push(json!({"role": "user", "parts": [{"type": "text", "content": "Thanks"}]}));
        assert_eq!(
            input_messages(&request, ModelApi::Anthropic).unwrap(),
            Value::Array(expected)
        );
        assert_eq!(
            input_messages(&json!({"input": []}), ModelApi::Anthropic),
            None
        );
    }

    #[test]
    fn a_responses_request_keeps_its_instructions_calls_and_outputs() {
        let request = json!({
            "instructions": "Be brief.",
            "input": [
                {"type": "message", "role": "user", "content": "List files"},
                {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "ls will do"}], "encrypted_content": "gAAA"},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Listing."}]},
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "ls", "arguments": "{\"d\":\".\"}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"},
            ]
        });
        assert_eq!(
            input_messages(&request, ModelApi::Responses).unwrap(),
            Value::Array(listing_conversation("call_1"))
        );
        assert_eq!(
            input_messages(&json!({"input": "Hi"}), ModelApi::Responses).unwrap(),
            json!([{"role": "user", "parts": [{"type": "text", "content": "Hi"}]}])
        );
        assert_eq!(
            input_messages(&json!({"messages": []}), ModelApi::Responses),
            None
        );
    }

    #[test]
    fn every_output_message_has_a_finish_reason_in_the_conventions_words() {
        let thought = Thought {
            content: "Looking.".into(),
            llm_invocation_ref: "i".into(),
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: "ls".into(),
                arguments: "{\"d\": \".\"}".into(),
            }],
            reasoning: None,
            passback: None,
            usage: None,
        };
        let call = LlmCall {
            finish_reason: Some("tool_calls".into()),
            ..LlmCall::default()
        };
        let reason = finish_reason(Some(&call), &thought);
        assert_eq!(reason, "tool_call");
        assert_eq!(
            output_messages(&thought, &reason),
            json!([{"role": "assistant", "parts": [
                {"type": "text", "content": "Looking."},
                {"type": "tool_call", "id": "c1", "name": "ls", "arguments": {"d": "."}},
            ], "finish_reason": "tool_call"}])
        );
        let plain = Thought {
            tool_calls: Vec::new(),
            ..thought
        };
        assert_eq!(finish_reason(None, &plain), "stop");
    }

    #[test]
    fn error_types_are_low_cardinality() {
        let failed = |error: &str| LlmCall {
            status: Some("FAILED".into()),
            error: Some(error.into()),
            ..LlmCall::default()
        };
        for (error, expected) in [
            (
                "the LLM API at http://x answered HTTP 401: no (1 attempt(s)); hint",
                "401",
            ),
            (
                "the LLM API at http://x did not respond within 1s (2 attempt(s))",
                "timeout",
            ),
            (
                "cannot reach the LLM API at http://x (5 attempt(s); last: refused)",
                "connection_error",
            ),
            (
                "the LLM API at http://x answered HTTP 200 with a body that is not a chat completion (x)",
                "malformed_response",
            ),
            ("something else", "_OTHER"),
        ] {
            assert_eq!(error_type(&failed(error)), expected, "{error}");
        }
        let cancelled = LlmCall {
            status: Some("CANCELLED".into()),
            ..LlmCall::default()
        };
        assert_eq!(error_type(&cancelled), "cancelled");
    }
}
