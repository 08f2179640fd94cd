//! Every row of `delta continue`'s state table through the binary (seed 000 §2.6.2), with
//! each refusal's exact message and exit code.

use crate::resume::support::{RunDir, assert_sound, delta, last_message, mock, recorder};
use crate::support::harness::Test;
use crate::support::snapshot::snapshot;

/// `ws` of `test`, as `delta continue` prints it (absolute).
fn ws(test_path: &std::path::Path) -> String {
    test_path.join("ws").display().to_string()
}

const ONE_TOOL_THEN_DONE: &str = r#"
steps:
  - message:
      tool_calls:
        - {name: record, arguments: {line: first, secs: "0"}}
  - message: {content: "All done."}
"#;

#[test]
fn interrupted_by_the_budget_resumes_without_a_message_in_the_same_journal() {
    let mock = mock(ONE_TOOL_THEN_DONE);
    let run = delta(recorder(), &mock)
        .args([
            "run",
            "--agent",
            "agent",
            "-w",
            "ws",
            "-m",
            "Record a line.",
        ])
        .args(["--run-id", "budget-1", "--max-iterations", "1"])
        .run()
        .code(1);
    let files = RunDir::new(&run.path().join("ws"), "budget-1");
    assert_eq!(files.metadata()["error"]["type"], "MaxIterationsReached");
    let before = files.journal().len();

    let run = delta(run.then(), &mock)
        .args(["continue", "--run-id", "budget-1", "-w", "ws"])
        .run()
        .code(0);

    snapshot!(run, @"
    exit code: 0
    ----- stdout -----
    --- Run Summary ---
    Run ID:     budget-1
    Status:     COMPLETED
    Duration:   [DURATION]
    -------------------
    Result:
    All done.
    -------------------

    ----- stderr -----
    ▶ run budget-1 · agent recorder · model test-model
      workspace [TEMP]/ws

    ── iteration 2/30 ──
    All done.

    ✔ COMPLETED after 2 iterations
    ");
    assert_sound(&files, "COMPLETED").unwrap();
    let types = files.types();
    assert_eq!(
        types[before - 1..],
        ["RUN_END", "THOUGHT", "RUN_END"].map(String::from)
    );
    let metadata = files.metadata();
    assert_eq!(metadata["iterations"], 2);
    assert_eq!(metadata["max_iterations"], 30, "a fresh default budget");
    assert_eq!(metadata["error"], serde_json::Value::Null);
    assert_eq!(run.read("ws/ledger.txt"), "first\n");
}

#[test]
fn interrupted_with_a_message_gives_the_model_that_instruction() {
    let mock = mock(ONE_TOOL_THEN_DONE);
    let run = delta(recorder(), &mock)
        .args([
            "run",
            "--agent",
            "agent",
            "-w",
            "ws",
            "-m",
            "Record a line.",
        ])
        .args(["--run-id", "budget-2", "--max-iterations", "1"])
        .run()
        .code(1);
    delta(run.then(), &mock)
        .args(["continue", "--run-id", "budget-2", "-w", "ws"])
        .args(["-m", "Skip validation step", "--max-iterations", "3"])
        .run()
        .code(0);
    let requests = mock.requests();
    assert_eq!(
        last_message(&requests[1], "user").as_deref(),
        Some("Skip validation step")
    );
}

const TWO_ANSWERS: &str = r#"
steps:
  - message: {content: "First answer."}
  - message: {content: "Second answer."}
"#;

#[test]
fn completed_needs_a_message_and_then_extends_the_conversation() {
    let mock = mock(TWO_ANSWERS);
    let run = delta(recorder(), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "Answer."])
        .args(["--run-id", "done-1"])
        .run()
        .code(0);
    let workspace = ws(run.path());
    let run = delta(run.then(), &mock)
        .args(["continue", "--run-id", "done-1", "-w", "ws"])
        .run()
        .code(2)
        .stdout_is("")
        .stderr_is(&format!(
            "error: Run is COMPLETED. To continue, provide a message using -m/--message\n\
             Example: delta continue --run-id done-1 -w {workspace} -m \"Now do something else\"\n"
        ));
    let files = RunDir::new(&run.path().join("ws"), "done-1");
    assert_eq!(files.status(), "COMPLETED", "a refusal changes nothing");

    let _run = delta(run.then(), &mock)
        .args(["continue", "--run-id", "done-1", "-w", "ws"])
        .args(["-m", "Now create summary report", "--format", "raw"])
        .run()
        .code(0)
        .stdout_is("Second answer.");
    assert_sound(&files, "COMPLETED").unwrap();
    assert_eq!(files.metadata()["result"], "Second answer.");
    assert_eq!(
        last_message(&mock.requests()[1], "user").as_deref(),
        Some("Now create summary report")
    );
    let types = files.types();
    assert_eq!(
        types,
        [
            "RUN_START",
            "THOUGHT",
            "RUN_END",
            "USER_MESSAGE",
            "THOUGHT",
            "RUN_END"
        ]
        .map(String::from)
    );
}

