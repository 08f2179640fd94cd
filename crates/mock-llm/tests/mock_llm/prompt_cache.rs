//! `--prompt-cache`: prompt tokens counted from the request and cached tokens reported the
//! way each API reports them (issue 27), so the engine's cache-hit figures are measured.

use mock_llm::{MockServer, ReadScript as _, Script, ServerOptions};
use serde_json::{Value, json};

use crate::support::{post_json, post_messages, post_responses};

fn cached_server() -> MockServer {
    MockServer::start_with(
        Script::from_yaml_str(
            "steps:\n  - message: {content: ok, usage: {completion_tokens: 7}, repeat: 10}\n",
        )
        .unwrap(),
        ServerOptions {
            prompt_cache: true,
            ..ServerOptions::default()
        },
    )
    .unwrap()
}

fn long_text() -> String {
    "The same long instructions, again and again. ".repeat(200)
}

#[tokio::test]
async fn chat_and_responses_report_cached_tokens_within_their_input_tokens() {
    let server = cached_server();
    let mut chat = json!({"model": "m", "messages": [{"role": "system", "content": long_text()}, {"role": "user", "content": "one"}]});
    let (_, first) = post_json(&server, &chat).await;
    assert_eq!(first["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
    chat["messages"]
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "assistant", "content": "ok"}));
    chat["messages"]
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "user", "content": "two"}));
    let (_, second) = post_json(&server, &chat).await;
    let prompt = second["usage"]["prompt_tokens"].as_u64().unwrap();
    let cached = second["usage"]["prompt_tokens_details"]["cached_tokens"]
        .as_u64()
        .unwrap();
    let first_prompt = first["usage"]["prompt_tokens"].as_u64().unwrap();
    assert_eq!(
        cached,
        first_prompt / 128 * 128,
        "the first request's prompt, in 128s"
    );
    assert!(cached < prompt);
    assert_eq!(second["usage"]["completion_tokens"], 7);

    let mut responses = json!({"model": "gpt-4.1", "instructions": long_text(), "input": [{"role": "user", "content": "one"}]});
    let (_, first) = post_responses(&server, &responses).await;
    assert_eq!(first["usage"]["input_tokens_details"]["cached_tokens"], 0);
    responses["input"]
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "user", "content": "two"}));
    let (_, second) = post_responses(&server, &responses).await;
    let usage = &second["usage"];
    let cached = usage["input_tokens_details"]["cached_tokens"]
        .as_u64()
        .unwrap();
    assert!(
        cached >= 1024 && cached % 128 == 0 && cached < usage["input_tokens"].as_u64().unwrap()
    );
}

#[tokio::test]
async fn anthropic_reads_and_writes_at_breakpoints_beside_its_uncached_input_tokens() {
    let server = cached_server();
    let marker = json!({"type": "ephemeral"});
    let request = |turns: &[&str]| -> Value {
        let mut messages: Vec<Value> = Vec::new();
        for (index, text) in turns.iter().enumerate() {
            let role = if index % 2 == 0 { "user" } else { "assistant" };
            messages.push(json!({"role": role, "content": [{"type": "text", "text": text}]}));
        }
        let last = messages.len() - 1;
        messages[last]["content"][0]["cache_control"] = marker.clone();
        json!({"model": "claude-sonnet-4-5", "max_tokens": 100,
               "system": [{"type": "text", "text": long_text(), "cache_control": marker}],
               "messages": messages})
    };
    let (_, first) = post_messages(&server, &request(&["one"])).await;
    let usage = &first["usage"];
    assert_eq!(usage["cache_read_input_tokens"], 0);
    let written = usage["cache_creation_input_tokens"].as_u64().unwrap();
    assert!(written > 1024);
    assert_eq!(
        usage["input_tokens"], 0,
        "everything up to the last breakpoint was written"
    );
    let (_, second) = post_messages(&server, &request(&["one", "ok", "two"])).await;
    let usage = &second["usage"];
    assert_eq!(usage["cache_read_input_tokens"].as_u64(), Some(written));
    assert!(usage["cache_creation_input_tokens"].as_u64().unwrap() > 0);
    assert_eq!(usage["output_tokens"], 7);
}
