//! The token estimator: a ceiling on how many tokens a message costs, without a tokenizer.
//!
//! A message is counted as the bytes of its JSON wire form divided by
//! [`BYTES_PER_TOKEN`], rounded up, plus [`MESSAGE_OVERHEAD`] tokens. Why this and not a
//! tokenizer crate:
//! - the engine talks to any OpenAI-compatible server, whose model and tokenizer it does
//!   not know; a tokenizer per family would be a large dependency that is still wrong
//!   for the next model;
//! - for the BPE vocabularies of current models (OpenAI's cl100k/o200k, Llama 3, Qwen,
//!   Mistral's Tekken) English prose averages about 4 bytes per token and code about 3.5,
//!   so 3 bytes per token over-counts them by 15–35%; JSON escaping and the wire keys
//!   add bytes a chat template does not turn into tokens, so the wire form over-counts
//!   further; 4 tokens per message cover the role markers of chat templates (OpenAI
//!   counts 3–4);
//! - where it under-counts (long digit strings under Llama 2's vocabulary, some scripts),
//!   the engine raises it by the ratio the server reports (`usage.prompt_tokens`, or the
//!   prompt size a context-length error states): see `Window::calibrate` in
//!   `engine/window.rs`.
//!
//! Counting is linear in the text and allocates nothing.

use crate::llm::ChatMessage;

/// Bytes of wire JSON counted as one token.
pub const BYTES_PER_TOKEN: u64 = 3;

/// Tokens added per message for the chat template's role markers and separators.
pub const MESSAGE_OVERHEAD: u64 = 4;

/// JSON bytes around a message's strings (`{"role":"tool","tool_call_id":…}`), an upper
/// bound over the four roles.
const MESSAGE_FRAME_BYTES: u64 = 48;

/// JSON bytes around one tool call (`{"id":…,"type":"function","function":{…}}`).
const CALL_FRAME_BYTES: u64 = 64;

/// Estimated tokens of `message` as sent.
#[must_use]
pub fn message_tokens(message: &ChatMessage) -> u64 {
    let bytes = MESSAGE_FRAME_BYTES
        + match message {
            ChatMessage::System { content } | ChatMessage::User { content } => {
                json_string_bytes(content)
            }
            ChatMessage::Tool {
                tool_call_id,
                content,
                ..
            } => json_string_bytes(tool_call_id) + json_string_bytes(content),
            ChatMessage::Assistant(assistant) => {
                assistant.content.as_deref().map_or(4, json_string_bytes)
                    + assistant
                        .tool_calls
                        .iter()
                        .map(|call| {
                            CALL_FRAME_BYTES
                                + json_string_bytes(&call.id)
                                + json_string_bytes(&call.name)
                                + json_string_bytes(&call.arguments)
                        })
                        .sum::<u64>()
            }
        };
    bytes.div_ceil(BYTES_PER_TOKEN) + MESSAGE_OVERHEAD
}

/// Estimated tokens of `messages` as sent.
#[must_use]
pub fn messages_tokens(messages: &[ChatMessage]) -> u64 {
    messages.iter().map(message_tokens).sum()
}

/// Estimated tokens of a serialized JSON text (a request body, tool definitions).
#[must_use]
pub fn json_tokens(bytes: usize) -> u64 {
    u64::try_from(bytes)
        .unwrap_or(u64::MAX)
        .div_ceil(BYTES_PER_TOKEN)
}

/// Bytes of `text` as a JSON string literal, quotes included.
pub(crate) fn json_string_bytes(text: &str) -> u64 {
    let escapes: u64 = text
        .bytes()
        .map(|byte| match byte {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 1,
            0..=0x1f => 5,
            _ => 0,
        })
        .sum();
    u64::try_from(text.len()).unwrap_or(u64::MAX) + escapes + 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{AssistantMessage, ToolCall};

    #[test]
    fn the_estimate_covers_the_wire_bytes_at_three_per_token() {
        let messages = [
            ChatMessage::system("You are \"careful\".\n\tAlways check.\u{1}"),
            ChatMessage::user("héllo wörld ✓ 数字 1234567890"),
            ChatMessage::Assistant(AssistantMessage {
                content: None,
                tool_calls: vec![ToolCall {
                    id: "call_0_0".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path": "a \"b\".txt"}"#.into(),
                }],
                reasoning: None,
                passback: None,
            }),
            ChatMessage::tool("call_0_0", "line 1\nline 2\n"),
            ChatMessage::Assistant(AssistantMessage {
                content: Some(String::new()),
                tool_calls: Vec::new(),
                reasoning: None,
                passback: None,
            }),
        ];
        for message in &messages {
            let wire = serde_json::to_vec(&message.to_json()).unwrap().len() as u64;
            assert!(
                (message_tokens(message) - MESSAGE_OVERHEAD) * BYTES_PER_TOKEN >= wire,
                "{message:?}: {wire} bytes"
            );
        }
    }
}
