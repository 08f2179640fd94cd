//! What can go wrong talking to the LLM API: per-attempt failures (retried or not) and the
//! final error handed to the engine. No text here ever contains the API key.

use std::fmt;
use std::time::Duration;

use delta_scenario::ModelApi;

/// Why one HTTP attempt failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttemptFailure {
    /// No connection, or the connection broke before a complete response arrived.
    Connection { detail: String },
    /// No complete response within the request timeout.
    Timeout { after: Duration },
    /// The server answered with a non-success status.
    Status { status: u16, message: String },
}

impl fmt::Display for AttemptFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttemptFailure::Connection { detail } => write!(f, "connection failed: {detail}"),
            AttemptFailure::Timeout { after } => {
                write!(f, "no response within {}", format_duration(*after))
            }
            AttemptFailure::Status { status, message } => write!(f, "HTTP {status}: {message}"),
        }
    }
}

/// One failed attempt of a chat-completions call.
///
/// `Display` gives the line the engine writes to `engine.log`, e.g.
/// `retry 1/4 in 1.2 s after HTTP 500: upstream overloaded`, or for an attempt that was not
/// retried, `attempt 5/5 failed: connection failed: …`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptRecord {
    /// 1-based number of the attempt that failed.
    pub attempt: u32,
    /// The attempt budget ([`super::ClientSettings::max_attempts`]).
    pub max_attempts: u32,
    pub failure: AttemptFailure,
    /// How long the client waited before the next attempt (from `Retry-After` when the
    /// server sent one, else the jittered backoff); `None` when it did not retry.
    pub wait: Option<Duration>,
}

impl fmt::Display for AttemptRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.wait {
            Some(wait) => write!(
                f,
                "retry {}/{} in {} after {}",
                self.attempt,
                self.max_attempts.saturating_sub(1),
                format_duration(wait),
                self.failure
            ),
            None => write!(
                f,
                "attempt {}/{} failed: {}",
                self.attempt, self.max_attempts, self.failure
            ),
        }
    }
}

/// The body of an answer a call failed on, exactly as received. It may echo the API key,
/// so redact it before writing it anywhere; its `Debug` shows only the length.
#[derive(Clone, PartialEq, Eq)]
pub struct ResponseBody(Box<[u8]>);

impl From<Vec<u8>> for ResponseBody {
    fn from(body: Vec<u8>) -> Self {
        ResponseBody(body.into_boxed_slice())
    }
}

impl fmt::Debug for ResponseBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ResponseBody({} bytes)", self.0.len())
    }
}

/// Why a chat-completions call failed. Every message says what happened and what to try.
///
/// `attempts` lists every failed attempt in order: the retried ones (with a `wait`) and,
/// for `Unreachable`, `Timeout` and `Http`, the final one (without).
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error(
        "cannot reach the LLM API at {url} ({count} attempt(s); last: {last}); is the server \
         running? check {variables} and the network",
        count = attempts.len(),
        last = last_failure(attempts),
        variables = base_url_variables(*api)
    )]
    Unreachable {
        url: String,
        /// The API called.
        api: ModelApi,
        attempts: Vec<AttemptRecord>,
    },

    #[error(
        "the LLM API at {url} did not respond within {limit} ({count} attempt(s); a timed-out \
         request is retried once only, since the server may still be computing it); the \
         model may be slow to load or to think: raise DELTA_LLM_TIMEOUT_MS (milliseconds \
         per attempt, now {ms}) or try again later",
        ms = timeout.as_millis(),
        limit = format_duration(*timeout),
        count = attempts.len()
    )]
    Timeout {
        url: String,
        timeout: Duration,
        attempts: Vec<AttemptRecord>,
    },

    #[error(
        "the LLM API at {url} answered HTTP {status}: {message} ({count} attempt(s)); {hint}",
        count = attempts.len(),
        hint = http_hint(*api, *status)
    )]
    Http {
        url: String,
        /// The API called.
        api: ModelApi,
        status: u16,
        /// The server's own message (`error.message` of an OpenAI error body).
        message: String,
        /// The body of that answer, for the invocation's `response.json`.
        body: ResponseBody,
        attempts: Vec<AttemptRecord>,
    },

    #[error(
        "the LLM API at {url} answered HTTP {status} with a body that is not {what} \
         ({reason}); it began: {excerpt}; check that {where_to}",
        what = answer_kind(*api),
        where_to = malformed_hint(*api)
    )]
    MalformedResponse {
        url: String,
        /// The API called.
        api: ModelApi,
        status: u16,
        reason: String,
        /// The start of the body, lossily decoded.
        excerpt: String,
        /// The whole body, for the invocation's `response.json`.
        body: ResponseBody,
        /// Failed attempts before the one that returned this body.
        attempts: Vec<AttemptRecord>,
    },

    #[error("cannot set up the HTTP client: {detail}; this is a bug or a broken TLS setup")]
    Setup { detail: String },

    /// `delta replay`: the recording has no answer that fits this request.
    #[error("replay: {reason}")]
    Replay { reason: String },
}

