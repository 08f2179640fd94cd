//! Chat completions validated the way a real OpenAI-compatible server validates them,
//! and rejected with the status and error body that server sends.
//!
//! Each rule below was read from the server's own request models (see
//! docs/model-servers.md for the sources): OpenAI's documented API, llama-cpp-python
//! 0.3.x (`llama_cpp/server/types.py`, `llama_cpp/llama_types.py`, the
//! `chatml-function-calling` chat format), vLLM (`vllm/entrypoints/openai/protocol.py`),
//! Ollama (`openai/openai.go`, `middleware/openai.go`) and DeepSeek (its thinking-mode
//! guide; digest §C1, §D3). A lenient mock lets a client bug through that a real server
//! refuses; these profiles refuse it too.

use serde_json::{Map, Value, json};

use super::{Issue, Rejection, issue, kind, missing};

/// The chat server a strict chat profile reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChatServer {
    /// api.openai.com: 400 `invalid_request_error`, unknown parameters refused, tool
    /// messages must answer the preceding assistant's tool calls.
    Openai,
    /// llama-cpp-python's server with `--chat_format chatml-function-calling`: a request
    /// its pydantic models refuse is answered HTTP 500 `internal_server_error`; tools are
    /// offered to the model only when `tool_choice` is set.
    LlamaCpp,
    /// vLLM started with `--enable-auto-tool-choice --tool-call-parser …`: 400
    /// `BadRequestError`.
    Vllm,
    /// Ollama's `/v1` layer: 400 `invalid_request_error`; tool-call arguments must be a
    /// JSON object; content may be null only beside tool calls.
    Ollama,
    /// DeepSeek in thinking mode (its default): OpenAI's rules, its own parameters
    /// (`thinking`) taken, and an assistant turn with tool calls must carry its
    /// `reasoning_content` back.
    Deepseek,
}

impl ChatServer {
    /// OpenAI's own rules, which DeepSeek's API follows too.
    fn openai_like(self) -> bool {
        matches!(self, ChatServer::Openai | ChatServer::Deepseek)
    }

    /// Whether the model gets to see the request's tools. llama-cpp-python's
    /// `chatml-function-calling` renders the tools into the prompt only when
    /// `tool_choice` is set and is not `"none"`: without it the model never calls one.
    pub(crate) fn offers_tools(self, body: &Value) -> bool {
        let has_tools = body
            .get("tools")
            .and_then(Value::as_array)
            .is_some_and(|tools| !tools.is_empty());
        match self {
            ChatServer::LlamaCpp => {
                has_tools
                    && match body.get("tool_choice") {
                        Some(Value::String(mode)) => mode != "none",
                        Some(Value::Object(_)) => true,
                        Some(_) | None => false,
                    }
            }
            ChatServer::Openai | ChatServer::Vllm | ChatServer::Ollama | ChatServer::Deepseek => {
                has_tools
            }
        }
    }

    /// Checks a parsed request body; `Err` is the answer the real server gives.
    pub(crate) fn check(self, body: &Value) -> Result<(), Rejection> {
        validate(self, body).map_err(|issue| reject(self, issue))
    }
}

/// The status and body `profile`'s server answers a refused request with.
fn reject(profile: ChatServer, issue: Issue) -> Rejection {
    let (status, kind, param, code) = match profile {
        ChatServer::Openai => (400, "invalid_request_error", issue.param, json!(issue.code)),
        // Its route handler turns every exception, FastAPI's RequestValidationError
        // included, into a 500.
        ChatServer::LlamaCpp => (500, "internal_server_error", None, Value::Null),
        ChatServer::Vllm => (400, "BadRequestError", None, json!(400)),
        ChatServer::Ollama => (400, "invalid_request_error", None, Value::Null),
        // C1: `"param": null, "code": "invalid_request_error"`.
        ChatServer::Deepseek => (
            400,
            "invalid_request_error",
            None,
            json!("invalid_request_error"),
        ),
    };
    Rejection {
        status,
        body: json!({"error": {
            "message": issue.message,
            "type": kind,
            "param": param,
            "code": code,
        }}),
    }
}

