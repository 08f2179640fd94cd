//! The one seam between the engine's provider-neutral conversation and a model API's wire
//! format: the request body built for the agent's API, the answer parsed back into a
//! neutral [`super::Completion`] (also from a recorded answer, [`completion_from_record`]),
//! a stream reassembled into the body a non-streamed call returns, and its text shown
//! while it arrives ([`LiveText`]). One file per API: [`chat`] (OpenAI chat completions and every compatible
//! server), [`anthropic`] (Anthropic Messages), [`responses`] (OpenAI Responses, used
//! statelessly). Nothing above this module knows which API it talks to; everything
//! recorded (the journal, `io/invocations`) is either neutral or the exact wire bytes.

mod anthropic;
mod chat;
mod responses;

use std::time::Duration;

use delta_scenario::ModelApi;

use serde_json::{Map, Value};

pub use chat::build_request;

use super::message::{AssistantMessage, ChatMessage, Passback, ToolCall};
use super::response::{Completion, ParsedBody, error_text};
use super::stream::{Data, data};
use crate::llm::params::KNOWN_PARAMETERS;

pub use delta_config::llm::PromptCache;

/// What a request is built from besides the conversation, decided once per run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WireOptions {
    /// `llm.prompt_cache`.
    pub prompt_cache: PromptCache,
    /// The `prompt_cache_key` to send (chat, Responses), when one is sent.
    pub cache_key: Option<String>,
    /// `llm.reasoning_passback`: assistant-message fields a chat server needs back.
    pub reasoning_passback: Vec<String>,
}

/// One request to build: the conversation, the tool definitions (chat's shape, the
/// engine's own), the agent's other `llm` parameters.
#[derive(Debug, Clone, Copy)]
pub struct WireRequest<'a> {
    pub api: ModelApi,
    pub model: &'a str,
    pub messages: &'a [ChatMessage],
    /// `{"type": "function", "function": {name, description, parameters}}`, in the
    /// agent's fixed order.
    pub tools: &'a [Value],
    pub params: &'a Map<String, Value>,
    pub options: &'a WireOptions,
}

impl WireRequest<'_> {
    /// The body's start: the agent's parameters the API takes as they are (all but
    /// `engine_keys`, which the API's translation owns), and the model.
    fn passthrough(&self, engine_keys: &[&str]) -> Map<String, Value> {
        let mut body: Map<String, Value> = self
            .params
            .iter()
            .filter(|(key, _)| !engine_keys.contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        body.insert("model".into(), self.model.into());
        body
    }

    /// The request body in the API's wire format. Deterministic: the same conversation,
    /// tools, parameters and options give the same bytes, so the request of step n+1
    /// begins with step n's conversation (providers' prefix caches hit).
    #[must_use]
    pub fn body(&self) -> Value {
        match self.api {
            ModelApi::Chat => chat::body(self),
            ModelApi::Anthropic => anthropic::body(self),
            ModelApi::Responses => responses::body(self),
        }
    }
}

/// Parses a 2xx body of `api`. The error is a short reason for
/// `LlmError::MalformedResponse`.
pub(crate) fn parse_body(api: ModelApi, body: &[u8]) -> Result<ParsedBody, String> {
    match api {
        ModelApi::Chat => chat::parse_body(body),
        ModelApi::Anthropic => anthropic::parse_body(body),
        ModelApi::Responses => responses::parse_body(body),
    }
}

/// The body a non-streamed call would have returned, from `api`'s event stream.
pub(crate) fn assemble(api: ModelApi, events: &[u8]) -> Result<Vec<u8>, String> {
    match api {
        ModelApi::Chat => chat::assemble(events),
        ModelApi::Anthropic => anthropic::assemble(events),
        ModelApi::Responses => responses::assemble(events),
    }
}

/// The piece of the answer's text one event of `api`'s stream carries.
pub(crate) fn text_piece(api: ModelApi, event: &Value) -> Option<String> {
    match api {
        ModelApi::Chat => chat::text_piece(event),
        ModelApi::Anthropic => anthropic::text_piece(event),
        ModelApi::Responses => responses::text_piece(event),
    }
}

