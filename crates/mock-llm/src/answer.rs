//! The answers of scripted steps: a `chat.completion` (or its stream) for a message, a
//! scripted HTTP error, a malformed body.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use delta_scenario::mock_script::{ErrorStep, MalformedStep, MessageStep, Usage};
use serde_json::{Value, json};

use crate::openai_error::{error_response, error_type};
use crate::request::ChatRequest;
use crate::stream::{held_stream, server_sent_events};

/// `created` of every completion: a constant, so identical runs produce identical responses.
pub const CREATED: u64 = 1_700_000_000;

/// Said instead of a scripted tool call that the server would never have let the model
/// make (llama-cpp without `tool_choice`).
pub const TOOLS_NOT_OFFERED: &str = "mock-llm (strict llama-cpp): this step calls a tool, but \
     the request has no tool_choice, so llama-cpp-python's chatml-function-calling never \
     showed the tools to the model";

/// The `chat.completion` a message step answers with, streamed when asked for.
pub(crate) fn completion(message: &MessageStep, step: u64, request: &ChatRequest) -> Response {
    let model = request.model.as_str();
    let calls_tools = !message.tool_calls.is_empty();
    let content = match &message.content {
        Some(content) => Some(content.as_str()),
        None if calls_tools && !request.tools_offered => Some(TOOLS_NOT_OFFERED),
        None => None,
    };
    let mut assistant = json!({
        "role": "assistant",
        "content": content,
    });
    if calls_tools && request.tools_offered {
        let calls: Vec<Value> = message
            .tool_calls
            .iter()
            .enumerate()
            .map(|(i, call)| {
                let arguments = call
                    .arguments
                    .as_ref()
                    .map_or_else(|| "{}".to_string(), verbatim_or_json);
                json!({
                    "id": call.id.clone().unwrap_or_else(|| format!("call_{step}_{i}")),
                    "type": "function",
                    "function": {"name": call.name, "arguments": arguments},
                })
            })
            .collect();
        assistant["tool_calls"] = Value::Array(calls);
    }
    let finish_reason = message.finish_reason.clone().unwrap_or_else(|| {
        if !calls_tools || !request.tools_offered {
            "stop".to_string()
        } else {
            "tool_calls".to_string()
        }
    });
    let usage = message.usage.unwrap_or_default();
    let body = json!({
        "id": format!("chatcmpl-mock-{step}"),
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [{
            "index": 0,
            "message": assistant,
            "logprobs": null,
            "finish_reason": finish_reason,
        }],
        "usage": usage_json(usage),
    });
    if request.stream {
        let events = server_sent_events(&body, request.include_usage);
        let body = match &message.stream_hold_until {
            None => Body::from(events.concat()),
            Some(gate) => held_stream(events, gate.clone()),
        };
        return (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "text/event-stream")],
            body,
        )
            .into_response();
    }
    (StatusCode::OK, axum::Json(body)).into_response()
}

fn usage_json(usage: Usage) -> Value {
    json!({
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.prompt_tokens.saturating_add(usage.completion_tokens),
    })
}

/// The HTTP error an error step answers with.
pub(crate) fn scripted_error(error: &ErrorStep, step: u64) -> Response {
    // Scripts built in Rust skip the parser's range check, so re-check here.
    let Some(status) = StatusCode::from_u16(error.status)
        .ok()
        .filter(|status| !status.is_informational())
    else {
        return error_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!(
                "mock-llm: step {step} has status {}, which cannot be sent; use 200-599",
                error.status
            ),
            "server_error",
            "mock_llm_bad_script",
        );
    };
    let mut response = match &error.body {
        None => error_response(
            status,
            &format!(
                "mock-llm: scripted error at step {step}: HTTP {}",
                status_text(status)
            ),
            error_type(status),
            "mock_llm_scripted_error",
        ),
        Some(body) => match body.as_str() {
            Some(text) => (
                status,
                [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                text.to_string(),
            )
                .into_response(),
            None => (status, axum::Json(body.clone())).into_response(),
        },
    };
    if let Some(seconds) = error.retry_after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

fn status_text(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("{} {reason}", status.as_u16()),
        None => status.as_u16().to_string(),
    }
}

/// The `200 OK` a malformed step answers with.
pub(crate) fn malformed_response(malformed: &MalformedStep) -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        verbatim_or_json(&malformed.body),
    )
        .into_response()
}

/// Scripts give raw text as a string and structured content as any other value.
fn verbatim_or_json(value: &Value) -> String {
    match value.as_str() {
        Some(raw) => raw.to_string(),
        None => value.to_string(),
    }
}
