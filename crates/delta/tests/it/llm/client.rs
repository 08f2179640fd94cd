//! The HTTP client against real servers on 127.0.0.1: wiremock for scripted answers, raw
//! TCP listeners for broken connections.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use delta_engine::llm::{
    AttemptFailure, AttemptRecord, CallProgress, ClientSettings, Credentials, LlmClient, LlmError,
    TokenUsage, ToolCall,
};
use serde_json::{Value, json};

use crate::support::snapshot::snapshot;
use tokio::net::TcpListener;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-test-7Hq2SECRETk3y";

/// Fast retries so the suite stays quick; the cap leaves room for a 1 s `Retry-After`.
fn settings(max_attempts: u32) -> ClientSettings {
    ClientSettings {
        request_timeout: Duration::from_secs(5),
        max_attempts,
        backoff_base: Duration::from_millis(1),
        backoff_max: Duration::from_secs(2),
    }
}

fn client(base_url: &str, key: Option<&str>, settings: ClientSettings) -> LlmClient {
    let credentials = Credentials::new(base_url, key.map(str::to_owned)).unwrap();
    LlmClient::new(credentials, settings).unwrap()
}

fn server_client(server: &MockServer, settings: ClientSettings) -> LlmClient {
    client(&format!("{}/v1", server.uri()), Some(KEY), settings)
}

fn completion_json() -> Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "gpt-4o-2024-08-06",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "Listing files first.",
                "tool_calls": [
                    {"id": "call_a", "type": "function",
                     "function": {"name": "list_files", "arguments": "{\"directory\": \".\"}"}},
                    {"id": "call_b", "type": "function",
                     "function": {"name": "read_file", "arguments": "{\"path\":\"a.txt\"}"}}
                ]
            },
            "finish_reason": "tool_calls"
        }],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
    })
}

fn ok() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(completion_json())
}

fn openai_error(status: u16, message: &str, code: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(json!({
        "error": {"message": message, "type": "invalid_request_error", "param": null, "code": code}
    }))
}

async fn mount(server: &MockServer, response: ResponseTemplate, times: Option<u64>) {
    let mock = Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(response);
    match times {
        Some(times) => mock.up_to_n_times(times).mount(server).await,
        None => mock.mount(server).await,
    }
}

async fn request_count(server: &MockServer) -> usize {
    server.received_requests().await.unwrap().len()
}

const BODY: &[u8] = br#"{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}"#;

#[tokio::test]
async fn a_success_yields_content_tool_calls_usage_and_the_raw_body() {
    let server = MockServer::start().await;
    mount(&server, ok(), None).await;

    let completion = server_client(&server, settings(5))
        .complete(BODY)
        .await
        .unwrap();

    assert_eq!(
        completion.message.content.as_deref(),
        Some("Listing files first.")
    );
    assert_eq!(
        completion.message.tool_calls,
        vec![
            ToolCall {
                id: "call_a".into(),
                name: "list_files".into(),
                arguments: "{\"directory\": \".\"}".into()
            },
            ToolCall {
                id: "call_b".into(),
                name: "read_file".into(),
                arguments: "{\"path\":\"a.txt\"}".into()
            },
        ]
    );
    assert_eq!(
        completion.usage,
        Some(TokenUsage {
            prompt_tokens: 120,
            completion_tokens: 30,
            total_tokens: 150,
            ..TokenUsage::default()
        })
    );
    assert_eq!(completion.model.as_deref(), Some("gpt-4o-2024-08-06"));
    assert_eq!(completion.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(
        serde_json::from_slice::<Value>(&completion.raw_body).unwrap(),
        completion_json()
    );
    assert!(completion.attempts.is_empty());
}

#[tokio::test]
async fn the_raw_body_is_kept_byte_for_byte() {
    let server = MockServer::start().await;
    let body = "{ \"choices\" : [ {\"message\": {\"content\": \"hé\"}} ] }\n";
    mount(
        &server,
        ResponseTemplate::new(200).set_body_raw(body, "application/json"),
        None,
    )
    .await;

    let completion = server_client(&server, settings(1))
        .complete(BODY)
        .await
        .unwrap();

    assert_eq!(completion.raw_body, body.as_bytes());
    assert_eq!(completion.message.content.as_deref(), Some("hé"));
    assert_eq!(completion.usage, None);
    assert_eq!(completion.model, None);
}

#[tokio::test]
async fn the_request_bytes_are_sent_verbatim_with_the_key() {
    let server = MockServer::start().await;
    mount(&server, ok(), None).await;
    // Odd spacing and key order: anything re-serialized would differ.
    let body = b"{\"z\":1,  \"model\" : \"m\",\"messages\":[]}\n";

    server_client(&server, settings(1))
        .complete(body)
        .await
        .unwrap();

    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.url.path(), "/v1/chat/completions");
    assert_eq!(request.body, body);
    assert_eq!(
        request.headers.get("authorization").unwrap(),
        &format!("Bearer {KEY}")
    );
    assert_eq!(
        request.headers.get("content-type").unwrap(),
        "application/json"
    );
}

