//! OpenAI's Responses API (`POST /v1/responses`), validated as the service does: the
//! rules of digest §D2, numbered as there. Sources: O-SDK (openai-python's types,
//! generated from the OpenAPI spec), O-SPEC (that spec), O-ERR, O-CACHE, and errors the
//! service was observed to give (OBS:n). Wording marked `[exact]` is the service's own;
//! `[approx]` is the closest documented form.
//!
//! mock-llm stores no response, so `previous_response_id` and references to stored items
//! are always unknown to it, as they are to the service when `store` is false.

use serde_json::{Map, Value, json};

use super::{Credentials, Issue, Rejection, issue, kind, missing};
use crate::request::is_reasoning_model;
use crate::seal;
use crate::wire::responses::REASONED;

/// Top-level parameters (O-SDK `response_create_params.py`, digest B1.1).
const PARAMETERS: &[&str] = &[
    "model",
    "input",
    "instructions",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "store",
    "include",
    "reasoning",
    "max_output_tokens",
    "temperature",
    "top_p",
    "top_logprobs",
    "stream",
    "stream_options",
    "prompt_cache_key",
    "prompt_cache_retention",
    "prompt_cache_options",
    "previous_response_id",
    "conversation",
    "text",
    "truncation",
    "metadata",
    "user",
    "safety_identifier",
    "service_tier",
    "background",
    "max_tool_calls",
    "context_management",
    "moderation",
    "prompt",
];

/// `include` values (O-SDK `response_includable.py`).
const INCLUDABLE: &[&str] = &[
    "reasoning.encrypted_content",
    "message.output_text.logprobs",
    "message.input_image.image_url",
    "file_search_call.results",
    "web_search_call.results",
    "web_search_call.action.sources",
    "computer_call_output.output.image_url",
    "code_interpreter_call.outputs",
];

/// Fields of a function tool (O-SDK `function_tool_param.py`).
const FUNCTION_FIELDS: &[&str] = &[
    "type",
    "name",
    "description",
    "parameters",
    "strict",
    "defer_loading",
    "allowed_callers",
    "output_schema",
];

/// Longest `call_id` (O-SPEC `FunctionCallOutputItemParam`).
const CALL_ID_MAX: usize = 64;
/// Longest tool output text (same).
const OUTPUT_MAX: usize = 10_485_760;

pub(super) fn check(credentials: &Credentials, body: &Value) -> Result<(), Rejection> {
    validate(credentials, body).map_err(|issue| Rejection {
        status: issue.status,
        body: json!({"error": {
            "message": issue.message,
            "type": "invalid_request_error",
            "param": issue.param,
            "code": issue.code,
        }}),
    })
}

/// `Unknown parameter: '<path>'.` [exact form] (OBS:68807222177, OBS:60906350936).
fn unknown(path: &str) -> Issue {
    Issue {
        code: Some("unknown_parameter"),
        ..issue(format!("Unknown parameter: '{path}'."), path)
    }
}

/// `Invalid value: '<v>'. Supported values are: …` [exact form] (OBS:56539448664).
fn invalid_value(path: &str, value: &str, supported: &[&str]) -> Issue {
    let listed: Vec<String> = supported.iter().map(|s| format!("'{s}'")).collect();
    let supported = match listed.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    };
    Issue {
        code: Some("invalid_value"),
        ..issue(
            format!("Invalid value: '{value}'. Supported values are: {supported}."),
            path,
        )
    }
}

fn wrong_type(path: &str, expected: &str, got: &Value) -> Issue {
    let kind = kind(got);
    Issue {
        code: Some("invalid_type"),
        ..issue(
            format!("Invalid type for '{path}': expected {expected}, but got {kind} instead."),
            path,
        )
    }
}

