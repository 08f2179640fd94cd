//! `--format text|json|raw`, and every file a run writes against the published schemas,
//! for each way a run can end.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::support::harness::{ROOT, Test};
use crate::support::run::{
    HELLO_SCRIPT, HELLO_TASK, RunFiles, assert_consistent, delta, hello_world, mock, only_run,
};
use crate::support::snapshot::snapshot;

fn validator(name: &str) -> jsonschema::Validator {
    let path = Path::new(ROOT).join("schemas").join(name);
    let text = std::fs::read_to_string(&path).expect("read the schema");
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    jsonschema::validator_for(&schema).expect("a valid schema")
}

#[track_caller]
fn assert_valid(validator: &jsonschema::Validator, instance: &Value, what: &str) {
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} is invalid: {errors:#?}\n{instance:#}"
    );
}

/// Every journal line and metadata.json of `run` against their schemas.
#[track_caller]
fn assert_files_match_schemas(run: &RunFiles) {
    let events = validator("journal-event.schema.json");
    for event in run.journal() {
        assert_valid(&events, &event, &format!("journal line {}", event["seq"]));
    }
    assert_valid(
        &validator("metadata.schema.json"),
        &run.metadata(),
        "metadata.json",
    );
}

#[test]
fn completed_run_in_json_format_matches_the_schemas() {
    let mock = mock(HELLO_SCRIPT);
    let run = delta(hello_world(Test::new()), &mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "-m", HELLO_TASK, "--format", "json",
        ])
        .run()
        .code(0);
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "COMPLETED");
    assert_files_match_schemas(&files);

    let output: Value = serde_json::from_str(run.stdout()).expect("stdout is one JSON value");
    assert_valid(&validator("run-result.schema.json"), &output, "RunResult");
    let metadata = files.metadata();
    assert_eq!(output["schema_version"], "2.0");
    assert_eq!(output["run_id"], metadata["run_id"]);
    assert_eq!(output["status"], "COMPLETED");
    assert_eq!(output["result"], metadata["result"]);
    assert_eq!(output["metrics"]["iterations"], 3);
    assert_eq!(output["metrics"]["usage"], metadata["usage"]);
    assert_eq!(output["metadata"]["agent_name"], "hello-world");
}

#[test]
fn failed_run_matches_the_schemas() {
    let mock = mock("steps:\n  - error: {status: 401}\n");
    let run = delta(hello_world(Test::new()), &mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "-m", HELLO_TASK, "--format", "json",
        ])
        .run()
        .code(1);
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "FAILED");
    assert_files_match_schemas(&files);
    let output: Value = serde_json::from_str(run.stdout()).expect("stdout is JSON");
    assert_valid(&validator("run-result.schema.json"), &output, "RunResult");
    assert_eq!(output["status"], "FAILED");
    assert_eq!(output["error"]["type"], "LlmError");
}