#[tokio::test]
async fn without_a_key_no_authorization_header_is_sent() {
    let server = MockServer::start().await;
    mount(&server, ok(), None).await;

    client(&format!("{}/v1/", server.uri()), None, settings(1))
        .complete(BODY)
        .await
        .unwrap();

    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].headers.get("authorization").is_none());
}

#[tokio::test]
async fn server_errors_are_retried_until_success() {
    let server = MockServer::start().await;
    mount(
        &server,
        openai_error(500, "upstream overloaded", "server_error"),
        Some(2),
    )
    .await;
    mount(&server, ok(), None).await;

    let mut observed = Vec::new();
    let completion = server_client(&server, settings(5))
        .complete_observed(BODY, |progress| {
            if let CallProgress::Retry(record) = progress {
                observed.push(record.clone());
            }
        })
        .await
        .unwrap();

    assert_eq!(completion.message.tool_calls.len(), 2);
    assert_eq!(completion.attempts.len(), 2);
    for (index, record) in completion.attempts.iter().enumerate() {
        assert_eq!(record.attempt, u32::try_from(index).unwrap() + 1);
        assert_eq!(record.max_attempts, 5);
        assert_eq!(
            record.failure,
            AttemptFailure::Status {
                status: 500,
                message: "upstream overloaded".into()
            }
        );
        // Full jitter over base 1 ms, doubled per attempt.
        let wait = record.wait.unwrap();
        assert!(wait <= Duration::from_millis(1 << index), "{wait:?}");
    }
    assert_eq!(observed, completion.attempts);
    assert_eq!(request_count(&server).await, 3);
}

#[tokio::test]
async fn retry_after_seconds_sets_the_wait() {
    let server = MockServer::start().await;
    mount(
        &server,
        openai_error(429, "Rate limit reached", "rate_limit_exceeded")
            .insert_header("retry-after", "1"),
        Some(1),
    )
    .await;
    mount(
        &server,
        openai_error(503, "warming up", "unavailable").insert_header("retry-after", "0"),
        Some(1),
    )
    .await;
    mount(&server, ok(), None).await;

    let completion = server_client(&server, settings(5))
        .complete(BODY)
        .await
        .unwrap();

    let waits: Vec<_> = completion
        .attempts
        .iter()
        .map(|record| record.wait)
        .collect();
    assert_eq!(waits, [Some(Duration::from_secs(1)), Some(Duration::ZERO)]);
    assert_eq!(
        completion.attempts[0].to_string(),
        "retry 1/4 in 1 s after HTTP 429: Rate limit reached"
    );
}

#[tokio::test]
async fn a_retry_after_longer_than_the_limit_fails_at_once() {
    let server = MockServer::start().await;
    mount(
        &server,
        openai_error(429, "Rate limit reached", "rate_limit_exceeded")
            .insert_header("retry-after", "3600"),
        None,
    )
    .await;

    let error = server_client(&server, settings(5))
        .complete(BODY)
        .await
        .unwrap_err();

    let LlmError::Http {
        status, message, ..
    } = &error
    else {
        panic!("expected Http, got {error:?}");
    };
    assert_eq!(*status, 429);
    assert_eq!(
        message,
        "Rate limit reached (the server asks to wait 3600 s before retrying, longer than the 2 s \
         this client waits)"
    );
    assert_eq!(error.attempts().len(), 1);
    assert_eq!(request_count(&server).await, 1);
}

