//! The HTTP routes: picking a step for each chat request, recording it, and building answers.

use std::convert::Infallible;
use std::fs::File;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use delta_scenario::MockProfile;
use delta_scenario::mock_script::{
    ErrorStep, MalformedStep, MessageStep, Mode, Script, Step, Usage,
};
use futures_util::StreamExt as _;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::listener::Connection;
use crate::strict::StrictProfile as _;
use crate::window::{ContextWindow, prompt_tokens};

/// Model id echoed when a request names none, and listed when the script names none.
pub const DEFAULT_MODEL: &str = "mock-model";

/// `created` of every completion: a constant, so identical runs produce identical responses.
pub const CREATED: u64 = 1_700_000_000;

/// Events sent before a held stream waits: the role chunk and the first content piece.
const HELD_AFTER_EVENTS: usize = 2;

/// How often a held stream looks for its gate file.
const GATE_POLL: Duration = Duration::from_millis(20);

/// Agent conversations grow large; axum's 2 MiB default would reject long runs.
const MAX_REQUEST_BYTES: usize = 256 * 1024 * 1024;

/// One chat request as recorded (one JSON line of the `--record` file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// Arrival order of chat requests, from 0.
    pub index: u64,
    /// The step that answered it; `null` for a request rejected as invalid or over the
    /// context window (HTTP 400).
    pub step: Option<u64>,
    /// The request path, e.g. `/v1/chat/completions`.
    pub path: String,
    /// The request body as JSON; a body that is not JSON is kept as a string.
    pub body: Value,
    /// Whether an `Authorization` header was sent. Its value is never recorded.
    pub has_authorization: bool,
}

/// Shared state of one server.
pub(crate) struct App {
    script: Script,
    window: Option<ContextWindow>,
    /// `ends[i]` = number of steps covered by entries `0..=i` (entries repeat).
    ends: Vec<u64>,
    log: Mutex<Log>,
    strict: Option<MockProfile>,
}

struct Log {
    arrivals: u64,
    next_sequential: u64,
    kept: Option<Vec<RecordedRequest>>,
    file: Option<(PathBuf, File)>,
}

impl App {
    pub(crate) fn new(
        script: Script,
        file: Option<(PathBuf, File)>,
        keep: bool,
        strict: Option<MockProfile>,
    ) -> Self {
        let ends = script
            .steps
            .iter()
            .scan(0u64, |sum, step| {
                *sum = sum.saturating_add(step.repeat().get());
                Some(*sum)
            })
            .collect();
        Self {
            script,
            window: None,
            ends,
            log: Mutex::new(Log {
                arrivals: 0,
                next_sequential: 0,
                kept: keep.then(Vec::new),
                file,
            }),
            strict,
        }
    }

    pub(crate) fn with_window(mut self, window: Option<ContextWindow>) -> Self {
        self.window = window;
        self
    }

    pub(crate) fn recorded(&self) -> Vec<RecordedRequest> {
        self.lock_log().kept.clone().unwrap_or_default()
    }

    /// A panic while holding the lock cannot leave the log half-updated in a way that
    /// matters more than losing the server, so a poisoned lock is simply reused.
    fn lock_log(&self) -> std::sync::MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn entry(&self, step: u64) -> Option<&Step> {
        let slot = self.ends.partition_point(|&end| end <= step);
        self.script.steps.get(slot)
    }

    /// Records a request rejected before any step was picked for it.
    fn record_rejected(
        &self,
        path: &str,
        body: Value,
        has_authorization: bool,
    ) -> Result<(), RecordError> {
        self.lock_log().append(None, path, body, has_authorization)
    }

    /// Picks the step and records the request under one lock, so the record file, the kept
    /// list and the sequential step order all agree.
    fn record_chat(
        &self,
        request: &ChatRequest,
        path: &str,
        body: Value,
        has_authorization: bool,
    ) -> Result<u64, RecordError> {
        let mut log = self.lock_log();
        let step = match self.script.mode {
            Mode::Sequential => {
                let step = log.next_sequential;
                log.next_sequential += 1;
                step
            }
            Mode::ByConversation => request.tool_messages,
        };
        log.append(Some(step), path, body, has_authorization)?;
        Ok(step)
    }
}

impl Log {
    fn append(
        &mut self,
        step: Option<u64>,
        path: &str,
        body: Value,
        has_authorization: bool,
    ) -> Result<(), RecordError> {
        let record = RecordedRequest {
            index: self.arrivals,
            step,
            path: path.to_string(),
            body,
            has_authorization,
        };
        self.arrivals += 1;
        if let Some((file_path, file)) = self.file.as_mut() {
            let written = serde_json::to_string(&record)
                .map_err(std::io::Error::from)
                .and_then(|mut line| {
                    line.push('\n');
                    // One write per line: a reader never sees half a record.
                    file.write_all(line.as_bytes())
                });
            if let Err(err) = written {
                return Err(RecordError(format!(
                    "mock-llm: cannot write record file {}: {err}",
                    file_path.display()
                )));
            }
        }
        if let Some(kept) = self.kept.as_mut() {
            kept.push(record);
        }
        Ok(())
    }
}