/// The string at `param`, or the server's error for its absence or another type.
fn required_string(
    profile: ChatServer,
    param: String,
    value: Option<&Value>,
) -> Result<&str, Issue> {
    match value {
        Some(Value::String(text)) => Ok(text),
        None => Err(missing(param)),
        Some(other) => Err(issue(wrong_type(profile, &param, "string", other), param)),
    }
}

/// The request parameters OpenAI's chat completions endpoint knows; any other top-level
/// key is refused with "Unrecognized request argument supplied".
pub const OPENAI_PARAMETERS: &[&str] = &[
    "model",
    "messages",
    "audio",
    "frequency_penalty",
    "function_call",
    "functions",
    "logit_bias",
    "logprobs",
    "max_completion_tokens",
    "max_tokens",
    "metadata",
    "modalities",
    "n",
    "parallel_tool_calls",
    "prediction",
    "presence_penalty",
    "prompt_cache_key",
    "reasoning_effort",
    "response_format",
    "safety_identifier",
    "seed",
    "service_tier",
    "stop",
    "store",
    "stream",
    "stream_options",
    "temperature",
    "tool_choice",
    "tools",
    "top_logprobs",
    "top_p",
    "user",
    "verbosity",
    "web_search_options",
];

/// The message a server gives for a field of the wrong type.
fn wrong_type(profile: ChatServer, path: &str, expected: &str, got: &Value) -> String {
    match profile {
        ChatServer::Openai | ChatServer::Deepseek => format!(
            "Invalid type for '{path}': expected {expected}, but got {} instead.",
            kind(got)
        ),
        // As the real server printed it (issue 11's probe):
        // 1 validation error:\n  {'type': 'string_type', 'loc': ('body', 'messages', 2,
        // 'content'), 'msg': 'Input should be a valid string', 'input': None}
        ChatServer::LlamaCpp | ChatServer::Vllm => format!(
            "1 validation error:\n  {{'type': '{}_type', 'loc': ('body', {}), 'msg': 'Input \
             should be a valid {expected}', 'input': {}}}",
            expected.split(' ').next().unwrap_or(expected),
            pydantic_location(path),
            python_repr(got)
        ),
        ChatServer::Ollama => format!(
            "json: cannot unmarshal {} into Go struct field ChatCompletionRequest.{path} of \
             type {expected}",
            kind(got)
        ),
    }
}

