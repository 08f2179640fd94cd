//! The HTTP server over real sockets on 127.0.0.1.

use std::io::{Read as _, Write as _};
use std::time::Duration;

use mock_llm::{MockServer, ReadScript as _, Script, ServerError, ServerOptions};
use serde_json::{Value, json};

use crate::support::{chat_body, client, content, get_json, post, post_json, start};

#[tokio::test]
async fn sequential_mode_answers_steps_in_arrival_order() {
    let server = start(
        "steps:\n  - message: {content: first}\n  - message: {content: second}\n  - message: {content: third}\n",
    );
    let mut seen = Vec::new();
    for _ in 0..3 {
        // The same request each time: only the arrival order picks the step.
        let (status, body) = post_json(&server, &chat_body(0)).await;
        assert_eq!(status, 200);
        seen.push(content(&body).clone());
    }
    assert_eq!(seen, [json!("first"), json!("second"), json!("third")]);
}

#[tokio::test]
async fn completion_is_a_valid_chat_completion_object() {
    let server = start("steps:\n  - message: {content: hello}\n");
    let (status, body) = post_json(&server, &chat_body(0)).await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({
            "id": "chatcmpl-mock-0",
            "object": "chat.completion",
            "created": mock_llm::CREATED,
            "model": "test-model",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": "hello"},
                "logprobs": null,
                "finish_reason": "stop",
            }],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        })
    );
}

#[tokio::test]
async fn by_conversation_mode_picks_the_step_by_tool_message_count() {
    let server = start(
        "mode: by_conversation\nsteps:\n  - message: {content: zero}\n  - message: {content: one}\n  - message: {content: two}\n",
    );
    // Several clients at once, in an order unrelated to the steps.
    let counts = [2usize, 0, 1, 2, 0, 1];
    let tasks: Vec<_> = counts
        .iter()
        .map(|&count| {
            let url = format!("{}/chat/completions", server.base_url());
            tokio::spawn(async move {
                let response = client()
                    .post(url)
                    .json(&chat_body(count))
                    .send()
                    .await
                    .unwrap();
                let body: Value = response.json().await.unwrap();
                body["choices"][0]["message"]["content"].clone()
            })
        })
        .collect();
    let mut answers = Vec::new();
    for task in tasks {
        answers.push(task.await.unwrap());
    }
    assert_eq!(
        answers,
        [
            json!("two"),
            json!("zero"),
            json!("one"),
            json!("two"),
            json!("zero"),
            json!("one")
        ]
    );
    let mut steps: Vec<_> = server.recorded().iter().map(|r| r.step).collect();
    steps.sort();
    assert_eq!(
        steps,
        [Some(0), Some(0), Some(1), Some(1), Some(2), Some(2)]
    );
}

