//! Anthropic's Messages API (`POST /v1/messages`), validated as the service does: the
//! rules of digest §D1, numbered as there. Sources: A-SDK (anthropic-sdk-python's types,
//! generated from the API's OpenAPI spec), A-TOOLS, A-THINK, A-CACHE, A-ERR, and errors
//! the service was observed to give (OBS:n, ids of the code index the digest cites).
//! Wording marked `[exact]` is the service's own; `[approx]` is the closest documented
//! form (pydantic's phrasing, which the service uses for its schema errors).
//!
//! Rules not reproduced: an unknown model (7; any model name is served), the 32 MB body
//! limit (4; axum's limit is larger), the 100,000-message limit.

use std::collections::HashSet;

use axum::http::StatusCode;
use serde_json::{Map, Value};

use super::{Credentials, Issue, Rejection};
use crate::api_error::{anthropic_body, anthropic_type};
use crate::seal;

/// The `anthropic-version` every SDK sends (A-SDK `_client.py`).
pub(crate) const VERSION: &str = "2023-06-01";

/// Top-level parameters (A-SDK `MessageCreateParams`, digest A2.1).
const PARAMETERS: &[&str] = &[
    "model",
    "max_tokens",
    "messages",
    "system",
    "stream",
    "temperature",
    "top_p",
    "top_k",
    "stop_sequences",
    "tools",
    "tool_choice",
    "thinking",
    "metadata",
    "service_tier",
    "cache_control",
    "output_config",
    "container",
    "inference_geo",
];

/// Most output tokens per model, where the service's error stated it (rule 8; OBS:71454021584
/// for Haiku 4.5, the others from the same models' documented limits).
const OUTPUT_LIMITS: &[(&str, u64)] = &[
    ("claude-haiku-4-5", 64_000),
    ("claude-sonnet-4-5", 64_000),
    ("claude-opus-4-1", 32_000),
    ("claude-3-5-haiku", 8_192),
    ("claude-3-haiku", 4_096),
];

/// Content block types and the fields each takes (A-SDK `*_block_param.py`).
const BLOCKS: &[(&str, &[&str])] = &[
    ("text", &["type", "text", "cache_control", "citations"]),
    ("image", &["type", "source", "cache_control"]),
    (
        "document",
        &[
            "type",
            "source",
            "cache_control",
            "title",
            "context",
            "citations",
        ],
    ),
    (
        "tool_use",
        &["type", "id", "name", "input", "cache_control", "caller"],
    ),
    (
        "tool_result",
        &[
            "type",
            "tool_use_id",
            "content",
            "is_error",
            "cache_control",
        ],
    ),
    ("thinking", &["type", "thinking", "signature"]),
    ("redacted_thinking", &["type", "data"]),
];

/// Fields each block type requires (A-SDK: `Required[...]`).
const REQUIRED: &[(&str, &[&str])] = &[
    ("text", &["text"]),
    ("image", &["source"]),
    ("document", &["source"]),
    ("tool_use", &["id", "name", "input"]),
    ("tool_result", &["tool_use_id"]),
    ("thinking", &["thinking", "signature"]),
    ("redacted_thinking", &["data"]),
];

/// Fields of a tool definition (A-SDK `tool_param.py`).
const TOOL_FIELDS: &[&str] = &[
    "name",
    "description",
    "input_schema",
    "cache_control",
    "strict",
    "type",
    "defer_loading",
    "eager_input_streaming",
    "input_examples",
    "allowed_callers",
];

/// Breakpoints a request may mark (rule 27).
const MAX_BREAKPOINTS: usize = 4;

pub(super) fn check(credentials: &Credentials, body: &Value) -> Result<(), Rejection> {
    validate(credentials, body).map_err(|issue| {
        let status = StatusCode::from_u16(issue.status).unwrap_or(StatusCode::BAD_REQUEST);
        Rejection {
            status: issue.status,
            body: anthropic_body(anthropic_type(status), &issue.message),
        }
    })
}

fn refuse(message: impl Into<String>) -> Issue {
    Issue {
        message: message.into(),
        param: None,
        code: None,
        status: 400,
    }
}

