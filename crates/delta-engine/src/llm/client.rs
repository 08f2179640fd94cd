//! The HTTP client of the agent's model API (`POST {base_url}/chat/completions`,
//! `{base_url}/responses` or Anthropic's `{base_url}/v1/messages`, with each API's
//! authentication headers): sends the engine's bytes verbatim and retries transient
//! failures with jittered exponential backoff.

use std::error::Error as _;
use std::time::{Duration, Instant, SystemTime};

use chrono::{DateTime, Utc};
use delta_scenario::ModelApi;
use reqwest::header::{
    AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, LOCATION, RETRY_AFTER,
};
use reqwest::{StatusCode, Url};
use serde_json::Value;

use super::credentials::Credentials;
use super::error::{AttemptFailure, AttemptRecord, LlmError, format_duration};
use super::response::{Completion, error_text};
use super::stream::is_event_stream;
use super::wire;
use super::wire::LiveText;
use crate::secrets::{Redactor, url_without_userinfo};

/// Characters of a response body quoted in an error message.
const EXCERPT_CHARS: usize = 200;

/// Characters of a server's error message kept in an error.
const MESSAGE_CHARS: usize = 500;

/// Attempts that may time out per call. A slow model (a reasoning model thinking for
/// minutes) is billed for every attempt the server went on computing, so a second timeout
/// ends the call instead of being retried up to `max_attempts`.
const TIMED_OUT_ATTEMPTS: u32 = 2;

/// How the client times out and retries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientSettings {
    /// Limit for one attempt, from connecting to the last byte of the body.
    pub request_timeout: Duration,
    /// Attempts per call, the first included; 0 is treated as 1.
    pub max_attempts: u32,
    /// Backoff before the first retry is drawn from `[0, backoff_base]`, doubling after
    /// each failed attempt ("full jitter", so many clients do not retry in lockstep).
    pub backoff_base: Duration,
    /// The longest wait before a retry. A server asking (`Retry-After`) for a longer wait
    /// ends the call at once: the user learns about it now instead of after a long stall.
    pub backoff_max: Duration,
}

impl Default for ClientSettings {
    fn default() -> Self {
        ClientSettings {
            request_timeout: Duration::from_secs(120),
            max_attempts: 5,
            backoff_base: Duration::from_secs(1),
            backoff_max: Duration::from_secs(30),
        }
    }
}

/// The `anthropic-version` header every Anthropic SDK sends (A-SDK `_client.py`).
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A model API client bound to one API, endpoint and key.
#[derive(Debug)]
pub struct LlmClient {
    api: ModelApi,
    http: reqwest::Client,
    endpoint: Url,
    /// The endpoint as shown in errors and logs: without the userinfo of the base URL.
    shown_endpoint: String,
    /// What the server may echo back: the key, the base URL's userinfo.
    redactor: Redactor,
    /// The key's header: `Authorization: Bearer …`, or Anthropic's `x-api-key`.
    authorization: Option<(HeaderName, HeaderValue)>,
    settings: ClientSettings,
}