impl LlmError {
    /// The body of the server's answer when the call failed on one (an error status, a
    /// malformed 2xx); `None` when no answer arrived (connection failure, timeout) or no
    /// request was made.
    pub fn response_body(&self) -> Option<&[u8]> {
        match self {
            LlmError::Http { body, .. } | LlmError::MalformedResponse { body, .. } => Some(&body.0),
            LlmError::Unreachable { .. }
            | LlmError::Timeout { .. }
            | LlmError::Setup { .. }
            | LlmError::Replay { .. } => None,
        }
    }

    /// The failed attempts, in order, for the engine's log.
    pub fn attempts(&self) -> &[AttemptRecord] {
        match self {
            LlmError::Unreachable { attempts, .. }
            | LlmError::Timeout { attempts, .. }
            | LlmError::Http { attempts, .. }
            | LlmError::MalformedResponse { attempts, .. } => attempts,
            LlmError::Setup { .. } | LlmError::Replay { .. } => &[],
        }
    }
}

impl LlmError {
    /// The server's answer said the request does not fit the model's context window
    /// (see [`ContextOverflow::recognise`]); `None` for every other failure.
    pub fn context_overflow(&self) -> Option<ContextOverflow> {
        match self {
            LlmError::Http { status, body, .. } => ContextOverflow::recognise(*status, &body.0),
            LlmError::Unreachable { .. }
            | LlmError::Timeout { .. }
            | LlmError::MalformedResponse { .. }
            | LlmError::Setup { .. }
            | LlmError::Replay { .. } => None,
        }
    }
}

/// A server's "the request does not fit the context window" answer, with the numbers it
/// gave. Servers word it differently; each shape recognised is quoted, with its source,
/// in the tests below.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContextOverflow {
    /// The model's context window in tokens, when the answer says it.
    pub window: Option<u64>,
    /// The prompt's size in the server's tokens, when the answer says it.
    pub prompt_tokens: Option<u64>,
}

impl ContextOverflow {
    /// Recognises the answer `body` with HTTP `status` as a context-length error of
    /// OpenAI, Anthropic, vLLM, llama.cpp's server or llama-cpp-python.
    ///
    /// Recognised by the error's `code` (`context_length_exceeded`: OpenAI,
    /// llama-cpp-python), its `type` (`exceed_context_size_error`: llama.cpp), or its
    /// message (vLLM, older llama.cpp); the error object may sit under `error` or be the
    /// body itself (older vLLM). Only 400, 413 and 422 answers qualify: a 5xx that mentions
    /// the context is a server failure, not a request to shrink.
    #[must_use]
    pub fn recognise(status: u16, body: &[u8]) -> Option<Self> {
        if !matches!(status, 400 | 413 | 422) {
            return None;
        }
        let value: serde_json::Value = serde_json::from_slice(body).ok()?;
        let error = match value.get("error") {
            Some(inner @ serde_json::Value::Object(_)) => inner,
            Some(_) | None => &value,
        };
        let text = |key: &str| error.get(key).and_then(serde_json::Value::as_str);
        let number = |key: &str| error.get(key).and_then(serde_json::Value::as_u64);
        let message = text("message").unwrap_or_default();
        let by_code = text("code") == Some("context_length_exceeded");
        let by_type = text("type") == Some("exceed_context_size_error");
        let by_message = OVERFLOW_PHRASES.iter().any(|p| message.contains(p));
        if !(by_code || by_type || by_message) {
            return None;
        }
        let window = number("n_ctx").or_else(|| {
            WINDOW_MARKERS
                .iter()
                .find_map(|marker| number_after(message, marker))
        });
        let prompt_tokens = number("n_prompt_tokens").or_else(|| {
            PROMPT_MARKERS
                .iter()
                .find_map(|marker| number_after(message, marker))
        });
        Some(ContextOverflow {
            window,
            prompt_tokens,
        })
    }
}

