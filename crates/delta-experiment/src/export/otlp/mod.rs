//! The run as one OpenTelemetry trace, an OTLP `ExportTraceServiceRequest` built from the
//! official protobuf definitions (`opentelemetry-proto`), with the GenAI semantic
//! conventions: an `invoke_agent` root span, a `chat` span per LLM call (answered or
//! not) and an `execute_tool` span per tool call under it; hooks, human input, user and
//! system messages as events of the root span.
//!
//! One value, two encodings: protobuf (`application/x-protobuf`, what every receiver
//! takes) and OTLP/JSON (the crate's serde mapping: hex ids, 64-bit integers as strings),
//! so the two cannot drift apart. Ids are derived from the run's identity (its
//! `trace_id`) and the journal seq or invocation id, so exporting a run twice gives the
//! same trace, and two runs that share a run id are two traces.

mod messages;
mod send;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValueKind;
use opentelemetry_proto::tonic::common::v1::{
    AnyValue, ArrayValue, InstrumentationScope, KeyValue,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::span::{Event as SpanEvent, SpanKind};
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span, Status};

pub use send::{
    PostError, Posted, Protocol, Settings, headers_from_env, post, traces_url, without_userinfo,
};

use super::Content;
use delta_engine::journal::{ActionStatus, Event, EventPayload, HookStatus, Thought};
use delta_engine::llm::ModelApi;
use delta_engine::run::{RunStatus, Timestamp};
use delta_engine::trajectory::{LlmCall, ToolStep, Trajectory};

/// The instrumentation scope and `service.name`.
const SERVICE: &str = "delta-engine";

/// The `ExportTraceServiceRequest` of `trajectory`.
#[must_use]
pub fn trace_request(trajectory: &Trajectory, content: Content) -> ExportTraceServiceRequest {
    let ids = Ids::new(trajectory);
    let root_id = ids.span("root", "0");
    // Once per trace: finding it scans the calls.
    let provider = provider(trajectory);
    let mut spans = vec![root_span(trajectory, &ids, &root_id, provider, content)];
    for iteration in trajectory.iterations() {
        if let Some((event, thought)) = iteration.thought {
            let answered = Answered { event, thought };
            spans.push(chat_span(
                trajectory,
                &ids,
                &root_id,
                provider,
                iteration.call,
                Some(answered),
                content,
            ));
        }
        for tool in &iteration.tools {
            spans.push(tool_span(
                trajectory, &ids, &root_id, provider, tool, content,
            ));
        }
    }
    for call in trajectory.unanswered_calls() {
        spans.push(chat_span(
            trajectory,
            &ids,
            &root_id,
            provider,
            Some(call),
            None,
            content,
        ));
    }
    let version = env!("CARGO_PKG_VERSION");
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(Resource {
                attributes: vec![
                    string("service.name", SERVICE),
                    string("service.version", version),
                ],
                ..Resource::default()
            }),
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: SERVICE.to_owned(),
                    version: version.to_owned(),
                    ..InstrumentationScope::default()
                }),
                spans,
                ..ScopeSpans::default()
            }],
            ..ResourceSpans::default()
        }],
    }
}

/// `request` as OTLP/JSON, pretty-printed with a trailing newline.
#[must_use]
pub fn to_json(request: &ExportTraceServiceRequest) -> String {
    let mut text = serde_json::to_string_pretty(request).unwrap_or_default();
    text.push('\n');
    text
}

/// The number of spans in `request`.
#[must_use]
pub fn span_count(request: &ExportTraceServiceRequest) -> usize {
    request
        .resource_spans
        .iter()
        .flat_map(|r| &r.scope_spans)
        .map(|s| s.spans.len())
        .sum()
}

