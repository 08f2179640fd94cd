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

/// Posts `body` to `path` (after the base URL's `/v1`) with `headers`; returns the status
/// and the parsed JSON body.
pub async fn post_to(
    server: &MockServer,
    path: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> (u16, Value) {
    let mut request = client()
        .post(format!("{}{path}", server.base_url()))
        .json(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

/// The headers Anthropic's SDKs send.
pub const ANTHROPIC_HEADERS: &[(&str, &str)] = &[
    ("x-api-key", "sk-ant-test"),
    ("anthropic-version", "2023-06-01"),
];

/// The header OpenAI's SDKs send.
pub const BEARER: &[(&str, &str)] = &[("authorization", "Bearer sk-test")];

/// Posts to `/v1/messages` as Anthropic's SDKs do.
pub async fn post_messages(server: &MockServer, body: &Value) -> (u16, Value) {
    post_to(server, "/messages", ANTHROPIC_HEADERS, body).await
}

/// Posts to `/v1/responses` as OpenAI's SDKs do.
pub async fn post_responses(server: &MockServer, body: &Value) -> (u16, Value) {
    post_to(server, "/responses", BEARER, body).await
}

/// Posts and returns the raw body text (a stream's events).
pub async fn post_text(
    server: &MockServer,
    path: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> String {
    let mut request = client()
        .post(format!("{}{path}", server.base_url()))
        .json(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap().text().await.unwrap()
}

/// The `data:` payloads of a server-sent event stream.
pub fn events(stream: &str) -> Vec<Value> {
    stream
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter(|data| *data != "[DONE]")
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}