/// An error the service reported inside a 2xx stream that a retry may cure, as (the status
/// it stands for, the service's message): Anthropic's `event: error` with
/// `overloaded_error` or `api_error` (a 529 or 500 when not streamed, digest A4) and the
/// Responses API's `error` or `response.failed` with a server error. Chat streams are left
/// to [`assemble`], whose error fails the call as before.
pub(crate) fn stream_failure(api: ModelApi, events: &[u8]) -> Option<(u16, String)> {
    if api == ModelApi::Chat {
        return None;
    }
    let payloads = data(events).ok()?;
    payloads.iter().find_map(|payload| {
        let Data::Event(event) = payload else {
            return None;
        };
        let (kind, error) = match event["type"].as_str()? {
            "error" if api == ModelApi::Anthropic => {
                (event["error"]["type"].as_str()?, &event["error"])
            }
            "error" => (event["code"].as_str().unwrap_or("server_error"), event),
            "response.failed" => (
                event["response"]["error"]["code"]
                    .as_str()
                    .unwrap_or("server_error"),
                &event["response"]["error"],
            ),
            _ => return None,
        };
        let status = match kind {
            "overloaded_error" => 529,
            "api_error" | "server_error" => 500,
            "rate_limit_error" | "rate_limit_exceeded" => 429,
            _ => return None,
        };
        Some((status, error_text(error)))
    })
}

/// What `delta replay` compares of a request of `api`: the conversation and the tools,
/// not the parameters (a cache key names the run).
#[must_use]
pub fn conversation_keys(api: ModelApi) -> &'static [&'static str] {
    match api {
        ModelApi::Chat => &["messages", "tools"],
        ModelApi::Anthropic => &["system", "messages", "tools"],
        ModelApi::Responses => &["instructions", "input", "tools"],
    }
}

/// The request parameters `api` knows (besides what the engine sends itself); any other
/// key under `llm:` draws a warning and is still sent.
#[must_use]
pub fn known_parameters(api: ModelApi) -> &'static [&'static str] {
    match api {
        ModelApi::Chat => KNOWN_PARAMETERS,
        ModelApi::Anthropic => anthropic::PARAMETERS,
        ModelApi::Responses => responses::PARAMETERS,
    }
}

/// The URL of `api`'s endpoint under `base_url`: chat and Responses take the base URL up
/// to `/v1` (OpenAI's SDKs), Anthropic the host without it (Anthropic's SDKs).
#[must_use]
pub fn endpoint(api: ModelApi, base_url: &str) -> String {
    match api {
        ModelApi::Chat => format!("{base_url}/chat/completions"),
        ModelApi::Responses => format!("{base_url}/responses"),
        ModelApi::Anthropic => format!("{base_url}/v1/messages"),
    }
}

/// What an answer's blocks (Anthropic) or items (Responses) add up to.
#[derive(Default)]
struct Parts<'a> {
    texts: Vec<&'a str>,
    reasoning: Vec<&'a str>,
    tool_calls: Vec<ToolCall>,
    /// The passback items, in the answer's order.
    items: Vec<Value>,
    /// Whether an item must go back (a thinking block, a reasoning item).
    opaque: bool,
}

impl Parts<'_> {
    /// The neutral message: the texts joined, the reasoning texts one per line, the
    /// passback when something must go back.
    fn message(self, api: ModelApi) -> AssistantMessage {
        let reasoning = self.reasoning.join("\n");
        AssistantMessage {
            content: (!self.texts.is_empty()).then(|| self.texts.concat()),
            tool_calls: self.tool_calls,
            reasoning: (!reasoning.is_empty()).then_some(reasoning),
            passback: self.opaque.then_some(Passback {
                api,
                items: self.items,
            }),
        }
    }
}

/// The tool definition's parts, from the engine's chat-shaped one.
pub(super) fn function_parts(tool: &Value) -> (&Value, &Value, &Value) {
    let function = &tool["function"];
    (
        &function["name"],
        &function["description"],
        &function["parameters"],
    )
}

/// The completion a recorded `response.json` of a call to `api` holds (the body as
/// received, or a stream reassembled), with the recorded `response.sse` when there is
/// one: what `delta replay` serves instead of calling the model. The error is a short
/// reason.
pub fn completion_from_record(
    api: ModelApi,
    body: Vec<u8>,
    stream: Option<Vec<u8>>,
) -> Result<Completion, String> {
    let parsed = parse_body(api, &body)?;
    Ok(Completion::new(
        parsed,
        body,
        stream,
        Vec::new(),
        Duration::ZERO,
    ))
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
                .and_then(|event| text_piece(self.api, &event));
            if let Some(piece) = piece.filter(|piece| !piece.is_empty()) {
                on_text(&piece);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            let mut live = LiveText::new(ModelApi::Chat);
            let mut pieces = Vec::new();
            for bytes in events.chunks(size) {
                live.feed(bytes, |piece| pieces.push(piece.to_owned()));
            }
            assert_eq!(pieces, ["Grüß ", "dich"], "fed {size} byte(s) at a time");
        }
    }
}
