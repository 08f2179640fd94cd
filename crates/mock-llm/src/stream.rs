//! Streams held at a gate file: the events up to the first piece of text at once, the
//! rest once the file exists, so a test can see a client show text while the answer is
//! still arriving.

use std::convert::Infallible;
use std::path::PathBuf;
use std::time::Duration;

use axum::body::Body;
use futures_util::StreamExt as _;

/// How often a held stream looks for its gate file.
const GATE_POLL: Duration = Duration::from_millis(20);

/// The stream of a step with `stream_hold_until`: the first `held_after` events at once,
/// the rest once `gate` exists.
pub(crate) fn held_stream(events: Vec<String>, held_after: usize, gate: PathBuf) -> Body {
    let split = events.len().min(held_after);
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

/// One server-sent event with an `event:` name, as Anthropic and the Responses API send
/// them.
pub(crate) fn named_event(name: &str, data: &serde_json::Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}
