//! `--format otlp` parsed with the official OTLP protobuf definitions (the
//! opentelemetry-proto crate's serde mapping of `ExportTraceServiceRequest`), the span
//! tree checked, and `--otlp-endpoint` posting to a receiver on 127.0.0.1.

use std::sync::mpsc;

use super::receiver::{self, Answer, Received};
use super::{RUNS, Runs, path};
use crate::support::harness::Test;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::{Span, status::StatusCode};

fn attribute<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a AnyValue> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v| v.value.as_ref())
}

fn int(span: &Span, key: &str) -> Option<i64> {
    match attribute(&span.attributes, key) {
        Some(AnyValue::IntValue(value)) => Some(*value),
        _ => None,
    }
}

fn string<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a str> {
    match attribute(attributes, key) {
        Some(AnyValue::StringValue(value)) => Some(value),
        _ => None,
    }
}

/// Parses with the official definitions (a key they do not know fails) and checks what
/// the specifications require.
fn parse(text: &str) -> ExportTraceServiceRequest {
    let request = receiver::parse_json(text.as_bytes()).unwrap();
    receiver::check(&request).unwrap();
    request
}

#[test]
fn every_run_exports_one_otlp_trace_with_the_genai_span_tree() {
    let runs = Runs::new();
    for id in RUNS {
        let text = runs.export(id, "otlp", &[]);
        assert_eq!(
            runs.export(id, "otlp", &[]),
            text,
            "run {id}: re-export differs"
        );
        let request = parse(&text);
        assert_eq!(request.resource_spans.len(), 1);
        let spans = &request.resource_spans[0].scope_spans[0].spans;
        let trace_id = &spans[0].trace_id;
        assert_eq!(trace_id.len(), 16);
        assert!(
            spans.iter().all(|s| &s.trace_id == trace_id),
            "one trace per run"
        );
        let ids: std::collections::HashSet<&Vec<u8>> = spans.iter().map(|s| &s.span_id).collect();
        assert_eq!(ids.len(), spans.len(), "span ids are unique");

        let roots: Vec<&Span> = spans
            .iter()
            .filter(|s| s.parent_span_id.is_empty())
            .collect();
        assert_eq!(roots.len(), 1, "run {id}");
        let root = roots[0];
        assert_eq!(root.name, "invoke_agent hello-world");
        assert_eq!(
            string(&root.attributes, "gen_ai.operation.name"),
            Some("invoke_agent")
        );
        let metadata = runs.metadata(id);
        assert_eq!(
            int(root, "gen_ai.usage.input_tokens"),
            metadata["usage"]["input_tokens"].as_i64()
        );
        let expected = if metadata["status"] == "COMPLETED" {
            StatusCode::Ok
        } else {
            StatusCode::Error
        };
        assert_eq!(
            root.status.as_ref().unwrap().code,
            expected as i32,
            "run {id}"
        );

        let children: Vec<&Span> = spans
            .iter()
            .filter(|s| s.parent_span_id == root.span_id)
            .collect();
        assert_eq!(
            children.len(),
            spans.len() - 1,
            "every other span is a child of the root"
        );
        let chats: Vec<&&Span> = children
            .iter()
            .filter(|s| s.name.starts_with("chat "))
            .collect();
        // Issue 30: a call that brought no answer (the failed run's 401) has its chat span.
        let (answered, failed): (Vec<&&Span>, Vec<&&Span>) = chats.iter().partition(|s| {
            s.status
                .as_ref()
                .is_none_or(|st| st.code != StatusCode::Error as i32)
        });
        assert_eq!(answered.len(), runs.count(id, "THOUGHT"), "run {id}");
        assert_eq!(failed.len(), usize::from(id == "failed"), "run {id}");
        for chat in &answered {
            assert_eq!(chat.kind, SpanKind::Client as i32);
            assert_eq!(
                string(&chat.attributes, "gen_ai.request.model"),
                Some("gpt-4o-mini")
            );
            assert!(int(chat, "gen_ai.usage.input_tokens").unwrap() > 0);
            assert!(int(chat, "gen_ai.usage.output_tokens").unwrap() > 0);
            assert!(attribute(&chat.attributes, "gen_ai.response.finish_reasons").is_some());
            assert!(chat.end_time_unix_nano >= chat.start_time_unix_nano);
        }
        let tools: Vec<&&Span> = children
            .iter()
            .filter(|s| s.name.starts_with("execute_tool "))
            .collect();
        assert_eq!(tools.len(), runs.count(id, "ACTION_REQUEST"), "run {id}");
        for tool in &tools {
            assert!(string(&tool.attributes, "gen_ai.tool.name").is_some());
            assert!(string(&tool.attributes, "delta.tool.status").is_some());
        }
        assert_eq!(chats.len() + tools.len(), children.len());
    }
}