/// A JSON value as Python's `repr` of the parsed value writes it (short values only).
fn python_repr(value: &Value) -> String {
    match value {
        Value::Null => "None".to_owned(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::String(text) => format!("'{text}'"),
        Value::Number(_) | Value::Array(_) | Value::Object(_) => value.to_string(),
    }
}

/// `messages.[2].content` as pydantic writes it: `'messages', 2, 'content'`.
fn pydantic_location(path: &str) -> String {
    path.split('.')
        .map(
            |part| match part.strip_prefix('[').and_then(|p| p.strip_suffix(']')) {
                Some(index) => index.to_owned(),
                None => format!("'{part}'"),
            },
        )
        .collect::<Vec<_>>()
        .join(", ")
}

fn validate(profile: ChatServer, body: &Value) -> Result<(), Issue> {
    let Some(request) = body.as_object() else {
        return Err(issue(
            "the request body must be a JSON object",
            String::new(),
        ));
    };
    if profile == ChatServer::Openai
        && let Some(key) = request
            .keys()
            .find(|key| !OPENAI_PARAMETERS.contains(&key.as_str()))
    {
        return Err(issue(
            format!("Unrecognized request argument supplied: {key}"),
            key.clone(),
        ));
    }
    match request.get("model") {
        Some(Value::String(_)) => {}
        None if matches!(profile, ChatServer::LlamaCpp | ChatServer::Vllm) => {}
        None => {
            return Err(issue("you must provide a model parameter", "model"));
        }
        Some(other) => {
            return Err(issue(
                wrong_type(profile, "model", "string", other),
                "model",
            ));
        }
    }
    scalar_fields(profile, request)?;
    let tool_names = tools(profile, request)?;
    tool_choice(profile, request, &tool_names)?;
    let messages = match request.get("messages") {
        Some(Value::Array(messages)) => messages,
        None => return Err(missing("messages")),
        Some(other) => {
            return Err(issue(
                wrong_type(profile, "messages", "array", other),
                "messages",
            ));
        }
    };
    if messages.is_empty() && (profile.openai_like() || profile == ChatServer::Ollama) {
        return Err(issue(
            match profile {
                ChatServer::Ollama => "[] is too short - 'messages'".to_owned(),
                ChatServer::Openai
                | ChatServer::LlamaCpp
                | ChatServer::Vllm
                | ChatServer::Deepseek => {
                    "Invalid 'messages': empty array. Expected an array with minimum length 1, \
                     but got an empty array instead."
                        .to_owned()
                }
            },
            "messages",
        ));
    }
    for (index, message) in messages.iter().enumerate() {
        self::message(profile, index, message)?;
    }
    if profile.openai_like() {
        tool_answers(messages)?;
    }
    if profile == ChatServer::Deepseek {
        reasoning_passed_back(request, messages)?;
    }
    Ok(())
}

/// Sampling parameters and flags: the types every server's model declares.
fn scalar_fields(profile: ChatServer, request: &Map<String, Value>) -> Result<(), Issue> {
    for (field, expected) in [
        ("temperature", "number"),
        ("top_p", "number"),
        ("presence_penalty", "number"),
        ("frequency_penalty", "number"),
        ("max_tokens", "integer"),
        ("max_completion_tokens", "integer"),
        ("n", "integer"),
        ("seed", "integer"),
        ("stream", "boolean"),
    ] {
        let Some(value) = request.get(field) else {
            continue;
        };
        let fits = match expected {
            "number" => value.is_number(),
            "integer" => value.is_i64() || value.is_u64(),
            _ => value.is_boolean(),
        };
        // Every server takes an explicit null for these optional fields, except where
        // Go decodes into a non-pointer bool.
        if !fits && !(value.is_null() && !(profile == ChatServer::Ollama && field == "stream")) {
            return Err(issue(wrong_type(profile, field, expected, value), field));
        }
    }
    if profile.openai_like()
        && let Some(temperature) = request.get("temperature").and_then(Value::as_f64)
        && !(0.0..=2.0).contains(&temperature)
    {
        return Err(issue(
            format!(
                "Invalid 'temperature': decimal out of range. Expected a value between 0 and \
                 2, but got {temperature} instead."
            ),
            "temperature",
        ));
    }
    match request.get("stop") {
        None | Some(Value::Null | Value::String(_)) => Ok(()),
        Some(Value::Array(stops)) if stops.iter().all(Value::is_string) => Ok(()),
        Some(other) => Err(issue(
            wrong_type(profile, "stop", "string or array of strings", other),
            "stop",
        )),
    }
}

/// Checks `tools` and returns the names of the functions offered.
fn tools(profile: ChatServer, request: &Map<String, Value>) -> Result<Vec<String>, Issue> {
    let tools = match request.get("tools") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(tools)) => tools,
        Some(other) => {
            return Err(issue(wrong_type(profile, "tools", "array", other), "tools"));
        }
    };
    if tools.is_empty() && profile.openai_like() {
        return Err(issue(
            "Invalid 'tools': empty array. Expected an array with minimum length 1, but got an \
             empty array instead.",
            "tools",
        ));
    }
    let mut names = Vec::new();
    for (index, tool) in tools.iter().enumerate() {
        let at = format!("tools.[{index}]");
        if profile != ChatServer::Ollama
            && tool.get("type").and_then(Value::as_str) != Some("function")
        {
            return Err(issue(
                format!("Invalid value for '{at}.type': expected 'function'."),
                format!("{at}.type"),
            ));
        }
        let Some(function) = tool.get("function").and_then(Value::as_object) else {
            return Err(missing(format!("{at}.function")));
        };
        let Some(name) = function.get("name").and_then(Value::as_str) else {
            return Err(missing(format!("{at}.function.name")));
        };
        if profile.openai_like()
            && (name.is_empty()
                || name.len() > 64
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        {
            return Err(issue(
                format!(
                    "Invalid '{at}.function.name': string does not match pattern. Expected a \
                     string that matches the pattern '^[a-zA-Z0-9_-]+$'."
                ),
                format!("{at}.function.name"),
            ));
        }
        match function.get("parameters") {
            Some(Value::Object(_)) => {}
            None if profile != ChatServer::LlamaCpp => {}
            None => {
                return Err(issue(
                    wrong_type(
                        profile,
                        &format!("{at}.function.parameters"),
                        "dictionary",
                        &Value::Null,
                    ),
                    format!("{at}.function.parameters"),
                ));
            }
            Some(other) => {
                return Err(issue(
                    wrong_type(
                        profile,
                        &format!("{at}.function.parameters"),
                        "object",
                        other,
                    ),
                    format!("{at}.function.parameters"),
                ));
            }
        }
        names.push(name.to_owned());
    }
    Ok(names)
}

