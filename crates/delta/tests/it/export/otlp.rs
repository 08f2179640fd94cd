//! `--format otlp` parsed with the official OTLP protobuf definitions (the
//! opentelemetry-proto crate's serde mapping of `ExportTraceServiceRequest`), the span
//! tree checked, and `--otlp-endpoint` posting to a receiver on 127.0.0.1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::{Span, status::StatusCode};
use serde_json::Value;

use super::{RUNS, Runs, path};
use crate::support::harness::Test;

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

/// Parses with the official definitions, and checks that serializing them back gives our
/// document again: a misspelt or misplaced key (which serde's defaults would skip) fails.
fn parse(text: &str) -> ExportTraceServiceRequest {
    let request: ExportTraceServiceRequest = serde_json::from_str(text).unwrap();
    let ours: Value = serde_json::from_str(text).unwrap();
    let theirs = serde_json::to_value(&request).unwrap();
    assert_eq!(
        strip_empty(theirs),
        strip_empty(ours),
        "the document has keys OTLP does not know"
    );
    request
}

/// Drops empty strings, arrays, objects and zeros, which the two sides write differently.
fn strip_empty(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, strip_empty(v)))
                .filter(|(_, v)| !is_empty(v))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(strip_empty).collect()),
        // 64-bit integers are strings in OTLP/JSON; compare them as numbers.
        Value::String(text) if text.parse::<u64>().is_ok() && !text.is_empty() => {
            Value::from(text.parse::<u64>().unwrap())
        }
        other @ (Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_)) => other,
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Bool(b) => !b,
    }
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
        assert_eq!(chats.len(), runs.count(id, "THOUGHT"), "run {id}");
        for chat in &chats {
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

/// One HTTP request as the receiver saw it.
struct Received {
    request_line: String,
    headers: Vec<(String, String)>,
    body: String,
}

/// Accepts one connection on 127.0.0.1, answers 200 and reports what it read.
fn receiver() -> (String, mpsc::Receiver<Received>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut request_line = String::new();
        reader.read_line(&mut request_line).unwrap();
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let (key, value) = line.split_once(':').unwrap();
            headers.push((key.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
        let length: usize = headers
            .iter()
            .find(|(k, _)| k == "content-length")
            .map(|(_, v)| v.parse().unwrap())
            .unwrap();
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let mut stream = stream;
        stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}")
            .unwrap();
        sender
            .send(Received {
                request_line: request_line.trim_end().to_owned(),
                headers,
                body: String::from_utf8(body).unwrap(),
            })
            .unwrap();
    });
    (url, receiver)
}

#[test]
fn otlp_endpoint_posts_the_trace_with_the_configured_headers() {
    let runs = Runs::new();
    let expected = runs.export("hello", "otlp", &[]);
    let (url, received) = receiver();
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
        .args(["--otlp-endpoint", &url])
        .run()
        .code(0)
        .stdout_is("");
    assert!(run.stderr().contains("posted"), "{}", run.stderr());
    let request = received
        .recv_timeout(std::time::Duration::from_secs(30))
        .unwrap();
    assert_eq!(request.request_line, "POST /v1/traces HTTP/1.1");
    let header = |key: &str| {
        request
            .headers
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(header("content-type"), Some("application/json"));
    assert_eq!(header("x-tenant"), Some("team a"));
    assert_eq!(header("authorization"), Some("Bearer t0k"));
    assert_eq!(request.body, expected);
    parse(&request.body);
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