/// The record file could not be written; the request is answered with HTTP 500 saying so,
/// since the library has no other channel to report it.
struct RecordError(String);

impl RecordError {
    fn into_response(self) -> Response {
        error_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            &self.0,
            "server_error",
            "mock_llm_record_failed",
        )
    }
}

pub(crate) fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(chat))
        .route("/chat/completions", post(chat))
        .route("/v1/models", get(models))
        .route("/models", get(models))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_REQUEST_BYTES))
        .with_state(app)
}

/// What the server needs from a well-formed chat request.
struct ChatRequest {
    model: String,
    tool_messages: u64,
    /// Whether the model would see the request's tools (see [`StrictProfile::offers_tools`]).
    tools_offered: bool,
    /// `stream: true`: answer a message step with server-sent events.
    stream: bool,
    /// `stream_options.include_usage`: end the stream with a usage chunk.
    include_usage: bool,
}

fn inspect(body: &Value) -> Result<ChatRequest, String> {
    let Some(object) = body.as_object() else {
        return Err("mock-llm: the request body must be a JSON object".to_string());
    };
    let Some(messages) = object.get("messages").and_then(Value::as_array) else {
        return Err("mock-llm: the request needs a `messages` array".to_string());
    };
    let tool_messages = messages
        .iter()
        .filter(|message| message.get("role").and_then(Value::as_str) == Some("tool"))
        .count() as u64;
    let model = object
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_MODEL)
        .to_string();
    let stream = object.get("stream").and_then(Value::as_bool) == Some(true);
    let include_usage = object
        .get("stream_options")
        .and_then(|options| options.get("include_usage"))
        .and_then(Value::as_bool)
        == Some(true);
    Ok(ChatRequest {
        model,
        tool_messages,
        tools_offered: true,
        stream,
        include_usage,
    })
}

async fn chat(
    State(app): State<Arc<App>>,
    ConnectInfo(connection): ConnectInfo<Connection>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let has_authorization = headers.contains_key(header::AUTHORIZATION);
    let body_bytes = body.len();
    let (body, request) = match serde_json::from_slice::<Value>(&body) {
        Ok(value) => {
            let request = inspect(&value);
            (value, request)
        }
        Err(err) => (
            Value::String(String::from_utf8_lossy(&body).into_owned()),
            Err(format!("mock-llm: the request body is not JSON: {err}")),
        ),
    };
    if let Some(profile) = app.strict
        && let Err(rejection) = profile.check(&body)
    {
        if let Err(err) = app.record_rejected(uri.path(), body, has_authorization) {
            return err.into_response();
        }
        let status =
            StatusCode::from_u16(rejection.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        return (status, axum::Json(rejection.body)).into_response();
    }
    let request = match request {
        Ok(mut request) => {
            request.tools_offered = app.strict.is_none_or(|profile| profile.offers_tools(&body));
            request
        }
        Err(reason) => {
            if let Err(err) = app.record_rejected(uri.path(), body, has_authorization) {
                return err.into_response();
            }
            return error_response(
                StatusCode::BAD_REQUEST,
                &reason,
                "invalid_request_error",
                "mock_llm_bad_request",
            );
        }
    };
    if let Some(rejection) = app
        .window
        .and_then(|window| window.reject(prompt_tokens(body_bytes)))
    {
        if let Err(err) = app.record_rejected(uri.path(), body, has_authorization) {
            return err.into_response();
        }
        return rejection;
    }
    let step = match app.record_chat(&request, uri.path(), body, has_authorization) {
        Ok(step) => step,
        Err(err) => return err.into_response(),
    };
    let Some(entry) = app.entry(step) else {
        return exhausted(&app, step, &request);
    };
    let delay = entry.delay_ms();
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    match entry {
        Step::Message(message) => completion(message, step, &request),
        Step::Error(error) => scripted_error(error, step),
        Step::DropConnection(_) => {
            connection.drop_now();
            // Never written: the connection fails its next write and is closed.
            StatusCode::NO_CONTENT.into_response()
        }
        Step::Malformed(malformed) => malformed_response(malformed),
    }
}

fn exhausted(app: &App, step: u64, request: &ChatRequest) -> Response {
    let why = match app.script.mode {
        Mode::Sequential => format!("request number {} in arrival order", step + 1),
        Mode::ByConversation => format!("it holds {} tool message(s)", request.tool_messages),
    };
    let has = match app.script.len() {
        0 => "no steps".to_string(),
        1 => "only 1 step (step 0)".to_string(),
        steps => format!("only {steps} steps (0 to {})", steps - 1),
    };
    error_response(
        StatusCode::INTERNAL_SERVER_ERROR,
        &format!(
            "mock-llm: script exhausted: this request needs step {step} ({why}), \
             but the script has {has}; add steps to the script"
        ),
        "server_error",
        "mock_llm_script_exhausted",
    )
}

/// Said instead of a scripted tool call that the server would never have let the model
/// make (llama-cpp without `tool_choice`).
pub const TOOLS_NOT_OFFERED: &str = "mock-llm (strict llama-cpp): this step calls a tool, but \
     the request has no tool_choice, so llama-cpp-python's chatml-function-calling never \
     showed the tools to the model";

fn completion(message: &MessageStep, step: u64, request: &ChatRequest) -> Response {
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

/// A completion as OpenAI streams it: `chat.completion.chunk` events whose deltas carry
/// the role, then the content and each tool call's arguments in two pieces (so clients
/// must reassemble them), then the finish reason; a usage chunk with no choices when
/// `include_usage`; then `data: [DONE]`. One string per event.
fn server_sent_events(completion: &Value, include_usage: bool) -> Vec<String> {
    let chunk = |delta: Value, finish_reason: Value| {
        json!({
            "id": completion["id"],
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": completion["model"],
            "choices": [{"index": 0, "delta": delta, "logprobs": null,
                         "finish_reason": finish_reason}],
        })
    };
    let halves = |text: &str| {
        let middle = text
            .char_indices()
            .nth(text.chars().count() / 2)
            .map_or(text.len(), |(at, _)| at);
        [text[..middle].to_owned(), text[middle..].to_owned()]
    };
    let choice = &completion["choices"][0];
    let message = &choice["message"];
    let mut chunks = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    if let Some(content) = message["content"].as_str() {
        for piece in halves(content) {
            chunks.push(chunk(json!({"content": piece}), Value::Null));
        }
    }
    for (index, call) in message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        chunks.push(chunk(
            json!({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                   "function": {"name": call["function"]["name"], "arguments": ""}}]}),
            Value::Null,
        ));
        let arguments = call["function"]["arguments"].as_str().unwrap_or_default();
        for piece in halves(arguments) {
            chunks.push(chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                Value::Null,
            ));
        }
    }
    chunks.push(chunk(json!({}), choice["finish_reason"].clone()));
    if include_usage {
        let mut last = chunk(json!({}), Value::Null);
        last["choices"] = json!([]);
        last["usage"] = completion["usage"].clone();
        chunks.push(last);
    }
    let mut events: Vec<String> = chunks
        .iter()
        .map(|chunk| format!("data: {chunk}\n\n"))
        .collect();
    events.push("data: [DONE]\n\n".to_owned());
    events
}

