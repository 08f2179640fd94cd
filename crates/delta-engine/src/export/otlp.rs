//! The run as one OpenTelemetry trace, OTLP/JSON `ExportTraceServiceRequest`, with the
//! GenAI semantic conventions: an `invoke_agent` root span, a `chat` span per LLM call
//! and an `execute_tool` span per tool call under it; hooks, human input, user and system
//! messages as events of the root span.
//!
//! OTLP/JSON rules followed (opentelemetry-proto's JSON mapping): trace and span ids are
//! lowercase hex, enums are integers, 64-bit integers (times, `intValue`) are strings.
//! Ids are derived from the run id and the journal seq, so exporting a run twice gives
//! the same trace, and a collector that receives it twice sees the same spans.

use serde_json::{Value, json};

use super::Content;
use crate::journal::{ActionStatus, Event, EventPayload, HookStatus};
use crate::run::{RunStatus, Timestamp};
use crate::trajectory::{Iteration, ToolStep, Trajectory};

/// The instrumentation scope and `service.name`.
const SERVICE: &str = "delta-engine";
/// `SPAN_KIND_INTERNAL`.
const KIND_INTERNAL: u8 = 1;
/// `SPAN_KIND_CLIENT`.
const KIND_CLIENT: u8 = 3;
/// `STATUS_CODE_OK`.
const STATUS_OK: u8 = 1;
/// `STATUS_CODE_ERROR`.
const STATUS_ERROR: u8 = 2;

/// The `ExportTraceServiceRequest` of `trajectory`.
#[must_use]
pub fn trace_request(trajectory: &Trajectory, content: Content) -> Value {
    let ids = Ids::new(trajectory.run_id());
    let root_id = ids.span("root", 0);
    let mut spans = vec![root_span(trajectory, &ids, &root_id, content)];
    for iteration in trajectory.iterations() {
        if let Some((event, _)) = iteration.thought {
            spans.push(chat_span(&ids, &root_id, &iteration, event, content));
        }
        for tool in &iteration.tools {
            spans.push(tool_span(trajectory, &ids, &root_id, tool, content));
        }
    }
    json!({
        "resourceSpans": [{
            "resource": {"attributes": [
                attr("service.name", json!({"stringValue": SERVICE})),
                attr("service.version", json!({"stringValue": env!("CARGO_PKG_VERSION")})),
            ]},
            "scopeSpans": [{
                "scope": {"name": SERVICE, "version": env!("CARGO_PKG_VERSION")},
                "spans": spans,
            }],
        }],
    })
}

/// The number of spans in a request made by [`trace_request`].
#[must_use]
pub fn span_count(request: &Value) -> usize {
    request
        .pointer("/resourceSpans/0/scopeSpans/0/spans")
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}

fn root_span(trajectory: &Trajectory, ids: &Ids, root_id: &str, content: Content) -> Value {
    let metadata = &trajectory.metadata;
    let mut attributes = vec![
        string("gen_ai.operation.name", "invoke_agent"),
        string("gen_ai.agent.name", &metadata.agent_name),
        string("gen_ai.agent.id", trajectory.run_id()),
        string("gen_ai.conversation.id", trajectory.run_id()),
        string("gen_ai.provider.name", "openai"),
        int("gen_ai.usage.input_tokens", metadata.usage.input_tokens),
        int("gen_ai.usage.output_tokens", metadata.usage.output_tokens),
        string("delta.run.status", metadata.status.as_str()),
        int("delta.run.iterations", u64::from(metadata.iterations)),
        double("delta.run.cost_usd", metadata.usage.total_cost_usd),
    ];
    if let Some(model) = trajectory.model() {
        attributes.push(string("gen_ai.request.model", model));
    }
    if let Some(error) = &metadata.error {
        attributes.push(string("error.type", error.error_type.as_str()));
    }
    let events: Vec<Value> = trajectory
        .events
        .iter()
        .filter_map(|event| span_event(event, content))
        .collect();
    let status = match metadata.status {
        RunStatus::Completed => json!({"code": STATUS_OK}),
        RunStatus::Failed | RunStatus::Interrupted => json!({
            "code": STATUS_ERROR,
            "message": metadata.error.as_ref().map_or_else(
                || metadata.status.as_str().to_owned(),
                |e| format!("{}: {}", e.error_type, e.message),
            ),
        }),
        RunStatus::Running | RunStatus::WaitingForInput => json!({}),
    };
    json!({
        "traceId": ids.trace,
        "spanId": root_id,
        "name": format!("invoke_agent {}", metadata.agent_name),
        "kind": KIND_INTERNAL,
        "startTimeUnixNano": nanos(metadata.created_at),
        "endTimeUnixNano": nanos(trajectory.end_time()),
        "attributes": attributes,
        "events": events,
        "status": status,
    })
}

