//! Shared helpers: start a server from YAML, post chat requests, get JSON.

use std::time::Duration;

use mock_llm::{MockServer, ReadScript as _, Script};
use serde_json::{Value, json};

pub fn start(yaml: &str) -> MockServer {
    MockServer::start(Script::from_yaml_str(yaml).unwrap()).unwrap()
}

/// A client that cannot hang a test forever if the server misbehaves.
pub fn client() -> reqwest::Client {
    // In a workspace build reqwest carries the engine's `rustls-no-provider` feature, and a
    // rustls client cannot be built before a crypto provider is installed (plain HTTP
    // included); the engine installs ring the same way (delta_engine::http).
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

/// A chat request whose conversation holds `tool_messages` tool results.
pub fn chat_body(tool_messages: usize) -> Value {
    let mut messages = vec![
        json!({"role": "system", "content": "You are a test."}),
        json!({"role": "user", "content": "go"}),
    ];
    for i in 0..tool_messages {
        messages.push(json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [{"id": format!("call_{i}"), "type": "function",
                            "function": {"name": "t", "arguments": "{}"}}],
        }));
        messages
            .push(json!({"role": "tool", "tool_call_id": format!("call_{i}"), "content": "ok"}));
    }
    json!({"model": "test-model", "messages": messages})
}

pub async fn post(server: &MockServer, body: &Value) -> reqwest::Response {
    client()
        .post(format!("{}/chat/completions", server.base_url()))
        .json(body)
        .send()
        .await
        .unwrap()
}

/// The JSON body of a GET of `url`.
pub async fn get_json(url: &str) -> Value {
    let response = client().get(url).send().await.unwrap();
    response.json().await.unwrap()
}

/// Posts and returns the status and the parsed JSON body.
pub async fn post_json(server: &MockServer, body: &Value) -> (u16, Value) {
    let response = post(server, body).await;
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

/// The assistant message's content of a completion.
pub fn content(completion: &Value) -> &Value {
    &completion["choices"][0]["message"]["content"]
}