#[test]
fn hooks_and_human_input_are_events_of_the_root_span() {
    let runs = Runs::new();
    let request = parse(&runs.export("hooked", "otlp", &[]));
    let spans = &request.resource_spans[0].scope_spans[0].spans;
    let root = spans.iter().find(|s| s.parent_span_id.is_empty()).unwrap();
    let names: Vec<&str> = root.events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names.iter().filter(|n| **n == "delta.hook").count(),
        2 * runs.count("hooked", "ACTION_REQUEST")
    );
    let event = |name: &str| root.events.iter().find(|e| e.name == name).unwrap();
    let span = |name: &str| spans.iter().find(|s| s.name == name).unwrap();
    for (attributes, key, value) in [
        (
            &event("delta.human_input.request").attributes,
            "delta.human_input.prompt",
            "CANARY-QUESTION-a41f?",
        ),
        (
            &event("delta.human_input.received").attributes,
            "delta.human_input.response",
            "CANARY-ANSWER-0b6e",
        ),
        (
            &span("execute_tool ask_human").attributes,
            "gen_ai.tool.call.result",
            "CANARY-ANSWER-0b6e",
        ),
    ] {
        assert_eq!(string(attributes, key), Some(value), "{key}");
    }
    assert_eq!(
        int(span("execute_tool list_files"), "process.exit.code"),
        Some(0)
    );
}

#[test]
fn otlp_endpoint_posts_the_trace_with_the_configured_headers() {
    let runs = Runs::new();
    let expected = runs.export("hello", "otlp", &[]);
    let (url, received) = receiver::start(1, Answer::Accept);
    let ws = runs.ws();
    let run = Test::new()
        .env(
            "OTEL_EXPORTER_OTLP_HEADERS",
            "x-tenant=team%20a,authorization=Bearer%20t0k",
        )
        .args([
            "export",
            "--run-id",
            "hello",
            "-w",
            path(&ws),
            "--format",
            "otlp",
        ])
        .args(["--otlp-endpoint", &url, "--otlp-protocol", "http/json"])
        .run()
        .code(0)
        .stdout_is("");
    assert!(run.stderr().contains("posted"), "{}", run.stderr());
    let request = next(&received);
    assert_eq!(request.request_line, "POST /v1/traces HTTP/1.1");
    let header = |key: &str| request.header(key);
    assert_eq!(header("content-type"), Some("application/json"));
    assert_eq!(header("x-tenant"), Some("team a"));
    assert_eq!(header("authorization"), Some("Bearer t0k"));
    assert_eq!(String::from_utf8(request.body.clone()).unwrap(), expected);
    parse(&expected);
}

/// The next request the receiver accepted (a refused one fails the test with its reason).
fn next(received: &mpsc::Receiver<Result<Received, String>>) -> Received {
    received
        .recv_timeout(std::time::Duration::from_secs(60))
        .unwrap()
        .unwrap()
}

#[test]
fn otlp_endpoint_with_atif_is_a_usage_error_and_a_closed_port_fails() {
    let runs = Runs::new();
    let ws = runs.ws();
    Test::new()
        .args([
            "export",
            "--run-id",
            "hello",
            "-w",
            path(&ws),
            "--format",
            "atif",
        ])
        .args(["--otlp-endpoint", "http://127.0.0.1:9"])
        .run()
        .code(2)
        .stderr_has("use it with --format otlp");
    Test::new()
        .args([
            "export",
            "--run-id",
            "hello",
            "-w",
            path(&ws),
            "--format",
            "otlp",
        ])
        .args(["--otlp-endpoint", "http://127.0.0.1:9/v1/traces"])
        .run()
        .code(1)
        .stderr_has("cannot post the trace to http://127.0.0.1:9/v1/traces");
}

