//! A completion streamed as OpenAI streams it: server-sent `chat.completion.chunk`
//! events, all at once or held at a gate file after the first piece of content.

use std::convert::Infallible;
use std::path::PathBuf;
use std::time::Duration;

use axum::body::Body;
use futures_util::StreamExt as _;
use serde_json::{Value, json};

/// Events sent before a held stream waits: the role chunk and the first content piece.
const HELD_AFTER_EVENTS: usize = 2;

/// How often a held stream looks for its gate file.
const GATE_POLL: Duration = Duration::from_millis(20);

/// A completion as OpenAI streams it: `chat.completion.chunk` events whose deltas carry
/// the role, then the content and each tool call's arguments in two pieces (so clients
/// must reassemble them), then the finish reason; a usage chunk with no choices when
/// `include_usage`; then `data: [DONE]`. One string per event.
pub(crate) fn server_sent_events(completion: &Value, include_usage: bool) -> Vec<String> {
    let chunk = |delta: Value, finish_reason: Value| {
        json!({
            "id": completion["id"],
            "object": "chat.completion.chunk",
            "created": completion["created"],
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
pub(crate) fn held_stream(events: Vec<String>, gate: PathBuf) -> Body {
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