#[tokio::test]
async fn tool_calls_send_object_arguments_as_json_and_strings_verbatim() {
    let server = start(
        r#"steps:
  - message:
      tool_calls:
        - name: list_files
          arguments: {path: ".", depth: 2}
        - name: broken
          arguments: '{"path": '
        - name: no_args
        - name: fixed_id
          id: my-id
"#,
    );
    let (status, body) = post_json(&server, &chat_body(0)).await;
    assert_eq!(status, 200);
    assert_eq!(
        body["choices"][0]["message"],
        json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [
                {"id": "call_0_0", "type": "function",
                 "function": {"name": "list_files", "arguments": r#"{"depth":2,"path":"."}"#}},
                {"id": "call_0_1", "type": "function",
                 "function": {"name": "broken", "arguments": r#"{"path": "#}},
                {"id": "call_0_2", "type": "function",
                 "function": {"name": "no_args", "arguments": "{}"}},
                {"id": "my-id", "type": "function",
                 "function": {"name": "fixed_id", "arguments": "{}"}},
            ],
        })
    );
    assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
}

#[tokio::test]
async fn usage_and_finish_reason_come_from_the_script() {
    let server = start(
        "steps:\n  - message: {content: a, usage: {prompt_tokens: 120, completion_tokens: 30}, finish_reason: length}\n  - message: {content: b, usage: {prompt_tokens: 7}}\n",
    );
    let (_, first) = post_json(&server, &chat_body(0)).await;
    assert_eq!(
        first["usage"],
        json!({"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150})
    );
    assert_eq!(first["choices"][0]["finish_reason"], "length");
    let (_, second) = post_json(&server, &chat_body(0)).await;
    assert_eq!(
        second["usage"],
        json!({"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12})
    );
}

#[tokio::test]
async fn model_is_echoed_or_defaults_to_mock_model() {
    let server = start("steps:\n  - message: {content: a}\n  - message: {content: b}\n");
    let (_, echoed) = post_json(&server, &json!({"model": "gpt-x", "messages": []})).await;
    assert_eq!(echoed["model"], "gpt-x");
    let (_, defaulted) = post_json(&server, &json!({"messages": []})).await;
    assert_eq!(defaulted["model"], "mock-model");
}

#[tokio::test]
async fn error_step_sends_status_body_and_retry_after() {
    let server = start(
        r#"steps:
  - error: {status: 429, retry_after: 7}
  - error: {status: 503, body: "upstream down"}
  - error: {status: 400, body: {error: {message: "context too long", code: context_length_exceeded}}}
"#,
    );
    let first = post(&server, &chat_body(0)).await;
    assert_eq!(first.status().as_u16(), 429);
    assert_eq!(first.headers()["retry-after"], "7");
    assert_eq!(
        first.json::<Value>().await.unwrap(),
        json!({"error": {
            "message": "mock-llm: scripted error at step 0: HTTP 429 Too Many Requests",
            "type": "rate_limit_error",
            "param": null,
            "code": "mock_llm_scripted_error",
        }})
    );

    let second = post(&server, &chat_body(0)).await;
    assert_eq!(second.status().as_u16(), 503);
    assert!(second.headers().get("retry-after").is_none());
    assert_eq!(
        second.headers()["content-type"],
        "text/plain; charset=utf-8"
    );
    assert_eq!(second.text().await.unwrap(), "upstream down");

    let (status, third) = post_json(&server, &chat_body(0)).await;
    assert_eq!(status, 400);
    assert_eq!(
        third,
        json!({"error": {"message": "context too long", "code": "context_length_exceeded"}})
    );
}

#[tokio::test]
async fn a_delayed_step_does_not_block_a_concurrent_request() {
    let server = start(
        "steps:\n  - message: {content: slow, delay_ms: 30000}\n  - message: {content: fast}\n",
    );
    let url = format!("{}/chat/completions", server.base_url());
    let slow = tokio::spawn(async move {
        let _ = client().post(url).json(&chat_body(0)).send().await;
    });
    // Wait until the slow request has taken step 0, so the next one gets step 1.
    while server.requests().is_empty() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (status, body) = post_json(&server, &chat_body(0)).await;
    assert_eq!(status, 200);
    assert_eq!(content(&body), "fast");
    assert!(
        !slow.is_finished(),
        "the delayed request must still be waiting"
    );
    slow.abort();
}

#[tokio::test]
async fn a_delayed_step_answers_after_its_delay() {
    let server = start("steps:\n  - message: {content: later, delay_ms: 20}\n");
    let (status, body) = post_json(&server, &chat_body(0)).await;
    assert_eq!(status, 200);
    assert_eq!(content(&body), "later");
}

#[tokio::test]
async fn drop_connection_step_gives_the_client_a_connection_error() {
    let server = start(
        "steps:\n  - drop_connection:\n  - drop_connection: {delay_ms: 10}\n  - message: {content: after}\n",
    );
    for _ in 0..2 {
        let result = client()
            .post(format!("{}/chat/completions", server.base_url()))
            .json(&chat_body(0))
            .send()
            .await;
        let err = result.expect_err("a dropped connection must not produce a response");
        assert!(
            !err.is_timeout(),
            "expected a connection error, got {err:?}"
        );
    }
    // The server itself goes on serving.
    let (status, body) = post_json(&server, &chat_body(0)).await;
    assert_eq!(status, 200);
    assert_eq!(content(&body), "after");
}

#[tokio::test]
async fn malformed_step_sends_its_body_verbatim_with_200() {
    let server = start(
        "steps:\n  - malformed: {body: '<html>not json'}\n  - malformed: {body: {choices: []}}\n",
    );
    let first = post(&server, &chat_body(0)).await;
    assert_eq!(first.status().as_u16(), 200);
    assert_eq!(first.headers()["content-type"], "application/json");
    assert_eq!(first.text().await.unwrap(), "<html>not json");
    let second = post(&server, &chat_body(0)).await;
    assert_eq!(second.status().as_u16(), 200);
    assert_eq!(second.text().await.unwrap(), r#"{"choices":[]}"#);
}

#[tokio::test]
async fn repeat_counts_as_consecutive_steps() {
    let server = start(
        "steps:\n  - message: {tool_calls: [{name: t}], repeat: 3}\n  - message: {content: done}\n",
    );
    let mut ids = Vec::new();
    for _ in 0..3 {
        let (_, body) = post_json(&server, &chat_body(0)).await;
        ids.push(body["choices"][0]["message"]["tool_calls"][0]["id"].clone());
    }
    assert_eq!(
        ids,
        [json!("call_0_0"), json!("call_1_0"), json!("call_2_0")]
    );
    let (_, last) = post_json(&server, &chat_body(0)).await;
    assert_eq!(content(&last), "done");
    let (status, _) = post_json(&server, &chat_body(0)).await;
    assert_eq!(status, 500);
}

#[tokio::test]
async fn exhausted_script_answers_500_saying_so() {
    let server = start("steps:\n  - message: {content: only, repeat: 2}\n");
    post_json(&server, &chat_body(0)).await;
    post_json(&server, &chat_body(0)).await;
    let (status, body) = post_json(&server, &chat_body(0)).await;
    assert_eq!(status, 500);
    assert_eq!(
        body,
        json!({"error": {
            "message": "mock-llm: script exhausted: this request needs step 2 (request number 3 \
                        in arrival order), but the script has only 2 steps (0 to 1); add steps \
                        to the script",
            "type": "server_error",
            "param": null,
            "code": "mock_llm_script_exhausted",
        }})
    );
}

#[tokio::test]
async fn by_conversation_out_of_range_answers_500_naming_the_tool_count() {
    let server = start("mode: by_conversation\nsteps:\n  - message: {content: only}\n");
    let (status, body) = post_json(&server, &chat_body(3)).await;
    assert_eq!(status, 500);
    assert_eq!(
        body["error"]["message"],
        "mock-llm: script exhausted: this request needs step 3 (it holds 3 tool message(s)), \
         but the script has only 1 step (step 0); add steps to the script"
    );
}

#[tokio::test]
async fn invalid_requests_get_400_and_use_up_no_step() {
    let server = start("steps:\n  - message: {content: first}\n");
    let not_json = client()
        .post(format!("{}/chat/completions", server.base_url()))
        .body("{oops")
        .send()
        .await
        .unwrap();
    assert_eq!(not_json.status().as_u16(), 400);
    let body: Value = not_json.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("mock-llm: the request body is not JSON: "),
        "{body}"
    );

    let (status, body) = post_json(&server, &json!({"model": "m"})).await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"]["message"],
        "mock-llm: the request needs a `messages` array"
    );

    let (status, body) = post_json(&server, &chat_body(0)).await;
    assert_eq!(status, 200);
    assert_eq!(content(&body), "first");
    let steps: Vec<_> = server.recorded().iter().map(|r| r.step).collect();
    assert_eq!(steps, [None, None, Some(0)]);
    assert_eq!(server.requests()[0], json!("{oops"));
}

// Issue 11: `stream: true` gets server-sent events with content and tool-call arguments
// split across chunks, the usage chunk when `stream_options.include_usage`, then [DONE].
#[tokio::test]
async fn stream_true_is_answered_with_server_sent_events() {
    let server = start(
        "steps:\n  - message: {content: Hello, tool_calls: [{name: ls, arguments: {dir: .}}]}\n",
    );
    let mut body = chat_body(0);
    body["stream"] = json!(true);
    body["stream_options"] = json!({"include_usage": true});
    let response = post(&server, &body).await;
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let text = response.text().await.unwrap();
    assert!(text.ends_with("data: [DONE]\n\n"), "{text}");
    let chunks: Vec<Value> = text
        .split("\n\n")
        .filter_map(|event| event.strip_prefix("data: "))
        .filter(|data| *data != "[DONE]")
        .map(|data| serde_json::from_str(data).unwrap())
        .collect();
    let content: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, "Hello");
    let arguments: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str())
        .collect();
    assert_eq!(arguments, r#"{"dir":"."}"#);
    let finish: Vec<&Value> = chunks
        .iter()
        .map(|c| &c["choices"][0]["finish_reason"])
        .filter(|f| !f.is_null())
        .collect();
    assert_eq!(finish, [&json!("tool_calls")]);
    assert_eq!(chunks.last().unwrap()["choices"], json!([]));
    assert_eq!(chunks.last().unwrap()["usage"]["total_tokens"], 15);
}

#[tokio::test]
async fn both_base_urls_serve_chat_completions() {
    let server = start("steps:\n  - message: {content: a}\n  - message: {content: b}\n");
    let root = format!("http://127.0.0.1:{}", server.port());
    let with_v1 = client()
        .post(format!("{root}/v1/chat/completions"))
        .json(&chat_body(0))
        .send()
        .await
        .unwrap();
    assert_eq!(with_v1.status().as_u16(), 200);
    let without = client()
        .post(format!("{root}/chat/completions"))
        .json(&chat_body(0))
        .send()
        .await
        .unwrap();
    assert_eq!(without.status().as_u16(), 200);
    let paths: Vec<_> = server.recorded().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/v1/chat/completions", "/chat/completions"]);
    assert_eq!(
        server.base_url(),
        format!("http://127.0.0.1:{}/v1", server.port())
    );
}

#[tokio::test]
async fn models_lists_the_script_models_or_mock_model() {
    let named = start("models: [gpt-a, gpt-b]\nsteps: []\n");
    let listed = get_json(&format!("{}/models", named.base_url())).await;
    assert_eq!(
        listed,
        json!({"object": "list", "data": [
            {"id": "gpt-a", "object": "model", "created": mock_llm::CREATED, "owned_by": "mock-llm"},
            {"id": "gpt-b", "object": "model", "created": mock_llm::CREATED, "owned_by": "mock-llm"},
        ]})
    );

    let unnamed = start("steps: []\n");
    let listed = get_json(&format!("http://127.0.0.1:{}/models", unnamed.port())).await;
    assert_eq!(listed["data"][0]["id"], "mock-model");
    assert!(
        unnamed.requests().is_empty(),
        "model listings are not chat requests"
    );
}

#[tokio::test]
async fn unknown_routes_get_json_404_and_wrong_methods_json_405() {
    let server = start("steps: []\n");
    let missing = client()
        .get(format!("{}/embeddings", server.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status().as_u16(), 404);
    let body: Value = missing.json().await.unwrap();
    assert_eq!(
        body["error"]["message"],
        "mock-llm: no route for GET /v1/embeddings; mock-llm serves POST /v1/chat/completions, \
         POST /v1/messages, POST /v1/responses (each also without /v1), GET /v1/models and \
         GET /models"
    );
    let wrong_method = client()
        .get(format!("{}/chat/completions", server.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong_method.status().as_u16(), 405);
    let body: Value = wrong_method.json().await.unwrap();
    assert_eq!(body["error"]["code"], "method_not_allowed");
}

#[tokio::test]
async fn record_file_holds_one_line_per_request_and_never_the_api_key() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("requests.jsonl");
    let script =
        Script::from_yaml_str("steps:\n  - message: {content: a}\n  - error: {status: 500}\n")
            .unwrap();
    let server = MockServer::start_with(
        script,
        ServerOptions {
            record_file: Some(record.clone()),
            ..ServerOptions::default()
        },
    )
    .unwrap();
    let secret = "sk-test-canary-5f1e2d3c";
    let url = format!("{}/chat/completions", server.base_url());
    client()
        .post(&url)
        .bearer_auth(secret)
        .json(&chat_body(1))
        .send()
        .await
        .unwrap();
    client()
        .post(&url)
        .json(&chat_body(0))
        .send()
        .await
        .unwrap();
    client()
        .post(&url)
        .bearer_auth(secret)
        .body("not json")
        .send()
        .await
        .unwrap();

    let text = std::fs::read_to_string(&record).unwrap();
    assert!(!text.contains(secret), "the API key leaked: {text}");
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            json!({"index": 0, "step": 0, "path": "/v1/chat/completions",
                   "body": chat_body(1), "has_authorization": true}),
            json!({"index": 1, "step": 1, "path": "/v1/chat/completions",
                   "body": chat_body(0), "has_authorization": false}),
            json!({"index": 2, "step": null, "path": "/v1/chat/completions",
                   "body": "not json", "has_authorization": true}),
        ]
    );
    assert_eq!(
        server.requests(),
        [chat_body(1), chat_body(0), json!("not json")]
    );
    let in_memory = serde_json::to_string(&server.recorded()).unwrap();
    assert!(!in_memory.contains(secret));
}

#[tokio::test]
async fn keep_requests_off_keeps_nothing_in_memory() {
    let server = MockServer::start_with(
        Script::from_yaml_str("steps:\n  - message: {content: a}\n").unwrap(),
        ServerOptions {
            keep_requests: false,
            ..ServerOptions::default()
        },
    )
    .unwrap();
    let (status, _) = post_json(&server, &chat_body(0)).await;
    assert_eq!(status, 200);
    assert!(server.requests().is_empty());
}

#[test]
fn record_file_in_a_missing_directory_fails_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing").join("requests.jsonl");
    let err = MockServer::start_with(
        Script::from_yaml_str("steps: []\n").unwrap(),
        ServerOptions {
            record_file: Some(path.clone()),
            ..ServerOptions::default()
        },
    )
    .unwrap_err();
    assert!(matches!(&err, ServerError::RecordFile { path: p, .. } if *p == path));
    assert!(
        err.to_string()
            .starts_with(&format!("cannot create record file {}: ", path.display())),
        "{err}"
    );
}

#[test]
fn a_busy_port_fails_to_start() {
    let first = start("steps: []\n");
    let err = MockServer::start_with(
        Script::from_yaml_str("steps: []\n").unwrap(),
        ServerOptions {
            addr: first.addr(),
            ..ServerOptions::default()
        },
    )
    .unwrap_err();
    assert!(matches!(err, ServerError::Bind { addr, .. } if addr == first.addr()));
}

/// Engine end-to-end tests are synchronous (assert_cmd): the server must work without a
/// runtime in the test, and stop when dropped.
#[test]
fn works_from_synchronous_code_and_stops_on_drop() {
    let server = start("steps:\n  - message: {content: sync}\n");
    let addr = server.addr();
    let body = chat_body(0).to_string();
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(
        stream,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    let (_, json_body) = response.split_once("\r\n\r\n").unwrap();
    let completion: Value = serde_json::from_str(json_body).unwrap();
    assert_eq!(content(&completion), "sync");

    drop(server);
    assert!(std::net::TcpStream::connect(addr).is_err());
}