#[tokio::test]
async fn an_exhausted_quota_is_not_retried() {
    let server = MockServer::start().await;
    mount(
        &server,
        openai_error(429, "You exceeded your current quota", "insufficient_quota"),
        None,
    )
    .await;

    let error = server_client(&server, settings(5))
        .complete(BODY)
        .await
        .unwrap_err();

    assert!(
        matches!(error, LlmError::Http { status: 429, .. }),
        "{error:?}"
    );
    assert_eq!(request_count(&server).await, 1);
}

#[tokio::test]
async fn unauthorized_fails_at_once_with_the_server_message() {
    let server = MockServer::start().await;
    mount(
        &server,
        openai_error(401, "Incorrect API key provided.", "invalid_api_key"),
        None,
    )
    .await;

    let error = server_client(&server, settings(5))
        .complete(BODY)
        .await
        .unwrap_err();

    let url = format!("{}/v1/chat/completions", server.uri());
    let LlmError::Http {
        status,
        message,
        attempts,
        ..
    } = &error
    else {
        panic!("expected Http, got {error:?}");
    };
    assert_eq!(*status, 401);
    assert_eq!(message, "Incorrect API key provided.");
    assert_eq!(
        attempts,
        &[AttemptRecord {
            attempt: 1,
            max_attempts: 5,
            failure: AttemptFailure::Status {
                status: 401,
                message: "Incorrect API key provided.".into()
            },
            wait: None,
        }]
    );
    assert_eq!(
        error.to_string(),
        format!(
            "the LLM API at {url} answered HTTP 401: Incorrect API key provided. (1 attempt(s)); \
             check the API key in DELTA_API_KEY (or OPENAI_API_KEY) and that it may use this model"
        )
    );
    assert_eq!(request_count(&server).await, 1);
}

#[tokio::test]
async fn error_messages_are_read_from_common_error_bodies() {
    for (body, expected) in [
        (json!({"error": "model not found"}), "model not found"),
        (json!({"message": "bad temperature"}), "bad temperature"),
        (json!({"detail": "Not Found"}), "Not Found"),
    ] {
        let server = MockServer::start().await;
        mount(
            &server,
            ResponseTemplate::new(404).set_body_json(body),
            None,
        )
        .await;
        let error = server_client(&server, settings(3))
            .complete(BODY)
            .await
            .unwrap_err();
        assert!(
            matches!(&error, LlmError::Http { status: 404, message, .. } if message == expected),
            "{error:?}"
        );
    }

    let server = MockServer::start().await;
    mount(&server, ResponseTemplate::new(400), None).await;
    let error = server_client(&server, settings(3))
        .complete(BODY)
        .await
        .unwrap_err();
    assert!(
        matches!(&error, LlmError::Http { status: 400, message, .. } if message == "Bad Request"),
        "{error:?}"
    );
}

#[tokio::test]
async fn persistent_server_errors_end_as_http_errors_after_every_attempt() {
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(503).set_body_string("busy"),
        None,
    )
    .await;

    let error = server_client(&server, settings(3))
        .complete(BODY)
        .await
        .unwrap_err();

    assert!(matches!(&error, LlmError::Http { status: 503, message, .. } if message == "busy"));
    let waits: Vec<_> = error
        .attempts()
        .iter()
        .map(|record| record.wait.is_some())
        .collect();
    assert_eq!(waits, [true, true, false]);
    assert_eq!(
        error.attempts()[2].to_string(),
        "attempt 3/3 failed: HTTP 503: busy"
    );
    assert_eq!(request_count(&server).await, 3);
}

#[tokio::test]
async fn a_redirect_is_reported_not_followed() {
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(308).insert_header("location", "https://elsewhere.example/v1"),
        None,
    )
    .await;

    let error = server_client(&server, settings(3))
        .complete(BODY)
        .await
        .unwrap_err();

    assert!(
        matches!(&error, LlmError::Http { status: 308, message, .. }
            if message == "redirected to https://elsewhere.example/v1"),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .ends_with("set DELTA_BASE_URL to the final address")
    );
}