/// The stream of a step with `stream_hold_until`: the role chunk and the first piece of
/// the content at once, the rest once `gate` exists.
fn held_stream(events: Vec<String>, gate: PathBuf) -> Body {
    let split = events.len().min(HELD_AFTER_EVENTS);
    let (head, tail) = events.split_at(split);
    let parts = [(None, head.concat()), (Some(gate), tail.concat())];
    let stream = futures_util::stream::iter(parts).then(|(gate, text)| async move {
        if let Some(gate) = gate {
            while !gate.exists() {
                tokio::time::sleep(GATE_POLL).await;
            }
        }
        Ok::<_, Infallible>(text)
    });
    Body::from_stream(stream)
}

fn usage_json(usage: Usage) -> Value {
    json!({
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.prompt_tokens.saturating_add(usage.completion_tokens),
    })
}

fn scripted_error(error: &ErrorStep, step: u64) -> Response {
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

/// The `error.type` OpenAI uses for each class of status.
fn error_type(status: StatusCode) -> &'static str {
    match status.as_u16() {
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        400..=499 => "invalid_request_error",
        _ => "server_error",
    }
}

fn malformed_response(malformed: &MalformedStep) -> Response {
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

async fn models(State(app): State<Arc<App>>) -> Response {
    let names: Vec<&str> = if app.script.models.is_empty() {
        vec![DEFAULT_MODEL]
    } else {
        app.script.models.iter().map(String::as_str).collect()
    };
    let data: Vec<Value> = names
        .into_iter()
        .map(|id| json!({"id": id, "object": "model", "created": CREATED, "owned_by": "mock-llm"}))
        .collect();
    axum::Json(json!({"object": "list", "data": data})).into_response()
}

const ROUTES_HINT: &str = "mock-llm serves POST /v1/chat/completions, POST /chat/completions, \
                           GET /v1/models and GET /models";

async fn not_found(method: Method, uri: Uri) -> Response {
    error_response(
        StatusCode::NOT_FOUND,
        &format!(
            "mock-llm: no route for {method} {}; {ROUTES_HINT}",
            uri.path()
        ),
        "invalid_request_error",
        "not_found",
    )
}

async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    error_response(
        StatusCode::METHOD_NOT_ALLOWED,
        &format!(
            "mock-llm: method {method} not allowed on {}; {ROUTES_HINT}",
            uri.path()
        ),
        "invalid_request_error",
        "method_not_allowed",
    )
}

/// An OpenAI-style error object, so clients' error paths see the shape they expect.
fn error_response(status: StatusCode, message: &str, kind: &str, code: &str) -> Response {
    let body = json!({
        "error": {"message": message, "type": kind, "param": null, "code": code}
    });
    (status, axum::Json(body)).into_response()
}