fn chat_span(
    ids: &Ids,
    root_id: &str,
    iteration: &Iteration<'_>,
    event: &Event,
    content: Content,
) -> Value {
    let call = iteration.call;
    let model = call.and_then(|c| c.model.as_deref()).unwrap_or("unknown");
    let end = event.timestamp;
    let (start, end) = match call.and_then(|c| c.started_at.zip(c.duration_ms)) {
        Some((start, duration)) => (
            nanos(start),
            nanos(start).parse::<u64>().unwrap_or(0) + duration * 1_000_000,
        ),
        None => (nanos(end), nanos(end).parse::<u64>().unwrap_or(0)),
    };
    let mut attributes = vec![
        string("gen_ai.operation.name", "chat"),
        string("gen_ai.provider.name", "openai"),
        string("gen_ai.request.model", model),
        int("delta.iteration", u64::from(iteration.number)),
    ];
    if let Some(call) = call {
        if let Some(response_model) = &call.response_model {
            attributes.push(string("gen_ai.response.model", response_model));
        }
        if let Some(usage) = call.token_usage {
            attributes.push(int("gen_ai.usage.input_tokens", usage.prompt_tokens));
            attributes.push(int("gen_ai.usage.output_tokens", usage.completion_tokens));
        }
        if let Some(reason) = &call.finish_reason {
            attributes.push(attr(
                "gen_ai.response.finish_reasons",
                json!({"arrayValue": {"values": [{"stringValue": reason}]}}),
            ));
        }
        attributes.push(string("delta.llm_invocation_ref", &call.invocation_id));
    }
    if let Some((_, thought)) = iteration.thought
        && !content.redact
    {
        let calls: Vec<Value> = thought
            .tool_calls
            .iter()
            .map(|c| json!({"type": "tool_call", "id": c.id, "name": c.name, "arguments": c.arguments}))
            .collect();
        let mut parts = vec![json!({"type": "text", "content": thought.content})];
        parts.extend(calls);
        let messages = json!([{"role": "assistant", "parts": parts}]);
        attributes.push(string("gen_ai.output.messages", &messages.to_string()));
    }
    json!({
        "traceId": ids.trace,
        "spanId": ids.span("chat", event.seq),
        "parentSpanId": root_id,
        "name": format!("chat {model}"),
        "kind": KIND_CLIENT,
        "startTimeUnixNano": start,
        "endTimeUnixNano": end.to_string(),
        "attributes": attributes,
        "status": {},
    })
}

fn tool_span(
    trajectory: &Trajectory,
    ids: &Ids,
    root_id: &str,
    tool: &ToolStep<'_>,
    content: Content,
) -> Value {
    let request = tool.request;
    let mut attributes = vec![
        string("gen_ai.operation.name", "execute_tool"),
        string("gen_ai.tool.name", &request.tool_name),
        string("gen_ai.tool.call.id", &request.tool_call_id),
        string("gen_ai.tool.type", "function"),
        string("delta.action_id", &request.action_id),
    ];
    if !content.redact {
        attributes.push(string(
            "gen_ai.tool.call.arguments",
            &Value::Object(request.tool_args.clone()).to_string(),
        ));
        if let Some(command) = &request.resolved_command {
            attributes.push(string("process.command_line", command));
        }
    }
    let end = match tool.result {
        Some((event, result)) => {
            attributes.push(string("delta.tool.status", status_name(result.status)));
            if let Some(code) = result.exit_code {
                attributes.push(attr(
                    "process.exit.code",
                    json!({"intValue": code.to_string()}),
                ));
            }
            if !content.redact {
                attributes.push(string(
                    "gen_ai.tool.call.result",
                    &result.observation_content,
                ));
            }
            event.timestamp
        }
        None => trajectory.end_time(),
    };
    let status = match tool.result.map(|(_, r)| r.status) {
        Some(ActionStatus::Success) => json!({"code": STATUS_OK}),
        Some(status @ (ActionStatus::Failed | ActionStatus::Error)) => json!({
            "code": STATUS_ERROR,
            "message": status_name(status),
        }),
        None => json!({}),
    };
    json!({
        "traceId": ids.trace,
        "spanId": ids.span("tool", tool.request_event.seq),
        "parentSpanId": root_id,
        "name": format!("execute_tool {}", request.tool_name),
        "kind": KIND_INTERNAL,
        "startTimeUnixNano": nanos(tool.request_event.timestamp),
        "endTimeUnixNano": nanos(end),
        "attributes": attributes,
        "status": status,
    })
}