fn validate(credentials: &Credentials, body: &Value) -> Result<(), Issue> {
    // Rule 1 [approx form] (O-ERR).
    if !credentials.authorization {
        return Err(Issue {
            status: 401,
            code: Some("invalid_api_key"),
            param: None,
            ..issue("Incorrect API key provided: (none).", "")
        });
    }
    let Some(request) = body.as_object() else {
        return Err(issue("The request body must be a JSON object.", ""));
    };
    // Rule 3.
    if let Some(key) = request
        .keys()
        .find(|key| !PARAMETERS.contains(&key.as_str()))
    {
        return Err(unknown(key));
    }
    // Rule 2 [exact] (OBS:3693668112).
    let model = match request.get("model") {
        Some(Value::String(model)) => model.as_str(),
        Some(other) => return Err(wrong_type("model", "a string", other)),
        None => {
            return Err(Issue {
                param: None,
                ..issue("you must provide a model parameter", "")
            });
        }
    };
    scalars(request)?;
    let store = match request.get("store") {
        None => true,
        Some(Value::Bool(store)) => *store,
        Some(other) => return Err(wrong_type("store", "a boolean", other)),
    };
    include(request.get("include"), model)?;
    reasoning(request.get("reasoning"), model)?;
    // Rule 14 [approx] (OBS:54583829201): nothing is stored here.
    if let Some(id) = request.get("previous_response_id").and_then(Value::as_str) {
        return Err(Issue {
            code: Some("previous_response_not_found"),
            ..issue(
                format!("Previous response with id '{id}' not found."),
                "previous_response_id",
            )
        });
    }
    let names = tools(request.get("tools"))?;
    tool_choice(request.get("tool_choice"), &names)?;
    match request.get("input") {
        None | Some(Value::String(_)) => Ok(()),
        Some(Value::Array(items)) => input(items, store),
        Some(other) => Err(wrong_type("input", "a string or array", other)),
    }
}

/// Rules 15 and 16: stream flags, ranges, metadata.
fn scalars(request: &Map<String, Value>) -> Result<(), Issue> {
    for (field, expected) in [
        ("stream", "a boolean"),
        ("parallel_tool_calls", "a boolean"),
        ("temperature", "a decimal"),
        ("top_p", "a decimal"),
        ("max_output_tokens", "an integer"),
        ("top_logprobs", "an integer"),
        ("instructions", "a string"),
        ("prompt_cache_key", "a string"),
    ] {
        let Some(value) = request.get(field).filter(|value| !value.is_null()) else {
            continue;
        };
        let fits = match expected {
            "a boolean" => value.is_boolean(),
            "a decimal" => value.is_number(),
            "an integer" => value.is_u64(),
            _ => value.is_string(),
        };
        if !fits {
            return Err(wrong_type(field, expected, value));
        }
    }
    let range = |field: &str, low: f64, high: f64| -> Result<(), Issue> {
        match request.get(field).and_then(Value::as_f64) {
            Some(value) if !(low..=high).contains(&value) => Err(Issue {
                code: Some("decimal_out_of_range"),
                ..issue(
                    format!(
                        "Invalid '{field}': decimal out of range. Expected a value between \
                         {low} and {high}, but got {value} instead."
                    ),
                    field,
                )
            }),
            Some(_) | None => Ok(()),
        }
    };
    range("temperature", 0.0, 2.0)?;
    range("top_logprobs", 0.0, 20.0)?;
    if let Some(tokens) = request.get("max_output_tokens").and_then(Value::as_u64)
        && tokens < 16
    {
        return Err(Issue {
            code: Some("integer_below_min_value"),
            ..issue(
                format!(
                    "Invalid 'max_output_tokens': integer below minimum value. Expected a value \
                     >= 16, but got {tokens} instead."
                ),
                "max_output_tokens",
            )
        });
    }
    // Rule 15 [approx] (O-SDK: "Only set this when you set `stream: true`").
    if request.contains_key("stream_options")
        && request.get("stream").and_then(Value::as_bool) != Some(true)
    {
        return Err(issue(
            "Invalid value for 'stream_options': 'stream_options' is only allowed when \
             'stream' is true.",
            "stream_options",
        ));
    }
    // Rule 16 [approx] (O-SDK: 16 pairs, keys up to 64, values up to 512 characters).
    if let Some(metadata) = request.get("metadata").and_then(Value::as_object) {
        let too_long = metadata
            .iter()
            .any(|(key, value)| key.len() > 64 || value.as_str().is_some_and(|v| v.len() > 512));
        if metadata.len() > 16 || too_long {
            return Err(issue(
                "Invalid 'metadata': at most 16 pairs, keys up to 64 and values up to 512 \
                 characters.",
                "metadata",
            ));
        }
    }
    Ok(())
}

/// `include`: known values; encrypted reasoning only from a model that reasons.
fn include(include: Option<&Value>, model: &str) -> Result<(), Issue> {
    let Some(include) = include else {
        return Ok(());
    };
    let entries = include
        .as_array()
        .ok_or_else(|| wrong_type("include", "an array", include))?;
    let mut encrypted = false;
    for (index, entry) in entries.iter().enumerate() {
        let value = entry.as_str().unwrap_or_default();
        if !INCLUDABLE.contains(&value) {
            return Err(invalid_value(
                &format!("include[{index}]"),
                value,
                INCLUDABLE,
            ));
        }
        encrypted |= value == "reasoning.encrypted_content";
    }
    // Observed (the digest's gap list; issue trackers quoting the service): a model that
    // does not reason has no reasoning to encrypt.
    if encrypted && !is_reasoning_model(model) {
        return Err(issue(
            "Encrypted content is not supported with this model.",
            "include",
        ));
    }
    Ok(())
}