/// `<path>: Field required` (pydantic's wording, seen as `signature: Field required`,
/// OBS:57595008536).
fn required(path: &str) -> Issue {
    refuse(format!("{path}: Field required"))
}

/// `<path>: Extra inputs are not permitted` [exact form] (OBS:53423994021, OBS:62973570111).
fn extra(path: &str) -> Issue {
    refuse(format!("{path}: Extra inputs are not permitted"))
}

fn validate(credentials: &Credentials, body: &Value) -> Result<(), Issue> {
    // Rule 1 [exact] (A-ERR; OBS:55164261121): no `x-api-key` nor bearer token.
    if !credentials.api_key && !credentials.authorization {
        return Err(Issue {
            status: 401,
            ..refuse("invalid x-api-key")
        });
    }
    // Rule 2 [approx]: every SDK sends `anthropic-version` (A-SDK `_client.py`).
    if credentials.anthropic_version.is_none() {
        return Err(refuse("anthropic-version: header is required"));
    }
    // Rule 3 [approx].
    let Some(request) = body.as_object() else {
        return Err(refuse("Input should be a valid dictionary"));
    };
    // Rule 6.
    if let Some(key) = request
        .keys()
        .find(|key| !PARAMETERS.contains(&key.as_str()))
    {
        return Err(extra(key));
    }
    // Rule 5.
    let model = match request.get("model") {
        Some(Value::String(model)) => model.as_str(),
        Some(_) => return Err(refuse("model: Input should be a valid string")),
        None => return Err(required("model")),
    };
    let max_tokens = match request.get("max_tokens") {
        Some(value) => value
            .as_u64()
            .ok_or_else(|| refuse("max_tokens: Input should be a valid integer"))?,
        None => return Err(required("max_tokens")),
    };
    let messages = match request.get("messages") {
        Some(Value::Array(messages)) => messages,
        Some(_) => return Err(refuse("messages: Input should be a valid list")),
        None => return Err(required("messages")),
    };
    // Rule 8 [exact] (OBS:71454021584).
    if let Some((_, limit)) = OUTPUT_LIMITS
        .iter()
        .find(|(name, _)| model.starts_with(name))
        && max_tokens > *limit
    {
        return Err(refuse(format!(
            "max_tokens: {max_tokens} > {limit}, which is the maximum allowed number of \
             output tokens for {model}"
        )));
    }
    // Rule 9 [approx] (A-SDK: "Ranges from 0.0 to 1.0").
    let temperature = request.get("temperature");
    if let Some(value) = temperature {
        match value.as_f64() {
            Some(t) if (0.0..=1.0).contains(&t) => {}
            Some(_) => {
                return Err(refuse(
                    "temperature: Input should be less than or equal to 1",
                ));
            }
            None => return Err(refuse("temperature: Input should be a valid number")),
        }
    }
    for (field, check) in [
        ("top_p", Value::is_number as fn(&Value) -> bool),
        ("top_k", Value::is_u64),
        ("stream", Value::is_boolean),
    ] {
        if request.get(field).is_some_and(|value| !check(value)) {
            return Err(refuse(format!(
                "{field}: Input should be a valid {}",
                match field {
                    "stream" => "boolean",
                    "top_k" => "integer",
                    _ => "number",
                }
            )));
        }
    }
    if let Some(stops) = request.get("stop_sequences")
        && !stops
            .as_array()
            .is_some_and(|stops| stops.iter().all(Value::is_string))
    {
        return Err(refuse("stop_sequences: Input should be a valid list"));
    }
    let mut breakpoints = usize::from(request.contains_key("cache_control"));
    if let Some(marker) = request.get("cache_control") {
        cache_control("cache_control", marker)?;
    }
    breakpoints += system(request.get("system"))?;
    let (tool_names, marked) = tools(request.get("tools"))?;
    breakpoints += marked;
    let thinking = thinking(request.get("thinking"), max_tokens)?;
    tool_choice(request.get("tool_choice"), &tool_names, thinking)?;
    // Rule 24 [exact] (OBS:53336500892).
    if thinking
        && temperature
            .and_then(Value::as_f64)
            .is_some_and(|t| t != 1.0)
    {
        return Err(refuse(
            "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode",
        ));
    }
    breakpoints += conversation(messages, thinking)?;
    // Rule 27 [exact] (OBS:70103638696): the top-level marker counted too, as a
    // third-party mock does (whether the service counts it is not stated, digest A2.6).
    if breakpoints > MAX_BREAKPOINTS {
        return Err(refuse(format!(
            "A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found \
             {breakpoints}."
        )));
    }
    Ok(())
}