/// The root span's event for a journal event that is not a span of its own.
fn span_event(event: &Event, content: Content) -> Option<Value> {
    let seq = int("delta.seq", event.seq);
    let (name, mut attributes) = match &event.payload {
        EventPayload::HookExecutionAudit(hook) => (
            "delta.hook",
            vec![
                string("delta.hook.name", &hook.hook_name),
                string("delta.hook.status", &hook_status_name(hook.status)?),
                string("delta.hook.io_path_ref", &hook.io_path_ref),
            ],
        ),
        EventPayload::ClaudeHook(hook) => {
            let mut attributes = vec![
                string("delta.hook.name", &hook.event),
                string("delta.hook.protocol", "claude"),
                string("delta.hook.command", content.text(&hook.command)),
                string("delta.hook.status", &hook_status_name(hook.status)?),
                string("delta.hook.ended", &hook.ended),
                int("delta.hook.duration_ms", hook.duration_ms),
                string("delta.hook.io_path_ref", &hook.io_path_ref),
            ];
            if let Some(decision) = hook.decision {
                attributes.push(string("delta.hook.decision", decision.as_str()));
            }
            if let Some(reason) = &hook.reason {
                attributes.push(string("delta.hook.reason", content.text(reason)));
            }
            ("delta.claude_hook", attributes)
        }
        EventPayload::HumanInputRequest(question) => (
            "delta.human_input.request",
            vec![
                string("delta.human_input.request_id", &question.request_id),
                string("delta.human_input.prompt", content.text(&question.prompt)),
            ],
        ),
        EventPayload::HumanInputReceived(answer) => (
            "delta.human_input.received",
            vec![
                string("delta.human_input.request_id", &answer.request_id),
                string("delta.human_input.response", content.text(&answer.response)),
            ],
        ),
        EventPayload::SystemMessage(message) => (
            "delta.system_message",
            vec![
                string("delta.level", &message.level.to_string()),
                string("delta.content", &message.content),
            ],
        ),
        EventPayload::UserMessage(message) => (
            "delta.user_message",
            vec![string("delta.content", content.text(&message.content))],
        ),
        EventPayload::RunStart(start) => (
            "delta.run_start",
            vec![string("delta.content", content.text(&start.task))],
        ),
        EventPayload::RunEnd(end) => (
            "delta.run_end",
            vec![string(
                "delta.run.status",
                crate::run::RunStatus::from(end.status).as_str(),
            )],
        ),
        EventPayload::Thought(_)
        | EventPayload::ActionRequest(_)
        | EventPayload::ActionResult(_) => return None,
    };
    attributes.push(seq);
    Some(json!({
        "timeUnixNano": nanos(event.timestamp),
        "name": name,
        "attributes": attributes,
    }))
}

fn status_name(status: ActionStatus) -> &'static str {
    match status {
        ActionStatus::Success => "SUCCESS",
        ActionStatus::Failed => "FAILED",
        ActionStatus::Error => "ERROR",
    }
}

/// Deterministic ids: FNV-1a over the run id (and a span's kind and seq). Not
/// cryptographic, and need not be: they only have to be stable, well spread and nonzero.
struct Ids {
    run_id: String,
    trace: String,
}

impl Ids {
    fn new(run_id: &str) -> Self {
        let trace = format!(
            "{:016x}{:016x}",
            nonzero(fnv1a(0, run_id.as_bytes())),
            nonzero(fnv1a(1, run_id.as_bytes()))
        );
        Self {
            run_id: run_id.to_owned(),
            trace,
        }
    }

    fn span(&self, kind: &str, seq: u64) -> String {
        let key = format!("{}\u{0}{kind}\u{0}{seq}", self.run_id);
        format!("{:016x}", nonzero(fnv1a(2, key.as_bytes())))
    }
}

fn fnv1a(salt: u8, bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    std::iter::once(salt)
        .chain(bytes.iter().copied())
        .fold(OFFSET, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(PRIME)
        })
}

fn nonzero(value: u64) -> u64 {
    if value == 0 { 1 } else { value }
}

/// Nanoseconds since the epoch as OTLP/JSON writes a fixed64: a decimal string.
fn nanos(time: Timestamp) -> String {
    let millis = u64::try_from(time.as_datetime().timestamp_millis()).unwrap_or(0);
    (millis * 1_000_000).to_string()
}

fn attr(key: &str, value: Value) -> Value {
    json!({"key": key, "value": value})
}

/// A hook's status as journaled (`SUCCESS`, `FAILED`, `SKIPPED`).
fn hook_status_name(status: HookStatus) -> Option<String> {
    serde_json::to_value(status)
        .ok()?
        .as_str()
        .map(str::to_owned)
}

fn string(key: &str, value: &str) -> Value {
    attr(key, json!({"stringValue": value}))
}

fn int(key: &str, value: u64) -> Value {
    attr(key, json!({"intValue": value.to_string()}))
}

fn double(key: &str, value: f64) -> Value {
    attr(key, json!({"doubleValue": value}))
}