#[tokio::test]
async fn a_garbage_success_body_is_malformed() {
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(200).set_body_string("<html>\n<body>It works!</body>\n</html>"),
        None,
    )
    .await;

    let error = server_client(&server, settings(3))
        .complete(BODY)
        .await
        .unwrap_err();

    let LlmError::MalformedResponse {
        status,
        reason,
        excerpt,
        attempts,
        ..
    } = &error
    else {
        panic!("expected MalformedResponse, got {error:?}");
    };
    assert_eq!(*status, 200);
    assert!(reason.starts_with("not JSON: "), "{reason}");
    assert_eq!(excerpt, "<html> <body>It works!</body> </html>");
    assert!(attempts.is_empty());
    assert!(error.to_string().ends_with(
        "check that DELTA_BASE_URL points at an OpenAI-compatible API (usually ending in /v1)"
    ));
    // Not retried: the server answered, just not with a completion.
    assert_eq!(request_count(&server).await, 1);
}

#[tokio::test]
async fn json_of_the_wrong_shape_is_malformed() {
    for (body, reason) in [
        (json!({"object": "list", "data": []}), "no choices"),
        (
            json!({"choices": [{"message": {"content": ["a"]}}]}),
            "unexpected shape: invalid type: sequence, expected a string",
        ),
    ] {
        let server = MockServer::start().await;
        mount(
            &server,
            ResponseTemplate::new(200).set_body_json(body),
            None,
        )
        .await;
        let error = server_client(&server, settings(1))
            .complete(BODY)
            .await
            .unwrap_err();
        assert!(
            matches!(&error, LlmError::MalformedResponse { reason: actual, .. } if actual.starts_with(reason)),
            "{error:?} should start with {reason:?}"
        );
    }
}

// Issue 12, item 16: a malformed `usage` no longer fails an otherwise valid completion;
// its usage is unknown.
#[tokio::test]
async fn a_malformed_usage_keeps_the_completion_with_unknown_usage() {
    let server = MockServer::start().await;
    let body = json!({"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": -1}});
    mount(
        &server,
        ResponseTemplate::new(200).set_body_json(body),
        None,
    )
    .await;
    let completion = server_client(&server, settings(1))
        .complete(BODY)
        .await
        .unwrap();
    assert_eq!(completion.message.content.as_deref(), Some("x"));
    assert_eq!(completion.usage, None);
}

/// Accepts connections and closes each at once, counting them.
async fn closing_server() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&accepted);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (format!("http://{address}/v1"), accepted)
}

#[tokio::test]
async fn a_connection_closed_without_answer_is_retried_then_unreachable() {
    let (base_url, accepted) = closing_server().await;

    let error = client(&base_url, Some(KEY), settings(3))
        .complete(BODY)
        .await
        .unwrap_err();

    let LlmError::Unreachable { url, attempts, .. } = &error else {
        panic!("expected Unreachable, got {error:?}");
    };
    assert_eq!(url, &format!("{base_url}/chat/completions"));
    assert_eq!(attempts.len(), 3);
    assert!(
        attempts
            .iter()
            .all(|record| matches!(record.failure, AttemptFailure::Connection { .. }))
    );
    assert_eq!(
        attempts
            .iter()
            .map(|record| record.wait.is_some())
            .collect::<Vec<_>>(),
        [true, true, false]
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 3);
    let message = error.to_string();
    assert!(
        message.starts_with(&format!(
            "cannot reach the LLM API at {url} (3 attempt(s); last: connection failed: "
        )),
        "{message}"
    );
    assert!(message.ends_with(
        "is the server running? check DELTA_BASE_URL (or OPENAI_BASE_URL) and the network"
    ));
}

#[tokio::test]
async fn nothing_listening_is_unreachable() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);

    let error = client(&format!("http://{address}/v1"), None, settings(2))
        .complete(BODY)
        .await
        .unwrap_err();

    let LlmError::Unreachable { attempts, .. } = &error else {
        panic!("expected Unreachable, got {error:?}");
    };
    assert_eq!(attempts.len(), 2);
    let AttemptFailure::Connection { detail } = &attempts[1].failure else {
        panic!("expected a connection failure, got {:?}", attempts[1]);
    };
    // The detail is the OS's wording for ECONNREFUSED: a search.
    assert!(detail.contains("Connection refused"), "{detail}");
}

#[tokio::test]
async fn a_timed_out_attempt_is_retried() {
    let server = MockServer::start().await;
    mount(&server, ok().set_delay(Duration::from_secs(10)), Some(1)).await;
    mount(&server, ok(), None).await;
    let settings = ClientSettings {
        request_timeout: Duration::from_millis(300),
        ..settings(3)
    };

    let completion = server_client(&server, settings)
        .complete(BODY)
        .await
        .unwrap();

    assert_eq!(completion.attempts.len(), 1);
    assert_eq!(
        completion.attempts[0].failure,
        AttemptFailure::Timeout {
            after: Duration::from_millis(300)
        }
    );
    assert_eq!(completion.message.tool_calls.len(), 2);
}