/// `delta export … --format otlp ARGS` of run `id` in `ws`, with `env`.
fn post(
    ws: &std::path::Path,
    id: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> crate::support::harness::Run {
    let mut test = Test::new()
        .args(["export", "--run-id", id, "-w", path(ws), "--format", "otlp"])
        .args(args);
    for (key, value) in env {
        test = test.env(key, value);
    }
    test.run()
}

/// Issue 30 item 1: Arize Phoenix answered `HTTP 415: Unsupported content type:
/// application/json`. Protobuf is the default; the receiver decodes it with the official
/// definitions and finds the same trace the JSON export holds.
#[test]
fn otlp_endpoint_posts_protobuf_by_default_and_an_official_receiver_accepts_it() {
    let runs = Runs::new();
    let ws = runs.ws();
    let (url, received) = receiver::start(RUNS.len(), Answer::Accept);
    for id in RUNS {
        let run = post(&ws, id, &["--otlp-endpoint", &url], &[]).code(0);
        assert!(
            run.stderr().contains("spans of run") && run.stderr().contains("(http/protobuf)"),
            "{}",
            run.stderr()
        );
        let request = next(&received);
        assert_eq!(
            request.header("content-type"),
            Some("application/x-protobuf")
        );
        assert_eq!(
            request.request,
            parse(&runs.export(id, "otlp", &[])),
            "run {id}"
        );
    }
}

/// The standard variables decide when the command line does not: the generic endpoint
/// gets `/v1/traces`, the signal's protocol wins over the generic one, headers go along.
#[test]
fn the_standard_otel_variables_choose_endpoint_protocol_and_headers() {
    let runs = Runs::new();
    let ws = runs.ws();
    let (url, received) = receiver::start(2, Answer::Accept);
    post(
        &ws,
        "hello",
        &["--otlp-endpoint"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &format!("{url}/")),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-team=a%2Cb"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "20000"),
        ],
    )
    .code(0);
    let request = next(&received);
    assert_eq!(request.request_line, "POST /v1/traces HTTP/1.1");
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.header("x-team"), Some("a,b"));
    // The signal's own endpoint is used as it is.
    post(
        &ws,
        "hello",
        &["--otlp-endpoint"],
        &[(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            &format!("{url}/custom/traces"),
        )],
    )
    .code(0);
    let request = next(&received);
    assert_eq!(request.request_line, "POST /custom/traces HTTP/1.1");
    assert_eq!(
        request.header("content-type"),
        Some("application/x-protobuf")
    );
    post(
        &ws,
        "hello",
        &["--otlp-endpoint", &url],
        &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")],
    )
    .code(1)
    .stderr_has("OTEL_EXPORTER_OTLP_PROTOCOL=\"grpc\" is not supported: use http/protobuf");
}

/// A collector that takes the request but refuses spans says so in `partial_success`:
/// that is a failure, with its count and reason.
#[test]
fn spans_a_collector_refuses_fail_the_export() {
    let runs = Runs::new();
    let (url, received) = receiver::start(1, Answer::RefuseSpans(2));
    post(&runs.ws(), "hello", &["--otlp-endpoint", &url], &[])
        .code(1)
        .stderr_has("refused 2 of the trace's spans: spans too old");
    next(&received);
}