/// `reasoning` (O-SDK `shared_params/reasoning.py`).
fn reasoning(reasoning: Option<&Value>, model: &str) -> Result<(), Issue> {
    let Some(reasoning) = reasoning.filter(|value| !value.is_null()) else {
        return Ok(());
    };
    let fields = reasoning
        .as_object()
        .ok_or_else(|| wrong_type("reasoning", "an object", reasoning))?;
    for (key, value) in fields {
        let path = format!("reasoning.{key}");
        let supported: &[&str] = match key.as_str() {
            "effort" => &["none", "minimal", "low", "medium", "high", "xhigh", "max"],
            "summary" | "generate_summary" => &["auto", "concise", "detailed"],
            "context" | "mode" => continue,
            _ => return Err(unknown(&path)),
        };
        if !value.is_null() {
            let text = value.as_str().unwrap_or_default();
            if !supported.contains(&text) {
                return Err(invalid_value(&path, text, supported));
            }
        }
    }
    // [approx]: models without reasoning refuse its settings.
    if !is_reasoning_model(model) && fields.contains_key("effort") {
        return Err(Issue {
            code: Some("unsupported_parameter"),
            ..issue(
                "Unsupported parameter: 'reasoning.effort' is not supported with this model.",
                "reasoning.effort",
            )
        });
    }
    Ok(())
}

/// Rule 18: tools, function tools flat (B1.3). Returns the function names.
fn tools(tools: Option<&Value>) -> Result<Vec<String>, Issue> {
    let Some(tools) = tools else {
        return Ok(Vec::new());
    };
    let tools = tools
        .as_array()
        .ok_or_else(|| wrong_type("tools", "an array", tools))?;
    let mut names = Vec::new();
    for (index, tool) in tools.iter().enumerate() {
        let path = format!("tools[{index}]");
        let fields = tool
            .as_object()
            .ok_or_else(|| wrong_type(&path, "an object", tool))?;
        let kind = fields
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if kind != "function" {
            // Built-in tools (web search, file search, …) are not checked further.
            continue;
        }
        // Rule 5: O-SPEC `FunctionTool` requires `name`, `parameters` and `strict`
        // (the last two nullable). A chat-shaped tool misses `name` first [approx].
        for field in ["name", "parameters", "strict"] {
            if !fields.contains_key(field) {
                return Err(missing(format!("{path}.{field}")));
            }
        }
        if let Some(key) = fields
            .keys()
            .find(|key| !FUNCTION_FIELDS.contains(&key.as_str()))
        {
            return Err(unknown(&format!("{path}.{key}")));
        }
        let name = fields["name"].as_str().unwrap_or_default();
        let valid = (1..=64).contains(&name.len())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            return Err(issue(
                format!(
                    "Invalid '{path}.name': string does not match pattern. Expected a string \
                     that matches the pattern '^[a-zA-Z0-9_-]+$'."
                ),
                format!("{path}.name"),
            ));
        }
        names.push(name.to_owned());
    }
    Ok(names)
}

/// Rule 17: `tool_choice`.
fn tool_choice(choice: Option<&Value>, names: &[String]) -> Result<(), Issue> {
    match choice {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(mode)) => {
            let modes = ["none", "auto", "required"];
            if modes.contains(&mode.as_str()) {
                Ok(())
            } else {
                Err(invalid_value("tool_choice", mode, &modes))
            }
        }
        Some(Value::Object(fields)) => {
            if fields.get("type").and_then(Value::as_str) == Some("function") {
                let name = fields
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if !names.iter().any(|known| known == name) {
                    // [approx].
                    return Err(issue(
                        format!("Tool choice '{name}' not found in 'tools' parameter."),
                        "tool_choice",
                    ));
                }
            }
            Ok(())
        }
        Some(other) => Err(wrong_type("tool_choice", "a string or object", other)),
    }
}

