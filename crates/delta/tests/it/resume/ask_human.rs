//! `ask_human` (seed 000 §2.5): asynchronous (exit 101, `interaction/request.json`,
//! WAITING_FOR_INPUT, answered by `continue -m` or `response.txt`) and interactive (`-i`,
//! answered on stdin); either way the answer reaches the model as the tool result.

use std::path::Path;

use serde_json::{Value, json};

use crate::resume::support::{RunDir, assert_sound, delta, mock, recorder};
use crate::support::harness::{ROOT, Stdin};
use crate::support::snapshot::snapshot;

const ASKS_COLOUR: &str = r#"
steps:
  - message:
      content: "I need to know."
      tool_calls:
        - {name: ask_human, arguments: {prompt: "Favourite colour?"}}
  - message: {content: "Noted."}
"#;

/// The tool message the model got in request `index`, for the call `ask_human` made.
fn tool_answer(requests: &[Value], index: usize) -> String {
    requests[index]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

fn committed_schema(name: &str) -> jsonschema::Validator {
    let text = std::fs::read_to_string(Path::new(ROOT).join("schemas").join(name)).unwrap();
    jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap()
}

#[test]
fn without_i_the_run_pauses_with_exit_101_and_its_question_on_disk() {
    let mock = mock(ASKS_COLOUR);
    let run = delta(recorder(), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "Ask me."])
        .args(["--run-id", "ask-1", "--format", "json"])
        .run()
        .code(101);
    let workspace = run.path().join("ws").display().to_string();
    let files = RunDir::new(&run.path().join("ws"), "ask-1");
    assert_sound(&files, "WAITING_FOR_INPUT").unwrap();
    assert_eq!(
        files.types(),
        [
            "RUN_START",
            "THOUGHT",
            "ACTION_REQUEST",
            "HUMAN_INPUT_REQUEST",
            "RUN_END"
        ]
        .map(String::from)
    );
    let action_id = files.payloads("ACTION_REQUEST")[0]["action_id"].clone();
    assert_eq!(
        files.payloads("HUMAN_INPUT_REQUEST")[0],
        json!({"request_id": action_id, "prompt": "Favourite colour?", "input_type": "text", "sensitive": false})
    );

    let request: Value = serde_json::from_str(
        &std::fs::read_to_string(files.dir.join("interaction/request.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(request["request_id"], action_id);
    assert_eq!(request["prompt"], "Favourite colour?");
    assert_eq!(request["input_type"], "text");
    assert_eq!(request["sensitive"], false);
    assert!(committed_schema("interaction-request.schema.json").is_valid(&request));
    assert!(!files.dir.join("interaction/response.txt").exists());

    let result: Value = serde_json::from_str(run.stdout()).unwrap();
    assert!(committed_schema("run-result.schema.json").is_valid(&result));
    assert_eq!(result["status"], "WAITING_FOR_INPUT");
    assert_eq!(
        result["interaction"],
        json!({"prompt": "Favourite colour?", "input_type": "text", "sensitive": false})
    );
    assert!(
        run.stderr().ends_with(&format!(
            "\nThe agent asks: Favourite colour?\n\
             Agent paused. Provide response in {workspace}/.delta/ask-1/interaction/response.txt\n  \
             then run: delta continue --run-id ask-1 -w {workspace}\n\
             Or use: delta continue --run-id ask-1 -w {workspace} -m <response>\n"
        )),
        "{}",
        run.stderr()
    );
}

#[test]
fn continue_with_m_answers_the_question_and_the_model_gets_the_answer() {
    let mock = mock(ASKS_COLOUR);
    let run = delta(recorder(), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "Ask me."])
        .args(["--run-id", "ask-2"])
        .run()
        .code(101);
    snapshot!(run, @r#"
    exit code: 101
    ----- stdout -----
    --- Run Summary ---
    Run ID:     ask-2
    Status:     WAITING_FOR_INPUT
    Duration:   [DURATION]
    -------------------
    Waiting for input:
    Favourite colour?
    Input type: text
    -------------------
    To answer: delta continue --run-id ask-2 -w [TEMP]/ws -m ANSWER
    -------------------

    ----- stderr -----
    ▶ run ask-2 · agent recorder · model test-model
      workspace [TEMP]/ws

    ── iteration 1/30 ──
    I need to know.
    → ask_human {"prompt":"Favourite colour?"}

    ■ WAITING_FOR_INPUT after 1 iteration

    The agent asks: Favourite colour?
    Agent paused. Provide response in [TEMP]/ws/.delta/ask-2/interaction/response.txt
      then run: delta continue --run-id ask-2 -w [TEMP]/ws
    Or use: delta continue --run-id ask-2 -w [TEMP]/ws -m <response>
    "#);
    let files = RunDir::new(&run.path().join("ws"), "ask-2");
    let run = delta(run.then(), &mock)
        .args(["continue", "--run-id", "ask-2", "-w", "ws", "-m", "teal"])
        .run()
        .code(0);
    snapshot!(run, @"
    exit code: 0
    ----- stdout -----
    --- Run Summary ---
    Run ID:     ask-2
    Status:     COMPLETED
    Duration:   [DURATION]
    -------------------
    Result:
    Noted.
    -------------------

    ----- stderr -----
    ▶ run ask-2 · agent recorder · model test-model
      workspace [TEMP]/ws

    ── iteration 2/30 ──
    Noted.

    ✔ COMPLETED after 2 iterations
    ");
    assert_sound(&files, "COMPLETED").unwrap();
    let action_id = files.payloads("ACTION_REQUEST")[0]["action_id"].clone();
    assert_eq!(
        files.payloads("HUMAN_INPUT_RECEIVED"),
        vec![json!({"request_id": action_id, "response": "teal"})]
    );
    let result = &files.payloads("ACTION_RESULT")[0];
    assert_eq!(result["status"], "SUCCESS");
    assert_eq!(result["observation_content"], "teal");
    assert_eq!(result["exit_code"], 0);
    assert!(
        !files.dir.join("interaction").exists(),
        "interaction/ removed"
    );
    assert_eq!(tool_answer(&mock.requests(), 1), "teal");
    let seqs: Vec<u64> = files
        .journal()
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
}

#[test]
fn continue_reads_the_answer_from_response_txt() {
    let mock = mock(ASKS_COLOUR);
    let run = delta(recorder(), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "Ask me."])
        .args(["--run-id", "ask-3"])
        .run()
        .code(101);
    let files = RunDir::new(&run.path().join("ws"), "ask-3");
    std::fs::write(files.dir.join("interaction/response.txt"), "crimson\n").unwrap();
    let _run = delta(run.then(), &mock)
        .args(["continue", "--run-id", "ask-3", "-w", "ws"])
        .run()
        .code(0);
    assert_eq!(tool_answer(&mock.requests(), 1), "crimson");
    assert!(!files.dir.join("interaction").exists());
}

#[test]
fn with_i_the_question_is_answered_on_stdin_and_the_run_never_pauses() {
    let mock = mock(ASKS_COLOUR);
    let run = delta(recorder(), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "Ask me.", "-i"])
        .args(["--run-id", "ask-4"])
        .stdin(Stdin::Text("ochre\n".to_owned()))
        .run()
        .code(0);
    snapshot!(run, @r#"
    exit code: 0
    ----- stdout -----
    --- Run Summary ---
    Run ID:     ask-4
    Status:     COMPLETED
    Duration:   [DURATION]
    -------------------
    Result:
    Noted.
    -------------------

    ----- stderr -----
    ▶ run ask-4 · agent recorder · model test-model
      workspace [TEMP]/ws

    ── iteration 1/30 ──
    I need to know.
    → ask_human {"prompt":"Favourite colour?"}

    [ask_human] Favourite colour?
    >   ✓ exit 0 · [DURATION]
      │ ochre

    ── iteration 2/30 ──
    Noted.

    ✔ COMPLETED after 2 iterations
    "#);
    let files = RunDir::new(&run.path().join("ws"), "ask-4");
    assert_sound(&files, "COMPLETED").unwrap();
    assert_eq!(
        files.types(),
        [
            "RUN_START",
            "THOUGHT",
            "ACTION_REQUEST",
            "HUMAN_INPUT_REQUEST",
            "HUMAN_INPUT_RECEIVED",
            "ACTION_RESULT",
            "THOUGHT",
            "RUN_END"
        ]
        .map(String::from)
    );
    assert!(!files.dir.join("interaction").exists());
    assert_eq!(tool_answer(&mock.requests(), 1), "ochre");
}

#[test]
fn with_i_and_no_input_left_the_run_pauses_instead() {
    let mock = mock(ASKS_COLOUR);
    let run = delta(recorder(), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "Ask me.", "-i"])
        .args(["--run-id", "ask-5"])
        .run()
        .code(101);
    snapshot!(run, @r#"
    exit code: 101
    ----- stdout -----
    --- Run Summary ---
    Run ID:     ask-5
    Status:     WAITING_FOR_INPUT
    Duration:   [DURATION]
    -------------------
    Waiting for input:
    Favourite colour?
    Input type: text
    -------------------
    To answer: delta continue --run-id ask-5 -w [TEMP]/ws -m ANSWER
    -------------------

    ----- stderr -----
    ▶ run ask-5 · agent recorder · model test-model
      workspace [TEMP]/ws

    ── iteration 1/30 ──
    I need to know.
    → ask_human {"prompt":"Favourite colour?"}

    [ask_human] Favourite colour?
    > warning: no answer to ask_human: standard input is closed; the run waits for an answer through `delta continue` instead

    ■ WAITING_FOR_INPUT after 1 iteration

    The agent asks: Favourite colour?
    Agent paused. Provide response in [TEMP]/ws/.delta/ask-5/interaction/response.txt
      then run: delta continue --run-id ask-5 -w [TEMP]/ws
    Or use: delta continue --run-id ask-5 -w [TEMP]/ws -m <response>
    "#);
    let files = RunDir::new(&run.path().join("ws"), "ask-5");
    assert_eq!(files.status(), "WAITING_FOR_INPUT");
    assert!(files.dir.join("interaction/request.json").exists());
}

#[test]
fn a_sensitive_answer_is_not_shown_on_the_live_stream() {
    let mock = mock(
        r#"
steps:
  - message:
      tool_calls:
        - {name: ask_human, arguments: {prompt: "Token?", input_type: password, sensitive: true}}
  - message: {content: "Thanks."}
"#,
    );
    let run = delta(recorder(), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "Ask.", "-i"])
        .stdin(Stdin::Text("s3cr3t-value\n".to_owned()))
        .run()
        .code(0);
    // The whole stream, which does not show the answer.
    snapshot!(run, @r#"
    exit code: 0
    ----- stdout -----
    --- Run Summary ---
    Run ID:     [RUN_ID]
    Status:     COMPLETED
    Duration:   [DURATION]
    -------------------
    Result:
    Thanks.
    -------------------

    ----- stderr -----
    ▶ run [RUN_ID] · agent recorder · model test-model
      workspace [TEMP]/ws

    ── iteration 1/30 ──
    → ask_human {"input_type":"password","prompt":"Token?","sensitive":true}

    [ask_human] Token?
    >   ✓ exit 0 · [DURATION]
      │ (answer hidden: 12 characters)

    ── iteration 2/30 ──
    Thanks.

    ✔ COMPLETED after 2 iterations
    "#);
    // The model needs the answer: it is its tool result, so the journal keeps it.
    assert_eq!(tool_answer(&mock.requests(), 1), "s3cr3t-value");
}

#[test]
fn a_question_without_a_prompt_is_an_error_the_model_reads() {
    let mock = mock(
        r#"
steps:
  - message:
      tool_calls:
        - {name: ask_human, arguments: {question: "Which?"}}
  - message: {content: "Fine."}
"#,
    );
    let run = delta(recorder(), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "Ask."])
        .args(["--run-id", "ask-6"])
        .run()
        .code(0);
    let files = RunDir::new(&run.path().join("ws"), "ask-6");
    let result = &files.payloads("ACTION_RESULT")[0];
    assert_eq!(result["status"], "ERROR");
    assert!(
        result["observation_content"]
            .as_str()
            .unwrap()
            .starts_with("Error: ask_human needs a \"prompt\". Call ask_human with"),
        "{result}"
    );
}

#[test]
fn continue_with_i_answers_later_questions_on_stdin() {
    let mock = mock(
        r#"
steps:
  - message:
      tool_calls:
        - {name: ask_human, arguments: {prompt: "First?"}}
  - message:
      tool_calls:
        - {name: ask_human, arguments: {prompt: "Second?"}}
  - message: {content: "Both answered."}
"#,
    );
    let run = delta(recorder(), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "Ask twice."])
        .args(["--run-id", "ask-7"])
        .run()
        .code(101);
    let run = delta(run.then(), &mock)
        .args([
            "continue", "--run-id", "ask-7", "-w", "ws", "-m", "one", "-i",
        ])
        .stdin(Stdin::Text("two\n".to_owned()))
        .run()
        .code(0);
    snapshot!(run, @r#"
    exit code: 0
    ----- stdout -----
    --- Run Summary ---
    Run ID:     ask-7
    Status:     COMPLETED
    Duration:   [DURATION]
    -------------------
    Result:
    Both answered.
    -------------------

    ----- stderr -----
    ▶ run ask-7 · agent recorder · model test-model
      workspace [TEMP]/ws

    ── iteration 2/30 ──
    → ask_human {"prompt":"Second?"}

    [ask_human] Second?
    >   ✓ exit 0 · [DURATION]
      │ two

    ── iteration 3/30 ──
    Both answered.

    ✔ COMPLETED after 3 iterations
    "#);
    let files = RunDir::new(&run.path().join("ws"), "ask-7");
    let answers: Vec<Value> = files
        .payloads("HUMAN_INPUT_RECEIVED")
        .into_iter()
        .map(|p| p["response"].clone())
        .collect();
    assert_eq!(answers, vec![json!("one"), json!("two")]);
}

#[test]
fn a_pre_tool_execution_hook_can_block_the_question_and_post_sees_the_answer() {
    let model = mock(ASKS_COLOUR);
    let hooks = r#"
pre_tool_execution:
  command: ["sh", "-c", "printf '%s\n' '{\"skip\": true, \"observation\": \"Do not ask; use blue.\"}' > \"${DELTA_HOOK_IO_PATH}output/control.json\""]
"#;
    let run = delta(recorder().file("agent/hooks.yaml", hooks), &model)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "Ask me."])
        .args(["--run-id", "ask-8"])
        .run()
        .code(0);
    snapshot!(run, @r#"
    exit code: 0
    ----- stdout -----
    --- Run Summary ---
    Run ID:     ask-8
    Status:     COMPLETED
    Duration:   [DURATION]
    -------------------
    Result:
    Noted.
    -------------------

    ----- stderr -----
    ▶ run ask-8 · agent recorder · model test-model
      workspace [TEMP]/ws

    ── iteration 1/30 ──
    I need to know.
    → ask_human {"prompt":"Favourite colour?"}
      ✗ ERROR no exit code · [DURATION]
      │ Do not ask; use blue.

    ── iteration 2/30 ──
    Noted.

    ✔ COMPLETED after 2 iterations
    "#);
    let files = RunDir::new(&run.path().join("ws"), "ask-8");
    assert_sound(&files, "COMPLETED").unwrap();
    let result = &files.payloads("ACTION_RESULT")[0];
    assert_eq!(result["status"], "ERROR");
    assert_eq!(result["observation_content"], "Do not ask; use blue.");
    assert!(files.payloads("HUMAN_INPUT_REQUEST").is_empty());
    assert!(!files.dir.join("interaction").exists());

    let model = mock(ASKS_COLOUR);
    let hooks = r#"
post_tool_execution:
  command: ["sh", "-c", "printf '%s=%s\n' \"$TOOL_NAME\" \"$TOOL_RESULT\" >> answers.log"]
"#;
    let run = delta(recorder().file("agent/hooks.yaml", hooks), &model)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "Ask me.", "-i"])
        .stdin(Stdin::Text("ochre\n".to_owned()))
        .run()
        .code(0);
    assert_eq!(run.read("ws/answers.log"), "ask_human=ochre\n");
}

