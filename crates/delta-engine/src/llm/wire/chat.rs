//! Chat completions (`POST {base_url}/chat/completions`): the request body, the
//! `chat.completion` parsed, its `chat.completion.chunk` stream reassembled. What every
//! OpenAI-compatible server accepts is in docs/model-servers.md.

use delta_scenario::ModelApi;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{WireOptions, WireRequest};
use crate::llm::message::{AssistantMessage, ChatMessage, Passback, ToolCall};
use crate::llm::response::{ParsedBody, TokenUsage, count, error_text};
use crate::llm::stream::{Data, data};

/// Keys the engine owns; a passthrough parameter cannot replace them.
const RESERVED_KEYS: [&str; 3] = ["model", "messages", "tools"];

/// `tool_choice` sent with tools unless the agent's `llm.tool_choice` says otherwise.
/// It is OpenAI's default anyway, but llama-cpp-python's function-calling chat formats
/// offer the tools to the model only when `tool_choice` is set: without it the model
/// never sees them.
const DEFAULT_TOOL_CHOICE: &str = "auto";

/// Assistant-message fields some servers need back verbatim (`llm.reasoning_passback`):
/// OpenRouter's `reasoning_details`, LiteLLM's `thinking_blocks` for Anthropic models.
/// They are kept from every answer (THOUGHT's `passback`) and sent only when asked for.
const OPAQUE_FIELDS: [&str; 2] = ["reasoning_details", "thinking_blocks"];

/// The field DeepSeek (and vLLM, llama.cpp) return reasoning in; sent back from THOUGHT's
/// `reasoning` when `llm.reasoning_passback` names it.
pub(crate) const REASONING_CONTENT: &str = "reasoning_content";

/// Builds a chat-completions request body with the default options.
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
    body(&WireRequest {
        api: ModelApi::Chat,
        model,
        messages,
        tools,
        params,
        options: &WireOptions::default(),
    })
}

