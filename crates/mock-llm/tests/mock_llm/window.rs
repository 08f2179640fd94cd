//! `context_window`: requests over the window get a server's context-length error, use
//! up no step, and are recorded with `step: null`.

use mock_llm::{
    ContextWindow, MockServer, OverflowShape, ReadScript as _, Script, ServerOptions, prompt_tokens,
};
use serde_json::{Value, json};

use crate::support::post_json;

fn start(shape: OverflowShape, tokens: u64) -> MockServer {
    let script = Script::from_yaml_str("steps:\n  - message: {content: fits}\n").unwrap();
    MockServer::start_with(
        script,
        ServerOptions {
            context_window: Some(ContextWindow { tokens, shape }),
            ..ServerOptions::default()
        },
    )
    .unwrap()
}

fn body(text: &str) -> Value {
    json!({"model": "m", "messages": [{"role": "user", "content": text}]})
}

fn size(body: &Value) -> u64 {
    prompt_tokens(serde_json::to_vec(body).unwrap().len())
}

#[tokio::test]
async fn a_request_over_the_window_gets_the_shape_asked_for_and_no_step() {
    let long = body(&"x".repeat(400));
    let over = size(&long);
    let cases = [
        (
            OverflowShape::OpenAi,
            json!({"error": {
                "message": format!("This model's maximum context length is 50 tokens. However, your messages resulted in {over} tokens. Please reduce the length of the messages."),
                "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}),
        ),
        (
            OverflowShape::Vllm,
            json!({"object": "error",
                "message": format!("This model's maximum context length is 50 tokens. However, you requested {over} tokens in the messages, Please reduce the length of the messages."),
                "type": "BadRequestError", "param": null, "code": 400}),
        ),
        (
            OverflowShape::LlamaCpp,
            json!({"error": {"code": 400,
                "message": format!("request ({over} tokens) exceeds the available context size (50 tokens), try increasing it"),
                "type": "exceed_context_size_error", "n_prompt_tokens": over, "n_ctx": 50}}),
        ),
        (
            OverflowShape::LlamaCppLegacy,
            json!({"error": {"code": 400,
                "message": "the request exceeds the available context size. try increasing the context size or enable context shift",
                "type": "invalid_request_error"}}),
        ),
    ];
    for (shape, expected) in cases {
        let server = start(shape, 50);
        assert_eq!(post_json(&server, &long).await, (400, expected), "{shape}");
        // The rejected request used no step: the next one that fits gets step 0.
        let (status, answer) = post_json(&server, &body("hi")).await;
        assert_eq!(status, 200, "{shape}");
        assert_eq!(answer["id"], "chatcmpl-mock-0");
        let steps: Vec<Option<u64>> = server.recorded().iter().map(|r| r.step).collect();
        assert_eq!(steps, [None, Some(0)], "{shape}");
    }
}

#[tokio::test]
async fn a_request_exactly_at_the_window_is_answered() {
    let request = body("just enough");
    let server = start(OverflowShape::OpenAi, size(&request));
    assert_eq!(post_json(&server, &request).await.0, 200);
}