#[test]
fn interrupted_run_matches_the_schemas_and_exits_1_when_the_budget_is_spent() {
    let mock = mock(HELLO_SCRIPT);
    let run = delta(hello_world(Test::new()), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", HELLO_TASK])
        .args(["--max-iterations", "2", "--format", "json"])
        .run()
        .code(1);
    snapshot!(run, @r#"
    exit code: 1
    ----- stdout -----
    {
      "schema_version": "2.0",
      "run_id": "[RUN_ID]",
      "status": "INTERRUPTED",
      "error": {
        "type": "MaxIterationsReached",
        "message": "the iteration budget (2) was spent before the model gave a final answer",
        "details": "resume with a fresh budget: delta continue --run-id [RUN_ID] -w [TEMP]/ws"
      },
      "metrics": {
        "iterations": 2,
        "duration_ms": [DURATION],
        "start_time": "[TIME]",
        "end_time": "[TIME]",
        "usage": {
          "input_tokens": 712,
          "output_tokens": 85,
          "total_cost_usd": 0.00015780000000000001,
          "model_usage": {
            "gpt-4o-mini": {
              "calls": 2,
              "input_tokens": 712,
              "output_tokens": 85,
              "cost_usd": 0.00015780000000000001
            }
          }
        }
      },
      "metadata": {
        "agent_name": "hello-world",
        "workspace_path": "[TEMP]/ws"
      }
    }

    ----- stderr -----
    ▶ run [RUN_ID] · agent hello-world · model gpt-4o-mini
      workspace [TEMP]/ws

    ── iteration 1/2 ──
    Let me see what is in the workspace first.
    → list_files {"directory":"."}
      ✓ exit 0 · [DURATION]
      │ (no output)

    ── iteration 2/2 ──
    The workspace is empty. I'll create hello.txt and check it.
    → write_file {"content":"Hello, world!\nWritten by a Delta Engine agent.\n","path":"hello.txt"}
      ✓ exit 0 · [DURATION]
      │ Hello, world!
      │ Written by a Delta Engine agent.
    → count_lines {"path":"hello.txt"}
      ✓ exit 0 · [DURATION]
      │ 2

    ■ INTERRUPTED after 2 iterations
      MaxIterationsReached: the iteration budget (2) was spent before the model gave a final answer
      resume with a fresh budget: delta continue --run-id [RUN_ID] -w [TEMP]/ws
    "#);
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "INTERRUPTED");
    assert_files_match_schemas(&files);
    let output: Value = serde_json::from_str(run.stdout()).expect("stdout is JSON");
    assert_valid(&validator("run-result.schema.json"), &output, "RunResult");
    assert_eq!(output["error"]["type"], "MaxIterationsReached");
    assert_eq!(files.metadata()["iterations"], 2);
    assert_eq!(files.metadata()["max_iterations"], 2);
    // Two full cycles ran; the third LLM call never happened.
    assert_eq!(mock.requests().len(), 2);
    assert_eq!(
        files
            .types()
            .iter()
            .filter(|t| *t == "ACTION_RESULT")
            .count(),
        3
    );
}

#[test]
fn agent_yaml_max_iterations_is_the_budget_unless_the_command_line_says_otherwise() {
    let mock = mock(HELLO_SCRIPT);
    let test = hello_world(Test::new());
    let agent = std::fs::read_to_string(test.path().join("agent/agent.yaml")).expect("read");
    let run = delta(
        test.file("agent/agent.yaml", &format!("{agent}\nmax_iterations: 1\n")),
        &mock,
    )
    .args(["run", "--agent", "agent", "-w", "ws", "-m", HELLO_TASK])
    .run()
    .code(1);
    assert_eq!(
        only_run(&run.path().join("ws")).metadata()["max_iterations"],
        1
    );
    let run = delta(run.then(), &mock)
        .args(["run", "--agent", "agent", "-w", "ws2", "-m", HELLO_TASK])
        .args(["--max-iterations", "5"])
        .run()
        .code(0);
    assert_eq!(
        only_run(&run.path().join("ws2")).metadata()["max_iterations"],
        5
    );
}

#[test]
fn raw_format_pipes_a_json_result_into_jq() {
    let mock = mock(HELLO_SCRIPT);
    let run = delta(hello_world(Test::new()), &mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "-m", HELLO_TASK, "--format", "raw",
        ])
        .run()
        .code(0);
    // Compact JSON and a newline: exactly what `jq` reads.
    assert_eq!(
        run.stdout(),
        "{\"files\":[\"hello.txt\"],\"lines\":2,\"summary\":\"Created hello.txt with a two-line greeting.\"}\n"
    );
    let result: Value = serde_json::from_str(run.stdout()).expect("raw output is JSON");
    assert_eq!(
        result["summary"],
        "Created hello.txt with a two-line greeting."
    );

    if let Ok(mut jq) = Command::new("jq")
        .arg(".summary")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    {
        jq.stdin
            .take()
            .expect("stdin")
            .write_all(run.stdout().as_bytes())
            .expect("feed jq");
        let output = jq.wait_with_output().expect("run jq");
        assert!(output.status.success());
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            "\"Created hello.txt with a two-line greeting.\"\n"
        );
    }
}

#[test]
fn raw_format_prints_nothing_unless_completed() {
    let mock = mock("steps:\n  - error: {status: 400}\n");
    let run = delta(hello_world(Test::new()), &mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "-m", HELLO_TASK, "--format", "raw",
        ])
        .run()
        .code(1)
        .stdout_is("");
    snapshot!(run, @"
    exit code: 1
    ----- stdout -----

    ----- stderr -----
    ▶ run [RUN_ID] · agent hello-world · model gpt-4o-mini
      workspace [TEMP]/ws

    ── iteration 1/30 ──

    ✖ FAILED after 1 iteration
      LlmError: the LLM API at http://127.0.0.1:[PORT]/v1/chat/completions answered HTTP 400: mock-llm: scripted error at step 0: HTTP 400 Bad Request (1 attempt(s)); the server rejected the request: check the model name and llm parameters in agent.yaml, and the request.json of this invocation
    ");
}

#[test]
fn a_plain_text_answer_is_the_result_as_is() {
    let mock = mock("steps:\n  - message: {content: \"42 files, all fine.\"}\n");
    delta(hello_world(Test::new()), &mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "-m", "count", "--format", "raw",
        ])
        .run()
        .code(0)
        .stdout_is("42 files, all fine.");
}