fn tool_choice(
    profile: ChatServer,
    request: &Map<String, Value>,
    tool_names: &[String],
) -> Result<(), Issue> {
    let choice = match request.get("tool_choice") {
        None | Some(Value::Null) => return Ok(()),
        // Ollama's request struct has no tool_choice: Go's decoder ignores it.
        Some(_) if profile == ChatServer::Ollama => return Ok(()),
        Some(choice) => choice,
    };
    let named = match choice {
        Value::String(mode) if ["none", "auto", "required"].contains(&mode.as_str()) => None,
        Value::Object(named) => match named.get("function").and_then(|f| f.get("name")) {
            Some(Value::String(name)) => Some(name.as_str()),
            Some(_) | None => return Err(missing("tool_choice.function.name")),
        },
        other @ (Value::Null
        | Value::Bool(_)
        | Value::Number(_)
        | Value::String(_)
        | Value::Array(_)) => {
            return Err(issue(
                format!(
                    "Invalid value for 'tool_choice': {other} is not one of 'none', 'auto', \
                     'required' or a named function."
                ),
                "tool_choice",
            ));
        }
    };
    if tool_names.is_empty() && choice.as_str() != Some("none") {
        return Err(issue(
            match profile {
                ChatServer::Vllm => "When using `tool_choice`, `tools` must be set.".to_owned(),
                ChatServer::Openai
                | ChatServer::LlamaCpp
                | ChatServer::Ollama
                | ChatServer::Deepseek => {
                    "Invalid value for 'tool_choice': 'tool_choice' is only allowed when \
                     'tools' are specified."
                        .to_owned()
                }
            },
            "tool_choice",
        ));
    }
    if let Some(name) = named
        && !tool_names.iter().any(|tool| tool == name)
    {
        return Err(issue(
            match profile {
                ChatServer::LlamaCpp => format!("Tool with name '{name}' not found in tools"),
                ChatServer::Openai
                | ChatServer::Vllm
                | ChatServer::Ollama
                | ChatServer::Deepseek => format!(
                    "The tool specified in `tool_choice` ({name}) does not match any of the \
                     specified `tools`"
                ),
            },
            "tool_choice",
        ));
    }
    // chatml-function-calling handles none, auto and a named tool; `required` reaches
    // `assert tool_choice == "auto"`, whose AssertionError has no message.
    if profile == ChatServer::LlamaCpp && choice.as_str() == Some("required") {
        return Err(issue(String::new(), "tool_choice"));
    }
    Ok(())
}