#[test]
fn failed_needs_a_message_and_then_retries() {
    let mock = mock(
        r#"
steps:
  - error: {status: 400}
  - message: {content: "Recovered."}
"#,
    );
    let run = delta(recorder(), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "Try."])
        .args(["--run-id", "fail-1"])
        .run()
        .code(1);
    let workspace = ws(run.path());
    let run = delta(run.then(), &mock)
        .args(["continue", "--run-id", "fail-1", "-w", "ws", "-m", "  "])
        .run()
        .code(2)
        .stderr_is(&format!(
            "error: Run is FAILED. To continue, provide a message using -m/--message\n\
             Example: delta continue --run-id fail-1 -w {workspace} -m \"Retry; the input file \
             is data/input.csv\"\n"
        ));
    let run = delta(run.then(), &mock)
        .args(["continue", "--run-id", "fail-1", "-w", "ws"])
        .args(["-m", "The API key is in ~/.api-key", "--format", "json"])
        .run()
        .code(0);
    snapshot!(run, @r#"
    exit code: 0
    ----- stdout -----
    {
      "schema_version": "2.0",
      "run_id": "fail-1",
      "status": "COMPLETED",
      "result": "Recovered.",
      "metrics": {
        "iterations": 2,
        "duration_ms": [DURATION],
        "start_time": "[TIME]",
        "end_time": "[TIME]",
        "usage": {
          "input_tokens": 10,
          "output_tokens": 5,
          "total_cost_usd": 0.0,
          "model_usage": {
            "test-model": {
              "calls": 1,
              "input_tokens": 10,
              "output_tokens": 5,
              "cost_usd": 0.0
            }
          },
          "cost_note": "no price is known for model 'test-model', so its cost is counted as 0; set llm.pricing (input_per_million, output_per_million) in agent.yaml to estimate it"
        }
      },
      "metadata": {
        "agent_name": "recorder",
        "workspace_path": "[TEMP]/ws"
      }
    }

    ----- stderr -----
    ▶ run fail-1 · agent recorder · model test-model
      workspace [TEMP]/ws

    ── iteration 2/30 ──
    Recovered.

    ✔ COMPLETED after 2 iterations
    "#);
}

const ASKS: &str = r#"
steps:
  - message:
      tool_calls:
        - {name: ask_human, arguments: {prompt: "Deploy to production?", input_type: confirmation}}
  - message: {content: "Deployed."}
"#;

#[test]
fn waiting_for_input_needs_an_answer() {
    let mock = mock(ASKS);
    let run = delta(recorder(), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "Deploy."])
        .args(["--run-id", "wait-1"])
        .run()
        .code(101);
    let workspace = ws(run.path());
    let run = delta(run.then(), &mock)
        .args(["continue", "--run-id", "wait-1", "-w", "ws"])
        .run()
        .code(2)
        .stderr_is(&format!(
            "error: Run is WAITING_FOR_INPUT. To continue, answer its question using \
             -m/--message or in {workspace}/.delta/wait-1/interaction/response.txt\n\
             Question: Deploy to production?\n\
             Example: delta continue --run-id wait-1 -w {workspace} -m \"yes, proceed\"\n"
        ));
    let run = delta(run.then(), &mock)
        .args(["continue", "--run-id", "wait-1", "-w", "ws", "-m", "yes"])
        .run()
        .code(0);
    snapshot!(run, @"
    exit code: 0
    ----- stdout -----
    --- Run Summary ---
    Run ID:     wait-1
    Status:     COMPLETED
    Duration:   [DURATION]
    -------------------
    Result:
    Deployed.
    -------------------

    ----- stderr -----
    ▶ run wait-1 · agent recorder · model test-model
      workspace [TEMP]/ws

    ── iteration 2/30 ──
    Deployed.

    ✔ COMPLETED after 2 iterations
    ");
}

#[test]
fn continue_without_a_run_id_is_a_usage_error_with_the_seed_hints() {
    Test::new()
        .args(["continue", "-w", "W001", "-m", "go"])
        .run()
        .code(2)
        .stdout_is("")
        .stderr_is(
            "error: --run-id is required.\n\n\
             To resume a run, you must explicitly specify its ID:\n  \
             delta continue --run-id <run_id> -w W001\n\n\
             To list resumable runs:\n  \
             delta list-runs -w W001 --resumable\n",
        );
    let run = Test::new().args(["continue"]).run().code(2);
    snapshot!(run, @"
    exit code: 2
    ----- stdout -----

    ----- stderr -----
    error: --run-id is required.

    To resume a run, you must explicitly specify its ID:
      delta continue --run-id <run_id> -w .

    To list resumable runs:
      delta list-runs -w . --resumable
    ");
}

#[test]
fn an_unknown_run_id_says_how_to_find_the_ids() {
    let test = Test::new().file("ws/.delta/other/keep", "");
    let workspace = ws(test.path());
    test.args(["continue", "--run-id", "nope", "-w", "ws"])
        .run()
        .code(1)
        .stderr_is(&format!(
            "error: no run nope in {workspace}; list the runs there with `delta list-runs -w \
             {workspace}`\n"
        ));
    let run = Test::new()
        .args(["continue", "--run-id", "../etc", "-w", "ws"])
        .run()
        .code(2);
    snapshot!(run, @r#"
    exit code: 2
    ----- stdout -----

    ----- stderr -----
    error: invalid value '../etc' for '--run-id <ID>': invalid run id "../etc": it starts with '.'; a run id is 1 to 128 characters from A-Z a-z 0-9 . _ - and starts with a letter or digit (for example a UUID, or [RUN_ID])

    For more information, try '--help'.
    "#);
}

#[test]
fn an_edited_agent_takes_effect_on_continue() {
    let mock = mock(TWO_ANSWERS);
    let run = delta(recorder(), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "Answer."])
        .args(["--run-id", "edit-1"])
        .run()
        .code(0);
    let agent = run.path().join("agent/agent.yaml");
    let edited = std::fs::read_to_string(&agent)
        .unwrap()
        .replace("model: test-model", "model: edited-model");
    std::fs::write(&agent, edited).unwrap();
    delta(run.then(), &mock)
        .args(["continue", "--run-id", "edit-1", "-w", "ws", "-m", "Again."])
        .run()
        .code(0);
    let requests = mock.requests();
    assert_eq!(requests[0]["model"], "test-model");
    assert_eq!(requests[1]["model"], "edited-model");
}
