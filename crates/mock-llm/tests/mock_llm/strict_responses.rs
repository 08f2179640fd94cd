//! `--strict responses`: OpenAI Responses requests validated as the service does (the
//! rules of the digest's §D2, cited in `src/strict/responses.rs`), answers in the Responses
//! shape, encrypted reasoning items that must come back unchanged (issue 27).

use mock_llm::{MockProfile, MockServer, ReadScript as _, Script, ServerOptions};
use serde_json::{Value, json};

use crate::support::{BEARER, events, post_responses, post_text, post_to};

const TOOL_LOOP: &str = "mode: by_conversation\nsteps:\n  - message:\n      content: Let me look.\n      reasoning: I should list the files.\n      tool_calls: [{name: ls, arguments: {dir: .}}]\n  - message: {content: done}\n";

fn strict(yaml: &str) -> MockServer {
    MockServer::start_with(
        Script::from_yaml_str(yaml).unwrap(),
        ServerOptions {
            strict: Some(MockProfile::Responses),
            ..ServerOptions::default()
        },
    )
    .unwrap()
}

fn first_request() -> Value {
    json!({
        "model": "gpt-5",
        "instructions": "Be brief.",
        "input": [{"type": "message", "role": "user", "content": "list"}],
        "tools": [{"type": "function", "name": "ls", "description": "list", "parameters": {"type": "object", "properties": {"dir": {"type": "string"}}}, "strict": false}],
        "tool_choice": "auto",
        "store": false,
        "include": ["reasoning.encrypted_content"],
        "reasoning": {"effort": "low", "summary": "auto"},
    })
}

/// The answer's output items as the next request's input (without `status`), then the
/// tool's output.
fn second_request(answer: &Value) -> Value {
    let mut body = first_request();
    let mut input = vec![json!({"type": "message", "role": "user", "content": "list"})];
    for item in answer["output"].as_array().unwrap() {
        let mut item = item.clone();
        item.as_object_mut().unwrap().remove("status");
        if item["type"] == "message" {
            item["content"][0]
                .as_object_mut()
                .unwrap()
                .remove("logprobs");
        }
        input.push(item);
    }
    let call_id = answer["output"][2]["call_id"].clone();
    input.push(json!({"type": "function_call_output", "call_id": call_id, "output": "a.txt"}));
    body["input"] = json!(input);
    body
}

#[tokio::test]
async fn a_reasoning_tool_loop_passes_when_the_items_come_back_unchanged() {
    let server = strict(TOOL_LOOP);
    let (status, answer) = post_responses(&server, &first_request()).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["object"], "response");
    assert_eq!(answer["status"], "completed");
    let kinds: Vec<&str> = answer["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["reasoning", "message", "function_call"]);
    let reasoning = &answer["output"][0];
    assert!(
        reasoning["id"].as_str().unwrap().len() > 190,
        "ids are long"
    );
    assert_eq!(reasoning["summary"][0]["text"], "I should list the files.");
    assert!(
        reasoning["encrypted_content"]
            .as_str()
            .unwrap()
            .starts_with("gAAAAB")
    );
    assert_eq!(answer["output"][2]["call_id"], "call_0_0");
    assert_eq!(answer["output"][2]["arguments"], r#"{"dir":"."}"#);
    assert_eq!(
        answer["usage"]["output_tokens_details"]["reasoning_tokens"],
        5
    );
    let (status, done) = post_responses(&server, &second_request(&answer)).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["output"][1]["content"][0]["text"], "done");
}

#[tokio::test]
async fn an_altered_or_dropped_reasoning_item_is_refused_as_the_service_does() {
    let server = strict(TOOL_LOOP);
    let (_, answer) = post_responses(&server, &first_request()).await;
    let mut altered = second_request(&answer);
    let content = altered["input"][1]["encrypted_content"]
        .as_str()
        .unwrap()
        .replacen('a', "b", 1);
    altered["input"][1]["encrypted_content"] = json!(content);
    let (status, body) = post_responses(&server, &altered).await;
    assert_eq!(status, 400);
    let id = answer["output"][0]["id"].as_str().unwrap();
    assert_eq!(
        body["error"]["message"],
        format!("The encrypted content for item {id} could not be verified.")
    );
    let mut dropped = second_request(&answer);
    dropped["input"].as_array_mut().unwrap().remove(1);
    let (status, body) = post_responses(&server, &dropped).await;
    assert_eq!(status, 400);
    let message_id = answer["output"][1]["id"].as_str().unwrap();
    assert_eq!(
        body,
        json!({"error": {"message": format!("Item '{message_id}' of type 'message' was provided without its required 'reasoning' item: '{id}'."),
                         "type": "invalid_request_error", "param": "input", "code": null}})
    );
    let mut unencrypted = second_request(&answer);
    unencrypted["input"][1]
        .as_object_mut()
        .unwrap()
        .remove("encrypted_content");
    let (status, body) = post_responses(&server, &unencrypted).await;
    assert_eq!(status, 404);
    assert_eq!(
        body["error"]["message"],
        format!(
            "Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."
        )
    );
}

