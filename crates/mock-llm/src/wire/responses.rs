//! OpenAI Responses: the `response` object (digest B2: `output` items `reasoning`,
//! `message`, `function_call`; `status`, `incomplete_details`, `usage`) and its
//! server-sent events (B3: every event with a `sequence_number` from 0, ending with
//! `response.completed` or `response.incomplete`).
//!
//! Item ids are long and carry their origin: the `function_call` and `message` items of a
//! response that reasoned get ids naming its reasoning item (`fc_r…`, `msg_r…`), so the
//! strict profile can refuse them when they come back without it (digest D2 rule 11).

use serde_json::{Value, json};

use super::Answer;
use crate::reply::{CREATED, Counts, DEFAULT_REASONING, Reply, halves};
use crate::request::ModelRequest;
use crate::seal;
use crate::stream::named_event;

/// The prefix of the ids of items that need their response's reasoning item.
pub(crate) const REASONED: &str = "r";

pub(crate) fn answer(reply: &Reply<'_>, request: &ModelRequest) -> Answer {
    let step = reply.step.to_string();
    let mut output = Vec::new();
    // The item ids hash the step and the request's model, so they differ per answer.
    let origin = [step.as_str(), reply.model];
    let reasoning_id = request.reasoning.then(|| seal::long_id("rs_", &origin));
    let linked = match &reasoning_id {
        Some(id) => format!("{REASONED}{}", id.trim_start_matches("rs_")),
        None => seal::long_id("", &origin),
    };
    if let Some(id) = &reasoning_id {
        let summary = reply.reasoning.unwrap_or(DEFAULT_REASONING);
        let encrypted = request.encrypted.then(|| seal::encrypted(id, summary));
        output.push(json!({
            "type": "reasoning",
            "id": id,
            "summary": [{"type": "summary_text", "text": summary}],
            "encrypted_content": encrypted,
            "status": "completed",
        }));
    }
    if let Some(text) = reply.content.filter(|text| !text.is_empty()) {
        output.push(json!({
            "type": "message",
            "id": format!("msg_{linked}"),
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}],
        }));
    }
    for (index, call) in reply.calls.iter().enumerate() {
        output.push(json!({
            "type": "function_call",
            "id": format!("fc_{linked}_{index}"),
            "call_id": call.id("call_", reply.step, index),
            "name": call.name,
            "arguments": call.arguments,
            "status": "completed",
        }));
    }
    let (status, incomplete) = match reply.finish_reason.as_str() {
        "length" => ("incomplete", json!({"reason": "max_output_tokens"})),
        "content_filter" => ("incomplete", json!({"reason": "content_filter"})),
        _ => ("completed", Value::Null),
    };
    let reasoning_tokens = reasoning_id.as_ref().map_or(0, |_| {
        reply
            .reasoning
            .unwrap_or(DEFAULT_REASONING)
            .len()
            .div_ceil(4) as u64
    });
    let body = json!({
        "id": format!("resp_mock_{step}"),
        "object": "response",
        "created_at": CREATED,
        "status": status,
        "error": null,
        "incomplete_details": incomplete,
        "model": reply.model,
        "output": output,
        "parallel_tool_calls": true,
        "previous_response_id": null,
        "store": false,
        "usage": usage(reply.counts, reasoning_tokens),
    });
    let events = request.stream.then(|| server_sent_events(&body));
    (body, events)
}

/// Responses usage: `cached_tokens` is part of `input_tokens` (B2), reasoning tokens part
/// of `output_tokens`.
fn usage(counts: Counts, reasoning_tokens: u64) -> Value {
    let mut details = json!({"cached_tokens": counts.cached});
    if counts.written > 0 {
        details["cache_write_tokens"] = counts.written.into();
    }
    json!({
        "input_tokens": counts.prompt,
        "input_tokens_details": details,
        "output_tokens": counts.completion,
        "output_tokens_details": {"reasoning_tokens": reasoning_tokens.min(counts.completion)},
        "total_tokens": counts.prompt.saturating_add(counts.completion),
    })
}

