//! `--strict PROFILE`: requests validated as each real server validates them, refused
//! with its status and error body (issue 11).

use mock_llm::{
    MockProfile, MockServer, ModelApi, ReadScript as _, Script, ServerOptions, strict_profile,
};
use serde_json::{Value, json};

use crate::support::post_json;

fn strict(profile: MockProfile, yaml: &str) -> MockServer {
    MockServer::start_with(
        Script::from_yaml_str(yaml).unwrap(),
        ServerOptions {
            strict: Some(profile),
            ..ServerOptions::default()
        },
    )
    .unwrap()
}

const ONE_TOOL_CALL: &str = "steps:\n  - message:\n      tool_calls: [{name: ls, arguments: {dir: .}}]\n  - message: {content: done}\n";

fn tools() -> Value {
    json!([{"type": "function", "function": {
        "name": "ls", "description": "list",
        "parameters": {"type": "object", "properties": {"dir": {"type": "string"}}}}}])
}

/// The second request of a tool-calling run, with the assistant's `content` as given.
fn second_request(content: Option<Value>, tool_choice: bool) -> Value {
    let mut assistant = json!({"role": "assistant", "tool_calls": [
        {"id": "call_0_0", "type": "function",
         "function": {"name": "ls", "arguments": "{\"dir\":\".\"}"}}]});
    if let Some(content) = content {
        assistant["content"] = content;
    }
    let mut body = json!({
        "model": "m",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "list"},
            assistant,
            {"role": "tool", "tool_call_id": "call_0_0", "content": "a.txt"},
        ],
        "tools": tools(),
    });
    if tool_choice {
        body["tool_choice"] = json!("auto");
    }
    body
}

#[tokio::test]
async fn every_chat_profile_accepts_what_the_engine_sends() {
    let chat = MockProfile::STRICT
        .into_iter()
        .filter(|profile| profile.api() == Some(ModelApi::Chat));
    for profile in chat {
        let server = strict(profile, "steps:\n  - message: {content: ok}\n");
        let mut request = second_request(Some(json!("")), true);
        if profile == MockProfile::Deepseek {
            // The engine's `llm.reasoning_passback: [reasoning_content]` for DeepSeek.
            request["messages"][2]["reasoning_content"] = json!("");
        }
        let (status, body) = post_json(&server, &request).await;
        assert_eq!(status, 200, "{profile}: {body}");
    }
}

// Issue 11, defect 2: llama-cpp-python answers HTTP 500 to `content: null` beside tool
// calls (its pydantic model says `content: NotRequired[str]`).
#[tokio::test]
async fn llama_cpp_refuses_null_content_beside_tool_calls_with_a_500() {
    let server = strict(
        MockProfile::LlamaCpp,
        "steps:\n  - message: {content: ok}\n",
    );
    let (status, body) = post_json(&server, &second_request(Some(Value::Null), true)).await;
    assert_eq!(status, 500);
    assert_eq!(body["error"]["type"], "internal_server_error");
    assert_eq!(body["error"]["code"], Value::Null);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("'messages', 2, 'content'") && message.contains("valid string"),
        "{message}"
    );
    let (status, _) = post_json(&server, &second_request(None, true)).await;
    assert_eq!(status, 500, "a missing content fails its template");
    // The refused requests used up no step.
    let (status, body) = post_json(&server, &second_request(Some(json!("")), true)).await;
    assert_eq!(
        (status, body["choices"][0]["message"]["content"].clone()),
        (200, json!("ok"))
    );
    // OpenAI, vLLM and Ollama take null beside tool calls.
    for profile in [MockProfile::Openai, MockProfile::Vllm, MockProfile::Ollama] {
        let server = strict(profile, "steps:\n  - message: {content: ok}\n");
        let (status, body) = post_json(&server, &second_request(Some(Value::Null), true)).await;
        assert_eq!(status, 200, "{profile}: {body}");
    }
}

// Issue 11, defect 1: without tool_choice, chatml-function-calling never shows the tools
// to the model, so it never calls one.
#[tokio::test]
async fn llama_cpp_returns_tool_calls_only_when_tool_choice_is_set() {
    let first = |tool_choice: bool| {
        let mut body = json!({"model": "m", "messages": [{"role": "user", "content": "list"}],
                              "tools": tools()});
        if tool_choice {
            body["tool_choice"] = json!("auto");
        }
        body
    };
    let server = strict(MockProfile::LlamaCpp, ONE_TOOL_CALL);
    let (status, body) = post_json(&server, &first(false)).await;
    assert_eq!(status, 200);
    let choice = &body["choices"][0];
    assert_eq!(choice["message"].get("tool_calls"), None, "{body}");
    assert_eq!(choice["finish_reason"], "stop");
    assert!(
        choice["message"]["content"]
            .as_str()
            .unwrap()
            .contains("no tool_choice")
    );

    let server = strict(MockProfile::LlamaCpp, ONE_TOOL_CALL);
    let (_, body) = post_json(&server, &first(true)).await;
    assert_eq!(
        body["choices"][0]["message"]["tool_calls"][0]["function"]["name"],
        "ls"
    );
    assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
    // Other servers default to auto.
    let server = strict(MockProfile::Openai, ONE_TOOL_CALL);
    let (_, body) = post_json(&server, &first(false)).await;
    assert_eq!(
        body["choices"][0]["message"]["tool_calls"][0]["function"]["name"],
        "ls"
    );
}