/// What a call reports while it is under way.
#[derive(Debug, Clone, Copy)]
pub enum CallProgress<'a> {
    /// An attempt failed and is retried after the record's wait.
    Retry(&'a AttemptRecord),
    /// A piece of the answer's text, as a streamed answer (`stream: true`) delivers it.
    /// A retried attempt may have delivered pieces before it failed.
    Text(&'a str),
}

/// One attempt's outcome.
enum Sent {
    Success {
        status: u16,
        body: Vec<u8>,
        /// The server answered with server-sent events (`stream: true`).
        event_stream: bool,
    },
    Failed {
        failure: AttemptFailure,
        retry: Retry,
        /// The body of an error status; `None` when no answer arrived.
        body: Option<Vec<u8>>,
    },
}

enum Retry {
    Never,
    Backoff,
    After(Duration),
}

impl LlmClient {
    /// Builds the client for the credentials' API. Redirects are not followed: a
    /// redirected POST silently turns into a GET, so the redirect is reported for the user
    /// to fix the base URL.
    pub fn new(credentials: Credentials, settings: ClientSettings) -> Result<Self, LlmError> {
        let api = credentials.api();
        let endpoint_text = wire::endpoint(api, credentials.base_url());
        let shown_endpoint = url_without_userinfo(&endpoint_text);
        let endpoint = Url::parse(&endpoint_text).map_err(|error| LlmError::Setup {
            detail: format!("invalid endpoint {shown_endpoint}: {error}"),
        })?;
        let authorization = credentials
            .api_key()
            .map(|key| {
                let (name, text) = match api {
                    ModelApi::Chat | ModelApi::Responses => {
                        (AUTHORIZATION, format!("Bearer {key}"))
                    }
                    ModelApi::Anthropic => (HeaderName::from_static("x-api-key"), key.to_owned()),
                };
                let mut value = HeaderValue::from_str(&text).map_err(|_| LlmError::Setup {
                    detail: "the API key cannot be sent in an HTTP header".to_owned(),
                })?;
                // Keeps the header out of any `Debug` output of the request.
                value.set_sensitive(true);
                Ok((name, value))
            })
            .transpose()?;
        let http = crate::http::client_builder()
            .timeout(settings.request_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("delta-engine/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|error| LlmError::Setup {
                detail: error.to_string(),
            })?;
        Ok(LlmClient {
            api,
            http,
            endpoint,
            shown_endpoint,
            redactor: Redactor::for_run(&credentials, |_| None),
            authorization,
            settings,
        })
    }

    /// The URL requests go to (`{base_url}/chat/completions` for chat), with any userinfo
    /// of the base URL replaced by `[REDACTED]`.
    pub fn endpoint(&self) -> &str {
        &self.shown_endpoint
    }

    /// The API the client speaks.
    pub fn api(&self) -> ModelApi {
        self.api
    }

    /// Sends `body` (a serialized request of the client's API) as it is and returns the
    /// parsed answer. Connection errors, HTTP 408, 429 and 5xx are retried up to
    /// `max_attempts`, a timeout only once; other statuses and malformed 2xx bodies fail at
    /// once.
    pub async fn complete(&self, body: &[u8]) -> Result<Completion, LlmError> {
        self.complete_observed(body, |_| {}).await
    }

    /// [`LlmClient::complete`], telling `on_progress` of each failed attempt just before
    /// waiting to retry it, so the engine can tell the user why nothing is happening, and
    /// of each piece of a streamed answer's text as it arrives.
    pub async fn complete_observed(
        &self,
        body: &[u8],
        mut on_progress: impl FnMut(CallProgress<'_>),
    ) -> Result<Completion, LlmError> {
        let started = Instant::now();
        let max_attempts = self.settings.max_attempts.max(1);
        let mut attempts = Vec::new();
        let mut attempt = 0;
        let mut timed_out = 0;
        loop {
            attempt += 1;
            let (mut failure, retry, answer) = match self.send(body, &mut on_progress).await {
                Sent::Success {
                    status,
                    body,
                    event_stream,
                } => {
                    return self.finish(status, body, event_stream, attempts, started);
                }
                Sent::Failed {
                    failure,
                    retry,
                    body,
                } => (failure, retry, body),
            };
            if matches!(failure, AttemptFailure::Timeout { .. }) {
                timed_out += 1;
            }
            let wait = if attempt >= max_attempts || timed_out >= TIMED_OUT_ATTEMPTS {
                None
            } else {
                match retry {
                    Retry::Never => None,
                    Retry::Backoff => Some(self.backoff(attempt)),
                    Retry::After(wait) if wait <= self.settings.backoff_max => Some(wait),
                    Retry::After(wait) => {
                        if let AttemptFailure::Status { message, .. } = &mut failure {
                            message.push_str(&format!(
                                " (the server asks to wait {} before retrying, longer than the \
                                 {} this client waits)",
                                format_duration(wait),
                                format_duration(self.settings.backoff_max)
                            ));
                        }
                        None
                    }
                }
            };
            let record = AttemptRecord {
                attempt,
                max_attempts,
                failure,
                wait,
            };
            match wait {
                Some(wait) => {
                    on_progress(CallProgress::Retry(&record));
                    attempts.push(record);
                    tokio::time::sleep(wait).await;
                }
                None => {
                    let failure = record.failure.clone();
                    attempts.push(record);
                    return Err(self.final_error(failure, answer, attempts));
                }
            }
        }
    }

    async fn send(&self, body: &[u8], on_progress: &mut impl FnMut(CallProgress<'_>)) -> Sent {
        let mut request = self
            .http
            .post(self.endpoint.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(body.to_vec());
        if let Some((name, value)) = &self.authorization {
            request = request.header(name.clone(), value.clone());
        }
        if self.api == ModelApi::Anthropic {
            request = request.header("anthropic-version", ANTHROPIC_VERSION);
        }
        let mut response = match request.send().await {
            Ok(response) => response,
            Err(error) => return self.transport_failure(&error),
        };
        let status = response.status();
        let retry_after = retry_after(response.headers(), SystemTime::now());
        let location = header_text(response.headers(), LOCATION.as_str()).map(str::to_owned);
        let content_type =
            header_text(response.headers(), CONTENT_TYPE.as_str()).map(str::to_owned);
        let live = status.is_success() && is_event_stream(content_type.as_deref(), b"");
        let body = if live {
            let mut body = Vec::new();
            let mut text = LiveText::new(self.api);
            loop {
                match response.chunk().await {
                    Ok(Some(chunk)) => {
                        body.extend_from_slice(&chunk);
                        text.feed(&chunk, |piece| on_progress(CallProgress::Text(piece)));
                    }
                    Ok(None) => break body,
                    Err(error) => return self.transport_failure(&error),
                }
            }
        } else {
            match response.bytes().await {
                Ok(body) => body.to_vec(),
                Err(error) => return self.transport_failure(&error),
            }
        };
        if status.is_success() {
            let event_stream = is_event_stream(content_type.as_deref(), &body);
            // An overloaded service may say so inside a 2xx stream: a retry may cure it.
            if event_stream && let Some((status, message)) = wire::stream_failure(self.api, &body) {
                return Sent::Failed {
                    failure: AttemptFailure::Status {
                        status,
                        message: self.redact(truncate(&message, MESSAGE_CHARS)),
                    },
                    retry: Retry::Backoff,
                    body: Some(body),
                };
            }
            return Sent::Success {
                status: status.as_u16(),
                event_stream,
                body,
            };
        }

        let (message, code) = self.error_message(status, &body, location.as_deref());
        // An exhausted quota is reported as 429 too, but waiting does not refill it.
        let quota_exhausted = code.as_deref() == Some("insufficient_quota");
        let retryable = status.is_server_error()
            || status == StatusCode::REQUEST_TIMEOUT
            || (status == StatusCode::TOO_MANY_REQUESTS && !quota_exhausted);
        Sent::Failed {
            failure: AttemptFailure::Status {
                status: status.as_u16(),
                message,
            },
            retry: match (retryable, retry_after) {
                (false, _) => Retry::Never,
                (true, Some(wait)) => Retry::After(wait),
                (true, None) => Retry::Backoff,
            },
            body: Some(body),
        }
    }

    fn finish(
        &self,
        status: u16,
        body: Vec<u8>,
        event_stream: bool,
        attempts: Vec<AttemptRecord>,
        started: Instant,
    ) -> Result<Completion, LlmError> {
        // A stream is reassembled into the body a non-streamed call returns; the events
        // themselves are kept for `response.sse`.
        let parsed = if event_stream {
            wire::assemble(self.api, &body).and_then(|assembled| {
                wire::parse_body(self.api, &assembled).map(|parsed| (parsed, Some(assembled)))
            })
        } else {
            wire::parse_body(self.api, &body).map(|parsed| (parsed, None))
        };
        match parsed {
            Ok((parsed, assembled)) => {
                let (raw_body, stream) = match assembled {
                    Some(assembled) => (assembled, Some(body)),
                    None => (body, None),
                };
                Ok(Completion::new(
                    parsed,
                    raw_body,
                    stream,
                    attempts,
                    started.elapsed(),
                ))
            }
            Err(reason) => Err(LlmError::MalformedResponse {
                url: self.shown_endpoint.clone(),
                api: self.api,
                status,
                reason: self.redact(truncate(&reason, MESSAGE_CHARS)),
                excerpt: self.redact(excerpt(&body)),
                body: body.into(),
                attempts,
            }),
        }
    }

    /// The error for the attempt that ended the call; `answer` is the body of its response
    /// when one arrived.
    fn final_error(
        &self,
        failure: AttemptFailure,
        answer: Option<Vec<u8>>,
        attempts: Vec<AttemptRecord>,
    ) -> LlmError {
        let url = self.shown_endpoint.clone();
        match failure {
            AttemptFailure::Connection { .. } => LlmError::Unreachable {
                url,
                api: self.api,
                attempts,
            },
            AttemptFailure::Timeout { after } => LlmError::Timeout {
                url,
                timeout: after,
                attempts,
            },
            AttemptFailure::Status { status, message } => LlmError::Http {
                url,
                api: self.api,
                status,
                message,
                body: answer.unwrap_or_default().into(),
                attempts,
            },
        }
    }

    fn transport_failure(&self, error: &reqwest::Error) -> Sent {
        let failure = if error.is_timeout() {
            AttemptFailure::Timeout {
                after: self.settings.request_timeout,
            }
        } else {
            AttemptFailure::Connection {
                detail: self.redact(describe_transport_error(error)),
            }
        };
        Sent::Failed {
            failure,
            retry: Retry::Backoff,
            body: None,
        }
    }

    /// The server's explanation of an error status, and its machine-readable code if any.
    /// OpenAI sends `{"error": {"message", "type", "code"}}`; other compatible servers send
    /// `{"error": "…"}`, `{"message": "…"}` or FastAPI's `{"detail": "…"}`.
    fn error_message(
        &self,
        status: StatusCode,
        body: &[u8],
        location: Option<&str>,
    ) -> (String, Option<String>) {
        let json: Option<Value> = serde_json::from_slice(body).ok();
        let field = |name: &str| json.as_ref().and_then(|json| json.get(name));
        let code = field("error").and_then(|error| {
            ["code", "type"]
                .into_iter()
                .find_map(|key| error.get(key).and_then(Value::as_str))
                .map(str::to_owned)
        });
        let message = if let Some(error) = field("error") {
            error_text(error)
        } else if let Some(Value::String(text)) = field("message").or_else(|| field("detail")) {
            text.clone()
        } else if status.is_redirection() {
            format!(
                "redirected to {}",
                location.unwrap_or("an unnamed location")
            )
        } else if !body.iter().all(u8::is_ascii_whitespace) {
            excerpt(body)
        } else {
            status
                .canonical_reason()
                .unwrap_or("no explanation given")
                .to_owned()
        };
        (self.redact(truncate(&message, MESSAGE_CHARS)), code)
    }

    fn backoff(&self, attempt: u32) -> Duration {
        let doubled = self
            .settings
            .backoff_base
            .saturating_mul(2_u32.saturating_pow(attempt.saturating_sub(1)));
        doubled
            .min(self.settings.backoff_max)
            .mul_f64(fastrand::f64())
    }

    /// Servers may echo the key they were sent (some local ones do, in full); it must not
    /// travel on into logs or the journal.
    fn redact(&self, text: String) -> String {
        self.redactor.redact(&text)
    }
}

/// reqwest's top-level message only repeats the URL, which the final error names anyway;
/// its sources say what happened ("Connection refused", "connection closed before message
/// completed").
fn describe_transport_error(error: &reqwest::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !parts.last().is_some_and(|last| last.contains(&text)) {
            parts.push(text);
        }
        source = cause.source();
    }
    if parts.is_empty() {
        parts.push(error.to_string());
    }
    parts.join(": ")
}

fn header_text<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(str::trim)
}

/// The wait a server asked for: OpenAI's `retry-after-ms`, else `Retry-After` as seconds or
/// an HTTP-date (a date in the past means now). `None` when absent or unparsable.
fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let milliseconds = header_text(headers, "retry-after-ms")
        .and_then(|text| text.parse::<f64>().ok())
        .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok());
    if milliseconds.is_some() {
        return milliseconds;
    }
    let value = header_text(headers, RETRY_AFTER.as_str())?;
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let date = DateTime::parse_from_rfc2822(value).ok()?;
    let now = DateTime::<Utc>::from(now);
    Some(
        (date.with_timezone(&Utc) - now)
            .to_std()
            .unwrap_or(Duration::ZERO),
    )
}

