//! Errors in each API's shape, so that clients' error paths see what they expect:
//! OpenAI's `{"error": {"message", "type", "param", "code"}}` (chat completions and
//! Responses) and Anthropic's `{"type": "error", "error": {"type", "message"},
//! "request_id"}` (digest A5).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use delta_scenario::ModelApi;
use serde_json::{Value, json};

/// An OpenAI-style error object, so clients' error paths see the shape they expect.
pub(crate) fn error_response(
    status: StatusCode,
    message: &str,
    kind: &str,
    code: &str,
) -> Response {
    let body = json!({
        "error": {"message": message, "type": kind, "param": null, "code": code}
    });
    (status, axum::Json(body)).into_response()
}

/// The error `api`'s service answers with: OpenAI's shape with `kind` and `code`, or
/// Anthropic's with the `error.type` it gives `status`.
pub(crate) fn api_error(
    api: ModelApi,
    status: StatusCode,
    message: &str,
    kind: &str,
    code: &str,
) -> Response {
    match api {
        ModelApi::Chat | ModelApi::Responses => error_response(status, message, kind, code),
        ModelApi::Anthropic => (
            status,
            axum::Json(anthropic_body(anthropic_type(status), message)),
        )
            .into_response(),
    }
}

/// Anthropic's error body.
pub(crate) fn anthropic_body(kind: &str, message: &str) -> Value {
    json!({
        "type": "error",
        "error": {"type": kind, "message": message},
        "request_id": "req_mock",
    })
}

/// The `error.type` OpenAI uses for each class of status.
pub(crate) fn error_type(status: StatusCode) -> &'static str {
    match status.as_u16() {
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        400..=499 => "invalid_request_error",
        _ => "server_error",
    }
}

/// The `error.type` Anthropic uses for each status (digest A5).
pub(crate) fn anthropic_type(status: StatusCode) -> &'static str {
    match status.as_u16() {
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        504 => "timeout_error",
        529 => "overloaded_error",
        400..=499 => "invalid_request_error",
        _ => "api_error",
    }
}
