//! Server-sent events of a streamed answer (`stream: true`): telling a stream from a JSON
//! body, reading its `data:` payloads, and the text shown while it arrives. Each API
//! reassembles the events into the body a non-streamed call returns (`super::wire`), so
//! that everything after the client (journal, `response.json`, hooks) is the same either
//! way.

use delta_scenario::ModelApi;
use serde_json::Value;

use super::wire;

/// Whether a 2xx body is an event stream rather than a JSON completion.
pub(crate) fn is_event_stream(content_type: Option<&str>, body: &[u8]) -> bool {
    content_type.is_some_and(|kind| kind.starts_with("text/event-stream"))
        || body.trim_ascii_start().starts_with(b"data:")
        || body.trim_ascii_start().starts_with(b"event:")
}

/// What a stream's `data:` lines hold, in order.
pub(crate) enum Data {
    /// `data: [DONE]`, the end of an OpenAI stream.
    Done,
    /// One event's JSON.
    Event(Value),
}

/// The `data:` payloads of `events`; comments (`: ping`), `event:` and `id:` lines carry
/// nothing the payloads do not (each API repeats the event name as the payload's `type`).
pub(crate) fn data(events: &[u8]) -> Result<Vec<Data>, String> {
    let text = String::from_utf8_lossy(events);
    let mut payloads = Vec::new();
    for line in text.lines() {
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        let data = data.trim();
        if data == "[DONE]" {
            payloads.push(Data::Done);
            continue;
        }
        let event =
            serde_json::from_str(data).map_err(|error| format!("an event is not JSON: {error}"))?;
        payloads.push(Data::Event(event));
    }
    Ok(payloads)
}

/// The text of a stream while it arrives: bytes are fed as they come off the connection,
/// and each complete event's piece of the answer's text is handed on. Only for showing;
/// the completion is assembled from the whole body.
#[derive(Debug)]
pub(crate) struct LiveText {
    api: ModelApi,
    /// Bytes after the last complete line.
    pending: Vec<u8>,
}

impl LiveText {
    pub(crate) fn new(api: ModelApi) -> Self {
        LiveText {
            api,
            pending: Vec::new(),
        }
    }

    pub(crate) fn feed(&mut self, bytes: &[u8], mut on_text: impl FnMut(&str)) {
        self.pending.extend_from_slice(bytes);
        while let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let piece = std::str::from_utf8(&line)
                .ok()
                .and_then(|line| line.trim().strip_prefix("data:"))
                .and_then(|data| serde_json::from_str::<Value>(data.trim()).ok())
                .and_then(|event| wire::text_piece(self.api, &event));
            if let Some(piece) = piece.filter(|piece| !piece.is_empty()) {
                on_text(&piece);
            }
        }
    }
}