fn message(profile: ChatServer, index: usize, message: &Value) -> Result<(), Issue> {
    let at = format!("messages.[{index}]");
    let Some(message) = message.as_object() else {
        return Err(issue(wrong_type(profile, &at, "object", message), at));
    };
    let role = required_string(profile, format!("{at}.role"), message.get("role"))?;
    let known: &[&str] = match profile {
        ChatServer::Openai | ChatServer::Deepseek => &[
            "system",
            "developer",
            "user",
            "assistant",
            "tool",
            "function",
        ],
        ChatServer::LlamaCpp => &["system", "user", "assistant", "tool", "function"],
        // vLLM accepts custom roles; Ollama passes the role to the model's template.
        ChatServer::Vllm | ChatServer::Ollama => &[],
    };
    if !known.is_empty() && !known.contains(&role) {
        return Err(issue(
            format!(
                "Invalid value: '{role}'. Supported values are: {}.",
                known
                    .iter()
                    .map(|r| format!("'{r}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            format!("{at}.role"),
        ));
    }
    let tool_calls = match message.get("tool_calls") {
        None | Some(Value::Null) => None,
        Some(Value::Array(calls)) if role == "assistant" => Some(calls),
        Some(Value::Array(_)) => None,
        Some(other) => {
            return Err(issue(
                wrong_type(profile, &format!("{at}.tool_calls"), "array", other),
                format!("{at}.tool_calls"),
            ));
        }
    };
    content(
        profile,
        &at,
        role,
        message.get("content"),
        tool_calls.is_some(),
    )?;
    for (position, call) in tool_calls.into_iter().flatten().enumerate() {
        tool_call(profile, &format!("{at}.tool_calls.[{position}]"), call)?;
    }
    if role == "tool" && profile != ChatServer::Ollama {
        required_string(
            profile,
            format!("{at}.tool_call_id"),
            message.get("tool_call_id"),
        )?;
    }
    Ok(())
}

fn content(
    profile: ChatServer,
    at: &str,
    role: &str,
    content: Option<&Value>,
    has_tool_calls: bool,
) -> Result<(), Issue> {
    let param = format!("{at}.content");
    match (profile, role, content) {
        (_, _, Some(Value::String(_))) => Ok(()),
        // Content parts: every server takes them from users; OpenAI and vLLM from the
        // other roles too.
        (ChatServer::LlamaCpp, "user", Some(Value::Array(_))) => Ok(()),
        (
            ChatServer::Openai | ChatServer::Vllm | ChatServer::Ollama | ChatServer::Deepseek,
            _,
            Some(Value::Array(_)),
        ) => Ok(()),
        // llama-cpp-python: `content: NotRequired[str]` for assistants, and the
        // chatml-function-calling template reads `message.content` under StrictUndefined.
        (ChatServer::LlamaCpp, "assistant", None) => {
            Err(issue("'dict object' has no attribute 'content'", param))
        }
        (ChatServer::LlamaCpp, "assistant", Some(other)) => {
            Err(issue(wrong_type(profile, &param, "string", other), param))
        }
        (ChatServer::LlamaCpp, _, None | Some(Value::Null)) => Ok(()),
        (
            ChatServer::Openai | ChatServer::Vllm | ChatServer::Deepseek,
            "assistant",
            None | Some(Value::Null),
        ) if has_tool_calls || profile == ChatServer::Vllm => Ok(()),
        (ChatServer::Ollama, _, None | Some(Value::Null)) if has_tool_calls => Ok(()),
        (ChatServer::Ollama, _, Some(Value::Null) | None) => {
            Err(issue("invalid message content type: <nil>", param))
        }
        (ChatServer::Ollama, _, Some(other)) => Err(issue(
            format!("invalid message content type: {}", kind(other)),
            param,
        )),
        (ChatServer::Openai | ChatServer::Vllm | ChatServer::Deepseek, _, None) => {
            Err(missing(param))
        }
        (_, _, Some(other)) => Err(issue(wrong_type(profile, &param, "string", other), param)),
    }
}

fn tool_call(profile: ChatServer, at: &str, call: &Value) -> Result<(), Issue> {
    let id = call.get("id");
    if profile != ChatServer::Ollama && !id.is_some_and(Value::is_string) {
        return Err(missing(format!("{at}.id")));
    }
    if profile != ChatServer::Ollama && call.get("type").and_then(Value::as_str) != Some("function")
    {
        return Err(missing(format!("{at}.type")));
    }
    let function = call.get("function");
    if !function
        .and_then(|f| f.get("name"))
        .is_some_and(Value::is_string)
    {
        return Err(missing(format!("{at}.function.name")));
    }
    let arguments = function.and_then(|f| f.get("arguments"));
    match (profile, arguments) {
        (ChatServer::Ollama, Some(Value::String(text))) => {
            match serde_json::from_str::<Value>(text) {
                Ok(Value::Object(_) | Value::Null) => Ok(()),
                Ok(_) | Err(_) => Err(issue("invalid tool call arguments", at.to_owned())),
            }
        }
        (_, arguments) => {
            required_string(profile, format!("{at}.function.arguments"), arguments).map(|_| ())
        }
    }
}

/// OpenAI's ordering rule: tool messages come right after the assistant message whose
/// tool calls they answer, and every one of those calls is answered before anything else.
fn tool_answers(messages: &[Value]) -> Result<(), Issue> {
    let mut pending: Option<(usize, Vec<&str>)> = None;
    for (index, message) in messages.iter().enumerate() {
        let role = message
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if role == "tool" {
            let id = message
                .get("tool_call_id")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let answered = pending.as_mut().and_then(|(_, ids)| {
                ids.iter()
                    .position(|open| *open == id)
                    .map(|at| ids.remove(at))
            });
            if answered.is_none() {
                return Err(issue(
                    "Invalid parameter: messages with role 'tool' must be a response to a \
                     preceeding message with 'tool_calls'.",
                    format!("messages.[{index}].role"),
                ));
            }
            continue;
        }
        if let Some((at, ids)) = pending.take()
            && !ids.is_empty()
        {
            return Err(unanswered(at, &ids));
        }
        if role == "assistant"
            && let Some(calls) = message.get("tool_calls").and_then(Value::as_array)
        {
            let ids = calls
                .iter()
                .filter_map(|call| call.get("id").and_then(Value::as_str))
                .collect();
            pending = Some((index, ids));
        }
    }
    match pending {
        Some((at, ids)) if !ids.is_empty() => Err(unanswered(at, &ids)),
        Some(_) | None => Ok(()),
    }
}

fn unanswered(at: usize, ids: &[&str]) -> Issue {
    issue(
        format!(
            "An assistant message with 'tool_calls' must be followed by tool messages \
             responding to each 'tool_call_id'. The following tool_call_ids did not have \
             response messages: {}",
            ids.join(", ")
        ),
        format!("messages.[{at}].role"),
    )
}

/// DeepSeek in thinking mode (on unless `thinking.type` is `disabled`): an assistant
/// message with tool calls must carry the `reasoning_content` it came with, the key
/// present even when the reasoning was empty (digest §C1, §D3 rule 1).
fn reasoning_passed_back(request: &Map<String, Value>, messages: &[Value]) -> Result<(), Issue> {
    let thinking = request
        .get("thinking")
        .and_then(|thinking| thinking.get("type"))
        .and_then(Value::as_str)
        != Some("disabled");
    let missing = messages.iter().any(|message| {
        message.get("role").and_then(Value::as_str) == Some("assistant")
            && message
                .get("tool_calls")
                .and_then(Value::as_array)
                .is_some_and(|calls| !calls.is_empty())
            && message.get("reasoning_content").is_none()
    });
    if thinking && missing {
        return Err(Issue {
            message: "The reasoning_content in the thinking mode must be passed back to the API."
                .to_owned(),
            param: None,
            code: None,
            status: 400,
        });
    }
    Ok(())
}
