//! An OTLP/HTTP trace receiver on 127.0.0.1 built on the official definitions
//! (opentelemetry-proto), accepting only what the specifications require: a body in the
//! content type it claims (`application/x-protobuf`, or `application/json` in the
//! protobuf JSON mapping with no unknown key), valid ids, a span tree whose parents are
//! in the request, and per GenAI span the attributes the semantic conventions make
//! required, with `gen_ai.input.messages` / `gen_ai.output.messages` following their JSON
//! schemas (gen-ai-input-messages.json, gen-ai-output-messages.json; their rules are
//! re-implemented here, the schema files are not copied).

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;

use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTracePartialSuccess, ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use prost::Message as _;
use serde_json::Value;

/// One request the receiver accepted.
pub struct Received {
    /// `POST /v1/traces HTTP/1.1`.
    pub request_line: String,
    /// Header names lowercased.
    pub headers: Vec<(String, String)>,
    /// The decoded request.
    pub request: ExportTraceServiceRequest,
    /// The body as sent.
    pub body: Vec<u8>,
}

impl Received {
    /// A header's value.
    pub fn header(&self, key: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// What the receiver answers a request it accepted with.
#[derive(Clone, Copy)]
pub enum Answer {
    /// 200 and an empty `ExportTraceServiceResponse`.
    Accept,
    /// 200 with `partial_success` refusing this many spans.
    RefuseSpans(i64),
}

/// A receiver for `requests` requests; each accepted one is sent on the channel, a
/// refused one answered 4xx with the reason (and reported on the channel as an error).
pub fn start(
    requests: usize,
    answer: Answer,
) -> (String, mpsc::Receiver<Result<Received, String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for _ in 0..requests {
            let (stream, _) = listener.accept().unwrap();
            let outcome = serve(stream, answer);
            if sender.send(outcome).is_err() {
                return;
            }
        }
    });
    (url, receiver)
}

fn serve(stream: std::net::TcpStream, answer: Answer) -> Result<Received, String> {
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
        .map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    let content_type = headers
        .iter()
        .find(|(k, _)| k == "content-type")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    let mut stream = stream;
    let decoded = match content_type.as_str() {
        "application/x-protobuf" => {
            ExportTraceServiceRequest::decode(body.as_slice()).map_err(|e| {
                (
                    400,
                    format!("not a protobuf ExportTraceServiceRequest: {e}"),
                )
            })
        }
        "application/json" => parse_json(&body).map_err(|e| (400, e)),
        other => Err((415, format!("Unsupported content type: {other}"))),
    };
    let request =
        decoded.and_then(|request| check(&request).map(|()| request).map_err(|e| (400, e)));
    match request {
        Ok(request) => {
            let response = ExportTraceServiceResponse {
                partial_success: match answer {
                    Answer::Accept => None,
                    Answer::RefuseSpans(rejected) => Some(ExportTracePartialSuccess {
                        rejected_spans: rejected,
                        error_message: "spans too old".to_owned(),
                    }),
                },
            };
            let (kind, bytes) = if content_type == "application/json" {
                ("application/json", serde_json::to_vec(&response).unwrap())
            } else {
                ("application/x-protobuf", response.encode_to_vec())
            };
            respond(&mut stream, "200 OK", kind, &bytes);
            Ok(Received {
                request_line: request_line.trim_end().to_owned(),
                headers,
                request,
                body,
            })
        }
        Err((status, reason)) => {
            let line = if status == 415 {
                "415 Unsupported Media Type"
            } else {
                "400 Bad Request"
            };
            respond(&mut stream, line, "text/plain", reason.as_bytes());
            Err(reason)
        }
    }
}

fn respond(stream: &mut std::net::TcpStream, status: &str, kind: &str, body: &[u8]) {
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
}