/// Rule 28: `{type: "ephemeral", ttl?: "5m" | "1h"}` (A-SDK `cache_control_ephemeral_param.py`).
fn cache_control(path: &str, marker: &Value) -> Result<(), Issue> {
    let Some(fields) = marker.as_object() else {
        return Err(refuse(format!(
            "{path}: Input should be a valid dictionary"
        )));
    };
    if let Some(key) = fields
        .keys()
        .find(|key| !["type", "ttl"].contains(&key.as_str()))
    {
        return Err(extra(&format!("{path}.{key}")));
    }
    if fields.get("type").and_then(Value::as_str) != Some("ephemeral") {
        return Err(refuse(format!("{path}.type: Input should be 'ephemeral'")));
    }
    if let Some(ttl) = fields.get("ttl")
        && !matches!(ttl.as_str(), Some("5m" | "1h"))
    {
        return Err(refuse(format!("{path}.ttl: Input should be '5m' or '1h'")));
    }
    Ok(())
}

/// `system`: a string or text blocks. Returns the breakpoints it marks.
fn system(system: Option<&Value>) -> Result<usize, Issue> {
    match system {
        None | Some(Value::String(_)) => Ok(0),
        Some(Value::Array(blocks)) => {
            let mut marked = 0;
            for (index, block) in blocks.iter().enumerate() {
                let path = format!("system.{index}");
                let fields = block
                    .as_object()
                    .ok_or_else(|| refuse(format!("{path}: Input should be a valid dictionary")))?;
                if fields.get("type").and_then(Value::as_str) != Some("text") {
                    return Err(refuse(format!("{path}.type: Input should be 'text'")));
                }
                marked += text_block(&path, fields)?;
            }
            Ok(marked)
        }
        Some(_) => Err(refuse("system: Input should be a valid string or list")),
    }
}

/// A text block: known fields, a string `text`, non-empty when it is cached. Returns 1 when
/// it carries a `cache_control`.
fn text_block(path: &str, fields: &Map<String, Value>) -> Result<usize, Issue> {
    known_fields(path, "text", fields)?;
    let text = match fields.get("text") {
        Some(Value::String(text)) => text,
        Some(_) => {
            return Err(refuse(format!(
                "{path}.text: Input should be a valid string"
            )));
        }
        None => return Err(required(&format!("{path}.text"))),
    };
    marker(path, fields, text.is_empty())
}

/// Counts and checks a block's `cache_control`; `empty` text cannot carry one (rule 28
/// [exact], OBS:59097946198).
fn marker(path: &str, fields: &Map<String, Value>, empty: bool) -> Result<usize, Issue> {
    let Some(marker) = fields.get("cache_control") else {
        return Ok(0);
    };
    if empty {
        return Err(refuse(format!(
            "{path}.text: cache_control cannot be set for empty text blocks"
        )));
    }
    cache_control(&format!("{path}.cache_control"), marker)?;
    Ok(1)
}

/// Rule 6 for a block of type `kind`: `<path>.<kind>.<key>: Extra inputs are not permitted`.
fn known_fields(path: &str, kind: &str, fields: &Map<String, Value>) -> Result<(), Issue> {
    let known = BLOCKS
        .iter()
        .find(|(name, _)| *name == kind)
        .map_or(&[][..], |(_, known)| known);
    match fields.keys().find(|key| !known.contains(&key.as_str())) {
        Some(key) => Err(extra(&format!("{path}.{kind}.{key}"))),
        None => Ok(()),
    }
}