#[tokio::test]
async fn openai_refuses_unanswered_tool_calls_and_orphan_tool_messages() {
    let server = strict(MockProfile::Openai, "steps:\n  - message: {content: ok}\n");
    let mut unanswered = second_request(Some(json!("")), true);
    unanswered["messages"].as_array_mut().unwrap().pop();
    unanswered["messages"]
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "user", "content": "and?"}));
    let (status, body) = post_json(&server, &unanswered).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["type"], "invalid_request_error");
    assert_eq!(body["error"]["param"], "messages.[2].role");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .ends_with("did not have response messages: call_0_0")
    );

    let mut orphan = second_request(Some(json!("")), true);
    orphan["messages"][3]["tool_call_id"] = json!("call_other");
    let (status, body) = post_json(&server, &orphan).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["param"], "messages.[3].role");
}

#[tokio::test]
async fn openai_refuses_unknown_parameters_and_bad_types() {
    let server = strict(MockProfile::Openai, "steps:\n  - message: {content: ok}\n");
    let base = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    for (field, value, message) in [
        (
            "temprature",
            json!(0.2),
            "Unrecognized request argument supplied: temprature",
        ),
        (
            "temperature",
            json!("hot"),
            "Invalid type for 'temperature': expected number, but got string instead.",
        ),
        (
            "max_tokens",
            json!(1.5),
            "Invalid type for 'max_tokens': expected integer, but got number instead.",
        ),
        (
            "tool_choice",
            json!("auto"),
            "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
        ),
        (
            "tools",
            json!([]),
            "Invalid 'tools': empty array. Expected an array with minimum length 1, but got an empty array instead.",
        ),
    ] {
        let mut body = base.clone();
        body[field] = value;
        let (status, answer) = post_json(&server, &body).await;
        assert_eq!(
            (status, answer["error"]["message"].as_str()),
            (400, Some(message))
        );
    }
    let null_user = json!({"model": "m", "messages": [{"role": "user", "content": null}]});
    let (status, answer) = post_json(&server, &null_user).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error"]["param"], "messages.[0].content");
}

#[tokio::test]
async fn ollama_refuses_arguments_that_are_not_a_json_object() {
    let server = strict(MockProfile::Ollama, "steps:\n  - message: {content: ok}\n");
    let mut body = second_request(Some(json!("")), true);
    body["messages"][2]["tool_calls"][0]["function"]["arguments"] = json!("{\"dir\": ");
    let (status, answer) = post_json(&server, &body).await;
    assert_eq!(status, 400);
    assert_eq!(
        answer,
        json!({"error": {"message": "invalid tool call arguments",
                         "type": "invalid_request_error", "param": null, "code": null}})
    );
    let null_user = json!({"model": "m", "messages": [{"role": "user", "content": null}]});
    let (status, answer) = post_json(&server, &null_user).await;
    assert_eq!(
        (status, answer["error"]["message"].as_str()),
        (400, Some("invalid message content type: <nil>"))
    );
}

#[tokio::test]
async fn vllm_refuses_tool_choice_without_tools_with_its_error_shape() {
    let server = strict(MockProfile::Vllm, "steps:\n  - message: {content: ok}\n");
    let body = json!({"messages": [{"role": "user", "content": "hi"}], "tool_choice": "required"});
    let (status, answer) = post_json(&server, &body).await;
    assert_eq!(status, 400);
    assert_eq!(
        answer,
        json!({"error": {"message": "When using `tool_choice`, `tools` must be set.",
                         "type": "BadRequestError", "param": null, "code": 400}})
    );
}

#[test]
fn profile_names_round_trip_and_unknown_names_list_the_choices() {
    for profile in MockProfile::STRICT {
        assert_eq!(strict_profile(profile.name()).unwrap(), profile);
    }
    let err = strict_profile("llamacpp").unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown strict profile `llamacpp`; use one of: openai, llama-cpp, vllm, ollama, deepseek, \
         anthropic, responses"
    );
}

// DeepSeek in thinking mode: the reasoning of a turn with tool calls must come back, the
// key present even when empty (digest §C1, §D3 rule 1).
#[tokio::test]
async fn deepseek_refuses_a_tool_call_turn_without_its_reasoning() {
    let server = strict(
        MockProfile::Deepseek,
        "steps:\n  - message: {content: ok}\n",
    );
    let (status, body) = post_json(&server, &second_request(Some(json!("")), true)).await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        json!({"error": {"message": "The reasoning_content in the thinking mode must be passed back to the API.",
                         "type": "invalid_request_error", "param": null, "code": "invalid_request_error"}})
    );
    let mut off = second_request(Some(json!("")), true);
    off["thinking"] = json!({"type": "disabled"});
    assert_eq!(post_json(&server, &off).await.0, 200);
}