pub(super) fn body(request: &WireRequest<'_>) -> Value {
    let mut body: Map<String, Value> = request
        .params
        .iter()
        .filter(|(key, _)| !RESERVED_KEYS.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    body.insert("model".into(), request.model.into());
    let passback = &request.options.reasoning_passback;
    let messages = request
        .messages
        .iter()
        .map(|message| match message {
            ChatMessage::Assistant(assistant) if !passback.is_empty() => {
                with_passback(message.to_json(), assistant, passback)
            }
            ChatMessage::System { .. }
            | ChatMessage::User { .. }
            | ChatMessage::Assistant(_)
            | ChatMessage::Tool { .. } => message.to_json(),
        })
        .collect();
    body.insert("messages".into(), Value::Array(messages));
    // Without it most servers send no usage in a stream, and the run's usage would be
    // unknown.
    if body.get("stream") == Some(&Value::Bool(true)) {
        body.entry("stream_options")
            .or_insert_with(|| json!({"include_usage": true}));
    }
    if !request.tools.is_empty() {
        body.insert("tools".into(), Value::Array(request.tools.to_vec()));
        body.entry("tool_choice")
            .or_insert_with(|| DEFAULT_TOOL_CHOICE.into());
    }
    if let Some(key) = &request.options.cache_key {
        body.entry("prompt_cache_key")
            .or_insert_with(|| key.as_str().into());
    }
    Value::Object(body)
}

/// An assistant message with the fields `passback` names: `reasoning_content` from the
/// THOUGHT's reasoning (`""` when it had none: DeepSeek refuses a tool-call turn without
/// the key, digest §C1), the others as the answer carried them.
fn with_passback(mut wire: Value, assistant: &AssistantMessage, passback: &[String]) -> Value {
    let kept = assistant
        .passback
        .as_ref()
        .filter(|passback| passback.api == ModelApi::Chat)
        .and_then(|passback| passback.items.first());
    for field in passback {
        let value = if field == REASONING_CONTENT {
            Some(assistant.reasoning.clone().unwrap_or_default().into())
        } else {
            kept.and_then(|kept| kept.get(field)).cloned()
        };
        if let Some(value) = value {
            wire[field.as_str()] = value;
        }
    }
    wire
}

#[derive(Deserialize)]
struct WireResponse {
    model: Option<String>,
    choices: Option<Vec<WireChoice>>,
    /// Read leniently by [`usage`]: a malformed usage must not cost a good completion.
    usage: Option<Value>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct WireChoice {
    message: Option<WireMessage>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireMessage {
    content: Option<String>,
    refusal: Option<String>,
    tool_calls: Option<Vec<WireCall>>,
    reasoning_content: Option<String>,
    reasoning: Option<String>,
    reasoning_details: Option<Value>,
    thinking_blocks: Option<Value>,
}

#[derive(Deserialize)]
struct WireCall {
    id: Option<String>,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    arguments: Option<Value>,
}

/// `finish_reason` of a response that the token limit cut short.
const FINISH_REASON_LENGTH: &str = "length";

/// Parses a 2xx body. The error is a short reason for `LlmError::MalformedResponse`.
///
/// Leniencies, each seen in OpenAI-compatible servers: a tool call without an `id` gets
/// `call_{index}` (the engine echoes it back as `tool_call_id`, so it only has to be
/// unique within the message); `arguments` given as a JSON object instead of a string is
/// serialized back to text; a missing `arguments` is `{}`; a refusal with no content
/// becomes the content, so the user sees why the model declined.
pub(super) fn parse_body(body: &[u8]) -> Result<ParsedBody, String> {
    let wire: WireResponse = serde_json::from_slice(body).map_err(|error| {
        if error.is_syntax() || error.is_eof() {
            format!("not JSON: {error}")
        } else {
            format!("unexpected shape: {error}")
        }
    })?;

    let Some(choice) = wire.choices.and_then(|choices| choices.into_iter().next()) else {
        return Err(match wire.error {
            Some(error) => format!("no choices, but an error: {}", error_text(&error)),
            None => "no choices".to_owned(),
        });
    };
    let message = choice
        .message
        .ok_or_else(|| "the first choice has no message".to_owned())?;

    let tool_calls = message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(index, call)| {
            let arguments = match call.function.arguments {
                None | Some(Value::Null) => "{}".to_owned(),
                Some(Value::String(text)) => text,
                Some(value @ Value::Object(_)) => value.to_string(),
                Some(Value::Bool(_) | Value::Number(_) | Value::Array(_)) => {
                    return Err(format!(
                        "tool call {index} has arguments that are neither a string nor an object"
                    ));
                }
            };
            Ok(ToolCall {
                id: call.id.unwrap_or_else(|| format!("call_{index}")),
                name: call.function.name,
                arguments,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;

    let mut opaque = Map::new();
    for (field, value) in OPAQUE_FIELDS
        .into_iter()
        .zip([message.reasoning_details, message.thinking_blocks])
    {
        if let Some(value) = value.filter(|value| !value.is_null()) {
            opaque.insert(field.to_owned(), value);
        }
    }
    let passback = (!opaque.is_empty()).then(|| Passback {
        api: ModelApi::Chat,
        items: vec![Value::Object(opaque)],
    });
    let usage = wire.usage.as_ref().and_then(usage);
    Ok(ParsedBody {
        message: AssistantMessage {
            content: message.content.or(message.refusal),
            tool_calls,
            reasoning: message
                .reasoning_content
                .or(message.reasoning)
                .filter(|text| !text.is_empty()),
            passback,
        },
        usage,
        model: wire.model,
        truncated: choice.finish_reason.as_deref() == Some(FINISH_REASON_LENGTH),
        finish_reason: choice.finish_reason,
    })
}

/// The token counts of a `usage` object, or `None` (unknown) when the server sent none or
/// sent something else: a missing or malformed count is not a count of 0, and a completion
/// is worth keeping whatever its usage field looks like (issue 12, item 16). Cached tokens
/// are OpenAI's `prompt_tokens_details` (O-SDK `completion_usage.py`), part of
/// `prompt_tokens`.
fn usage(value: &Value) -> Option<TokenUsage> {
    let prompt_tokens = count(value, &["prompt_tokens"])?;
    let completion_tokens = count(value, &["completion_tokens"])?;
    Some(TokenUsage {
        prompt_tokens,
        completion_tokens,
        total_tokens: count(value, &["total_tokens"])
            .unwrap_or(prompt_tokens.saturating_add(completion_tokens)),
        cached_tokens: count(value, &["prompt_tokens_details", "cached_tokens"])
            .unwrap_or(0)
            .min(prompt_tokens),
        cache_write_tokens: count(value, &["prompt_tokens_details", "cache_write_tokens"])
            .unwrap_or(0),
        reasoning_tokens: count(value, &["completion_tokens_details", "reasoning_tokens"]),
    })
}

/// The completion the events describe: the first choice's content, reasoning and tool
/// calls (deltas joined in order, tool calls by their `index`), the last finish reason,
/// and the usage chunk (`stream_options.include_usage`) when one came.
pub(super) fn assemble(events: &[u8]) -> Result<Vec<u8>, String> {
    let mut head: Option<Value> = None;
    let mut content: Option<String> = None;
    let mut reasoning: Option<String> = None;
    let mut calls: Vec<Map<String, Value>> = Vec::new();
    let mut finish_reason = Value::Null;
    let mut usage = Value::Null;
    let mut done = false;
    for data in data(events)? {
        let chunk = match data {
            Data::Done => {
                done = true;
                break;
            }
            Data::Event(chunk) => chunk,
        };
        if let Some(error) = chunk.get("error") {
            return Err(format!(
                "the stream reported an error: {}",
                error_text(error)
            ));
        }
        if head.is_none() {
            head = Some(chunk.clone());
        }
        if chunk.get("usage").is_some_and(|u| !u.is_null()) {
            usage = chunk["usage"].clone();
        }
        let Some(choice) = first_choice(&chunk) else {
            continue;
        };
        if !choice["finish_reason"].is_null() {
            finish_reason = choice["finish_reason"].clone();
        }
        let delta = &choice["delta"];
        if let Some(piece) = delta["content"].as_str() {
            content.get_or_insert_with(String::new).push_str(piece);
        }
        for key in ["reasoning_content", "reasoning"] {
            if let Some(piece) = delta[key].as_str() {
                reasoning.get_or_insert_with(String::new).push_str(piece);
            }
        }
        for (position, call) in delta["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let index = call["index"]
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .unwrap_or(position);
            while calls.len() <= index {
                calls.push(Map::new());
            }
            let entry = &mut calls[index];
            if let Some(id) = call["id"].as_str().filter(|id| !id.is_empty()) {
                entry.insert("id".into(), id.into());
            }
            entry.insert("type".into(), "function".into());
            let function = entry
                .entry("function")
                .or_insert_with(|| json!({"name": "", "arguments": ""}));
            for key in ["name", "arguments"] {
                if let Some(piece) = call["function"][key].as_str() {
                    let joined = format!("{}{piece}", function[key].as_str().unwrap_or_default());
                    function[key] = joined.into();
                }
            }
        }
    }
    let Some(head) = head else {
        return Err("the event stream holds no completion chunk".to_owned());
    };
    if !done && finish_reason.is_null() {
        return Err("the event stream ended before the completion did".to_owned());
    }
    let mut message = json!({"role": "assistant", "content": content});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls.into_iter().map(Value::Object).collect());
    }
    if let Some(reasoning) = reasoning {
        message["reasoning_content"] = reasoning.into();
    }
    let mut completion = json!({
        "id": head["id"],
        "object": "chat.completion",
        "created": head["created"],
        "model": head["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    });
    if !usage.is_null() {
        completion["usage"] = usage;
    }
    serde_json::to_vec(&completion).map_err(|error| error.to_string())
}

/// The piece of the answer's text one chunk carries.
pub(super) fn text_piece(chunk: &Value) -> Option<String> {
    first_choice(chunk)?["delta"]["content"]
        .as_str()
        .map(str::to_owned)
}

/// The choice with index 0 of one chunk, when the chunk has one.
fn first_choice(chunk: &Value) -> Option<&Value> {
    chunk["choices"]
        .as_array()?
        .iter()
        .find(|c| c["index"].as_u64().unwrap_or(0) == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_ids_and_object_arguments_are_tolerated() {
        let body = br#"{"choices":[{"message":{"content":null,"tool_calls":[
            {"function":{"name":"ls","arguments":{"dir":"."}}},
            {"id":"x","type":"function","function":{"name":"pwd"}}
        ]},"finish_reason":"tool_calls"}]}"#;
        let parsed = parse_body(body).unwrap();
        assert_eq!(
            parsed.message.tool_calls,
            vec![
                ToolCall {
                    id: "call_0".into(),
                    name: "ls".into(),
                    arguments: r#"{"dir":"."}"#.into()
                },
                ToolCall {
                    id: "x".into(),
                    name: "pwd".into(),
                    arguments: "{}".into()
                },
            ]
        );
        assert_eq!(parsed.usage, None);
    }

    #[test]
    fn missing_or_malformed_usage_is_unknown_and_keeps_the_completion() {
        let with = |usage: &str| {
            let body = format!(r#"{{"choices":[{{"message":{{"content":"hi"}}}}]{usage}}}"#);
            let parsed = parse_body(body.as_bytes()).unwrap();
            assert_eq!(parsed.message.content.as_deref(), Some("hi"));
            parsed.usage
        };
        assert_eq!(with(""), None);
        assert_eq!(with(r#","usage":null"#), None);
        assert_eq!(with(r#","usage":"n/a""#), None);
        assert_eq!(
            with(r#","usage":{"prompt_tokens":"7","completion_tokens":2}"#),
            None
        );
        assert_eq!(
            with(r#","usage":{"prompt_tokens":-1,"completion_tokens":2}"#),
            None
        );
        assert_eq!(with(r#","usage":{"completion_tokens":2}"#), None);
        assert_eq!(
            with(r#","usage":{"prompt_tokens":7,"completion_tokens":2}"#),
            Some(TokenUsage {
                prompt_tokens: 7,
                completion_tokens: 2,
                total_tokens: 9,
                ..TokenUsage::default()
            })
        );
    }

    #[test]
    fn cached_and_reasoning_tokens_are_read_from_the_details() {
        let body = br#"{"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":2000,"completion_tokens":50,"prompt_tokens_details":{"cached_tokens":1920},"completion_tokens_details":{"reasoning_tokens":30}}}"#;
        assert_eq!(
            parse_body(body).unwrap().usage,
            Some(TokenUsage {
                prompt_tokens: 2000,
                completion_tokens: 50,
                total_tokens: 2050,
                cached_tokens: 1920,
                cache_write_tokens: 0,
                reasoning_tokens: Some(30),
            })
        );
    }

    #[test]
    fn refusal_becomes_content() {
        let body = br#"{"choices":[{"message":{"content":null,"refusal":"I can't"}}]}"#;
        assert_eq!(
            parse_body(body).unwrap().message.content.as_deref(),
            Some("I can't")
        );
    }

    #[test]
    fn shapes_that_are_not_completions_are_rejected_with_a_reason() {
        for (body, reason) in [
            (&b"<html>"[..], "not JSON"),
            (b"{}", "no choices"),
            (br#"{"choices":[]}"#, "no choices"),
            (
                br#"{"error":{"message":"quota"}}"#,
                "no choices, but an error: quota",
            ),
            (br#"{"choices":[{}]}"#, "the first choice has no message"),
            (
                br#"{"choices":[{"message":{"content":5}}]}"#,
                "unexpected shape",
            ),
            (
                br#"{"choices":[{"message":{"tool_calls":[{"function":{"name":"a","arguments":[1]}}]}}]}"#,
                "tool call 0 has arguments",
            ),
        ] {
            let error = parse_body(body).unwrap_err();
            assert!(error.starts_with(reason), "{error:?} should start with {reason:?}");
        }
    }

    #[test]
    fn opaque_reasoning_fields_are_kept_and_sent_back_only_when_named() {
        let answer = br#"{"choices":[{"message":{"content":"","reasoning_content":"think","reasoning_details":[{"type":"reasoning.encrypted","data":"Zm9v"}],"tool_calls":[{"id":"c","type":"function","function":{"name":"ls","arguments":"{}"}}]}}]}"#;
        let message = parse_body(answer).unwrap().message;
        let assistant = ChatMessage::Assistant(message);
        let options = |fields: &[&str]| WireOptions {
            reasoning_passback: fields.iter().map(|f| (*f).to_owned()).collect(),
            ..WireOptions::default()
        };
        let sent = |options: &WireOptions| {
            body(&WireRequest {
                api: ModelApi::Chat,
                model: "m",
                messages: std::slice::from_ref(&assistant),
                tools: &[],
                params: &Map::new(),
                options,
            })["messages"][0]
                .clone()
        };
        let plain = sent(&options(&[]));
        assert!(plain.get("reasoning_content").is_none());
        assert!(plain.get("reasoning_details").is_none());
        let back = sent(&options(&["reasoning_content", "reasoning_details"]));
        assert_eq!(back["reasoning_content"], "think");
        assert_eq!(
            back["reasoning_details"],
            json!([{"type": "reasoning.encrypted", "data": "Zm9v"}])
        );
    }

    #[test]
    fn deltas_are_joined_and_tool_calls_reassembled_by_index() {
        let events = concat!(
            ": ping\n\n",
            "data: {\"id\":\"c\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"think\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"ls\",\"arguments\":\"\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"b\",\"function\":{\"name\":\"cat\",\"arguments\":\"{}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"d\\\":\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"1}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}\n\n",
            "data: [DONE]\n\n",
        );
        let body: Value = serde_json::from_slice(&assemble(events.as_bytes()).unwrap()).unwrap();
        assert_eq!(
            body,
            json!({"id": "c", "object": "chat.completion", "created": 1, "model": "m",
                   "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                       "role": "assistant", "content": "Hello", "reasoning_content": "think",
                       "tool_calls": [
                           {"id": "a", "type": "function", "function": {"name": "ls", "arguments": "{\"d\":1}"}},
                           {"id": "b", "type": "function", "function": {"name": "cat", "arguments": "{}"}}]}}],
                   "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}})
        );
    }

    #[test]
    fn a_cut_or_erroneous_stream_is_an_error() {
        let cut =
            "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n";
        assert!(
            assemble(cut.as_bytes())
                .unwrap_err()
                .contains("ended before")
        );
        let error = "data: {\"error\":{\"message\":\"overloaded\"}}\n\n";
        assert!(
            assemble(error.as_bytes())
                .unwrap_err()
                .contains("overloaded")
        );
        assert!(assemble(b"").is_err());
    }
}