/// Message phrases that mean the context is too long (matched when neither `code` nor
/// `type` says so, e.g. vLLM's `BadRequestError`).
const OVERFLOW_PHRASES: &[&str] = &[
    "prompt is too long:",
    "maximum context length is",
    "model's context length is only",
    "exceeds the available context size",
];

/// Text that the window's size follows, in the servers' messages.
const WINDOW_MARKERS: &[&str] = &[
    "maximum context length is ",
    " tokens > ",
    "model's context length is only ",
    "available context size (",
    "n_ctx = ",
];

/// Text that the prompt's size follows, most specific first. Where a message gives the
/// total with the completion ("you requested 5000 tokens (4000 in the messages, …)"), the
/// number in parentheses is read before the total.
const PROMPT_MARKERS: &[&str] = &[
    "prompt is too long: ",
    "your messages resulted in ",
    "your prompt contains at least ",
    "your prompt contains ",
    "You passed ",
    "your request has ",
    "request (",
    "n_tokens = ",
    "tokens (",
    "you requested ",
];

/// The decimal number right after the first `marker` in `text` (thousands separators
/// allowed).
fn number_after(text: &str, marker: &str) -> Option<u64> {
    let start = text.find(marker)? + marker.len();
    let digits: String = text[start..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

fn last_failure(attempts: &[AttemptRecord]) -> String {
    attempts.last().map_or_else(
        || "no attempt made".to_owned(),
        |record| record.failure.to_string(),
    )
}

/// The variables naming `api`'s base URL, for hints.
fn base_url_variables(api: ModelApi) -> &'static str {
    match api {
        ModelApi::Chat | ModelApi::Responses => "DELTA_BASE_URL (or OPENAI_BASE_URL)",
        ModelApi::Anthropic => "ANTHROPIC_BASE_URL (or DELTA_BASE_URL)",
    }
}

/// What a 2xx answer of `api` should have been.
fn answer_kind(api: ModelApi) -> &'static str {
    match api {
        ModelApi::Chat => "a chat completion",
        ModelApi::Responses => "a Responses API response",
        ModelApi::Anthropic => "an Anthropic message",
    }
}

fn malformed_hint(api: ModelApi) -> &'static str {
    match api {
        ModelApi::Chat => {
            "DELTA_BASE_URL points at an OpenAI-compatible API (usually ending in /v1)"
        }
        ModelApi::Responses => {
            "DELTA_BASE_URL points at a server with OpenAI's Responses API (usually ending in \
             /v1), or use `llm.api: chat`"
        }
        ModelApi::Anthropic => {
            "ANTHROPIC_BASE_URL (or DELTA_BASE_URL) points at Anthropic's API or a gateway that \
             speaks it"
        }
    }
}

fn http_hint(api: ModelApi, status: u16) -> &'static str {
    match (api, status) {
        (ModelApi::Anthropic, 401 | 403) => {
            "check the API key in ANTHROPIC_API_KEY (or DELTA_API_KEY) and that it may use this \
             model"
        }
        (ModelApi::Anthropic, 404) => {
            "check ANTHROPIC_BASE_URL (the host, without /v1; or DELTA_BASE_URL) and the model \
             name"
        }
        (ModelApi::Responses, 404) => {
            "check DELTA_BASE_URL (it should stop before /responses, usually at /v1), that the \
             server offers the Responses API, and the model name"
        }
        (_, status) => chat_hint(status),
    }
}

fn chat_hint(status: u16) -> &'static str {
    match status {
        401 | 403 => {
            "check the API key in DELTA_API_KEY (or OPENAI_API_KEY) and that it may use this model"
        }
        404 => {
            "check DELTA_BASE_URL (it should stop before /chat/completions, usually at /v1) and \
             the model name"
        }
        400 | 413 | 422 => {
            "the server rejected the request: check the model name and llm parameters in \
             agent.yaml, and the request.json of this invocation"
        }
        429 => "rate limit or quota exceeded: wait and run `delta continue`, or check your plan",
        300..=399 => "the server redirects: set DELTA_BASE_URL to the final address",
        500..=599 => "the server failed: try again later",
        _ => "check DELTA_BASE_URL and the server's documentation",
    }
}

