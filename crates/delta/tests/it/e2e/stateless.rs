//! The context is rebuilt from disk before every call: generators run fresh each time,
//! `max_iterations` windows the journal, and a broken context.yaml mid-run fails the run.

use serde_json::Value;

use crate::support::harness::Test;
use crate::support::run::{assert_consistent, delta, mock, only_run};
use crate::support::snapshot::snapshot;

const AGENT: &str = r#"
name: stateless
llm:
  model: test-model
tools:
  - name: note
    exec: "echo ${text}"
"#;

/// Four iterations: three single `note` calls, then the answer.
const SCRIPT: &str = r#"
steps:
  - message: {content: "one", tool_calls: [{name: note, arguments: {text: first}}]}
  - message: {content: "two", tool_calls: [{name: note, arguments: {text: second}}]}
  - message: {content: "three", tool_calls: [{name: note, arguments: {text: third}}]}
  - message: {content: "done"}
"#;

/// A generator that reports what it sees: the journal's length, its run id and CWD.
const GENERATOR_CONTEXT: &str = r#"
sources:
  - type: file
    id: system_prompt
    path: '${AGENT_HOME}/system_prompt.md'
  - type: computed_file
    id: journal_size
    generator:
      command: ["sh", "-c", "mkdir -p .ctx && printf 'events=%s run=%s cwd=%s' \"$(wc -l < \"$JOURNAL_PATH\" | tr -d ' ')\" \"$DELTA_RUN_ID\" \"$DELTA_CWD\" > .ctx/size.md"]
    output_path: '${CWD}/.ctx/size.md'
  - type: journal
"#;

fn system_texts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "system")
        .map(|m| m["content"].as_str().expect("text").to_owned())
        .collect()
}

#[test]
fn a_computed_file_is_generated_fresh_for_every_request() {
    let mock = mock(SCRIPT);
    let run = delta(
        Test::new()
            .agent("agent", AGENT)
            .file("agent/context.yaml", GENERATOR_CONTEXT),
        &mock,
    )
    .args(["run", "--agent", "agent", "-w", "ws", "-m", "take notes"])
    .run()
    .code(0);
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "COMPLETED");
    let run_id = files.metadata()["run_id"].as_str().expect("id").to_owned();
    let cwd = run.path().join("ws").canonicalize().expect("workspace");
    // RUN_START, then THOUGHT + ACTION_REQUEST + ACTION_RESULT per iteration.
    let blocks: Vec<String> = files
        .requests()
        .iter()
        .map(|request| system_texts(request)[1].clone())
        .collect();
    let expected: Vec<String> = [1, 4, 7, 10]
        .iter()
        .map(|events| {
            format!(
                "# Context Block: journal_size\n\nevents={events} run={run_id} cwd={}",
                cwd.display()
            )
        })
        .collect();
    assert_eq!(blocks, expected);
}

#[test]
fn journal_max_iterations_sends_only_the_last_cycles_after_the_task() {
    let mock = mock(SCRIPT);
    let context = "sources:\n  - type: file\n    path: '${AGENT_HOME}/system_prompt.md'\n  - type: journal\n    max_iterations: 2\n";
    let run = delta(
        Test::new()
            .agent("agent", AGENT)
            .file("agent/context.yaml", context),
        &mock,
    )
    .args(["run", "--agent", "agent", "-w", "ws", "-m", "take notes"])
    .run()
    .code(0);
    let requests = only_run(&run.path().join("ws")).requests();
    let shape = |request: &Value| -> Vec<String> {
        request["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .map(|m| {
                let role = m["role"].as_str().expect("role");
                let text = m["content"].as_str().unwrap_or("");
                format!("{role}: {}", text.trim())
            })
            .collect()
    };
    // Without an id the file is included as it is.
    let prompt = "system: You are a test agent.";
    assert_eq!(
        shape(&requests[3]),
        [
            prompt,
            "user: take notes",
            "assistant: two",
            "tool: second",
            "assistant: three",
            "tool: third",
        ]
    );
    assert_eq!(
        shape(&requests[1]),
        [prompt, "user: take notes", "assistant: one", "tool: first"]
    );
}

