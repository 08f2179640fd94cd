//! The answers of scripted steps: a message in the request's API (a `chat.completion`, an
//! Anthropic `message` or a `response`, or their streams, [`crate::wire`]), a scripted
//! HTTP error in that API's shape, a malformed body.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use delta_scenario::ModelApi;
use delta_scenario::mock_script::{ErrorStep, MalformedStep, MessageStep};
use serde_json::Value;

use crate::api_error::{api_error, error_type};
use crate::reply::{Call, Counts, Reply};
use crate::request::ModelRequest;
use crate::stream::held_stream;
use crate::wire;

/// Said instead of a scripted tool call that the server would never have let the model
/// make (llama-cpp without `tool_choice`).
pub const TOOLS_NOT_OFFERED: &str = "mock-llm (strict llama-cpp): this step calls a tool, but \
     the request has no tool_choice, so llama-cpp-python's chatml-function-calling never \
     showed the tools to the model";

/// The answer to `request` for message step `message` (number `step`), with `counts`.
pub(crate) fn message(
    message: &MessageStep,
    step: u64,
    request: &ModelRequest,
    counts: Counts,
) -> Response {
    let calls_tools = !message.tool_calls.is_empty();
    let content = match &message.content {
        Some(content) => Some(content.as_str()),
        None if calls_tools && !request.tools_offered => Some(TOOLS_NOT_OFFERED),
        None => None,
    };
    let calls = if request.tools_offered {
        message
            .tool_calls
            .iter()
            .map(|call| Call {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: call
                    .arguments
                    .as_ref()
                    .map_or_else(|| "{}".to_string(), verbatim_or_json),
            })
            .collect()
    } else {
        Vec::new()
    };
    let finish_reason = message.finish_reason.clone().unwrap_or_else(|| {
        if calls.is_empty() {
            "stop".to_string()
        } else {
            "tool_calls".to_string()
        }
    });
    let reply = Reply {
        step,
        model: &request.model,
        content,
        calls,
        finish_reason,
        reasoning: message.reasoning.as_deref(),
        redacted: message.redacted_reasoning.as_deref(),
        counts,
        hold: message.stream_hold_until.as_ref(),
    };
    let (body, events) = match request.api {
        ModelApi::Chat => wire::chat::answer(&reply, request),
        ModelApi::Anthropic => wire::anthropic::answer(&reply, request),
        ModelApi::Responses => wire::responses::answer(&reply, request),
    };
    match events {
        None => (StatusCode::OK, axum::Json(body)).into_response(),
        Some((events, held_after)) => {
            let body = match reply.hold {
                None => Body::from(events.concat()),
                Some(gate) => held_stream(events, held_after, gate.clone()),
            };
            (
                StatusCode::OK,
                [(header::CONTENT_TYPE, "text/event-stream")],
                body,
            )
                .into_response()
        }
    }
}

/// The HTTP error an error step answers with, in `api`'s shape unless the step gives a
/// body.
pub(crate) fn scripted_error(api: ModelApi, error: &ErrorStep, step: u64) -> Response {
    // Scripts built in Rust skip the parser's range check, so re-check here.
    let Some(status) = StatusCode::from_u16(error.status)
        .ok()
        .filter(|status| !status.is_informational())
    else {
        return api_error(
            api,
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
        None => api_error(
            api,
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
