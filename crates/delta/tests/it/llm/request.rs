//! Request building: messages in the OpenAI wire format and passthrough parameters.

use delta_engine::llm::{AssistantMessage, ChatMessage, ToolCall, build_request};
use serde_json::{Map, Value, json};

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

#[test]
fn messages_serialize_to_the_openai_wire_format() {
    let messages = [
        ChatMessage::system("be brief"),
        ChatMessage::user("list files"),
        ChatMessage::from(AssistantMessage {
            content: None,
            tool_calls: vec![call("call_1", "ls", r#"{"dir":"."}"#)],
            ..AssistantMessage::default()
        }),
        ChatMessage::tool("call_1", "a.txt\n"),
        ChatMessage::Assistant(AssistantMessage {
            content: Some("done".into()),
            tool_calls: vec![],
            ..AssistantMessage::default()
        }),
    ];
    assert_eq!(
        serde_json::to_value(messages).unwrap(),
        json!([
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "list files"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "ls", "arguments": "{\"dir\":\".\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "a.txt\n"},
            {"role": "assistant", "content": "done"},
        ])
    );
}

#[test]
fn tool_calls_round_trip_through_the_wire_format() {
    let original = call("call_9", "write", r#"{"path":"x"}"#);
    let text = serde_json::to_string(&original).unwrap();
    let back: ToolCall = serde_json::from_str(&text).unwrap();
    assert_eq!(back, original);
}

#[test]
fn build_request_merges_passthrough_params() {
    let tools = [json!({"type": "function", "function": {"name": "ls", "parameters": {}}})];
    let params: Map<String, Value> = json!({
        "temperature": 0.2,
        "max_tokens": 100,
        "response_format": {"type": "text"},
        "model": "ignored",
        "messages": [],
        "tools": [],
    })
    .as_object()
    .unwrap()
    .clone();
    let body = build_request("gpt-4o", &[ChatMessage::user("hi")], &tools, &params);
    assert_eq!(
        body,
        json!({
            "model": "gpt-4o",
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "ls", "parameters": {}}}],
            "tool_choice": "auto",
            "temperature": 0.2,
            "max_tokens": 100,
            "response_format": {"type": "text"},
        })
    );
}

#[test]
fn build_request_omits_tools_when_there_are_none() {
    let body = build_request("m", &[], &[], &Map::new());
    assert_eq!(body, json!({"model": "m", "messages": []}));
}

// Issue 11: llama-cpp-python's chatml-function-calling offers the tools to the model only
// when `tool_choice` is set, and its validator answers HTTP 500 to a `null` content.
#[test]
fn tools_go_with_tool_choice_auto_unless_the_agent_chooses() {
    let tools = [json!({"type": "function", "function": {"name": "ls", "parameters": {}}})];
    let body = build_request("m", &[ChatMessage::user("hi")], &tools, &Map::new());
    assert_eq!(body["tool_choice"], json!("auto"));
    let params: Map<String, Value> = json!({"tool_choice": "required"})
        .as_object()
        .unwrap()
        .clone();
    let body = build_request("m", &[ChatMessage::user("hi")], &tools, &params);
    assert_eq!(body["tool_choice"], json!("required"));
}

#[test]
fn assistant_content_is_always_a_string_and_arguments_always_an_object() {
    let silent = ChatMessage::from(AssistantMessage {
        content: None,
        tool_calls: vec![
            call("c1", "ls", r#"{"dir": "."}"#),
            call("c2", "ls", r#"{"dir": "#),
            call("c3", "ls", "[1]"),
        ],
        ..AssistantMessage::default()
    });
    let wire = serde_json::to_value(&silent).unwrap();
    assert_eq!(wire["content"], json!(""));
    let arguments: Vec<&str> = wire["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|call| call["function"]["arguments"].as_str().unwrap())
        .collect();
    assert_eq!(arguments, [r#"{"dir": "."}"#, "{}", "{}"]);
    let empty = ChatMessage::from(AssistantMessage::default());
    assert_eq!(
        serde_json::to_value(&empty).unwrap(),
        json!({"role": "assistant", "content": ""})
    );
}