fn root_span(
    trajectory: &Trajectory,
    ids: &Ids,
    root_id: &[u8],
    provider: &str,
    content: Content,
) -> Span {
    let metadata = &trajectory.metadata;
    let mut attributes = vec![
        string("gen_ai.operation.name", "invoke_agent"),
        string("gen_ai.agent.name", &metadata.agent_name),
        string("gen_ai.agent.id", trajectory.run_id()),
        string("gen_ai.conversation.id", trajectory.run_id()),
        string("gen_ai.provider.name", provider),
        int("gen_ai.usage.input_tokens", metadata.usage.input_tokens),
        int("gen_ai.usage.output_tokens", metadata.usage.output_tokens),
        string("delta.run.status", metadata.status.as_str()),
        int("delta.run.iterations", u64::from(metadata.iterations)),
        double("delta.run.cost_usd", metadata.usage.total_cost_usd),
    ];
    attributes.extend(cache_attributes(
        metadata.usage.cached_input_tokens,
        metadata.usage.cache_write_tokens,
    ));
    if let Some(model) = trajectory.model() {
        attributes.push(string("gen_ai.request.model", model));
    }
    if let Some(error) = &metadata.error {
        attributes.push(string("error.type", error.error_type.as_str()));
    }
    let events = trajectory
        .events
        .iter()
        .filter_map(|event| span_event(event, content))
        .collect();
    let status = match metadata.status {
        RunStatus::Completed => ok(),
        RunStatus::Failed | RunStatus::Interrupted => error(metadata.error.as_ref().map_or_else(
            || metadata.status.as_str().to_owned(),
            |e| format!("{}: {}", e.error_type, e.message),
        )),
        RunStatus::Running | RunStatus::WaitingForInput => None,
    };
    Span {
        trace_id: ids.trace.to_vec(),
        span_id: root_id.to_vec(),
        name: format!("invoke_agent {}", metadata.agent_name),
        kind: SpanKind::Internal as i32,
        start_time_unix_nano: nanos(metadata.created_at),
        end_time_unix_nano: nanos(trajectory.end_time()),
        attributes,
        events,
        status,
        ..Span::default()
    }
}

/// The THOUGHT that answered a call.
#[derive(Clone, Copy)]
struct Answered<'a> {
    event: &'a Event,
    thought: &'a Thought,
}

/// The `chat` span of one LLM call: `call` is its invocation record (None when another
/// implementation wrote none), `answered` its THOUGHT (None when the call brought none).
fn chat_span(
    trajectory: &Trajectory,
    ids: &Ids,
    root_id: &[u8],
    provider: &str,
    call: Option<&LlmCall>,
    answered: Option<Answered<'_>>,
    content: Content,
) -> Span {
    let model = call.and_then(|c| c.model.as_deref()).unwrap_or("unknown");
    let (start, end) = match (call.and_then(|c| c.started_at), answered) {
        (Some(start), _) => {
            let duration = call.and_then(|c| c.duration_ms).unwrap_or(0);
            (nanos(start), nanos(start) + duration * 1_000_000)
        }
        (None, Some(answered)) => (
            nanos(answered.event.timestamp),
            nanos(answered.event.timestamp),
        ),
        (None, None) => (nanos(trajectory.end_time()), nanos(trajectory.end_time())),
    };
    let mut attributes = vec![
        string("gen_ai.operation.name", "chat"),
        string("gen_ai.provider.name", provider),
        string("gen_ai.request.model", model),
        string("gen_ai.conversation.id", trajectory.run_id()),
    ];
    if let Some(iteration) = call.and_then(|c| c.iteration) {
        attributes.push(int("delta.iteration", u64::from(iteration)));
    }
    let finish_reason = answered.map(|a| messages::finish_reason(call, a.thought));
    if let Some(call) = call {
        if let Some(response_model) = &call.response_model {
            attributes.push(string("gen_ai.response.model", response_model));
        }
        if let Some(usage) = call.token_usage {
            attributes.push(int("gen_ai.usage.input_tokens", usage.prompt_tokens));
            attributes.push(int("gen_ai.usage.output_tokens", usage.completion_tokens));
            attributes.extend(cache_attributes(
                usage.cached_tokens,
                usage.cache_write_tokens,
            ));
        }
        let request = messages::read_request(&trajectory.paths, &call.invocation_id);
        if let Some(request) = &request {
            for (key, parameter) in [
                ("gen_ai.request.temperature", "temperature"),
                ("gen_ai.request.top_p", "top_p"),
            ] {
                if let Some(value) = request.get(parameter).and_then(serde_json::Value::as_f64) {
                    attributes.push(double(key, value));
                }
            }
            if let Some(value) = request
                .get("max_tokens")
                .and_then(serde_json::Value::as_u64)
            {
                attributes.push(int("gen_ai.request.max_tokens", value));
            }
            if !content.redact
                && let Some(input) = messages::input_messages(request, call.api.unwrap_or_default())
            {
                attributes.push(string("gen_ai.input.messages", &input.to_string()));
            }
        }
        if let Some(id) = messages::response_id(&trajectory.paths, &call.invocation_id) {
            attributes.push(string("gen_ai.response.id", &id));
        }
        attributes.push(string("delta.llm_invocation_ref", &call.invocation_id));
    }
    if let Some(reason) = &finish_reason {
        attributes.push(attr(
            "gen_ai.response.finish_reasons",
            AnyValueKind::ArrayValue(ArrayValue {
                values: vec![AnyValue {
                    value: Some(AnyValueKind::StringValue(reason.clone())),
                }],
            }),
        ));
    }
    if let (Some(answered), Some(reason), false) = (answered, &finish_reason, content.redact) {
        let output = messages::output_messages(answered.thought, reason);
        attributes.push(string("gen_ai.output.messages", &output.to_string()));
    }
    let status = match (answered, call) {
        (Some(_), _) => None,
        (None, Some(call)) => {
            let message = call
                .error
                .clone()
                .unwrap_or_else(|| "the call brought no answer".to_owned());
            attributes.push(string("error.type", &messages::error_type(call)));
            error(message)
        }
        (None, None) => None,
    };
    let key = match (answered, call) {
        (Some(answered), _) => answered.event.seq.to_string(),
        (None, Some(call)) => call.invocation_id.clone(),
        (None, None) => String::new(),
    };
    Span {
        trace_id: ids.trace.to_vec(),
        span_id: ids.span("chat", &key),
        parent_span_id: root_id.to_vec(),
        name: format!("chat {model}"),
        kind: SpanKind::Client as i32,
        start_time_unix_nano: start,
        end_time_unix_nano: end.max(start),
        attributes,
        status,
        ..Span::default()
    }
}