/// OTLP/JSON parsed with the official serde mapping; a key it does not know (which its
/// defaults would skip) makes the round trip differ, and is refused.
pub fn parse_json(body: &[u8]) -> Result<ExportTraceServiceRequest, String> {
    let request: ExportTraceServiceRequest =
        serde_json::from_slice(body).map_err(|e| format!("not OTLP/JSON: {e}"))?;
    let ours: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let theirs = serde_json::to_value(&request).map_err(|e| e.to_string())?;
    if strip_empty(theirs) != strip_empty(ours) {
        return Err("the document has keys OTLP does not know".to_owned());
    }
    Ok(request)
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
        Value::String(text) if text.parse::<u64>().is_ok() => {
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

/// What the OTLP and trace specifications and the GenAI conventions require of the
/// request; the first violation.
pub fn check(request: &ExportTraceServiceRequest) -> Result<(), String> {
    let spans: Vec<&Span> = request
        .resource_spans
        .iter()
        .flat_map(|r| &r.scope_spans)
        .flat_map(|s| &s.spans)
        .collect();
    if spans.is_empty() {
        return Err("no spans".into());
    }
    let ids: HashSet<(&[u8], &[u8])> = spans
        .iter()
        .map(|s| (s.trace_id.as_slice(), s.span_id.as_slice()))
        .collect();
    for span in &spans {
        let name = &span.name;
        let fail = |what: String| Err(format!("span {name:?}: {what}"));
        if span.trace_id.len() != 16 || span.trace_id.iter().all(|b| *b == 0) {
            return fail("trace_id is not 16 bytes, nonzero".into());
        }
        if span.span_id.len() != 8 || span.span_id.iter().all(|b| *b == 0) {
            return fail("span_id is not 8 bytes, nonzero".into());
        }
        if !span.parent_span_id.is_empty()
            && !ids.contains(&(span.trace_id.as_slice(), span.parent_span_id.as_slice()))
        {
            return fail("its parent is not in the trace".into());
        }
        if name.is_empty() {
            return fail("no name".into());
        }
        if span.start_time_unix_nano == 0 || span.end_time_unix_nano < span.start_time_unix_nano {
            return fail("start is 0 or after end".into());
        }
        let status = span.status.as_ref().map_or(0, |s| s.code);
        if StatusCode::try_from(status).is_err() {
            return fail(format!("status code {status}"));
        }
        check_genai(span, status == StatusCode::Error as i32)
            .map_err(|e| format!("span {name:?}: {e}"))?;
    }
    if ids.len() != spans.len() {
        return Err("span ids repeat".into());
    }
    Ok(())
}

/// A string attribute.
pub fn string<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a str> {
    match attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v| v.value.as_ref())
    {
        Some(AnyValue::StringValue(value)) => Some(value),
        _ => None,
    }
}

fn check_genai(span: &Span, failed: bool) -> Result<(), String> {
    let attributes = &span.attributes;
    let operation =
        string(attributes, "gen_ai.operation.name").ok_or("no gen_ai.operation.name")?;
    if failed && string(attributes, "error.type").is_none() {
        return Err("status ERROR without error.type".into());
    }
    match operation {
        "chat" => {
            string(attributes, "gen_ai.provider.name").ok_or("no gen_ai.provider.name")?;
            let model =
                string(attributes, "gen_ai.request.model").ok_or("no gen_ai.request.model")?;
            if span.name != format!("chat {model}") {
                return Err("name is not `chat {gen_ai.request.model}`".into());
            }
            if span.kind != SpanKind::Client as i32 {
                return Err("a chat span is not CLIENT".into());
            }
            if let Some(input) = string(attributes, "gen_ai.input.messages") {
                check_messages(input, false).map_err(|e| format!("gen_ai.input.messages: {e}"))?;
            }
            if let Some(output) = string(attributes, "gen_ai.output.messages") {
                check_messages(output, true).map_err(|e| format!("gen_ai.output.messages: {e}"))?;
            }
        }
        "execute_tool" | "invoke_agent" => {}
        other => return Err(format!("unexpected gen_ai.operation.name {other}")),
    }
    Ok(())
}

/// The rules of the conventions' message schemas: an array of messages with a string
/// `role` and an array of `parts`, each part an object with a string `type` and the keys
/// its type requires; output messages also need `finish_reason`.
fn check_messages(text: &str, output: bool) -> Result<(), String> {
    let messages: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let messages = messages.as_array().ok_or("not an array")?;
    for (index, message) in messages.iter().enumerate() {
        let fail = |what: &str| Err(format!("message {index}: {what}"));
        if !message.get("role").is_some_and(Value::is_string) {
            return fail("no string role");
        }
        if output && !message.get("finish_reason").is_some_and(Value::is_string) {
            return fail("no finish_reason");
        }
        let Some(parts) = message.get("parts").and_then(Value::as_array) else {
            return fail("no parts array");
        };
        for part in parts {
            let has = |key: &str| part.get(key).is_some();
            let string = |key: &str| part.get(key).is_some_and(Value::is_string);
            let valid = match part.get("type").and_then(Value::as_str) {
                Some("text" | "reasoning") => string("content"),
                Some("tool_call") if output => string("id") && string("name") && has("arguments"),
                Some("tool_call") => string("name"),
                Some("tool_call_response") if output => has("id") && has("result"),
                Some("tool_call_response") => has("response"),
                Some(_) => true,
                None => false,
            };
            if !valid {
                return fail(&format!("part {part} lacks what its type requires"));
            }
        }
    }
    Ok(())
}