/// Rules 4–13 over `input`.
fn input(items: &[Value], store: bool) -> Result<(), Issue> {
    let mut calls: Vec<&str> = Vec::new();
    let mut outputs: Vec<&str> = Vec::new();
    let mut reasoning_ids: Vec<&str> = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let path = format!("input[{index}]");
        let fields = item
            .as_object()
            .ok_or_else(|| wrong_type(&path, "an object", item))?;
        // Rule 20, the conservative choice: replayed items never carry `status`
        // (`Unknown parameter: 'input[2].status'.` was observed, OBS:60906350936).
        if fields.contains_key("status") {
            return Err(unknown(&format!("{path}.status")));
        }
        let kind = fields
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("message");
        match kind {
            "message" => message(&path, fields)?,
            "function_call" => {
                known(
                    &path,
                    fields,
                    &["type", "id", "call_id", "name", "arguments"],
                )?;
                for field in ["call_id", "name", "arguments"] {
                    string_field(&path, fields, field)?;
                }
                let call_id = fields["call_id"].as_str().unwrap_or_default();
                call_id_length(&path, call_id)?;
                if calls.contains(&call_id) {
                    // Rule 9 (OBS:56830159140): a second call with the id finds no output.
                    return Err(no_output(call_id));
                }
                calls.push(call_id);
            }
            "function_call_output" => {
                known(&path, fields, &["type", "id", "call_id", "output"])?;
                let call_id = string_field(&path, fields, "call_id")?;
                call_id_length(&path, call_id)?;
                match fields.get("output") {
                    Some(Value::String(text)) if text.len() > OUTPUT_MAX => {
                        return Err(issue(
                            format!(
                                "Invalid '{path}.output': string too long. Expected a string \
                                 with maximum length {OUTPUT_MAX}, but got a string with \
                                 length {} instead.",
                                text.len()
                            ),
                            format!("{path}.output"),
                        ));
                    }
                    Some(Value::String(_) | Value::Array(_)) => {}
                    Some(other) => {
                        return Err(wrong_type(&format!("{path}.output"), "a string", other));
                    }
                    None => return Err(missing(format!("{path}.output"))),
                }
                // Rule 7 [exact] (OBS:58045009515): the output must follow its call.
                if !calls.contains(&call_id) || outputs.contains(&call_id) {
                    return Err(issue(
                        format!(
                            "No tool call found for function call output with call_id {call_id}."
                        ),
                        "input",
                    ));
                }
                outputs.push(call_id);
            }
            "reasoning" => {
                known(
                    &path,
                    fields,
                    &["type", "id", "summary", "encrypted_content", "content"],
                )?;
                let id = string_field(&path, fields, "id")?;
                if !fields.get("summary").is_some_and(Value::is_array) {
                    return Err(missing(format!("{path}.summary")));
                }
                match fields.get("encrypted_content").and_then(Value::as_str) {
                    // Rule 12 [exact] (OBS:52053503099): without its content the item is a
                    // reference, and nothing is stored.
                    None => return Err(not_stored(id, store)),
                    // Rule 13 [approx].
                    Some(content) if !seal::encrypted_fits(id, content) => {
                        return Err(issue(
                            format!("The encrypted content for item {id} could not be verified."),
                            format!("{path}.encrypted_content"),
                        ));
                    }
                    Some(_) => {}
                }
                // A reasoning item is followed by the item it led to (OBS:4113369225).
                let followed = items.get(index + 1).is_some_and(|next| {
                    matches!(
                        next.get("type").and_then(Value::as_str),
                        Some("message" | "function_call" | "reasoning") | None
                    ) && next.get("role").and_then(Value::as_str) != Some("user")
                });
                if !followed {
                    return Err(issue(
                        format!(
                            "Item '{id}' of type 'reasoning' was provided without its required \
                             following item."
                        ),
                        "input",
                    ));
                }
                reasoning_ids.push(id);
            }
            // Rule 12 [exact].
            "item_reference" => {
                let id = string_field(&path, fields, "id")?;
                return Err(not_stored(id, store));
            }
            other => {
                return Err(invalid_value(
                    &format!("{path}.type"),
                    other,
                    &[
                        "message",
                        "function_call",
                        "function_call_output",
                        "reasoning",
                        "item_reference",
                    ],
                ));
            }
        }
        // Rule 11 [exact] (OBS:71032461252): an item with the id of a response that
        // reasoned comes with that response's reasoning item.
        if let Some(id) = fields.get("id").and_then(Value::as_str)
            && let Some(needed) = needed_reasoning(id)
            && !reasoning_ids.contains(&needed.as_str())
        {
            return Err(issue(
                format!(
                    "Item '{id}' of type '{kind}' was provided without its required \
                     'reasoning' item: '{needed}'."
                ),
                "input",
            ));
        }
    }
    // Rule 8 [exact] (OBS:18084281238).
    match calls.iter().find(|call| !outputs.contains(call)) {
        Some(call) => Err(no_output(call)),
        None => Ok(()),
    }
}

