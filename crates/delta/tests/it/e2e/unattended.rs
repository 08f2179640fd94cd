//! Runs driven by programs (issue 14): `--format jsonl` on every way a run ends, the
//! cost, tokens and duration budgets, a final answer validated against an output schema,
//! the task from stdin or a file, and `--no-ask-human`.

use std::path::Path;
use std::process::Child;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;

use crate::support::harness::{ROOT, Run, Stdin, Test};
use crate::support::run::{
    HELLO_SCRIPT, HELLO_TASK, RunFiles, assert_consistent, delta, hello_world, mock, only_run,
    wait_until,
};
use crate::support::snapshot::snapshot;

/// An agent whose model (gpt-4o-mini, a known price) can note things and nap.
const AGENT: &str = r#"
name: unattended
llm:
  model: gpt-4o-mini
tools:
  - name: note
    description: Appends a line to notes.txt.
    shell: "echo ${text} >> notes.txt"
  - name: nap
    description: Sleeps, leaving its pid in the workspace.
    shell: "echo $$ > nap.pid; sleep ${seconds} & wait"
"#;

/// Calls `note` forever, each call reporting 40,000 prompt and 1,000 completion tokens
/// ($0.0066 at gpt-4o-mini's price).
const NOTES_FOREVER: &str = r#"
steps:
  - message:
      content: "Noting."
      tool_calls: [{name: note, arguments: {text: "one more"}}]
      usage: {prompt_tokens: 40000, completion_tokens: 1000}
      repeat: 50
"#;

fn agent(test: Test) -> Test {
    test.agent("agent", AGENT)
}

fn validator(name: &str) -> jsonschema::Validator {
    let path = Path::new(ROOT).join("schemas").join(name);
    let text = std::fs::read_to_string(&path).expect("read the schema");
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    jsonschema::validator_for(&schema).expect("a valid schema")
}

