//! The HTTP routes: picking a step for each model request (chat completions, Anthropic
//! Messages, OpenAI Responses), recording it, and answering it in its API's shape
//! ([`crate::answer`]); the model list; errors for other routes.

use std::fs::File;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, DefaultBodyLimit, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use delta_scenario::mock_script::{Mode, Script, Step};
use delta_scenario::{MockProfile, ModelApi};
use serde_json::{Value, json};

use crate::answer::{malformed_response, message, scripted_error};
use crate::api_error::{api_error, error_response};
use crate::cache::PromptCache;
use crate::listener::Connection;
use crate::log::{Log, RecordError, RecordedRequest};
use crate::reply::{CREATED, Counts};
use crate::request::{DEFAULT_MODEL, ModelRequest, inspect};
use crate::strict::{Credentials, StrictProfile as _, check_request};
use crate::window::{ContextWindow, prompt_tokens};

/// Agent conversations grow large; axum's 2 MiB default would reject long runs.
const MAX_REQUEST_BYTES: usize = 256 * 1024 * 1024;

/// Shared state of one server.
pub(crate) struct App {
    script: Script,
    window: Option<ContextWindow>,
    /// `ends[i]` = number of steps covered by entries `0..=i` (entries repeat).
    ends: Vec<u64>,
    log: Mutex<Log>,
    strict: Option<MockProfile>,
    /// `--prompt-cache`: prompt tokens counted and cached as the providers do.
    cache: Option<PromptCache>,
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
            log: Mutex::new(Log::new(file, keep)),
            strict,
            cache: None,
        }
    }

    pub(crate) fn with_prompt_cache(mut self, on: bool) -> Self {
        self.cache = on.then(PromptCache::default);
        self
    }

    pub(crate) fn with_window(mut self, window: Option<ContextWindow>) -> Self {
        self.window = window;
        self
    }

    pub(crate) fn recorded(&self) -> Vec<RecordedRequest> {
        self.lock_log().kept()
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
    fn record_request(
        &self,
        request: &ModelRequest,
        path: &str,
        body: Value,
        has_authorization: bool,
    ) -> Result<u64, RecordError> {
        let mut log = self.lock_log();
        let step = match self.script.mode {
            Mode::Sequential => log.next_sequential(),
            Mode::ByConversation => request.tool_results,
        };
        log.append(Some(step), path, body, has_authorization)?;
        Ok(step)
    }
}

pub(crate) fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/v1/chat/completions", route_of(ModelApi::Chat))
        .route("/chat/completions", route_of(ModelApi::Chat))
        .route("/v1/messages", route_of(ModelApi::Anthropic))
        .route("/messages", route_of(ModelApi::Anthropic))
        .route("/v1/responses", route_of(ModelApi::Responses))
        .route("/responses", route_of(ModelApi::Responses))
        .route("/v1/models", get(models))
        .route("/models", get(models))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_REQUEST_BYTES))
        .with_state(app)
}

/// One request as it arrived.
struct Arrival {
    connection: Connection,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
}

/// The handler of `api`'s route: every API is served by [`serve`].
fn route_of(api: ModelApi) -> MethodRouter<Arc<App>> {
    post(
        move |State(app): State<Arc<App>>,
              ConnectInfo(connection): ConnectInfo<Connection>,
              uri: Uri,
              headers: HeaderMap,
              body: Bytes| async move {
            let arrival = Arrival {
                connection,
                uri,
                headers,
                body,
            };
            serve(&app, api, arrival).await
        },
    )
}

/// What the validators read of the headers; their values are never kept.
fn credentials(headers: &HeaderMap) -> Credentials {
    Credentials {
        api_key: headers.contains_key("x-api-key"),
        authorization: headers.contains_key(header::AUTHORIZATION),
        anthropic_version: headers
            .get("anthropic-version")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned),
    }
}

async fn serve(app: &App, api: ModelApi, arrival: Arrival) -> Response {
    let Arrival {
        connection,
        uri,
        headers,
        body,
    } = arrival;
    let credentials = credentials(&headers);
    let has_authorization = credentials.api_key || credentials.authorization;
    let body_bytes = body.len();
    let (body, request) = match serde_json::from_slice::<Value>(&body) {
        Ok(value) => {
            let request = inspect(api, &value);
            (value, request)
        }
        Err(err) => (
            Value::String(String::from_utf8_lossy(&body).into_owned()),
            Err(format!("mock-llm: the request body is not JSON: {err}")),
        ),
    };
    if let Some(profile) = app.strict
        && let Err(rejection) = check_request(profile, api, &credentials, &body)
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
            return api_error(
                api,
                StatusCode::BAD_REQUEST,
                &reason,
                "invalid_request_error",
                "mock_llm_bad_request",
            );
        }
    };
    if let Some(rejection) = app
        .window
        .and_then(|window| window.reject(api, prompt_tokens(body_bytes)))
    {
        if let Err(err) = app.record_rejected(uri.path(), body, has_authorization) {
            return err.into_response();
        }
        return rejection;
    }
    let cached = app
        .cache
        .as_ref()
        .map(|cache| cache.look_up(api, &request.model, &body));
    let step = match app.record_request(&request, uri.path(), body, has_authorization) {
        Ok(step) => step,
        Err(err) => return err.into_response(),
    };
    let Some(entry) = app.entry(step) else {
        return exhausted(app, step, &request);
    };
    let delay = entry.delay_ms();
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    match entry {
        Step::Message(step_message) => {
            let usage = step_message.usage.unwrap_or_default();
            let counts = match cached {
                Some(cached) => Counts {
                    prompt: cached.prompt,
                    completion: usage.completion_tokens,
                    cached: cached.read,
                    written: cached.written,
                    from_cache: true,
                },
                None => Counts {
                    prompt: usage.prompt_tokens,
                    completion: usage.completion_tokens,
                    cached: usage.cached_tokens,
                    written: usage.cache_write_tokens,
                    from_cache: false,
                },
            };
            message(step_message, step, &request, counts)
        }
        Step::Error(error) => scripted_error(api, error, step),
        Step::DropConnection(_) => {
            connection.drop_now();
            // Never written: the connection fails its next write and is closed.
            StatusCode::NO_CONTENT.into_response()
        }
        Step::Malformed(malformed) => malformed_response(malformed),
    }
}

fn exhausted(app: &App, step: u64, request: &ModelRequest) -> Response {
    let why = match app.script.mode {
        Mode::Sequential => format!("request number {} in arrival order", step + 1),
        Mode::ByConversation => {
            let results = match request.api {
                ModelApi::Chat => "tool message(s)",
                ModelApi::Anthropic => "tool_result block(s)",
                ModelApi::Responses => "function_call_output item(s)",
            };
            format!("it holds {} {results}", request.tool_results)
        }
    };
    let has = match app.script.len() {
        0 => "no steps".to_string(),
        1 => "only 1 step (step 0)".to_string(),
        steps => format!("only {steps} steps (0 to {})", steps - 1),
    };
    api_error(
        request.api,
        StatusCode::INTERNAL_SERVER_ERROR,
        &format!(
            "mock-llm: script exhausted: this request needs step {step} ({why}), \
             but the script has {has}; add steps to the script"
        ),
        "server_error",
        "mock_llm_script_exhausted",
    )
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

const ROUTES_HINT: &str = "mock-llm serves POST /v1/chat/completions, POST /v1/messages, \
                           POST /v1/responses (each also without /v1), GET /v1/models and \
                           GET /models";

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