/// `250 ms`, `1.5 s`, `30 s`: short and exact enough for a log line.
pub(crate) fn format_duration(duration: Duration) -> String {
    if duration < Duration::from_secs(1) {
        format!("{} ms", duration.as_millis())
    } else if duration.subsec_millis() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_render_as_log_lines() {
        let retried = AttemptRecord {
            attempt: 1,
            max_attempts: 5,
            failure: AttemptFailure::Status {
                status: 500,
                message: "boom".into(),
            },
            wait: Some(Duration::from_millis(1200)),
        };
        assert_eq!(
            retried.to_string(),
            "retry 1/4 in 1.2 s after HTTP 500: boom"
        );
        let last = AttemptRecord {
            attempt: 5,
            wait: None,
            failure: AttemptFailure::Timeout {
                after: Duration::from_secs(120),
            },
            ..retried
        };
        assert_eq!(
            last.to_string(),
            "attempt 5/5 failed: no response within 120 s"
        );
    }

    fn overflow(status: u16, body: &str) -> Option<ContextOverflow> {
        ContextOverflow::recognise(status, body.as_bytes())
    }

    fn numbers(window: Option<u64>, prompt_tokens: Option<u64>) -> Option<ContextOverflow> {
        Some(ContextOverflow {
            window,
            prompt_tokens,
        })
    }

    /// OpenAI: HTTP 400, `code` `context_length_exceeded`, in its older ("your messages
    /// resulted in") and newer ("you requested … (… in the messages, … in the
    /// completion)") wording.
    #[test]
    fn openai_context_length_exceeded_is_recognised() {
        let older = r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 8500 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        assert_eq!(overflow(400, older), numbers(Some(8192), Some(8500)));
        let newer = r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, you requested 130500 tokens (125500 in the messages, 5000 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        assert_eq!(overflow(400, newer), numbers(Some(128_000), Some(125_500)));
        // The code alone is enough, whatever the message says.
        let terse = r#"{"error":{"message":"Your input exceeds the context window of this model.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}"#;
        assert_eq!(overflow(400, terse), numbers(None, None));
    }

    /// vLLM, HTTP 400 `BadRequestError`, recognised by its message:
    /// - `vllm/entrypoints/openai/serving_engine.py` `_validate_input` (0.6–0.8), body
    ///   without the `error` wrapper: "… However, you requested N tokens in the messages,
    ///   Please reduce …" and "… you requested T tokens (P in the messages, C in the
    ///   completion) …";
    /// - the same file later: "'max_tokens' or 'max_completion_tokens' is too large: C.
    ///   This model's maximum context length is L tokens and your request has P input
    ///   tokens (C > L - P)";
    /// - `vllm/renderers/params.py` `_token_len_check` (current): "You passed P input
    ///   tokens and requested C output tokens. However, the model's context length is
    ///   only L tokens, …", and its predecessor "This model's maximum context length is L
    ///   tokens. However, you requested C output tokens and your prompt contains at least
    ///   P input tokens, …".
    #[test]
    fn vllm_context_length_messages_are_recognised() {
        let legacy = r#"{"object":"error","message":"This model's maximum context length is 32768 tokens. However, you requested 32818 tokens in the messages, Please reduce the length of the messages.","type":"BadRequestError","param":null,"code":400}"#;
        assert_eq!(overflow(400, legacy), numbers(Some(32768), Some(32818)));
        let with_completion = r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#;
        assert_eq!(
            overflow(400, with_completion),
            numbers(Some(4096), Some(4000))
        );
        let max_tokens = r#"{"error":{"message":"'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778). None","type":"BadRequestError","param":null,"code":400}}"#;
        assert_eq!(overflow(400, max_tokens), numbers(Some(4096), Some(2778)));
        let renderer = r#"{"error":{"message":"You passed 5000 input tokens and requested 1000 output tokens. However, the model's context length is only 4096 tokens, resulting in a maximum input length of 3096 tokens. Please reduce the length of the input prompt.","type":"BadRequestError","param":"input_tokens","code":400}}"#;
        assert_eq!(overflow(400, renderer), numbers(Some(4096), Some(5000)));
        let at_least = r#"{"error":{"message":"This model's maximum context length is 4096 tokens. However, you requested 1000 output tokens and your prompt contains at least 4097 input tokens, for a total of at least 5097 tokens. Please reduce the length of the input prompt or the number of requested output tokens.","type":"BadRequestError","param":"input_tokens","code":400}}"#;
        assert_eq!(overflow(400, at_least), numbers(Some(4096), Some(4097)));
    }

    /// llama.cpp's server (`tools/server`): `format_error_response` in server-common.cpp
    /// maps `ERROR_TYPE_EXCEED_CONTEXT_SIZE` to HTTP 400 and type
    /// `exceed_context_size_error`, and `server_task_result_error::to_json` in
    /// server-task.cpp adds `n_prompt_tokens` and `n_ctx`; the message of
    /// server-context.cpp was "the request exceeds the available context size, try
    /// increasing it", now "request (P tokens) exceeds the available context size (L
    /// tokens), try increasing it". Before the type existed it was an
    /// `invalid_request_error` reading "the request exceeds the available context size.
    /// try increasing the context size or enable context shift" (`SERVER_ERROR_NO_CONTEXT_SHIFT`
    /// in tools/server/tests/utils.py), with no numbers.
    #[test]
    fn llama_cpp_exceed_context_size_is_recognised() {
        let current = r#"{"error":{"code":400,"message":"request (5210 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5210,"n_ctx":4096}}"#;
        assert_eq!(overflow(400, current), numbers(Some(4096), Some(5210)));
        let typed = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}"#;
        assert_eq!(overflow(400, typed), numbers(Some(8192), Some(9000)));
        let older = r#"{"error":{"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"invalid_request_error"}}"#;
        assert_eq!(overflow(400, older), numbers(None, None));
    }

    /// llama-cpp-python's server (`llama_cpp/server/errors.py`,
    /// `ErrorResponseFormatters.context_length_exceeded`): OpenAI's shape, with "None in
    /// the completion" when the request set no `max_tokens`.
    #[test]
    fn llama_cpp_python_context_length_exceeded_is_recognised() {
        let body = r#"{"error":{"message":"This model's maximum context length is 2048 tokens. However, you requested 2548 tokens (2048 in the messages, 500 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        assert_eq!(overflow(400, body), numbers(Some(2048), Some(2048)));
        let no_max = r#"{"error":{"message":"This model's maximum context length is 512 tokens. However, you requested 700 tokens (700 in the messages, None in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        assert_eq!(overflow(400, no_max), numbers(Some(512), Some(700)));
    }

    /// Anthropic: HTTP 400 `invalid_request_error`, "prompt is too long: N tokens > M
    /// maximum" (digest A5; OBS:66513829784).
    #[test]
    fn anthropic_prompt_too_long_is_recognised() {
        let body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 214431 tokens > 204698 maximum"},"request_id":"req_1"}"#;
        assert_eq!(overflow(400, body), numbers(Some(204_698), Some(214_431)));
    }

    #[test]
    fn other_errors_are_not_context_overflows() {
        let not_found = r#"{"error":{"message":"The model `x` does not exist","type":"invalid_request_error","param":null,"code":"model_not_found"}}"#;
        assert_eq!(overflow(400, not_found), None);
        let rate = r#"{"error":{"message":"Rate limit reached for requests: Limit 10000 tokens per min","type":"tokens","code":"rate_limit_exceeded"}}"#;
        assert_eq!(overflow(429, rate), None);
        let server = r#"{"error":{"message":"This model's maximum context length is 4096 tokens.","type":"server_error"}}"#;
        assert_eq!(overflow(500, server), None);
        assert_eq!(
            overflow(400, "<html>maximum context length is 5</html>"),
            None
        );
    }

    #[test]
    fn durations_are_short() {
        assert_eq!(format_duration(Duration::ZERO), "0 ms");
        assert_eq!(format_duration(Duration::from_millis(250)), "250 ms");
        assert_eq!(format_duration(Duration::from_secs(30)), "30 s");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.5 s");
    }
}