/// Rule 20: the tools, in the shape of `ToolParam`. Returns their names and the
/// breakpoints they mark.
fn tools(tools: Option<&Value>) -> Result<(Vec<String>, usize), Issue> {
    let tools = match tools {
        None => return Ok((Vec::new(), 0)),
        Some(Value::Array(tools)) => tools,
        Some(_) => return Err(refuse("tools: Input should be a valid list")),
    };
    let mut names = Vec::new();
    let mut marked = 0;
    for (index, tool) in tools.iter().enumerate() {
        let path = format!("tools.{index}.custom");
        let fields = tool
            .as_object()
            .ok_or_else(|| refuse(format!("{path}: Input should be a valid dictionary")))?;
        if let Some(key) = fields
            .keys()
            .find(|key| !TOOL_FIELDS.contains(&key.as_str()))
        {
            return Err(extra(&format!("{path}.{key}")));
        }
        let name = match fields.get("name") {
            Some(Value::String(name)) => name,
            Some(_) => {
                return Err(refuse(format!(
                    "{path}.name: Input should be a valid string"
                )));
            }
            None => return Err(required(&format!("{path}.name"))),
        };
        // [exact] current wording (OBS:65749502130).
        let valid = (1..=128).contains(&name.len())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            return Err(refuse(format!(
                "{path}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'"
            )));
        }
        match fields.get("input_schema") {
            None => return Err(required(&format!("{path}.input_schema"))),
            // [approx] (A-SDK `InputSchemaTyped.type: Literal["object"]`).
            Some(schema) if schema.get("type").and_then(Value::as_str) != Some("object") => {
                return Err(refuse(format!(
                    "{path}.input_schema.type: Input should be 'object'"
                )));
            }
            Some(_) => {}
        }
        if let Some(marker) = fields.get("cache_control") {
            cache_control(&format!("{path}.cache_control"), marker)?;
            marked += 1;
        }
        if names.contains(name) {
            // [exact] (OBS:71063425369).
            return Err(refuse("tools: Tool names must be unique."));
        }
        names.push(name.clone());
    }
    Ok((names, marked))
}

/// Rule 22: `thinking`; returns whether the model thinks.
fn thinking(thinking: Option<&Value>, max_tokens: u64) -> Result<bool, Issue> {
    let Some(thinking) = thinking else {
        return Ok(false);
    };
    match thinking.get("type").and_then(Value::as_str) {
        Some("disabled") => Ok(false),
        Some("adaptive") => Ok(true),
        Some("enabled") => {
            let budget = thinking
                .get("budget_tokens")
                .ok_or_else(|| required("thinking.enabled.budget_tokens"))?
                .as_u64()
                .ok_or_else(|| {
                    refuse("thinking.enabled.budget_tokens: Input should be a valid integer")
                })?;
            // [approx] (A-SDK: "Must be ≥1024 and less than `max_tokens`").
            if budget < 1024 {
                return Err(refuse(
                    "thinking.enabled.budget_tokens: Input should be greater than or equal to \
                     1024",
                ));
            }
            if budget >= max_tokens {
                return Err(refuse(
                    "max_tokens must be greater than thinking.budget_tokens",
                ));
            }
            Ok(true)
        }
        _ => Err(refuse(
            "thinking: Input tag found using 'type' does not match any of the expected tags: \
             'enabled', 'disabled', 'adaptive'",
        )),
    }
}

/// Rules 21 and 23: `tool_choice`.
fn tool_choice(choice: Option<&Value>, tools: &[String], thinking: bool) -> Result<(), Issue> {
    let Some(choice) = choice else {
        return Ok(());
    };
    let fields = choice
        .as_object()
        .ok_or_else(|| refuse("tool_choice: Input should be a valid dictionary"))?;
    let kind = fields
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let known: &[&str] = match kind {
        "auto" | "any" => &["type", "disable_parallel_tool_use"],
        "tool" => &["type", "name", "disable_parallel_tool_use"],
        "none" => &["type"],
        _ => {
            return Err(refuse(format!(
                "tool_choice: Input tag '{kind}' found using 'type' does not match any of the \
                 expected tags: 'auto', 'any', 'tool', 'none'"
            )));
        }
    };
    if let Some(key) = fields.keys().find(|key| !known.contains(&key.as_str())) {
        return Err(extra(&format!("tool_choice.{kind}.{key}")));
    }
    if kind == "tool" {
        let name = fields
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| required("tool_choice.tool.name"))?;
        if !tools.iter().any(|tool| tool == name) {
            return Err(refuse(format!(
                "tool_choice.tool.name: tool '{name}' is not among the request's tools"
            )));
        }
    }
    // Rule 23 [exact] (A-THINK; OBS:56800194843).
    if thinking && (kind == "any" || kind == "tool") {
        return Err(refuse(
            "Thinking may not be enabled when tool_choice forces tool use.",
        ));
    }
    Ok(())
}