/// What can go wrong posting a trace to a collector.
#[derive(Debug, thiserror::Error)]
pub enum PostError {
    /// The endpoint is not a usable http(s) URL.
    #[error("--otlp-endpoint {endpoint:?} is not an http(s) URL: {reason}")]
    Endpoint {
        /// The endpoint, without credentials.
        endpoint: String,
        /// What is wrong.
        reason: String,
    },
    /// `OTEL_EXPORTER_OTLP_HEADERS` is malformed.
    #[error(
        "{variable}: entry {index} is not `key=value` (expected e.g. \
         `authorization=Bearer%20TOKEN,x-tenant=a`)"
    )]
    Headers {
        /// The variable read.
        variable: &'static str,
        /// 1-based position of the bad entry.
        index: usize,
    },
    /// The request could not be sent.
    #[error("cannot post the trace to {endpoint}: {reason}")]
    Send {
        /// The URL posted to, without credentials.
        endpoint: String,
        /// The client's error.
        reason: String,
    },
    /// The collector answered with an error status.
    #[error("the collector at {endpoint} answered HTTP {status}: {body}")]
    Rejected {
        /// The URL posted to, without credentials.
        endpoint: String,
        /// The HTTP status.
        status: u16,
        /// The start of its answer.
        body: String,
    },
}

/// The traces URL for `endpoint`: used as given when its path ends in `/v1/traces` (a
/// signal-specific endpoint), else `/v1/traces` is appended (a base endpoint, as
/// `OTEL_EXPORTER_OTLP_ENDPOINT` is).
///
/// # Errors
/// [`PostError::Endpoint`] when it is not an http(s) URL.
pub fn traces_url(endpoint: &str) -> Result<reqwest::Url, PostError> {
    let fail = |reason: String| PostError::Endpoint {
        endpoint: without_userinfo(endpoint),
        reason,
    };
    let mut url = reqwest::Url::parse(endpoint).map_err(|e| fail(e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(fail(format!(
            "scheme {} is not http or https",
            url.scheme()
        )));
    }
    if !url.path().ends_with("/v1/traces") {
        let path = format!("{}/v1/traces", url.path().trim_end_matches('/'));
        url.set_path(&path);
    }
    Ok(url)
}

fn without_userinfo(endpoint: &str) -> String {
    match reqwest::Url::parse(endpoint) {
        Ok(mut url) => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.to_string()
        }
        Err(_) => endpoint
            .split('@')
            .next_back()
            .unwrap_or_default()
            .to_owned(),
    }
}

/// The headers of `OTEL_EXPORTER_OTLP_TRACES_HEADERS`, else `OTEL_EXPORTER_OTLP_HEADERS`:
/// `key=value` pairs separated by commas, values percent-decoded (the OpenTelemetry
/// environment variable specification).
///
/// # Errors
/// [`PostError::Headers`] naming the variable and the bad entry.
pub fn headers_from_env(
    env: impl Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, PostError> {
    for variable in [
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        "OTEL_EXPORTER_OTLP_HEADERS",
    ] {
        let Some(value) = env(variable) else {
            continue;
        };
        let mut headers = Vec::new();
        for (index, entry) in value.split(',').enumerate() {
            if entry.trim().is_empty() {
                continue;
            }
            let (key, value) = entry
                .split_once('=')
                .filter(|(key, _)| !key.trim().is_empty())
                .ok_or(PostError::Headers {
                    variable,
                    index: index + 1,
                })?;
            headers.push((percent_decode(key.trim()), percent_decode(value.trim())));
        }
        return Ok(headers);
    }
    Ok(Vec::new())
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while let Some(&byte) = bytes.get(index) {
        let hex = bytes
            .get(index + 1..index + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (byte, hex) {
            (b'%', Some(decoded)) => {
                out.push(decoded);
                index += 3;
            }
            _ => {
                out.push(byte);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Posts `body` (an OTLP/JSON request) to `url` with `headers`, as OTLP/HTTP does.
///
/// # Errors
/// [`PostError::Send`] when nothing came back, [`PostError::Rejected`] on a non-2xx answer.
pub async fn post(
    url: &reqwest::Url,
    headers: &[(String, String)],
    body: String,
) -> Result<(), PostError> {
    let shown = without_userinfo(url.as_str());
    let send = |e: reqwest::Error| PostError::Send {
        endpoint: shown.clone(),
        reason: e.without_url().to_string(),
    };
    let client = crate::http::client_builder()
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .map_err(send)?;
    let mut request = client
        .post(url.clone())
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body);
    for (key, value) in headers {
        request = request.header(key.as_str(), value.as_str());
    }
    let response = request.send().await.map_err(send)?;
    let status = response.status();
    if status.is_success() {
        return Ok(());
    }
    let body = response.text().await.unwrap_or_default();
    Err(PostError::Rejected {
        endpoint: shown,
        status: status.as_u16(),
        body: body.chars().take(300).collect(),
    })
}