/// The events of `response`, and how many go before the first text's second half.
fn server_sent_events(response: &Value) -> (Vec<String>, usize) {
    let mut events = Vec::new();
    let mut held_after = None;
    let push = |mut data: Value, events: &mut Vec<String>| {
        data["sequence_number"] = events.len().into();
        let name = data["type"].as_str().unwrap_or_default().to_owned();
        events.push(named_event(&name, &data));
    };
    let mut opening = response.clone();
    opening["status"] = "in_progress".into();
    opening["output"] = json!([]);
    opening["usage"] = Value::Null;
    opening["incomplete_details"] = Value::Null;
    push(
        json!({"type": "response.created", "response": opening}),
        &mut events,
    );
    push(
        json!({"type": "response.in_progress", "response": opening}),
        &mut events,
    );
    for (output_index, item) in response["output"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let id = item["id"].clone();
        let mut added = item.clone();
        added["status"] = "in_progress".into();
        match item["type"].as_str() {
            Some("reasoning") => {
                // The added item's encrypted content may be incomplete (O-SDK): only the
                // done event's counts.
                added["encrypted_content"] = Value::Null;
                added["summary"] = json!([]);
                push(
                    json!({"type": "response.output_item.added", "output_index": output_index, "item": added}),
                    &mut events,
                );
                let text = item["summary"][0]["text"].as_str().unwrap_or_default();
                let part = |text: &str| json!({"type": "summary_text", "text": text});
                push(
                    json!({"type": "response.reasoning_summary_part.added", "item_id": id, "output_index": output_index, "summary_index": 0, "part": part("")}),
                    &mut events,
                );
                for piece in halves(text) {
                    push(
                        json!({"type": "response.reasoning_summary_text.delta", "item_id": id, "output_index": output_index, "summary_index": 0, "delta": piece}),
                        &mut events,
                    );
                }
                push(
                    json!({"type": "response.reasoning_summary_text.done", "item_id": id, "output_index": output_index, "summary_index": 0, "text": text}),
                    &mut events,
                );
                push(
                    json!({"type": "response.reasoning_summary_part.done", "item_id": id, "output_index": output_index, "summary_index": 0, "part": part(text)}),
                    &mut events,
                );
            }
            Some("message") => {
                added["content"] = json!([]);
                push(
                    json!({"type": "response.output_item.added", "output_index": output_index, "item": added}),
                    &mut events,
                );
                let text = item["content"][0]["text"].as_str().unwrap_or_default();
                let part =
                    |text: &str| json!({"type": "output_text", "text": text, "annotations": []});
                push(
                    json!({"type": "response.content_part.added", "item_id": id, "output_index": output_index, "content_index": 0, "part": part("")}),
                    &mut events,
                );
                for (position, piece) in halves(text).into_iter().enumerate() {
                    push(
                        json!({"type": "response.output_text.delta", "item_id": id, "output_index": output_index, "content_index": 0, "delta": piece, "logprobs": []}),
                        &mut events,
                    );
                    if position == 0 && held_after.is_none() {
                        held_after = Some(events.len());
                    }
                }
                push(
                    json!({"type": "response.output_text.done", "item_id": id, "output_index": output_index, "content_index": 0, "text": text, "logprobs": []}),
                    &mut events,
                );
                push(
                    json!({"type": "response.content_part.done", "item_id": id, "output_index": output_index, "content_index": 0, "part": part(text)}),
                    &mut events,
                );
            }
            Some(_) | None => {
                added["arguments"] = "".into();
                push(
                    json!({"type": "response.output_item.added", "output_index": output_index, "item": added}),
                    &mut events,
                );
                let arguments = item["arguments"].as_str().unwrap_or_default();
                for piece in halves(arguments) {
                    push(
                        json!({"type": "response.function_call_arguments.delta", "item_id": id, "output_index": output_index, "delta": piece}),
                        &mut events,
                    );
                }
                push(
                    json!({"type": "response.function_call_arguments.done", "item_id": id, "output_index": output_index, "name": item["name"], "arguments": arguments}),
                    &mut events,
                );
            }
        }
        push(
            json!({"type": "response.output_item.done", "output_index": output_index, "item": item}),
            &mut events,
        );
    }
    let terminal = if response["status"] == "incomplete" {
        "response.incomplete"
    } else {
        "response.completed"
    };
    push(json!({"type": terminal, "response": response}), &mut events);
    let held_after = held_after.unwrap_or(2);
    (events, held_after)
}