/// One turn after merging consecutive messages of the same role (A-SDK: they "are combined
/// into a single turn", not refused).
struct Turn<'a> {
    role: &'a str,
    /// The index of its first message, as errors name it.
    index: usize,
    /// Its blocks with their message index and position there.
    blocks: Vec<(usize, usize, &'a Value)>,
}

/// Rules 10–19, 25, 26 over `messages`; returns the breakpoints they mark.
fn conversation(messages: &[Value], thinking: bool) -> Result<usize, Issue> {
    let mut marked = 0;
    let mut turns: Vec<Turn<'_>> = Vec::new();
    let last = messages.len().saturating_sub(1);
    for (index, message) in messages.iter().enumerate() {
        let path = format!("messages.{index}");
        let fields = message
            .as_object()
            .ok_or_else(|| refuse(format!("{path}: Input should be a valid dictionary")))?;
        if let Some(key) = fields
            .keys()
            .find(|key| !["role", "content"].contains(&key.as_str()))
        {
            return Err(extra(&format!("{path}.{key}")));
        }
        // Rule 10 [approx].
        let role = match fields.get("role").and_then(Value::as_str) {
            Some(role @ ("user" | "assistant")) => role,
            Some(_) => {
                return Err(refuse(format!(
                    "{path}.role: Input should be 'user' or 'assistant'"
                )));
            }
            None => return Err(required(&format!("{path}.role"))),
        };
        let content = fields
            .get("content")
            .ok_or_else(|| required(&format!("{path}.content")))?;
        // Rule 12 [exact] (OBS:18883907063).
        let empty = if let Some(text) = content.as_str() {
            text.is_empty()
        } else if let Some(blocks) = content.as_array() {
            blocks.is_empty()
        } else {
            return Err(refuse(format!(
                "{path}.content: Input should be a valid list"
            )));
        };
        if empty && !(index == last && role == "assistant") {
            return Err(refuse(format!(
                "{path}: all messages must have non-empty content except for the optional \
                 final assistant message"
            )));
        }
        let blocks: Vec<(usize, usize, &Value)> = content
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(position, block)| (index, position, block))
            .collect();
        for &(_, position, block) in &blocks {
            marked += self::block(&format!("{path}.content.{position}"), role, block)?;
        }
        match turns.last_mut() {
            Some(turn) if turn.role == role => turn.blocks.extend(blocks),
            _ => turns.push(Turn {
                role,
                index,
                blocks,
            }),
        }
    }
    // Rule 11 [exact, historical] (OBS:1912132180); kept, the conservative choice.
    if turns.first().is_some_and(|turn| turn.role != "user") {
        return Err(refuse(
            r#"messages: first message must use the "user" role"#,
        ));
    }
    pairing(&turns)?;
    if thinking {
        thinking_continues(&turns)?;
    }
    Ok(marked)
}

