//! Chat completions: the `chat.completion` object and its `chat.completion.chunk` stream.

use serde_json::{Value, json};

use super::Answer;
use crate::reply::{CREATED, Counts, Reply, halves};
use crate::request::ModelRequest;

/// Events sent before a held stream waits: the role chunk and the first content piece.
const HELD_AFTER_EVENTS: usize = 2;

pub(crate) fn answer(reply: &Reply<'_>, request: &ModelRequest) -> Answer {
    let step = reply.step;
    let mut assistant = json!({
        "role": "assistant",
        "content": reply.content,
    });
    if let Some(reasoning) = reply.reasoning {
        assistant["reasoning_content"] = reasoning.into();
    }
    if !reply.calls.is_empty() {
        let calls: Vec<Value> = reply
            .calls
            .iter()
            .enumerate()
            .map(|(i, call)| {
                json!({
                    "id": call.id("call_", step, i),
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                })
            })
            .collect();
        assistant["tool_calls"] = Value::Array(calls);
    }
    let body = json!({
        "id": format!("chatcmpl-mock-{step}"),
        "object": "chat.completion",
        "created": CREATED,
        "model": reply.model,
        "choices": [{
            "index": 0,
            "message": assistant,
            "logprobs": null,
            "finish_reason": reply.finish_reason,
        }],
        "usage": usage_json(reply.counts),
    });
    let events = request.stream.then(|| {
        (
            server_sent_events(&body, request.include_usage),
            HELD_AFTER_EVENTS,
        )
    });
    (body, events)
}

/// OpenAI's usage object; `prompt_tokens_details.cached_tokens` only when something was
/// cached or the cache counted (O-SDK `completion_usage.py`), so the answers of scripts
/// without caching stay as they were.
fn usage_json(counts: Counts) -> Value {
    let mut usage = json!({
        "prompt_tokens": counts.prompt,
        "completion_tokens": counts.completion,
        "total_tokens": counts.prompt.saturating_add(counts.completion),
    });
    if counts.from_cache || counts.cached > 0 || counts.written > 0 {
        let mut details = json!({"cached_tokens": counts.cached});
        if counts.written > 0 {
            details["cache_write_tokens"] = counts.written.into();
        }
        usage["prompt_tokens_details"] = details;
    }
    usage
}

/// A completion as OpenAI streams it: `chat.completion.chunk` events whose deltas carry
/// the role, then the reasoning, the content and each tool call's arguments in two pieces
/// (so clients must reassemble them), then the finish reason; a usage chunk with no
/// choices when `include_usage`; then `data: [DONE]`. One string per event.
fn server_sent_events(completion: &Value, include_usage: bool) -> Vec<String> {
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
    if let Some(reasoning) = message["reasoning_content"].as_str() {
        for piece in halves(reasoning) {
            chunks.push(chunk(json!({"reasoning_content": piece}), Value::Null));
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
