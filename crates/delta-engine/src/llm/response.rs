//! A successful chat completion and the tolerant-but-checked parsing of its body.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::error::AttemptRecord;
use super::message::{AssistantMessage, ToolCall};

/// Token counts reported by the server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TokenUsage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
}

/// The outcome of a successful call.
#[derive(Clone, Debug)]
pub struct Completion {
    /// The response body exactly as received, for `response.json`; for a streamed call,
    /// the completion reassembled from the events.
    pub raw_body: Vec<u8>,
    /// The server-sent events exactly as received, when the call was streamed
    /// (`stream: true`), for `response.sse`.
    pub stream: Option<Vec<u8>>,
    /// The first choice's message.
    pub message: AssistantMessage,
    pub usage: Option<TokenUsage>,
    /// The model that answered, as the server names it (often a dated snapshot).
    pub model: Option<String>,
    pub finish_reason: Option<String>,
    /// The model's reasoning, apart from its answer: `reasoning_content` (DeepSeek, vLLM,
    /// llama.cpp's server) or `reasoning` (Ollama, OpenRouter, newer vLLM).
    pub reasoning: Option<String>,
    /// Failed attempts before the successful one, each with the wait that followed it.
    pub attempts: Vec<AttemptRecord>,
    /// Wall time of the whole call, retries and waits included.
    pub duration: Duration,
}

/// The parsed fields of a completion body.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ParsedBody {
    pub message: AssistantMessage,
    pub usage: Option<TokenUsage>,
    pub model: Option<String>,
    pub finish_reason: Option<String>,
    pub reasoning: Option<String>,
}