/// The stream's contract: every line valid against stream-line.schema.json, the event
/// lines exactly the journal's lines, one RESULT line last whose status is the metadata's
/// and whose exit code is the process's. Returns the RESULT line.
#[track_caller]
fn assert_stream(stdout: &str, run: Option<&RunFiles>, exit_code: i32) -> Value {
    let schema = validator("stream-line.schema.json");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(!lines.is_empty(), "no output");
    for line in &lines {
        let value: Value = serde_json::from_str(line).expect("each line is JSON");
        let errors: Vec<String> = schema.iter_errors(&value).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{line}: {errors:#?}");
    }
    let (result, events) = lines.split_last().expect("a line");
    let result: Value = serde_json::from_str(result).expect("JSON");
    assert_eq!(result["type"], "RESULT");
    assert_eq!(result["exit_code"], exit_code);
    // A property of every line of any stream (which are compared whole below): a search.
    assert!(
        events
            .iter()
            .all(|line| !line.contains("\"type\":\"RESULT\""))
    );
    match run {
        Some(run) => {
            let journal = run.read("journal.jsonl");
            let journal: Vec<&str> = journal.lines().collect();
            assert_eq!(events, journal.as_slice(), "event lines = journal lines");
            assert_eq!(result["status"], run.metadata()["status"]);
            assert_eq!(result["run_id"], run.metadata()["run_id"]);
        }
        None => assert!(events.is_empty(), "{events:?}"),
    }
    result
}

fn jsonl(test: Test, task: &str) -> Test {
    test.args([
        "run", "--agent", "agent", "-w", "ws", "-m", task, "--format", "jsonl",
    ])
}

/// Runs `test` (a `--format jsonl` run in `ws`), expects `exit_code`, and checks its stream
/// against the run's journal; returns the run, its files and the RESULT line.
fn streamed(test: Test, exit_code: i32) -> (Run, RunFiles, Value) {
    let run = test.run().code(exit_code);
    let files = only_run(&run.path().join("ws"));
    let result = assert_stream(run.stdout(), Some(&files), exit_code);
    (run, files, result)
}

#[test]
fn a_completed_run_streams_its_journal_then_the_result() {
    let mock = mock(HELLO_SCRIPT);
    let (run, files, result) =
        streamed(jsonl(delta(hello_world(Test::new()), &mock), HELLO_TASK), 0);
    assert_consistent(&files, "COMPLETED");
    assert_eq!(result["result"]["lines"], 2);
    // The run id is on the first line, before anything else happened.
    let first: Value =
        serde_json::from_str(run.stdout().lines().next().expect("line")).expect("JSON");
    assert_eq!(first["type"], "RUN_START");
    assert_eq!(first["payload"]["run_id"], files.metadata()["run_id"]);
    // The human stream stays on stderr.
    snapshot!(run.stderr(), @r#"
    ▶ run [RUN_ID] · agent hello-world · model gpt-4o-mini
      workspace [TEMP]/ws

    ── iteration 1/30 ──
    Let me see what is in the workspace first.
    → list_files {"directory":"."}
      ✓ exit 0 · [DURATION]
      │ (no output)

    ── iteration 2/30 ──
    The workspace is empty. I'll create hello.txt and check it.
    → write_file {"content":"Hello, world!\nWritten by a Delta Engine agent.\n","path":"hello.txt"}
      ✓ exit 0 · [DURATION]
      │ Hello, world!
      │ Written by a Delta Engine agent.
    → count_lines {"path":"hello.txt"}
      ✓ exit 0 · [DURATION]
      │ 2

    ── iteration 3/30 ──
    {"summary": "Created hello.txt with a two-line greeting.", "files": ["hello.txt"], "lines": 2}

    ✔ COMPLETED after 3 iterations
    "#);
}

#[test]
fn a_failed_run_ends_its_stream_with_the_result() {
    let mock = mock("steps:\n  - error: {status: 401}\n");
    let (_run, _files, result) = streamed(jsonl(delta(agent(Test::new()), &mock), "anything"), 1);
    assert_eq!(result["status"], "FAILED");
    assert_eq!(result["error"]["type"], "LlmError");
}

#[test]
fn a_spent_iteration_budget_ends_the_stream_interrupted() {
    let mock = mock(NOTES_FOREVER);
    let test = jsonl(delta(agent(Test::new()), &mock), "note").args(["--max-iterations", "2"]);
    let (_run, _files, result) = streamed(test, 1);
    assert_eq!(result["error"]["type"], "MaxIterationsReached");
}

#[test]
fn a_run_waiting_for_an_answer_ends_its_stream_with_the_question() {
    let script = r#"
steps:
  - message:
      tool_calls: [{name: ask_human, arguments: {prompt: "Which colour?"}}]
"#;
    let mock = mock(script);
    let (_run, _files, result) = streamed(jsonl(delta(agent(Test::new()), &mock), "ask me"), 101);
    assert_eq!(result["status"], "WAITING_FOR_INPUT");
    assert_eq!(result["interaction"]["prompt"], "Which colour?");
}

#[test]
fn a_configuration_error_still_ends_the_stream_with_a_result() {
    let run = Test::new()
        .file("agent/agent.yaml", "name: broken\nllm: {}\n")
        .file("agent/system_prompt.md", "x\n")
        .args([
            "run", "--agent", "agent", "-w", "ws", "-m", "x", "--format", "jsonl",
        ])
        .run()
        .code(126);
    let result = assert_stream(run.stdout(), None, 126);
    assert_eq!(result["run_id"], Value::Null);
    assert_eq!(result["status"], "FAILED");
    assert_eq!(result["error"]["type"], "ConfigError");
    assert!(!run.path().join("ws/.delta").exists());
}

fn signal(child: &Child, signal: Signal) {
    let pid = Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    kill(pid, signal).expect("signal delta");
}

#[test]
fn sigterm_during_a_tool_ends_the_stream_interrupted() {
    let script = "steps:\n  - message: {tool_calls: [{name: nap, arguments: {seconds: \"60\"}}]}\n";
    let mock = mock(script);
    let test = jsonl(delta(agent(Test::new()), &mock), "nap");
    let child = test.spawn();
    wait_until("the tool to start", || {
        test.path().join("ws/nap.pid").is_file()
    });
    signal(&child, Signal::SIGTERM);
    let output = child.wait_with_output().expect("wait");
    assert_eq!(output.status.code(), Some(130));
    let files = only_run(&test.path().join("ws"));
    let result = assert_stream(&String::from_utf8_lossy(&output.stdout), Some(&files), 130);
    assert_eq!(result["status"], "INTERRUPTED");
    assert_eq!(result["error"]["type"], "Interrupted");
}

/// `delta continue` of run `id` in `ws`, with `flags`.
fn continue_run(test: Test, mock: &mock_llm::MockServer, id: &str, flags: &[&str]) -> Test {
    delta(test, mock)
        .args(["continue", "--run-id", id, "-w", "ws"])
        .args(flags.iter().copied())
}

/// A budget run through jsonl: stream checked, then the metadata's budget record.
fn budget_run(flags: &[&str], script: &str) -> (Run, RunFiles, Value, mock_llm::MockServer) {
    let mock = mock(script);
    let mut args = vec![
        "run", "--agent", "agent", "-w", "ws", "-m", "work", "--format", "jsonl",
    ];
    args.extend_from_slice(flags);
    let (run, files, result) = streamed(delta(agent(Test::new()), &mock).args(args), 1);
    assert_consistent(&files, "INTERRUPTED");
    assert_eq!(result["error"]["type"], "BudgetExceeded");
    // A SYSTEM_MESSAGE in the journal says why the run stopped.
    let journal = files.journal();
    let warning = journal
        .iter()
        .rev()
        .find(|e| e["type"] == "SYSTEM_MESSAGE")
        .expect("a SYSTEM_MESSAGE");
    assert!(
        warning["payload"]["content"]
            .as_str()
            .expect("text")
            .starts_with("Budget exceeded: the "),
        "{warning}"
    );
    (run, files, result, mock)
}

#[test]
fn a_cost_budget_stops_the_run_within_one_call_of_its_limit_and_resumes_with_more() {
    let (run, files, result, mock) = budget_run(&["--max-cost-usd", "0.01"], NOTES_FOREVER);
    // Two calls cost $0.0132: the limit is passed by the second, and no third is made.
    assert_eq!(mock.requests().len(), 2);
    assert_eq!(result["error"]["budget"]["budget"], "cost");
    assert_eq!(result["error"]["budget"]["limit"], 0.01);
    let metadata = files.metadata();
    assert_eq!(metadata["budget"]["cost_usd"]["limit"], 0.01);
    assert_eq!(result["metrics"]["budget"], metadata["budget"]);
    let used = metadata["budget"]["cost_usd"]["used"]
        .as_f64()
        .expect("used");
    assert!((used - 0.0132).abs() < 1e-9, "{used}");

    // The same budget again is refused with the fix; a larger one resumes the run.
    let id = metadata["run_id"].as_str().expect("id").to_owned();
    let again = continue_run(run.then(), &mock, &id, &["--max-cost-usd", "0.01"])
        .run()
        .code(2);
    snapshot!(again.stderr(), @"
    error: the cost budget ($0.0100) is spent: $0.0132 used; the run cannot go on within it
      = help: give a larger budget: --max-cost-usd with more than $0.0132
    ");
    let before = files.read("journal.jsonl").lines().count();
    let more = continue_run(
        again.then(),
        &mock,
        &id,
        &["--max-cost-usd", "0.02", "--format", "jsonl"],
    )
    .run()
    .code(1);
    assert_eq!(mock.requests().len(), 4, "{}", more.stderr());
    // A continued run streams what it appends, not the lines it found.
    let journal = files.read("journal.jsonl");
    let appended: Vec<&str> = journal.lines().skip(before).collect();
    let streamed: Vec<&str> = more.stdout().lines().collect();
    assert_eq!(&streamed[..streamed.len() - 1], appended.as_slice());
    assert_eq!(files.metadata()["budget"]["cost_usd"]["limit"], 0.02);
    assert_eq!(files.metadata()["error"]["type"], "BudgetExceeded");
}

#[test]
fn a_tokens_budget_stops_the_run_within_one_call_of_its_limit_and_resumes_with_more() {
    let (run, files, result, mock) = budget_run(&["--max-tokens", "50000"], NOTES_FOREVER);
    assert_eq!(mock.requests().len(), 2);
    assert_eq!(result["error"]["budget"]["budget"], "tokens");
    assert_eq!(result["error"]["budget"]["used"], 82000.0);
    assert_eq!(files.metadata()["budget"]["tokens"]["used"], 82000);
    let id = files.metadata()["run_id"].as_str().expect("id").to_owned();
    let _more = continue_run(run.then(), &mock, &id, &["--max-tokens", "100000"])
        .run()
        .code(1);
    assert_eq!(mock.requests().len(), 3);
    assert_eq!(files.metadata()["budget"]["tokens"]["used"], 123000);
}

#[test]
fn a_duration_budget_stops_a_running_tool_and_says_why() {
    let script = r#"
steps:
  - message: {tool_calls: [{name: nap, arguments: {seconds: "30"}}]}
  - message: {content: "Rested."}
"#;
    let (run, files, result, mock) = budget_run(&["--max-duration", "2s"], script);
    assert_eq!(result["error"]["budget"]["budget"], "duration");
    let journal = files.journal();
    let action = journal
        .iter()
        .find(|e| e["type"] == "ACTION_RESULT")
        .expect("an ACTION_RESULT");
    assert_eq!(action["payload"]["status"], "ERROR");
    assert!(
        action["payload"]["observation_content"]
            .as_str()
            .expect("text")
            .starts_with("Error: the run's duration budget (2.0s) ran out while this command ran"),
        "{action}"
    );
    // The tool's process is gone: its pid no longer exists.
    let pid: i32 = run.read("ws/nap.pid").trim().parse().expect("pid");
    wait_until("the nap to be killed", || {
        kill(Pid::from_raw(pid), None).is_err()
    });
    // A larger budget resumes it: the model gets the tool's result and answers.
    let id = files.metadata()["run_id"].as_str().expect("id").to_owned();
    let _more = continue_run(run.then(), &mock, &id, &["--max-duration", "60s"])
        .run()
        .code(0);
    assert_eq!(files.metadata()["result"], "Rested.");
}

#[test]
fn a_cost_budget_for_a_model_without_a_price_refuses_to_start() {
    let mock = mock(NOTES_FOREVER);
    let run = delta(
        Test::new().agent("agent", &AGENT.replace("gpt-4o-mini", "my-local-model")),
        &mock,
    )
    .args([
        "run",
        "--agent",
        "agent",
        "-w",
        "ws",
        "-m",
        "x",
        "--max-cost-usd",
        "1",
    ])
    .run()
    .code(126);
    snapshot!(run.stderr(), @"
    error: a cost budget needs the price of my-local-model, which is not known
      = help: give the model's prices under llm.pricing in agent.yaml (input_per_million, output_per_million), or drop the cost budget
    ");
    assert!(mock.requests().is_empty());
    assert!(!run.path().join("ws/.delta").exists());
}

#[test]
fn budgets_in_agent_yaml_apply_and_flags_win() {
    let with_budget = format!("{AGENT}budget:\n  max_tokens: 50000\n");
    let mock = mock(NOTES_FOREVER);
    let run = delta(Test::new().agent("agent", &with_budget), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "x"])
        .run()
        .code(1);
    assert_eq!(mock.requests().len(), 2);
    let files = only_run(&run.path().join("ws"));
    assert_eq!(files.metadata()["budget"]["tokens"]["limit"], 50000);

    let mock = crate::support::run::mock(NOTES_FOREVER);
    let run = delta(Test::new().agent("agent", &with_budget), &mock)
        .args([
            "run",
            "--agent",
            "agent",
            "-w",
            "ws",
            "-m",
            "x",
            "--max-tokens",
            "100000",
        ])
        .run()
        .code(1);
    assert_eq!(mock.requests().len(), 3);
    assert_eq!(
        only_run(&run.path().join("ws")).metadata()["budget"]["tokens"]["limit"],
        100000
    );
}

const SCHEMA: &str = r#"{
  "type": "object",
  "properties": {"answer": {"type": "integer"}},
  "required": ["answer"],
  "additionalProperties": false
}"#;

fn schema_run(script: &str) -> (Run, RunFiles, mock_llm::MockServer) {
    let mock = mock(script);
    let test = delta(agent(Test::new()).file("answer.schema.json", SCHEMA), &mock).args([
        "run",
        "--agent",
        "agent",
        "-w",
        "ws",
        "-m",
        "answer",
        "--output-schema",
        "answer.schema.json",
        "--format",
        "json",
    ]);
    let run = test.run();
    let files = only_run(&run.path().join("ws"));
    (run, files, mock)
}

#[test]
fn a_valid_final_answer_passes_through_as_the_result() {
    let (run, files, _mock) =
        schema_run("steps:\n  - message: {content: \"```json\\n{\\\"answer\\\": 42}\\n```\"}\n");
    let run = run.code(0);
    let result: Value = serde_json::from_str(run.stdout()).expect("JSON");
    assert_eq!(result["result"], serde_json::json!({"answer": 42}));
    assert_eq!(
        files.metadata()["result"],
        serde_json::json!({"answer": 42})
    );
}

#[test]
fn an_invalid_answer_goes_back_to_the_model_and_tool_turns_are_free() {
    let script = r#"
steps:
  - message:
      content: "not even JSON, and a tool call"
      tool_calls: [{name: note, arguments: {text: "thinking"}}]
  - message: {content: '{"answer": "forty-two"}'}
  - message: {content: '{"answer": 42}'}
"#;
    let (run, files, mock) = schema_run(script);
    let run = run.code(0);
    let result: Value = serde_json::from_str(run.stdout()).expect("JSON");
    assert_eq!(result["result"]["answer"], 42);
    assert_eq!(mock.requests().len(), 3);
    // The tool turn ran its tool; the invalid answer was sent back with its error.
    assert_eq!(run.read("ws/notes.txt"), "thinking\n");
    let repairs: Vec<Value> = files
        .journal()
        .into_iter()
        .filter(|e| e["type"] == "USER_MESSAGE")
        .collect();
    assert_eq!(repairs.len(), 1, "{repairs:#?}");
    let text = repairs[0]["payload"]["content"].as_str().expect("text");
    assert!(text.starts_with("Your final answer does not satisfy the required output schema (answer.schema.json):\n- /answer: "), "{text}");
    let last_request = &mock.requests()[2];
    let messages = last_request["messages"].as_array().expect("messages");
    assert_eq!(messages.last().expect("a message")["content"], text);
}

#[test]
fn a_model_that_never_complies_fails_the_run_with_the_errors() {
    let script = "steps:\n  - message: {content: '{\"answer\": \"no\"}', repeat: 5}\n";
    let (run, files, mock) = schema_run(script);
    let run = run.code(1);
    assert_eq!(mock.requests().len(), 3, "two repair requests, then FAILED");
    assert_consistent(&files, "FAILED");
    let result: Value = serde_json::from_str(run.stdout()).expect("JSON");
    assert_eq!(result["error"]["type"], "OutputSchemaViolation");
    assert!(
        result["error"]["details"]
            .as_str()
            .expect("details")
            .starts_with("/answer: "),
        "{result}"
    );
}

#[test]
fn an_output_schema_in_agent_yaml_is_read_relative_to_the_agent() {
    let mock = mock("steps:\n  - message: {content: '{\"answer\": 7}'}\n");
    let run = delta(
        Test::new()
            .agent(
                "agent",
                &format!("{AGENT}output_schema: answer.schema.json\n"),
            )
            .file("agent/answer.schema.json", SCHEMA),
        &mock,
    )
    .args([
        "run", "--agent", "agent", "-w", "ws", "-m", "x", "--format", "raw",
    ])
    .run()
    .code(0);
    assert_eq!(run.stdout(), "{\"answer\":7}\n");

    let broken = Test::new()
        .agent("agent", &format!("{AGENT}output_schema: missing.json\n"))
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "x"])
        .run()
        .code(126);
    snapshot!(broken.stderr(), @"
    error: cannot read the output schema [TEMP]/agent/missing.json: No such file or directory (os error 2)
      --> [TEMP]/agent/agent.yaml:12:16
      = help: point `output_schema:` at a JSON Schema file (draft 2020-12), relative to the agent directory
    ");
}

#[test]
fn the_task_can_come_from_stdin_or_a_file() {
    let script = "steps:\n  - message: {content: done, repeat: 2}\n";
    let mock = mock(script);
    let task = "Summarize the notes.\nThen stop.\n";
    let run = delta(agent(Test::new()), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "-"])
        .stdin(Stdin::Text(task.to_owned()))
        .run()
        .code(0);
    assert_eq!(only_run(&run.path().join("ws")).metadata()["task"], task);

    let run = delta(agent(Test::new()).file("task.md", task), &mock)
        .args([
            "run",
            "--agent",
            "agent",
            "-w",
            "ws",
            "--message-file",
            "task.md",
        ])
        .run()
        .code(0);
    let files = only_run(&run.path().join("ws"));
    assert_eq!(files.journal()[0]["payload"]["task"], task);

    // continue -m - and --message-file, too.
    let id = files.metadata()["run_id"].as_str().expect("id").to_owned();
    let next = crate::support::run::mock("steps:\n  - message: {content: again}\n");
    let run = delta(
        run.then().file("next.md", "And now the next step.\n"),
        &next,
    )
    .args([
        "continue",
        "--run-id",
        &id,
        "-w",
        "ws",
        "--message-file",
        "next.md",
    ])
    .run()
    .code(0);
    let last_user = files
        .journal()
        .into_iter()
        .rfind(|e| e["type"] == "USER_MESSAGE")
        .expect("a USER_MESSAGE");
    assert_eq!(last_user["payload"]["content"], "And now the next step.\n");

    let missing = delta(run.then(), &next)
        .args([
            "run",
            "--agent",
            "agent",
            "-w",
            "ws",
            "--message-file",
            "nope.md",
        ])
        .run()
        .code(2);
    snapshot!(missing.stderr(), @"
    error: cannot read the message from nope.md: No such file or directory (os error 2)
      = help: give the message with -m TEXT, -m - (read from stdin) or --message-file FILE (a readable UTF-8 text file)
    ");
}

#[test]
fn without_ask_human_the_tool_is_not_offered_and_the_run_never_pauses() {
    let script = r#"
steps:
  - message:
      tool_calls: [{name: ask_human, arguments: {prompt: "May I?"}}]
  - message: {content: "Went ahead."}
"#;
    let mock = mock(script);
    let run = delta(agent(Test::new()), &mock)
        .args([
            "run",
            "--agent",
            "agent",
            "-w",
            "ws",
            "-m",
            "x",
            "--no-ask-human",
        ])
        .run()
        .code(0);
    let requests = mock.requests();
    let offered: Vec<&str> = requests[0]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["function"]["name"].as_str().expect("name"))
        .collect();
    assert_eq!(offered, ["note", "nap"]);
    // The model called it anyway: an unknown tool, answered with an error, no pause.
    let files = only_run(&run.path().join("ws"));
    let result = files
        .journal()
        .into_iter()
        .find(|e| e["type"] == "ACTION_RESULT")
        .expect("an ACTION_RESULT");
    assert_eq!(result["payload"]["status"], "ERROR");
    assert!(!files.dir.join("interaction").exists());

    let mock = crate::support::run::mock(NOTES_FOREVER);
    let run = delta(
        Test::new().agent("agent", &format!("{AGENT}ask_human: false\n")),
        &mock,
    )
    .args([
        "run",
        "--agent",
        "agent",
        "-w",
        "ws",
        "-m",
        "x",
        "--max-iterations",
        "1",
    ])
    .run()
    .code(1);
    assert_eq!(only_run(&run.path().join("ws")).metadata()["iterations"], 1);
    let offered = mock.requests()[0]["tools"].as_array().expect("tools").len();
    assert_eq!(offered, 2);
}