/// Issue 30 item 2: Phoenix dropped `gen_ai.output.messages` (no `finish_reason`) and there
/// were no input messages. Every answered chat span carries both, in the conventions'
/// shapes (checked by the receiver), the input being exactly what the request sent.
#[test]
fn chat_spans_carry_the_input_and_output_messages_with_finish_reason() {
    let runs = Runs::new();
    let request = parse(&runs.export("hello", "otlp", &[]));
    let spans = &request.resource_spans[0].scope_spans[0].spans;
    let chats: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name.starts_with("chat "))
        .collect();
    assert_eq!(chats.len(), runs.count("hello", "THOUGHT"));
    let requests = runs.files("hello").requests();
    for (chat, sent) in chats.iter().zip(&requests) {
        let input: serde_json::Value =
            serde_json::from_str(string(&chat.attributes, "gen_ai.input.messages").unwrap())
                .unwrap();
        let sent = sent["messages"].as_array().unwrap();
        assert_eq!(input.as_array().unwrap().len(), sent.len());
        assert_eq!(input[0]["role"], sent[0]["role"]);
        assert_eq!(input[0]["parts"][0]["content"], sent[0]["content"]);
        let output: serde_json::Value =
            serde_json::from_str(string(&chat.attributes, "gen_ai.output.messages").unwrap())
                .unwrap();
        assert!(
            ["tool_call", "stop"].contains(&output[0]["finish_reason"].as_str().unwrap()),
            "{output}"
        );
    }
    let last: serde_json::Value = serde_json::from_str(
        string(&chats.last().unwrap().attributes, "gen_ai.output.messages").unwrap(),
    )
    .unwrap();
    assert_eq!(last[0]["finish_reason"], "stop");
    // Left out for sharing.
    let redacted = runs.export("hello", "otlp", &["--redact-content"]);
    for key in ["gen_ai.input.messages", "gen_ai.output.messages"] {
        assert!(!redacted.contains(key), "{key}");
    }
}

/// Issue 30 item 2: a call that failed (HTTP 401) is a `chat` span in error, with the
/// status as `error.type` and its input messages.
#[test]
fn a_failed_llm_call_is_a_chat_span_with_its_error_type() {
    let runs = Runs::new();
    let request = parse(&runs.export("failed", "otlp", &[]));
    let spans = &request.resource_spans[0].scope_spans[0].spans;
    let failed: Vec<&Span> = spans
        .iter()
        .filter(|s| {
            s.name.starts_with("chat ")
                && s.status
                    .as_ref()
                    .is_some_and(|st| st.code == StatusCode::Error as i32)
        })
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(string(&failed[0].attributes, "error.type"), Some("401"));
    assert!(string(&failed[0].attributes, "gen_ai.input.messages").is_some());
    assert!(
        failed[0]
            .status
            .as_ref()
            .unwrap()
            .message
            .contains("HTTP 401"),
        "{:?}",
        failed[0].status
    );
}

/// Issue 30 item 3: the same run id in two workspaces (every re-run of a batch) was one
/// trace id, and Phoenix kept only the first. Each run's trace id is its own, stable over
/// re-exports; a run from before `trace_id` existed gets one from its id, creation time and
/// workspace.
#[test]
fn the_same_run_id_in_two_workspaces_is_two_traces_each_stable() {
    let mock = crate::support::run::mock(crate::support::run::HELLO_SCRIPT);
    let mut test = crate::support::run::hello_world(Test::new());
    let mut traces = Vec::new();
    for ws in ["ws-a", "ws-b"] {
        let run = crate::support::run::delta(test, &mock)
            .args(["run", "--agent", "agent", "-w", ws, "--run-id", "same"])
            .args(["-m", crate::support::run::HELLO_TASK])
            .run()
            .code(0);
        let workspace = run.path().join(ws);
        let metadata = crate::support::run::run_files(&workspace, "same").metadata();
        let trace_id = metadata["trace_id"].as_str().unwrap().to_owned();
        assert_eq!(trace_id.len(), 32);
        let export = || {
            let text = post(&workspace, "same", &[], &[])
                .code(0)
                .stdout()
                .to_owned();
            parse(&text).resource_spans[0].scope_spans[0].spans[0]
                .trace_id
                .clone()
        };
        let first = export();
        assert_eq!(first, export(), "re-export is the same trace");
        assert_eq!(
            first.iter().map(|b| format!("{b:02x}")).collect::<String>(),
            trace_id
        );
        // Without `trace_id` (an older run): derived, stable, and still per workspace.
        let file = workspace.join(".delta/same/metadata.json");
        let mut older: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        older.as_object_mut().unwrap().remove("trace_id");
        std::fs::write(&file, older.to_string()).unwrap();
        let derived = export();
        assert_ne!(derived, first);
        assert_eq!(derived, export());
        traces.push((first, derived));
        test = run.then();
    }
    assert_ne!(traces[0].0, traces[1].0);
    assert_ne!(traces[0].1, traces[1].1);
}