#[derive(Deserialize)]
struct WireResponse {
    model: Option<String>,
    choices: Option<Vec<WireChoice>>,
    /// Read leniently by [`usage`]: a malformed usage must not cost a good completion.
    usage: Option<Value>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct WireChoice {
    message: Option<WireMessage>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireMessage {
    content: Option<String>,
    refusal: Option<String>,
    tool_calls: Option<Vec<WireCall>>,
    reasoning_content: Option<String>,
    reasoning: Option<String>,
}

#[derive(Deserialize)]
struct WireCall {
    id: Option<String>,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    arguments: Option<Value>,
}

/// The completion a recorded `response.json` holds (the body as received, or a stream
/// reassembled), with the recorded `response.sse` when there is one: what `delta replay`
/// serves instead of calling the model. The error is a short reason.
pub fn completion_from_record(
    body: Vec<u8>,
    stream: Option<Vec<u8>>,
) -> Result<Completion, String> {
    let parsed = parse_body(&body)?;
    Ok(Completion::new(
        parsed,
        body,
        stream,
        Vec::new(),
        Duration::ZERO,
    ))
}

impl Completion {
    /// The completion of `parsed`, whose body is `raw_body`.
    pub(crate) fn new(
        parsed: ParsedBody,
        raw_body: Vec<u8>,
        stream: Option<Vec<u8>>,
        attempts: Vec<AttemptRecord>,
        duration: Duration,
    ) -> Self {
        Completion {
            raw_body,
            stream,
            message: parsed.message,
            usage: parsed.usage,
            model: parsed.model,
            finish_reason: parsed.finish_reason,
            reasoning: parsed.reasoning,
            attempts,
            duration,
        }
    }
}

/// Parses a 2xx body. The error is a short reason for `LlmError::MalformedResponse`.
///
/// Leniencies, each seen in OpenAI-compatible servers: a tool call without an `id` gets
/// `call_{index}` (the engine echoes it back as `tool_call_id`, so it only has to be
/// unique within the message); `arguments` given as a JSON object instead of a string is
/// serialized back to text; a missing `arguments` is `{}`; a refusal with no content
/// becomes the content, so the user sees why the model declined.
pub(crate) fn parse_body(body: &[u8]) -> Result<ParsedBody, String> {
    let wire: WireResponse = serde_json::from_slice(body).map_err(|error| {
        if error.is_syntax() || error.is_eof() {
            format!("not JSON: {error}")
        } else {
            format!("unexpected shape: {error}")
        }
    })?;

    let Some(choice) = wire.choices.and_then(|choices| choices.into_iter().next()) else {
        return Err(match wire.error {
            Some(error) => format!("no choices, but an error: {}", error_text(&error)),
            None => "no choices".to_owned(),
        });
    };
    let message = choice
        .message
        .ok_or_else(|| "the first choice has no message".to_owned())?;

    let tool_calls = message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(index, call)| {
            let arguments = match call.function.arguments {
                None | Some(Value::Null) => "{}".to_owned(),
                Some(Value::String(text)) => text,
                Some(value @ Value::Object(_)) => value.to_string(),
                Some(Value::Bool(_) | Value::Number(_) | Value::Array(_)) => {
                    return Err(format!(
                        "tool call {index} has arguments that are neither a string nor an object"
                    ));
                }
            };
            Ok(ToolCall {
                id: call.id.unwrap_or_else(|| format!("call_{index}")),
                name: call.function.name,
                arguments,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;

    let usage = wire.usage.as_ref().and_then(usage);

    Ok(ParsedBody {
        message: AssistantMessage {
            content: message.content.or(message.refusal),
            tool_calls,
        },
        usage,
        model: wire.model,
        finish_reason: choice.finish_reason,
        reasoning: message
            .reasoning_content
            .or(message.reasoning)
            .filter(|text| !text.is_empty()),
    })
}

/// The token counts of a `usage` object, or `None` (unknown) when the server sent none or
/// sent something else: a missing or malformed count is not a count of 0, and a completion
/// is worth keeping whatever its usage field looks like (issue 12, item 16).
fn usage(value: &Value) -> Option<TokenUsage> {
    let count = |name: &str| value.get(name).and_then(Value::as_u64);
    let prompt_tokens = count("prompt_tokens")?;
    let completion_tokens = count("completion_tokens")?;
    Some(TokenUsage {
        prompt_tokens,
        completion_tokens,
        total_tokens: count("total_tokens")
            .unwrap_or(prompt_tokens.saturating_add(completion_tokens)),
    })
}

/// The human-readable part of an error value: `{"message": …}`, or a bare string, or the
/// JSON itself.
pub(crate) fn error_text(error: &Value) -> String {
    match error {
        Value::String(text) => text.clone(),
        Value::Object(fields) => match fields.get("message") {
            Some(Value::String(text)) => text.clone(),
            Some(_) | None => error.to_string(),
        },
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::Array(_) => error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_ids_and_object_arguments_are_tolerated() {
        let body = br#"{"choices":[{"message":{"content":null,"tool_calls":[
            {"function":{"name":"ls","arguments":{"dir":"."}}},
            {"id":"x","type":"function","function":{"name":"pwd"}}
        ]},"finish_reason":"tool_calls"}]}"#;
        let parsed = parse_body(body).unwrap();
        assert_eq!(
            parsed.message.tool_calls,
            vec![
                ToolCall {
                    id: "call_0".into(),
                    name: "ls".into(),
                    arguments: r#"{"dir":"."}"#.into()
                },
                ToolCall {
                    id: "x".into(),
                    name: "pwd".into(),
                    arguments: "{}".into()
                },
            ]
        );
        assert_eq!(parsed.usage, None);
    }

    #[test]
    fn missing_or_malformed_usage_is_unknown_and_keeps_the_completion() {
        let with = |usage: &str| {
            let body = format!(r#"{{"choices":[{{"message":{{"content":"hi"}}}}]{usage}}}"#);
            let parsed = parse_body(body.as_bytes()).unwrap();
            assert_eq!(parsed.message.content.as_deref(), Some("hi"));
            parsed.usage
        };
        assert_eq!(with(""), None);
        assert_eq!(with(r#","usage":null"#), None);
        assert_eq!(with(r#","usage":"n/a""#), None);
        assert_eq!(
            with(r#","usage":{"prompt_tokens":"7","completion_tokens":2}"#),
            None
        );
        assert_eq!(
            with(r#","usage":{"prompt_tokens":-1,"completion_tokens":2}"#),
            None
        );
        assert_eq!(with(r#","usage":{"completion_tokens":2}"#), None);
        assert_eq!(
            with(r#","usage":{"prompt_tokens":7,"completion_tokens":2}"#),
            Some(TokenUsage {
                prompt_tokens: 7,
                completion_tokens: 2,
                total_tokens: 9
            })
        );
    }

    #[test]
    fn refusal_becomes_content() {
        let body = br#"{"choices":[{"message":{"content":null,"refusal":"I can't"}}]}"#;
        assert_eq!(
            parse_body(body).unwrap().message.content.as_deref(),
            Some("I can't")
        );
    }

    #[test]
    fn shapes_that_are_not_completions_are_rejected_with_a_reason() {
        for (body, reason) in [
            (&b"<html>"[..], "not JSON"),
            (b"{}", "no choices"),
            (br#"{"choices":[]}"#, "no choices"),
            (
                br#"{"error":{"message":"quota"}}"#,
                "no choices, but an error: quota",
            ),
            (br#"{"choices":[{}]}"#, "the first choice has no message"),
            (
                br#"{"choices":[{"message":{"content":5}}]}"#,
                "unexpected shape",
            ),
            (
                br#"{"choices":[{"message":{"tool_calls":[{"function":{"name":"a","arguments":[1]}}]}}]}"#,
                "tool call 0 has arguments",
            ),
        ] {
            let error = parse_body(body).unwrap_err();
            assert!(error.starts_with(reason), "{error:?} should start with {reason:?}");
        }
    }
}
