//! `--strict anthropic`: Anthropic Messages requests validated as the service does (the
//! rules of the digest's §D1, cited in `src/strict/anthropic.rs`), its answers in the
//! Messages shape, thinking signatures that must come back unchanged (issue 27).

use mock_llm::{MockProfile, MockServer, ReadScript as _, Script, ServerOptions};
use serde_json::{Value, json};

use crate::support::{ANTHROPIC_HEADERS, events, post_messages, post_text, post_to};

const TOOL_LOOP: &str = "mode: by_conversation\nsteps:\n  - message:\n      content: Let me look.\n      reasoning: I should list the files.\n      tool_calls: [{name: ls, arguments: {dir: .}}]\n  - message: {content: done, reasoning: Listed.}\n";

fn strict(yaml: &str) -> MockServer {
    MockServer::start_with(
        Script::from_yaml_str(yaml).unwrap(),
        ServerOptions {
            strict: Some(MockProfile::Anthropic),
            ..ServerOptions::default()
        },
    )
    .unwrap()
}

fn tools() -> Value {
    json!([{"name": "ls", "description": "list", "input_schema": {"type": "object", "properties": {"dir": {"type": "string"}}}}])
}

fn first_request() -> Value {
    json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 4096,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "tools": tools(),
        "tool_choice": {"type": "auto"},
        "messages": [{"role": "user", "content": "list"}],
    })
}

/// The second request of the loop: the first answer's blocks passed back, and the result.
fn second_request(answer: &Value) -> Value {
    let mut body = first_request();
    let id = answer["content"][2]["id"].clone();
    body["messages"] = json!([
        {"role": "user", "content": "list"},
        {"role": "assistant", "content": answer["content"]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "a.txt"}]},
    ]);
    body
}

#[tokio::test]
async fn a_thinking_tool_loop_passes_when_the_blocks_come_back_unchanged() {
    let server = strict(TOOL_LOOP);
    let (status, answer) = post_messages(&server, &first_request()).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["type"], "message");
    assert_eq!(answer["stop_reason"], "tool_use");
    let kinds: Vec<&str> = answer["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|block| block["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["thinking", "text", "tool_use"]);
    assert_eq!(answer["content"][0]["thinking"], "I should list the files.");
    assert!(answer["content"][0]["signature"].as_str().unwrap().len() > 190);
    assert_eq!(answer["content"][2]["id"], "toolu_0_0");
    assert_eq!(answer["content"][2]["input"], json!({"dir": "."}));
    let (status, done) = post_messages(&server, &second_request(&answer)).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["stop_reason"], "end_turn");
    assert_eq!(done["content"][1]["text"], "done");
}

#[tokio::test]
async fn an_altered_or_dropped_thinking_block_is_refused_as_the_service_does() {
    let server = strict(TOOL_LOOP);
    let (_, answer) = post_messages(&server, &first_request()).await;
    let mut altered = second_request(&answer);
    altered["messages"][1]["content"][0]["thinking"] = json!("I should list the files!");
    let (status, body) = post_messages(&server, &altered).await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        json!({"type": "error", "error": {"type": "invalid_request_error",
               "message": "messages.1.content.0: Invalid `signature` in `thinking` block"},
               "request_id": "req_mock"})
    );
    let mut dropped = second_request(&answer);
    dropped["messages"][1]["content"]
        .as_array_mut()
        .unwrap()
        .remove(0);
    let (status, body) = post_messages(&server, &dropped).await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"]["message"],
        "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found \
         `text`. When `thinking` is enabled, a final `assistant` message must start with a \
         thinking block."
    );
}