// Regression for issue 12 item 4: a tool call the model asked for in the same response as
// `ask_human` was answered "not run" after `continue -m`, while `-i` ran it after the
// answer. Both modes now run it once the question is answered.
#[test]
fn a_call_made_beside_ask_human_runs_after_continue_as_with_i() {
    let script = r#"
steps:
  - message:
      content: "Asking, then recording."
      tool_calls:
        - {name: ask_human, arguments: {prompt: "Go on?"}}
        - {name: record, arguments: {line: "after the answer", secs: "0"}}
  - message: {content: "Recorded."}
"#;
    let mock = mock(script);
    let paused = delta(recorder(), &mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "beside-1",
        ])
        .args(["-m", "Ask, then record."])
        .run()
        .code(101);
    assert!(!paused.path().join("ws/ledger.txt").exists());
    let done = delta(paused.then(), &mock)
        .args(["continue", "--run-id", "beside-1", "-w", "ws", "-m", "yes"])
        .run()
        .code(0);
    assert_eq!(
        std::fs::read_to_string(done.path().join("ws/ledger.txt")).unwrap(),
        "after the answer\n"
    );
    let files = RunDir::new(&done.path().join("ws"), "beside-1");
    assert_sound(&files, "COMPLETED").unwrap();
    let results = files.payloads("ACTION_RESULT");
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0]["observation_content"], "yes");
    assert_eq!(results[1]["status"], "SUCCESS", "{results:?}");
}
