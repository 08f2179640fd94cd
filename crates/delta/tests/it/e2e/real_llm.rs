//! The exchange `scripts/real-llm-smoke.sh` recorded with a real model (llama-cpp-python
//! 0.3.36, `--chat_format chatml-function-calling`, SmolLM2-135M-Instruct), replayed
//! against `mock-llm --strict llama-cpp` (issue 11). The real server accepted every one
//! of those requests, so the strict profile must too; and the engine, given the same
//! answers, must send the same requests again.

use std::path::Path;

use mock_llm::{
    MockProfile, MockServer, ReadScript as _, Script, ServerOptions, StrictProfile as _,
};
use serde_json::{Value, json};

use crate::support::harness::{ROOT, Test};
use crate::support::run::{assert_consistent, delta, hello_world, only_run};

const FIXTURE: &str = "fixtures/real-llm/llama-cpp-smollm2/exchange.json";

pub(crate) fn fixture() -> Value {
    let text = std::fs::read_to_string(Path::new(ROOT).join(FIXTURE)).expect("read the fixture");
    serde_json::from_str(&text).expect("the fixture is JSON")
}

/// A sequential mock script answering with the recorded responses, tool-call ids and
/// argument text exactly as the real server sent them.
pub(crate) fn script(exchange: &[Value]) -> Script {
    let steps: Vec<Value> = exchange
        .iter()
        .map(|pair| {
            let choice = &pair["response"]["choices"][0];
            let message = &choice["message"];
            let mut step = json!({
                "finish_reason": choice["finish_reason"],
                "usage": {
                    "prompt_tokens": pair["response"]["usage"]["prompt_tokens"],
                    "completion_tokens": pair["response"]["usage"]["completion_tokens"],
                },
            });
            if let Some(content) = message["content"].as_str() {
                step["content"] = json!(content);
            }
            if let Some(calls) = message["tool_calls"].as_array() {
                step["tool_calls"] = calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call["id"],
                            "name": call["function"]["name"],
                            "arguments": call["function"]["arguments"],
                        })
                    })
                    .collect();
            }
            json!({"message": step})
        })
        .collect();
    Script::from_json_str(&json!({"steps": steps}).to_string()).expect("a valid script")
}

/// A request without the text of tool observations, which quotes the system's `ls`.
fn shape(request: &Value) -> Value {
    let mut request = request.clone();
    for message in request["messages"].as_array_mut().expect("messages") {
        if message["role"] == "tool" {
            message["content"] = json!("…");
        }
    }
    request
}

/// The hello-world example as `scripts/real-llm-smoke.sh` pointed it at the local model.
pub(crate) fn smollm2_agent(test: Test) -> Test {
    let agent_yaml =
        std::fs::read_to_string(Path::new(ROOT).join("examples/hello-world/agent.yaml"))
            .expect("read the example")
            .replace(
                "  model: gpt-4o-mini\n",
                "  model: smollm2\n  temperature: 0\n  max_tokens: 256\n",
            );
    hello_world(test).file("agent/agent.yaml", &agent_yaml)
}

#[test]
fn every_request_the_real_server_accepted_passes_the_strict_llama_cpp_profile() {
    let fixture = fixture();
    let exchange = fixture["exchange"].as_array().expect("exchange");
    assert!(exchange.len() >= 2, "the fixture holds a tool-calling run");
    for (index, pair) in exchange.iter().enumerate() {
        assert_eq!(
            MockProfile::LlamaCpp.check(&pair["request"]),
            Ok(()),
            "request {index}"
        );
        assert!(MockProfile::LlamaCpp.offers_tools(&pair["request"]));
    }
    // The same request with `null` content beside the tool calls is what the real
    // server refused with HTTP 500 before the fix.
    let mut old = exchange[1]["request"].clone();
    old["messages"][2]["content"] = Value::Null;
    assert_eq!(
        MockProfile::LlamaCpp.check(&old).map_err(|r| r.status),
        Err(500)
    );
}

#[test]
fn the_recorded_real_exchange_replays_against_the_strict_llama_cpp_profile() {
    let fixture = fixture();
    let exchange = fixture["exchange"].as_array().expect("exchange");
    let mock = MockServer::start_with(
        script(exchange),
        ServerOptions {
            strict: Some(MockProfile::LlamaCpp),
            ..ServerOptions::default()
        },
    )
    .expect("start mock-llm");
    let task = fixture["task"].as_str().expect("task");
    let status = fixture["status"].as_str().expect("status");
    let max_iterations = exchange.len().to_string();
    let run = delta(smollm2_agent(Test::new()), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "--max-iterations"])
        .arg(&max_iterations)
        .args(["-m", task])
        .run()
        .code(if status == "COMPLETED" { 0 } else { 1 });
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, status);
    assert!(
        files.types().iter().any(|t| t == "ACTION_RESULT"),
        "a tool was called"
    );
    let sent: Vec<Value> = mock.requests().iter().map(shape).collect();
    let recorded: Vec<Value> = exchange
        .iter()
        .map(|pair| shape(&pair["request"]))
        .collect();
    assert_eq!(sent, recorded);
}