// Issue 11: a slow reasoning model must not be billed five times; a timed-out request is
// retried once, whatever the attempt budget, and the error names the setting to raise.
#[tokio::test]
async fn timing_out_every_time_is_a_timeout_error_after_one_retry() {
    let server = MockServer::start().await;
    mount(&server, ok().set_delay(Duration::from_secs(10)), None).await;
    let settings = ClientSettings {
        request_timeout: Duration::from_millis(200),
        ..settings(5)
    };

    let error = server_client(&server, settings)
        .complete(BODY)
        .await
        .unwrap_err();

    assert!(
        matches!(&error, LlmError::Timeout { timeout, attempts, .. }
            if *timeout == Duration::from_millis(200) && attempts.len() == 2),
        "{error:?}"
    );
    snapshot!(error, @"the LLM API at http://127.0.0.1:[PORT]/v1/chat/completions did not respond within 200 ms (2 attempt(s); a timed-out request is retried once only, since the server may still be computing it); the model may be slow to load or to think: raise DELTA_LLM_TIMEOUT_MS (milliseconds per attempt, now 200) or try again later");
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn the_key_never_appears_in_errors() {
    // A careless server echoes the key it was sent in every kind of answer.
    let echo = format!("invalid key {KEY} (Bearer {KEY})");
    let cases = [
        ResponseTemplate::new(401).set_body_json(json!({"error": {"message": echo}})),
        ResponseTemplate::new(500).set_body_string(echo.clone()),
        ResponseTemplate::new(200).set_body_string(echo.clone()),
        ResponseTemplate::new(200)
            .set_body_json(json!({"choices": [{"message": {"content": 1}}], "k": echo})),
        ResponseTemplate::new(200).set_body_json(json!({"error": {"message": echo}})),
    ];
    for (case, response) in cases.into_iter().enumerate() {
        let server = MockServer::start().await;
        mount(&server, response, None).await;
        let client = server_client(&server, settings(2));
        let error = client.complete(BODY).await.unwrap_err();
        snapshot!(format!("redacted_{case}"), error);
        // Debug output is the types' internals, not a contract: searched for the key.
        for text in [format!("{error:?}"), format!("{client:?}")] {
            assert!(!text.contains(KEY), "{text}");
        }
    }

    let (base_url, _) = closing_server().await;
    let error = client(&base_url, Some(KEY), settings(1))
        .complete(BODY)
        .await
        .unwrap_err();
    // The message ends with the HTTP client's wording for the closed connection: a search.
    assert!(!format!("{error} {error:?}").contains(KEY));
}

#[tokio::test]
async fn resolved_credentials_authorize_requests() {
    let server = MockServer::start().await;
    mount(&server, ok(), None).await;
    let workspace = tempfile::tempdir().unwrap();
    let agent = tempfile::tempdir().unwrap();
    std::fs::write(
        workspace.path().join(".env"),
        format!(
            "DELTA_BASE_URL={}/v1\nDELTA_API_KEY=sk-from-workspace\n",
            server.uri()
        ),
    )
    .unwrap();
    std::fs::write(agent.path().join(".env"), "DELTA_API_KEY=sk-from-agent\n").unwrap();

    let credentials =
        delta_engine::llm::resolve_credentials(workspace.path(), agent.path(), |_| None).unwrap();
    LlmClient::new(credentials, settings(1))
        .unwrap()
        .complete(BODY)
        .await
        .unwrap();

    let requests = server.received_requests().await.unwrap();
    assert_eq!(
        requests[0].headers.get("authorization").unwrap(),
        "Bearer sk-from-workspace"
    );
}

#[test]
fn calls_can_be_spawned_on_a_multithreaded_runtime() {
    fn assert_send<T: Send>(_: T) {}
    let client = client("http://127.0.0.1:9/v1", Some(KEY), settings(1));
    assert_send(client.complete(BODY));
    assert_send(client.complete_observed(BODY, |_| {}));
}

/// The invocation's `response.json` keeps the body a call failed on, byte for byte.
#[tokio::test]
async fn a_failed_call_carries_the_body_it_failed_on_exactly() {
    let body = " {\"error\": {\"message\": \"bad model\"}}\n\t";
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(400).set_body_string(body),
        None,
    )
    .await;
    let error = server_client(&server, settings(3))
        .complete(BODY)
        .await
        .unwrap_err();
    assert!(
        matches!(error, LlmError::Http { status: 400, .. }),
        "{error}"
    );
    assert_eq!(error.response_body(), Some(body.as_bytes()));

    let garbage = b"\xff<html>\n502 Bad Gateway</html>";
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(200).set_body_bytes(garbage.to_vec()),
        None,
    )
    .await;
    let error = server_client(&server, settings(3))
        .complete(BODY)
        .await
        .unwrap_err();
    assert!(
        matches!(error, LlmError::MalformedResponse { .. }),
        "{error}"
    );
    assert_eq!(error.response_body(), Some(&garbage[..]));
}

