//! Anthropic Messages: the `message` object (digest A3) and its server-sent events
//! (A4: `message_start`, `content_block_start`/`_delta`/`_stop` per block, a `ping`,
//! `message_delta` with the stop reason and the output tokens, `message_stop`).

use serde_json::{Value, json};

use super::Answer;
use crate::reply::{Counts, DEFAULT_REASONING, Reply, halves};
use crate::request::ModelRequest;
use crate::seal;
use crate::stream::named_event;

pub(crate) fn answer(reply: &Reply<'_>, request: &ModelRequest) -> Answer {
    let mut content = Vec::new();
    if request.thinking {
        let thinking = reply.reasoning.unwrap_or(DEFAULT_REASONING);
        content.push(json!({
            "type": "thinking",
            "thinking": thinking,
            "signature": seal::signature(thinking),
        }));
        if let Some(redacted) = reply.redacted {
            content.push(json!({"type": "redacted_thinking", "data": seal::redacted(redacted)}));
        }
    }
    if let Some(text) = reply.content.filter(|text| !text.is_empty()) {
        content.push(json!({"type": "text", "text": text}));
    }
    for (index, call) in reply.calls.iter().enumerate() {
        content.push(json!({
            "type": "tool_use",
            "id": call.id("toolu_", reply.step, index),
            "name": call.name,
            "input": input(&call.arguments),
        }));
    }
    let body = json!({
        "id": format!("msg_mock_{}", reply.step),
        "type": "message",
        "role": "assistant",
        "model": reply.model,
        "content": content,
        "stop_reason": stop_reason(&reply.finish_reason),
        "stop_sequence": null,
        "usage": usage(reply.counts),
    });
    let events = request
        .stream
        .then(|| server_sent_events(&body, reply.counts));
    (body, events)
}

/// Chat's finish reasons in Anthropic's words (A3 `stop_reason`); others as they are.
fn stop_reason(finish_reason: &str) -> &str {
    match finish_reason {
        "stop" => "end_turn",
        "tool_calls" => "tool_use",
        "length" => "max_tokens",
        "content_filter" => "refusal",
        other => other,
    }
}

/// A tool call's `input`: the arguments as a JSON object. Arguments that are no JSON
/// object (a script's malformed ones) are sent as the string, a shape the service never
/// sends, so that clients' handling of bad arguments can still be tested.
fn input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(object @ Value::Object(_)) => object,
        Ok(_) | Err(_) => Value::String(arguments.to_owned()),
    }
}

/// Anthropic's usage: `input_tokens` leaves out what was read from and written to the
/// cache, each counted apart (A-SDK `usage.py`: the three add up to the prompt).
fn usage(counts: Counts) -> Value {
    let uncached = counts
        .prompt
        .saturating_sub(counts.cached)
        .saturating_sub(counts.written);
    json!({
        "input_tokens": uncached,
        "cache_creation_input_tokens": counts.written,
        "cache_read_input_tokens": counts.cached,
        "cache_creation": {"ephemeral_5m_input_tokens": counts.written, "ephemeral_1h_input_tokens": 0},
        "output_tokens": counts.completion,
        "service_tier": "standard",
    })
}

/// The events of `message`, and how many go before the first text's second half.
fn server_sent_events(message: &Value, counts: Counts) -> (Vec<String>, usize) {
    let mut start = message.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    start["usage"]["output_tokens"] = 1.into();
    let mut events = vec![named_event(
        "message_start",
        &json!({"type": "message_start", "message": start}),
    )];
    let mut held_after = None;
    for (index, block) in message["content"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let delta = |delta: Value| {
            named_event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            )
        };
        let mut opening = block.clone();
        let mut deltas = Vec::new();
        match block["type"].as_str() {
            Some("thinking") => {
                opening["thinking"] = "".into();
                opening["signature"] = "".into();
                for piece in halves(block["thinking"].as_str().unwrap_or_default()) {
                    deltas.push(delta(json!({"type": "thinking_delta", "thinking": piece})));
                }
                deltas.push(delta(
                    json!({"type": "signature_delta", "signature": block["signature"]}),
                ));
            }
            Some("text") => {
                opening["text"] = "".into();
                for piece in halves(block["text"].as_str().unwrap_or_default()) {
                    deltas.push(delta(json!({"type": "text_delta", "text": piece})));
                }
            }
            Some("tool_use") => {
                opening["input"] = json!({});
                deltas.push(delta(
                    json!({"type": "input_json_delta", "partial_json": ""}),
                ));
                let json = block["input"]
                    .as_str()
                    .map_or_else(|| block["input"].to_string(), str::to_owned);
                for piece in halves(&json) {
                    deltas.push(delta(
                        json!({"type": "input_json_delta", "partial_json": piece}),
                    ));
                }
            }
            // Redacted thinking arrives whole in its start event.
            Some(_) | None => {}
        }
        events.push(named_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": opening}),
        ));
        if index == 0 {
            events.push(named_event("ping", &json!({"type": "ping"})));
        }
        let first_text = block["type"] == "text" && held_after.is_none();
        for (position, event) in deltas.into_iter().enumerate() {
            events.push(event);
            if first_text && position == 0 {
                held_after = Some(events.len());
            }
        }
        events.push(named_event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push(named_event(
        "message_delta",
        &json!({
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": null},
            "usage": {"output_tokens": counts.completion},
        }),
    ));
    events.push(named_event(
        "message_stop",
        &json!({"type": "message_stop"}),
    ));
    let held_after = held_after.unwrap_or(1);
    (events, held_after)
}