fn tool_span(
    trajectory: &Trajectory,
    ids: &Ids,
    root_id: &[u8],
    provider: &str,
    tool: &ToolStep<'_>,
    content: Content,
) -> Span {
    let request = tool.request;
    let mut attributes = vec![
        string("gen_ai.operation.name", "execute_tool"),
        string("gen_ai.provider.name", provider),
        string("gen_ai.tool.name", &request.tool_name),
        string("gen_ai.tool.call.id", &request.tool_call_id),
        string("gen_ai.tool.type", "function"),
        string("delta.action_id", &request.action_id),
    ];
    if !content.redact {
        attributes.push(string(
            "gen_ai.tool.call.arguments",
            &serde_json::Value::Object(request.tool_args.clone()).to_string(),
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
                    AnyValueKind::IntValue(i64::from(code)),
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
        Some(ActionStatus::Success) => ok(),
        Some(status @ (ActionStatus::Failed | ActionStatus::Error)) => {
            attributes.push(string("error.type", status_name(status)));
            error(status_name(status).to_owned())
        }
        None => None,
    };
    let start = nanos(tool.request_event.timestamp);
    Span {
        trace_id: ids.trace.to_vec(),
        span_id: ids.span("tool", &tool.request_event.seq.to_string()),
        parent_span_id: root_id.to_vec(),
        name: format!("execute_tool {}", request.tool_name),
        kind: SpanKind::Internal as i32,
        start_time_unix_nano: start,
        end_time_unix_nano: nanos(end).max(start),
        attributes,
        status,
        ..Span::default()
    }
}

/// The root span's event for a journal event that is not a span of its own.
fn span_event(event: &Event, content: Content) -> Option<SpanEvent> {
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
                RunStatus::from(end.status).as_str(),
            )],
        ),
        EventPayload::Thought(_)
        | EventPayload::ActionRequest(_)
        | EventPayload::ActionResult(_) => return None,
    };
    attributes.push(int("delta.seq", event.seq));
    Some(SpanEvent {
        time_unix_nano: nanos(event.timestamp),
        name: name.to_owned(),
        attributes,
        ..SpanEvent::default()
    })
}

fn status_name(status: ActionStatus) -> &'static str {
    match status {
        ActionStatus::Success => "SUCCESS",
        ActionStatus::Failed => "FAILED",
        ActionStatus::Error => "ERROR",
    }
}

fn ok() -> Option<Status> {
    Some(Status {
        code: StatusCode::Ok as i32,
        ..Status::default()
    })
}

fn error(message: String) -> Option<Status> {
    Some(Status {
        code: StatusCode::Error as i32,
        message,
    })
}