/// One broken request per rule of §D2 and the error the service gives.
#[tokio::test]
async fn each_rule_refuses_what_the_service_refuses() {
    let server = strict("steps:\n  - message: {content: ok}\n");
    let with = |edit: &dyn Fn(&mut Value)| {
        let mut body = json!({"model": "gpt-5", "input": [{"role": "user", "content": "hi"}]});
        edit(&mut body);
        body
    };
    let call =
        json!({"type": "function_call", "call_id": "call_1", "name": "ls", "arguments": "{}"});
    let output = json!({"type": "function_call_output", "call_id": "call_1", "output": "x"});
    let cases: Vec<(Value, &str, Option<&str>)> = vec![
        (
            with(&|b| {
                b.as_object_mut().unwrap().remove("model");
            }),
            "you must provide a model parameter",
            None,
        ),
        (
            with(&|b| b["messages"] = json!([])),
            "Unknown parameter: 'messages'.",
            Some("unknown_parameter"),
        ),
        (
            with(&|b| b["input"][0]["cache_control"] = json!({"type": "ephemeral"})),
            "Unknown parameter: 'input[0].cache_control'.",
            Some("unknown_parameter"),
        ),
        (
            with(&|b| {
                b["input"] =
                    json!([{"role": "assistant", "content": [{"type": "input_text", "text": "x"}]}])
            }),
            "Invalid value: 'input_text'. Supported values are: 'output_text' and 'refusal'.",
            Some("invalid_value"),
        ),
        (
            with(&|b| {
                b["input"] = json!([{"type": "function_call", "call_id": "c", "name": "ls"}])
            }),
            "Missing required parameter: 'input[0].arguments'.",
            None,
        ),
        (
            with(&|b| b["input"] = json!([output.clone()])),
            "No tool call found for function call output with call_id call_1.",
            None,
        ),
        (
            with(&|b| b["input"] = json!([call.clone()])),
            "No tool output found for function call call_1.",
            None,
        ),
        (
            with(&|b| {
                let mut long = call.clone();
                long["call_id"] = json!("c".repeat(65));
                b["input"] = json!([long]);
            }),
            "Invalid 'input[0].call_id': string too long. Expected a string with maximum length 64, but got a string with length 65 instead.",
            None,
        ),
        (
            with(&|b| {
                let mut done = call.clone();
                done["status"] = json!("completed");
                b["input"] = json!([done, output.clone()]);
            }),
            "Unknown parameter: 'input[0].status'.",
            Some("unknown_parameter"),
        ),
        (
            with(&|b| {
                b["tools"] =
                    json!([{"type": "function", "function": {"name": "ls", "parameters": {}}}])
            }),
            "Missing required parameter: 'tools[0].name'.",
            None,
        ),
        (
            with(&|b| b["previous_response_id"] = json!("resp_1")),
            "Previous response with id 'resp_1' not found.",
            Some("previous_response_not_found"),
        ),
        (
            with(&|b| b["temperature"] = json!(3)),
            "Invalid 'temperature': decimal out of range. Expected a value between 0 and 2, but got 3 instead.",
            Some("decimal_out_of_range"),
        ),
        (
            with(&|b| b["stream_options"] = json!({})),
            "Invalid value for 'stream_options': 'stream_options' is only allowed when 'stream' is true.",
            None,
        ),
        (
            with(&|b| {
                b["model"] = json!("gpt-4o-mini");
                b["include"] = json!(["reasoning.encrypted_content"]);
            }),
            "Encrypted content is not supported with this model.",
            None,
        ),
        (
            with(
                &|b| b["input"] = json!([{"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "x"}, {"role": "user", "content": "hi"}]),
            ),
            "The encrypted content for item rs_1 could not be verified.",
            None,
        ),
    ];
    for (body, message, code) in cases {
        let (status, answer) = post_responses(&server, &body).await;
        assert_eq!(status, 400, "{message}: {answer}");
        assert_eq!(answer["error"]["type"], "invalid_request_error");
        assert_eq!(answer["error"]["message"], message);
        assert_eq!(answer["error"]["code"].as_str(), code, "{message}");
    }
    // A string input, a system message and an output given as input parts all pass.
    let fine = with(&|b| {
        b["input"] = json!([{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}, call.clone(), {"type": "function_call_output", "call_id": "call_1", "output": [{"type": "input_text", "text": "x"}]}]);
    });
    assert_eq!(post_responses(&server, &fine).await.0, 200);
    let (status, answer) = post_to(&server, "/responses", &[], &with(&|_| {})).await;
    assert_eq!(
        (status, answer["error"]["code"].as_str()),
        (401, Some("invalid_api_key"))
    );
}

#[tokio::test]
async fn the_stream_is_numbered_and_ends_with_the_whole_response() {
    let server = strict(TOOL_LOOP);
    let mut body = first_request();
    body["stream"] = json!(true);
    let stream = post_text(&server, "/responses", BEARER, &body).await;
    let events = events(&stream);
    for (number, event) in events.iter().enumerate() {
        assert_eq!(event["sequence_number"], number, "{event}");
    }
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(&kinds[..2], ["response.created", "response.in_progress"]);
    assert_eq!(kinds.last(), Some(&"response.completed"));
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "response.output_text.delta")
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Let me look.");
    let added = events
        .iter()
        .find(|e| e["type"] == "response.output_item.added")
        .unwrap();
    assert_eq!(
        added["item"]["encrypted_content"],
        Value::Null,
        "only the done item has it"
    );
    let (_, whole) = post_responses(&server, &first_request()).await;
    assert_eq!(events.last().unwrap()["response"], whole);
}