/// Rules 13–15, 26 and 28 for one content block of a `role` message; returns 1 when it
/// carries a `cache_control`.
fn block(path: &str, role: &str, block: &Value) -> Result<usize, Issue> {
    let fields = block
        .as_object()
        .ok_or_else(|| refuse(format!("{path}: Input should be a valid dictionary")))?;
    let kind = fields
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Some((_, needed)) = REQUIRED.iter().find(|(name, _)| *name == kind) else {
        // Rule 13 [approx].
        return Err(refuse(format!(
            "{path}: Input tag '{kind}' found using 'type' does not match any of the expected \
             tags: 'text', 'image', 'document', 'tool_use', 'tool_result', 'thinking', \
             'redacted_thinking'"
        )));
    };
    known_fields(path, kind, fields)?;
    if let Some(field) = needed.iter().find(|field| !fields.contains_key(**field)) {
        return Err(required(&format!("{path}.{kind}.{field}")));
    }
    // Rule 15 [approx] (A-SDK docstrings: tool results go in a `user` message, the model's
    // blocks in an `assistant` one).
    let placed = match kind {
        "tool_use" | "thinking" | "redacted_thinking" => role == "assistant",
        "tool_result" | "image" | "document" => role == "user",
        _ => true,
    };
    if !placed {
        return Err(refuse(format!(
            "{path}: `{kind}` blocks are not allowed in `{role}` messages"
        )));
    }
    match kind {
        "text" => {
            // Rule 12 [exact] (OBS:61935712298).
            if fields.get("text").and_then(Value::as_str) == Some("") {
                return Err(refuse("messages: text content blocks must be non-empty"));
            }
            text_block(path, fields)
        }
        "image" => {
            // Rule 14 [approx] (A-SDK `base64_image_source_param.py`).
            let source = &fields["source"];
            if source.get("type").and_then(Value::as_str) == Some("base64")
                && !matches!(
                    source.get("media_type").and_then(Value::as_str),
                    Some("image/jpeg" | "image/png" | "image/gif" | "image/webp")
                )
            {
                return Err(refuse(format!(
                    "{path}.image.source.base64.media_type: Input should be 'image/jpeg', \
                     'image/png', 'image/gif' or 'image/webp'"
                )));
            }
            marker(path, fields, false)
        }
        "tool_use" => {
            if !fields["input"].is_object() {
                return Err(refuse(format!(
                    "{path}.tool_use.input: Input should be a valid dictionary"
                )));
            }
            marker(path, fields, false)
        }
        "tool_result" => {
            match fields.get("content") {
                None | Some(Value::String(_)) => {}
                Some(Value::Array(parts)) => {
                    for (position, part) in parts.iter().enumerate() {
                        if part.get("type").and_then(Value::as_str) == Some("text") {
                            let inner = format!("{path}.tool_result.content.{position}");
                            if let Some(fields) = part.as_object() {
                                text_block(&inner, fields)?;
                            }
                        }
                    }
                }
                Some(_) => {
                    return Err(refuse(format!(
                        "{path}.tool_result.content: Input should be a valid string or list"
                    )));
                }
            }
            marker(path, fields, false)
        }
        "thinking" => {
            // Rule 26 [exact] (OBS:70911519013).
            let text = fields["thinking"].as_str().unwrap_or_default();
            let signature = fields["signature"].as_str().unwrap_or_default();
            if !seal::signature_fits(text, signature) {
                return Err(refuse(format!(
                    "{path}: Invalid `signature` in `thinking` block"
                )));
            }
            Ok(0)
        }
        "redacted_thinking" => {
            // [approx]: the block must come back as issued (A-SDK `redacted_thinking_block.py`).
            if !seal::redacted_fits(fields["data"].as_str().unwrap_or_default()) {
                return Err(refuse(format!(
                    "{path}: Invalid `data` in `redacted_thinking` block"
                )));
            }
            Ok(0)
        }
        _ => marker(path, fields, false),
    }
}