/// The run's trace id and the span ids derived from it: FNV-1a, not cryptographic and
/// need not be: they only have to be stable, well spread and nonzero.
struct Ids {
    trace: [u8; 16],
}

impl Ids {
    /// The trace id is the run's `trace_id`, made at random when it was created. A run
    /// from before it existed gets one derived from what identifies it instead: its id,
    /// when it was created, and its workspace (so the same run id in two workspaces, every
    /// re-run of a batch, is still two traces).
    fn new(trajectory: &Trajectory) -> Self {
        let metadata = &trajectory.metadata;
        let recorded = metadata.trace_id.as_deref().and_then(parse_hex16);
        let trace = recorded.unwrap_or_else(|| {
            let identity = format!(
                "{}\u{0}{}\u{0}{}",
                trajectory.run_id(),
                metadata.created_at,
                metadata.work_dir.display()
            );
            let high = nonzero(fnv1a(0, identity.as_bytes()));
            let low = nonzero(fnv1a(1, identity.as_bytes()));
            let mut bytes = [0; 16];
            bytes[..8].copy_from_slice(&high.to_be_bytes());
            bytes[8..].copy_from_slice(&low.to_be_bytes());
            bytes
        });
        Self { trace }
    }

    fn span(&self, kind: &str, key: &str) -> Vec<u8> {
        let mut bytes = self.trace.to_vec();
        bytes.push(0);
        bytes.extend_from_slice(kind.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(key.as_bytes());
        nonzero(fnv1a(2, &bytes)).to_be_bytes().to_vec()
    }
}

/// 32 hex digits as 16 bytes; None unless exactly that and not all zero.
fn parse_hex16(text: &str) -> Option<[u8; 16]> {
    let value = u128::from_str_radix(text, 16).ok().filter(|v| *v != 0)?;
    (text.len() == 32).then(|| value.to_be_bytes())
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

/// Nanoseconds since the epoch.
fn nanos(time: Timestamp) -> u64 {
    u64::try_from(time.as_datetime().timestamp_millis()).unwrap_or(0) * 1_000_000
}

fn attr(key: &str, value: AnyValueKind) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: Some(AnyValue { value: Some(value) }),
        ..KeyValue::default()
    }
}

fn string(key: &str, value: &str) -> KeyValue {
    attr(key, AnyValueKind::StringValue(value.to_owned()))
}

fn int(key: &str, value: u64) -> KeyValue {
    attr(
        key,
        AnyValueKind::IntValue(i64::try_from(value).unwrap_or(i64::MAX)),
    )
}

fn double(key: &str, value: f64) -> KeyValue {
    attr(key, AnyValueKind::DoubleValue(value))
}

/// OpenTelemetry's GenAI cache attributes (`gen_ai.usage.cache_read.input_tokens`,
/// `gen_ai.usage.cache_creation.input_tokens`, both part of `gen_ai.usage.input_tokens`),
/// when the provider cached anything.
fn cache_attributes(read: u64, written: u64) -> Vec<KeyValue> {
    let mut attributes = Vec::new();
    if read > 0 {
        attributes.push(int("gen_ai.usage.cache_read.input_tokens", read));
    }
    if written > 0 {
        attributes.push(int("gen_ai.usage.cache_creation.input_tokens", written));
    }
    attributes
}

/// `gen_ai.provider.name`: `anthropic` for runs through Anthropic's API, else `openai`
/// (chat completions and Responses are OpenAI's APIs, whichever server offers them).
fn provider(trajectory: &Trajectory) -> &'static str {
    match trajectory.llm_calls().find_map(|call| call.api) {
        Some(ModelApi::Anthropic) => "anthropic",
        Some(ModelApi::Chat | ModelApi::Responses) | None => "openai",
    }
}

/// A hook's status as journaled (`SUCCESS`, `FAILED`, `SKIPPED`).
fn hook_status_name(status: HookStatus) -> Option<String> {
    serde_json::to_value(status)
        .ok()?
        .as_str()
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_recorded_trace_id_is_used_as_is_and_others_are_refused() {
        assert_eq!(
            parse_hex16("0123456789abcdef0123456789abcdef").unwrap()[0],
            0x01
        );
        for bad in ["", "00000000000000000000000000000000", "xyz", "0123"] {
            assert_eq!(parse_hex16(bad), None, "{bad}");
        }
    }
}
