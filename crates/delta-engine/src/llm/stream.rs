//! Server-sent events of a streamed answer (`stream: true`): telling a stream from a JSON
//! body and reading its `data:` payloads. Each API reassembles the events into the body a
//! non-streamed call returns (`super::wire`, which also shows the text while it arrives),
//! so that everything after the client (journal, `response.json`, hooks) is the same
//! either way.

use serde_json::Value;

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