/// The reasoning item an item id issued by mock-llm needs (`fc_r<hash>_<n>`,
/// `msg_r<hash>` → `rs_<hash>`).
fn needed_reasoning(id: &str) -> Option<String> {
    let rest = id
        .strip_prefix("fc_")
        .or_else(|| id.strip_prefix("msg_"))?
        .strip_prefix(REASONED)?;
    let hash = rest.split('_').next()?;
    Some(format!("rs_{hash}"))
}

fn no_output(call_id: &str) -> Issue {
    issue(
        format!("No tool output found for function call {call_id}."),
        "input",
    )
}

/// Rule 12: an item the service would have to look up (404).
fn not_stored(id: &str, store: bool) -> Issue {
    let message = if store {
        format!("Item with id '{id}' not found.")
    } else {
        format!(
            "Item with id '{id}' not found. Items are not persisted when `store` is set to \
             false. Try again with `store` set to true, or remove this item from your input."
        )
    };
    Issue {
        status: 404,
        ..issue(message, "input")
    }
}

/// Rule 10 [approx form] (O-SPEC: 1 to 64 characters).
fn call_id_length(path: &str, call_id: &str) -> Result<(), Issue> {
    if call_id.is_empty() || call_id.chars().count() > CALL_ID_MAX {
        return Err(issue(
            format!(
                "Invalid '{path}.call_id': string too long. Expected a string with maximum \
                 length {CALL_ID_MAX}, but got a string with length {} instead.",
                call_id.chars().count()
            ),
            format!("{path}.call_id"),
        ));
    }
    Ok(())
}

/// Rule 4: `Unknown parameter` for a key outside `fields`.
fn known(path: &str, fields: &Map<String, Value>, allowed: &[&str]) -> Result<(), Issue> {
    match fields.keys().find(|key| !allowed.contains(&key.as_str())) {
        Some(key) => Err(unknown(&format!("{path}.{key}"))),
        None => Ok(()),
    }
}

/// Rule 5: a required string field.
fn string_field<'a>(
    path: &str,
    fields: &'a Map<String, Value>,
    field: &str,
) -> Result<&'a str, Issue> {
    match fields.get(field) {
        Some(Value::String(text)) => Ok(text),
        Some(other) => Err(wrong_type(&format!("{path}.{field}"), "a string", other)),
        None => Err(missing(format!("{path}.{field}"))),
    }
}

/// Rules 4–6 for a message item (O-SDK `easy_input_message_param.py`,
/// `response_output_message_param.py`).
fn message(path: &str, fields: &Map<String, Value>) -> Result<(), Issue> {
    known(path, fields, &["type", "role", "content", "id", "phase"])?;
    let role = string_field(path, fields, "role")?;
    let roles = ["assistant", "system", "developer", "user"];
    if !roles.contains(&role) {
        return Err(invalid_value(&format!("{path}.role"), role, &roles));
    }
    let parts = match fields.get("content") {
        Some(Value::String(_)) => return Ok(()),
        Some(Value::Array(parts)) => parts,
        Some(other) => {
            return Err(wrong_type(
                &format!("{path}.content"),
                "a string or array",
                other,
            ));
        }
        None => return Err(missing(format!("{path}.content"))),
    };
    // Rule 6 [exact] (OBS:56539448664): assistant parts are output parts, others input.
    let (supported, keys): (&[&str], &[(&str, &[&str])]) = if role == "assistant" {
        (
            &["output_text", "refusal"],
            &[
                ("output_text", &["type", "text", "annotations", "logprobs"]),
                ("refusal", &["type", "refusal"]),
            ],
        )
    } else {
        (
            &["input_text", "input_image", "input_file"],
            &[
                ("input_text", &["type", "text"]),
                ("input_image", &["type", "image_url", "file_id", "detail"]),
                (
                    "input_file",
                    &["type", "file_id", "file_data", "file_url", "filename"],
                ),
            ],
        )
    };
    for (index, part) in parts.iter().enumerate() {
        let at = format!("{path}.content[{index}]");
        let kind = part.get("type").and_then(Value::as_str).unwrap_or_default();
        let Some((_, allowed)) = keys.iter().find(|(name, _)| *name == kind) else {
            return Err(invalid_value(&at, kind, supported));
        };
        if let Some(part) = part.as_object() {
            known(&at, part, allowed)?;
        }
    }
    Ok(())
}