/// The start of a body on one line, for error messages.
fn excerpt(body: &[u8]) -> String {
    if body.is_empty() {
        return "(empty body)".to_owned();
    }
    let text = String::from_utf8_lossy(body);
    let flattened: String = text
        .trim()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    truncate(&flattened, EXCERPT_CHARS)
}

fn truncate(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn retry_after_accepts_seconds_dates_and_milliseconds() {
        // 2015-10-21T07:28:00Z
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_480);
        let at = |pairs| retry_after(&headers(pairs), now);
        assert_eq!(at(&[("retry-after", "0")]), Some(Duration::ZERO));
        assert_eq!(at(&[("retry-after", " 7 ")]), Some(Duration::from_secs(7)));
        assert_eq!(
            at(&[("retry-after", "Wed, 21 Oct 2015 07:28:09 GMT")]),
            Some(Duration::from_secs(9))
        );
        assert_eq!(
            at(&[("retry-after", "Wed, 21 Oct 2015 07:00:00 GMT")]),
            Some(Duration::ZERO)
        );
        assert_eq!(
            at(&[("retry-after", "9"), ("retry-after-ms", "1500")]),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(at(&[("retry-after", "soon")]), None);
        assert_eq!(at(&[("retry-after-ms", "-3")]), None);
        assert_eq!(at(&[]), None);
    }

    #[test]
    fn excerpts_are_one_short_line() {
        assert_eq!(excerpt(b""), "(empty body)");
        assert_eq!(excerpt(b" a\nb "), "a b");
        let long = "x".repeat(EXCERPT_CHARS + 5);
        assert_eq!(
            excerpt(long.as_bytes()),
            format!("{}…", "x".repeat(EXCERPT_CHARS))
        );
        assert_eq!(truncate("héllo", 2), "hé…");
    }
}