/// After retries, the body is that of the last answer.
#[tokio::test]
async fn a_call_failing_after_retries_carries_the_last_answer() {
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(500).set_body_string("first"),
        Some(1),
    )
    .await;
    mount(
        &server,
        ResponseTemplate::new(503).set_body_string("second"),
        None,
    )
    .await;
    let error = server_client(&server, settings(2))
        .complete(BODY)
        .await
        .unwrap_err();
    assert!(
        matches!(error, LlmError::Http { status: 503, .. }),
        "{error}"
    );
    assert_eq!(error.response_body(), Some(&b"second"[..]));
}

/// Nothing arrived, so there is no body to keep.
#[tokio::test]
async fn a_call_that_got_no_answer_carries_no_body() {
    let (base_url, _) = closing_server().await;
    let error = client(&base_url, Some(KEY), settings(2))
        .complete(BODY)
        .await
        .unwrap_err();
    assert!(matches!(error, LlmError::Unreachable { .. }), "{error}");
    assert_eq!(error.response_body(), None);
}

/// A kept body is as received (the engine redacts the key when it writes the file), and
/// its `Debug` shows only its length, so printing the error cannot leak an echoed key.
#[tokio::test]
async fn a_kept_body_is_as_received_and_its_debug_shows_only_its_length() {
    let echo = format!("invalid key {KEY}.");
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(401).set_body_string(echo.clone()),
        None,
    )
    .await;
    let error = server_client(&server, settings(1))
        .complete(BODY)
        .await
        .unwrap_err();
    assert_eq!(error.response_body(), Some(echo.as_bytes()));
    // Debug output is the types' internals, not a contract: searched.
    let debug = format!("{error:?}");
    assert!(
        debug.contains(&format!("ResponseBody({} bytes)", echo.len())),
        "{debug}"
    );
    assert!(!debug.contains(KEY), "{debug}");
}

// Issue 27: Anthropic's client sends its key as `x-api-key` with `anthropic-version`, and an
// `overloaded_error` inside a 2xx stream is retried like the 529 it stands for (digest A4).
#[tokio::test]
async fn an_anthropic_stream_that_reports_overloaded_is_retried() {
    use delta_engine::llm::ModelApi;
    use wiremock::matchers::header;

    let server = MockServer::start().await;
    let overloaded = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", KEY))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(overloaded),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    let message = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "Hello."}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 5, "cache_read_input_tokens": 2000, "cache_creation_input_tokens": 0, "output_tokens": 3}});
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", KEY))
        .respond_with(ResponseTemplate::new(200).set_body_json(message))
        .mount(&server)
        .await;
    let credentials =
        Credentials::for_api(ModelApi::Anthropic, &server.uri(), Some(KEY.to_owned())).unwrap();
    let client = LlmClient::new(credentials, settings(3)).unwrap();
    assert_eq!(client.endpoint(), format!("{}/v1/messages", server.uri()));
    let completion = client.complete(b"{}").await.unwrap();
    assert_eq!(completion.message.content.as_deref(), Some("Hello."));
    assert_eq!(completion.attempts.len(), 1);
    assert_eq!(
        completion.attempts[0].failure.to_string(),
        "HTTP 529: Overloaded"
    );
    let usage = completion.usage.unwrap();
    assert_eq!((usage.prompt_tokens, usage.cached_tokens), (2005, 2000));
}
