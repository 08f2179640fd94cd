//! Errors in OpenAI's shape (`{"error": {"message", "type", "param", "code"}}`), so
//! that clients' error paths see what they expect.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

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