#[test]
fn a_context_yaml_broken_mid_run_fails_the_run_with_its_location() {
    // The tool breaks context.yaml (the agent directory is the tool's to reach), so the
    // second iteration's rebuild finds it broken.
    let agent = r#"
name: breaker
llm:
  model: test-model
tools:
  - name: break_context
    exec: "sh -c 'printf \"sources: [\" > \"$DELTA_AGENT_HOME/context.yaml\"'"
"#;
    let mock = mock("steps:\n  - message: {tool_calls: [{name: break_context}]}\n");
    let run = delta(Test::new().agent("agent", agent), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "break it"])
        .run()
        .code(1);
    snapshot!(run, @"
    exit code: 1
    ----- stdout -----
    --- Run Summary ---
    Run ID:     [RUN_ID]
    Status:     FAILED
    Duration:   [DURATION]
    -------------------
    Error: context.yaml cannot be loaded: invalid YAML syntax: unclosed bracket '[' ([TEMP]/agent/context.yaml:1:10)
    Details: check the indentation, quotes and brackets at this position
    -------------------

    ----- stderr -----
    ▶ run [RUN_ID] · agent breaker · model test-model
      workspace [TEMP]/ws

    ── iteration 1/30 ──
    → break_context {}
      ✓ exit 0 · [DURATION]
      │ (no output)

    ── iteration 2/30 ──

    ✖ FAILED after 2 iterations
      ContextError: context.yaml cannot be loaded: invalid YAML syntax: unclosed bracket '[' ([TEMP]/agent/context.yaml:1:10)
      check the indentation, quotes and brackets at this position
    ");
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "FAILED");
    let error = &files.metadata()["error"];
    assert_eq!(error["type"], "ContextError");
    snapshot!(error["message"], @r#""context.yaml cannot be loaded: invalid YAML syntax: unclosed bracket '[' ([TEMP]/agent/context.yaml:1:10)""#);
}

#[test]
fn a_missing_required_source_fails_the_run_naming_the_source() {
    let context =
        "sources:\n  - type: file\n    id: guide\n    path: '${CWD}/GUIDE.md'\n  - type: journal\n";
    let mock = mock("steps:\n  - message: {content: never}\n");
    let run = delta(
        Test::new()
            .agent("agent", AGENT)
            .file("agent/context.yaml", context),
        &mock,
    )
    .args(["run", "--agent", "agent", "-w", "ws", "-m", "go"])
    .run()
    .code(1);
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "FAILED");
    snapshot!(files.metadata()["error"]["message"], @r#""context source 'guide': [TEMP]/ws/GUIDE.md does not exist; create it, or set `on_missing: skip` on this source in context.yaml""#);
    assert!(
        mock.requests().is_empty(),
        "no request is sent without its context"
    );
}

#[test]
fn a_failing_generator_with_on_missing_skip_is_left_out_with_a_warning() {
    let context = "sources:\n  - type: computed_file\n    id: flaky\n    generator:\n      command: [\"sh\", \"-c\", \"echo no index >&2; exit 4\"]\n    output_path: '${CWD}/flaky.md'\n    on_missing: skip\n  - type: journal\n";
    let mock = mock("steps:\n  - message: {content: fine}\n");
    let run = delta(
        Test::new()
            .agent("agent", AGENT)
            .file("agent/context.yaml", context)
            // A stale output from an earlier run must not be sent as if fresh.
            .file("ws/flaky.md", "stale"),
        &mock,
    )
    .args(["run", "--agent", "agent", "-w", "ws", "-m", "go"])
    .run()
    .code(0);
    snapshot!(run, @"
    exit code: 0
    ----- stdout -----
    --- Run Summary ---
    Run ID:     [RUN_ID]
    Status:     COMPLETED
    Duration:   [DURATION]
    -------------------
    Result:
    fine
    -------------------

    ----- stderr -----
    ▶ run [RUN_ID] · agent stateless · model test-model
      workspace [TEMP]/ws

    ── iteration 1/30 ──
    warning: context source 'flaky' skipped: generator `sh -c 'echo no index >&2; exit 4'` exited with code 4; its stderr: no index
    fine

    ✔ COMPLETED after 1 iteration
    ");
    let request = &mock.requests()[0];
    assert!(system_texts(request).is_empty(), "{request:#}");
    assert_eq!(
        only_run(&run.path().join("ws")).metadata()["status"],
        "COMPLETED"
    );
}