/// Rules 16–19: every `tool_use` answered by a `tool_result` in the next turn, every
/// `tool_result` answering one of the turn before, results first, ids unique.
fn pairing(turns: &[Turn<'_>]) -> Result<(), Issue> {
    let mut seen = HashSet::new();
    for (at, turn) in turns.iter().enumerate() {
        let uses_blocks: Vec<&(usize, usize, &Value)> = turn
            .blocks
            .iter()
            .filter(|(_, _, block)| block.get("type").and_then(Value::as_str) == Some("tool_use"))
            .collect();
        let uses: Vec<&str> = uses_blocks
            .iter()
            .filter_map(|(_, _, block)| block.get("id").and_then(Value::as_str))
            .collect();
        for &&(message, position, block) in &uses_blocks {
            let id = block.get("id").and_then(Value::as_str).unwrap_or_default();
            if !seen.insert(id) {
                // Rule 19 [exact fragment] (OBS:55767734364).
                return Err(refuse(format!(
                    "messages.{message}.content.{position}: `tool_use` ids must be unique"
                )));
            }
        }
        if !uses.is_empty() {
            // Rule 16 [exact] (A-TOOLS; OBS:10514787016); a trailing turn with calls is
            // refused the same way [approx].
            let answered: HashSet<&str> = turns
                .get(at + 1)
                .map(|next| {
                    next.blocks
                        .iter()
                        .filter(|(_, _, block)| {
                            block.get("type").and_then(Value::as_str) == Some("tool_result")
                        })
                        .filter_map(|(_, _, block)| {
                            block.get("tool_use_id").and_then(Value::as_str)
                        })
                        .collect()
                })
                .unwrap_or_default();
            let open: Vec<&str> = uses
                .iter()
                .copied()
                .filter(|id| !answered.contains(id))
                .collect();
            if !open.is_empty() {
                return Err(refuse(format!(
                    "messages.{}: `tool_use` ids were found without `tool_result` blocks \
                     immediately after: {}. Each `tool_use` block must have a corresponding \
                     `tool_result` block in the next message.",
                    turn.index,
                    open.join(", ")
                )));
            }
        }
        if turn.role == "user" {
            let before: HashSet<&str> = at
                .checked_sub(1)
                .and_then(|previous| turns.get(previous))
                .map(|previous| {
                    previous
                        .blocks
                        .iter()
                        .filter(|(_, _, block)| {
                            block.get("type").and_then(Value::as_str) == Some("tool_use")
                        })
                        .filter_map(|(_, _, block)| block.get("id").and_then(Value::as_str))
                        .collect()
                })
                .unwrap_or_default();
            let mut other_seen = false;
            for &(message, position, block) in &turn.blocks {
                if block.get("type").and_then(Value::as_str) != Some("tool_result") {
                    other_seen = true;
                    continue;
                }
                let id = block
                    .get("tool_use_id")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if !before.contains(id) {
                    // Rule 17 [exact] (OBS:60031290505).
                    return Err(refuse(format!(
                        "messages.{message}.content.{position}: unexpected `tool_use_id` found \
                         in `tool_result` blocks: {id}. Each `tool_result` block must have a \
                         corresponding `tool_use` block in the previous message."
                    )));
                }
                if other_seen {
                    // Rule 18 [approx] (A-TOOLS: "tool_result blocks must come FIRST"; the
                    // digest reuses rule 16's wording).
                    return Err(refuse(format!(
                        "messages.{}: `tool_use` ids were found without `tool_result` blocks \
                         immediately after: {id}. Each `tool_use` block must have a \
                         corresponding `tool_result` block in the next message, before any \
                         other content.",
                        turn.index.saturating_sub(1)
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Rule 25 [exact] (A-THINK; OBS:70911519013): with thinking on, a tool loop continues an
/// assistant turn that must start with its thinking.
fn thinking_continues(turns: &[Turn<'_>]) -> Result<(), Issue> {
    let Some((last, rest)) = turns.split_last() else {
        return Ok(());
    };
    let in_loop = last.role == "user"
        && last
            .blocks
            .iter()
            .any(|(_, _, block)| block.get("type").and_then(Value::as_str) == Some("tool_result"));
    let Some(assistant) = rest
        .last()
        .filter(|turn| in_loop && turn.role == "assistant")
    else {
        return Ok(());
    };
    let Some(&(message, _, first)) = assistant.blocks.first() else {
        return Ok(());
    };
    let kind = first
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if kind != "thinking" && kind != "redacted_thinking" {
        return Err(refuse(format!(
            "messages.{message}.content.0.type: Expected `thinking` or `redacted_thinking`, but \
             found `{kind}`. When `thinking` is enabled, a final `assistant` message must start \
             with a thinking block."
        )));
    }
    Ok(())
}