/// One broken request per rule of §D1 and the error the service gives.
#[tokio::test]
async fn each_rule_refuses_what_the_service_refuses() {
    let server = strict("steps:\n  - message: {content: ok}\n");
    let plain = || {
        json!({"model": "claude-sonnet-4-5", "max_tokens": 1024,
               "messages": [{"role": "user", "content": "hi"}]})
    };
    let with = |edit: &dyn Fn(&mut Value)| {
        let mut body = plain();
        edit(&mut body);
        body
    };
    let loop_turns = |calls: Value, results: Value| {
        with(&|body| {
            body["tools"] = tools();
            body["messages"] = json!([
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": calls.clone()},
                {"role": "user", "content": results.clone()},
            ]);
        })
    };
    let call = |id: &str| json!({"type": "tool_use", "id": id, "name": "ls", "input": {}});
    let result = |id: &str| json!({"type": "tool_result", "tool_use_id": id, "content": "x"});
    let cases: Vec<(Value, &str)> = vec![
        (
            with(&|b| {
                b.as_object_mut().unwrap().remove("max_tokens");
            }),
            "max_tokens: Field required",
        ),
        (
            with(&|b| b["top_k_typo"] = json!(1)),
            "top_k_typo: Extra inputs are not permitted",
        ),
        (
            with(&|b| b["max_tokens"] = json!(100_000)),
            "max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5",
        ),
        (
            with(&|b| b["temperature"] = json!(1.5)),
            "temperature: Input should be less than or equal to 1",
        ),
        (
            with(&|b| b["messages"] = json!([{"role": "system", "content": "x"}])),
            "messages.0.role: Input should be 'user' or 'assistant'",
        ),
        (
            with(&|b| {
                b["messages"] =
                    json!([{"role": "assistant", "content": "x"}, {"role": "user", "content": "y"}])
            }),
            r#"messages: first message must use the "user" role"#,
        ),
        (
            with(&|b| {
                b["messages"] =
                    json!([{"role": "user", "content": ""}, {"role": "assistant", "content": "y"}])
            }),
            "messages.0: all messages must have non-empty content except for the optional final assistant message",
        ),
        (
            with(&|b| {
                b["messages"] = json!([{"role": "user", "content": [{"type": "text", "text": ""}]}])
            }),
            "messages: text content blocks must be non-empty",
        ),
        (
            with(
                &|b| b["messages"] = json!([{"role": "user", "content": [{"type": "text", "text": "x", "parsed_output": 1}]}]),
            ),
            "messages.0.content.0.text.parsed_output: Extra inputs are not permitted",
        ),
        (
            with(
                &|b| b["messages"] = json!([{"role": "user", "content": "x"}, {"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}]}]),
            ),
            "messages.1.content.0.thinking.signature: Field required",
        ),
        (
            with(&|b| b["messages"] = json!([{"role": "user", "content": [call("toolu_1")]}])),
            "messages.0.content.0: `tool_use` blocks are not allowed in `user` messages",
        ),
        (
            loop_turns(
                json!([call("toolu_1")]),
                json!([{"type": "text", "text": "no results"}]),
            ),
            "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
        ),
        (
            loop_turns(
                json!([call("toolu_1")]),
                json!([result("toolu_1"), result("toolu_2")]),
            ),
            "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_2. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
        ),
        (
            loop_turns(
                json!([call("toolu_1"), call("toolu_1")]),
                json!([result("toolu_1")]),
            ),
            "messages.1.content.1: `tool_use` ids must be unique",
        ),
        (
            with(&|b| b["tools"] = json!([{"name": "a b", "input_schema": {"type": "object"}}])),
            "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
        ),
        (
            with(
                &|b| b["tools"] = json!([{"name": "a", "input_schema": {"type": "object"}}, {"name": "a", "input_schema": {"type": "object"}}]),
            ),
            "tools: Tool names must be unique.",
        ),
        (
            with(&|b| {
                b["thinking"] = json!({"type": "enabled", "budget_tokens": 1024});
                b["max_tokens"] = json!(4096);
                b["tools"] = tools();
                b["tool_choice"] = json!({"type": "any"});
            }),
            "Thinking may not be enabled when tool_choice forces tool use.",
        ),
        (
            with(&|b| {
                b["thinking"] = json!({"type": "enabled", "budget_tokens": 1024});
                b["max_tokens"] = json!(4096);
                b["temperature"] = json!(0.2);
            }),
            "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode",
        ),
        (
            with(&|b| {
                b["thinking"] = json!({"type": "enabled", "budget_tokens": 512});
            }),
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
        ),
        (
            with(&|b| {
                b["system"] = json!([1, 2, 3, 4, 5].iter().map(|n| json!({"type": "text", "text": n.to_string(), "cache_control": {"type": "ephemeral"}})).collect::<Vec<_>>());
            }),
            "A maximum of 4 blocks with cache_control may be provided. Found 5.",
        ),
        (
            with(
                &|b| b["messages"] = json!([{"role": "user", "content": "x"}, {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s", "cache_control": {"type": "ephemeral"}}]}]),
            ),
            "messages.1.content.0.thinking.cache_control: Extra inputs are not permitted",
        ),
    ];
    for (body, message) in cases {
        let (status, answer) = post_messages(&server, &body).await;
        assert_eq!(status, 400, "{message}: {answer}");
        assert_eq!(answer["type"], "error");
        assert_eq!(answer["error"]["type"], "invalid_request_error");
        assert_eq!(answer["error"]["message"], message);
    }
    // Consecutive user turns are merged, not refused; a final assistant message prefills.
    let merged = with(&|b| {
        b["messages"] = json!([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}, {"role": "assistant", "content": ""}]);
    });
    assert_eq!(post_messages(&server, &merged).await.0, 200);
}

#[tokio::test]
async fn headers_are_checked_and_other_apis_routes_are_not_served() {
    let server = strict("steps:\n  - message: {content: ok}\n");
    let body = json!({"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]});
    let (status, answer) = post_to(
        &server,
        "/messages",
        &[("anthropic-version", "2023-06-01")],
        &body,
    )
    .await;
    assert_eq!(
        (status, answer["error"]["type"].as_str()),
        (401, Some("authentication_error"))
    );
    assert_eq!(answer["error"]["message"], "invalid x-api-key");
    let (status, answer) = post_to(&server, "/messages", &[("x-api-key", "k")], &body).await;
    assert_eq!(
        (status, answer["error"]["message"].as_str()),
        (400, Some("anthropic-version: header is required"))
    );
    let chat = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    let (status, answer) = post_to(&server, "/chat/completions", ANTHROPIC_HEADERS, &chat).await;
    assert_eq!(status, 404);
    assert_eq!(answer["error"]["type"], "not_found_error");
}

#[tokio::test]
async fn the_stream_carries_every_block_and_the_signature() {
    let server = strict(TOOL_LOOP);
    let mut body = first_request();
    body["stream"] = json!(true);
    let stream = post_text(&server, "/messages", ANTHROPIC_HEADERS, &body).await;
    assert!(
        stream.starts_with("event: message_start\ndata: "),
        "{stream}"
    );
    let events = events(&stream);
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"message_start"));
    assert_eq!(kinds.last(), Some(&"message_stop"));
    assert!(kinds.contains(&"ping"));
    let joined = |kind: &str, field: &str| -> String {
        events
            .iter()
            .filter(|e| e["delta"]["type"] == kind)
            .map(|e| e["delta"][field].as_str().unwrap())
            .collect()
    };
    assert_eq!(
        joined("thinking_delta", "thinking"),
        "I should list the files."
    );
    assert_eq!(joined("text_delta", "text"), "Let me look.");
    assert_eq!(joined("input_json_delta", "partial_json"), r#"{"dir":"."}"#);
    let (_, whole) = post_messages(&server, &first_request()).await;
    assert_eq!(
        joined("signature_delta", "signature"),
        whole["content"][0]["signature"].as_str().unwrap()
    );
    let delta = events
        .iter()
        .find(|e| e["type"] == "message_delta")
        .unwrap();
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
}
