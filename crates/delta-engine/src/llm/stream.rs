//! Server-sent events of a streamed chat completion (`stream: true`), reassembled into the
//! one `chat.completion` body a non-streamed call would have returned, so that everything
//! after the client (journal, `response.json`, hooks) is the same either way.

use serde_json::{Map, Value, json};

use super::response::error_text;

/// Whether a 2xx body is an event stream rather than a JSON completion.
pub(crate) fn is_event_stream(content_type: Option<&str>, body: &[u8]) -> bool {
    content_type.is_some_and(|kind| kind.starts_with("text/event-stream"))
        || body.trim_ascii_start().starts_with(b"data:")
}

/// The completion the events describe: the first choice's content, reasoning and tool
/// calls (deltas joined in order, tool calls by their `index`), the last finish reason,
/// and the usage chunk (`stream_options.include_usage`) when one came.
pub(crate) fn assemble(events: &[u8]) -> Result<Vec<u8>, String> {
    let text = String::from_utf8_lossy(events);
    let mut head: Option<Value> = None;
    let mut content: Option<String> = None;
    let mut reasoning: Option<String> = None;
    let mut calls: Vec<Map<String, Value>> = Vec::new();
    let mut finish_reason = Value::Null;
    let mut usage = Value::Null;
    let mut done = false;
    for line in text.lines() {
        let Some(data) = line.strip_prefix("data:") else {
            // Comments (`: ping`), `event:` and `id:` lines carry nothing we use.
            continue;
        };
        let data = data.trim();
        if data == "[DONE]" {
            done = true;
            break;
        }
        let chunk: Value =
            serde_json::from_str(data).map_err(|error| format!("an event is not JSON: {error}"))?;
        if let Some(error) = chunk.get("error") {
            return Err(format!(
                "the stream reported an error: {}",
                error_text(error)
            ));
        }
        if head.is_none() {
            head = Some(chunk.clone());
        }
        if chunk.get("usage").is_some_and(|u| !u.is_null()) {
            usage = chunk["usage"].clone();
        }
        let Some(choice) = first_choice(&chunk) else {
            continue;
        };
        if !choice["finish_reason"].is_null() {
            finish_reason = choice["finish_reason"].clone();
        }
        let delta = &choice["delta"];
        if let Some(piece) = delta["content"].as_str() {
            content.get_or_insert_with(String::new).push_str(piece);
        }
        for key in ["reasoning_content", "reasoning"] {
            if let Some(piece) = delta[key].as_str() {
                reasoning.get_or_insert_with(String::new).push_str(piece);
            }
        }
        for (position, call) in delta["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let index = call["index"]
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .unwrap_or(position);
            while calls.len() <= index {
                calls.push(Map::new());
            }
            let entry = &mut calls[index];
            if let Some(id) = call["id"].as_str().filter(|id| !id.is_empty()) {
                entry.insert("id".into(), id.into());
            }
            entry.insert("type".into(), "function".into());
            let function = entry
                .entry("function")
                .or_insert_with(|| json!({"name": "", "arguments": ""}));
            for key in ["name", "arguments"] {
                if let Some(piece) = call["function"][key].as_str() {
                    let joined = format!("{}{piece}", function[key].as_str().unwrap_or_default());
                    function[key] = joined.into();
                }
            }
        }
    }
    let Some(head) = head else {
        return Err("the event stream holds no completion chunk".to_owned());
    };
    if !done && finish_reason.is_null() {
        return Err("the event stream ended before the completion did".to_owned());
    }
    let mut message = json!({"role": "assistant", "content": content});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls.into_iter().map(Value::Object).collect());
    }
    if let Some(reasoning) = reasoning {
        message["reasoning_content"] = reasoning.into();
    }
    let mut completion = json!({
        "id": head["id"],
        "object": "chat.completion",
        "created": head["created"],
        "model": head["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    });
    if !usage.is_null() {
        completion["usage"] = usage;
    }
    serde_json::to_vec(&completion).map_err(|error| error.to_string())
}

/// The choice with index 0 of one chunk, when the chunk has one.
fn first_choice(chunk: &Value) -> Option<&Value> {
    chunk["choices"]
        .as_array()?
        .iter()
        .find(|c| c["index"].as_u64().unwrap_or(0) == 0)
}

/// The text of a stream while it arrives: bytes are fed as they come off the connection,
/// and each complete event's content piece is handed on. Only for showing; the completion
/// is [`assemble`]d from the whole body.
#[derive(Debug, Default)]
pub(crate) struct LiveText {
    /// Bytes after the last complete line.
    pending: Vec<u8>,
}

impl LiveText {
    pub(crate) fn feed(&mut self, bytes: &[u8], mut on_text: impl FnMut(&str)) {
        self.pending.extend_from_slice(bytes);
        while let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            if let Some(piece) = content_piece(&line).filter(|piece| !piece.is_empty()) {
                on_text(&piece);
            }
        }
    }
}

fn content_piece(line: &[u8]) -> Option<String> {
    let data = std::str::from_utf8(line)
        .ok()?
        .trim()
        .strip_prefix("data:")?;
    let chunk: Value = serde_json::from_str(data.trim()).ok()?;
    first_choice(&chunk)?["delta"]["content"]
        .as_str()
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_are_joined_and_tool_calls_reassembled_by_index() {
        let events = concat!(
            ": ping\n\n",
            "data: {\"id\":\"c\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"think\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"ls\",\"arguments\":\"\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"b\",\"function\":{\"name\":\"cat\",\"arguments\":\"{}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"d\\\":\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"1}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}\n\n",
            "data: [DONE]\n\n",
        );
        let body: Value = serde_json::from_slice(&assemble(events.as_bytes()).unwrap()).unwrap();
        assert_eq!(
            body,
            json!({"id": "c", "object": "chat.completion", "created": 1, "model": "m",
                   "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                       "role": "assistant", "content": "Hello", "reasoning_content": "think",
                       "tool_calls": [
                           {"id": "a", "type": "function", "function": {"name": "ls", "arguments": "{\"d\":1}"}},
                           {"id": "b", "type": "function", "function": {"name": "cat", "arguments": "{}"}}]}}],
                   "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}})
        );
    }

    #[test]
    fn live_text_hands_on_each_content_piece_however_the_bytes_are_cut() {
        let events = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
            ": ping\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Grüß \"}}]}\r\n\r\n",
            "data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"other choice\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"dich\"}}]}\n\n",
            "data: [DONE]\n\n",
        )
        .as_bytes();
        for size in [1, 2, 7, events.len()] {
            let mut live = LiveText::default();
            let mut pieces = Vec::new();
            for bytes in events.chunks(size) {
                live.feed(bytes, |piece| pieces.push(piece.to_owned()));
            }
            assert_eq!(pieces, ["Grüß ", "dich"], "fed {size} byte(s) at a time");
        }
    }

    #[test]
    fn a_cut_or_erroneous_stream_is_an_error() {
        let cut =
            "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n";
        assert!(
            assemble(cut.as_bytes())
                .unwrap_err()
                .contains("ended before")
        );
        let error = "data: {\"error\":{\"message\":\"overloaded\"}}\n\n";
        assert!(
            assemble(error.as_bytes())
                .unwrap_err()
                .contains("overloaded")
        );
        assert!(assemble(b"").is_err());
    }
}
