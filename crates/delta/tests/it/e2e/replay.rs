//! `delta replay` (issue 17): a recorded run played again with its LLM answers served from
//! `io/invocations/`, no model reachable. An unchanged agent replays `identical` (tool
//! calls, hooks, an `ask_human` answer, a FAILED tool); a changed tool command is the
//! first divergent observation, a changed system prompt the first divergent request.

use std::fs;

use serde_json::{Value, json};

use crate::support::harness::{Run, Test};
use crate::support::run::{RunFiles, assert_consistent, delta, mock, run_files};

const AGENT: &str = r#"
name: replaying
llm:
  model: gpt-4o-mini
tools:
  - name: greet
    description: Greets someone.
    exec: "echo hello ${name}"
  - name: fail
    description: Always fails.
    shell: "echo broken >&2; exit 3"
"#;

/// Every tool call passes two hooks, which append to hooks.log in the workspace.
const HOOKS: &str = r#"
pre_tool_execution:
  command: [sh, "-c", "echo pre >> hooks.log"]
post_tool_execution:
  command: [sh, "-c", "echo post >> hooks.log"]
"#;

/// A tool call, a FAILED tool, a question for the human, a final answer.
const SCRIPT: &str = r#"
steps:
  - message:
      content: "Greeting."
      tool_calls: [{name: greet, arguments: {name: "Ada"}}]
  - message:
      content: "Trying the broken one."
      tool_calls: [{name: fail, arguments: {}}]
  - message:
      content: "Asking."
      tool_calls: [{name: ask_human, arguments: {prompt: "Favourite colour?"}}]
  - message:
      content: "done"
"#;

/// `http://127.0.0.1:PORT/v1` with nothing listening on PORT.
fn closed_port() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    drop(listener);
    format!("http://127.0.0.1:{port}/v1")
}

/// The recording: run `parent` in `ws`, paused by its question, answered by `continue`.
fn recorded() -> Test {
    let mock = mock(SCRIPT);
    let test = Test::new()
        .agent("agent", AGENT)
        .file("agent/hooks.yaml", HOOKS);
    let run = delta(test, &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "greet Ada"])
        .args(["--run-id", "parent"])
        .run()
        .code(101);
    let run = delta(run.then(), &mock)
        .args(["continue", "--run-id", "parent", "-w", "ws", "-m", "blue"])
        .run()
        .code(0);
    run.then()
}

/// `delta replay --run-id parent -w ws --new-run-id replay` with no model reachable and no
/// key, plus `extra`.
fn replay(test: Test, extra: &[&str]) -> Run {
    test.env("DELTA_BASE_URL", &closed_port())
        .args([
            "replay",
            "--run-id",
            "parent",
            "-w",
            "ws",
            "--new-run-id",
            "replay",
        ])
        .args(extra.iter().copied())
        .run()
}

/// The payload field `field` of every event of type `kind`, in journal order.
fn payload_fields(files: &RunFiles, kind: &str, field: &str) -> Vec<Value> {
    files
        .journal()
        .into_iter()
        .filter(|event| event["type"] == kind)
        .map(|event| event["payload"][field].clone())
        .collect()
}

/// The seqs of the recording's events of type `kind`.
fn seqs(files: &RunFiles, kind: &str) -> Vec<u64> {
    files
        .journal()
        .iter()
        .filter(|event| event["type"] == kind)
        .map(|event| event["seq"].as_u64().expect("seq"))
        .collect()
}

#[test]
fn an_unchanged_agent_replays_identical_with_hooks_a_failed_tool_and_a_human_answer() {
    let test = recorded();
    let workspace = test.path().join("ws");
    let parent = run_files(&workspace, "parent");
    let parent_results = payload_fields(&parent, "ACTION_RESULT", "status");
    assert_eq!(
        parent_results,
        [json!("SUCCESS"), json!("FAILED"), json!("SUCCESS")]
    );

    let run = replay(test, &[]).code(0);
    assert_eq!(
        run.stdout(),
        "identical\nreplay replay of run parent: COMPLETED, 4 of 4 answers replayed, 3 \
         observations compared\n"
    );
    let replayed = run_files(&workspace, "replay");
    assert_consistent(&replayed, "COMPLETED");
    let metadata = replayed.metadata();
    assert_eq!(metadata["replay_of"], json!({"run_id": "parent"}));
    assert_eq!(metadata["result"], "done");
    // The recording's steps in one process: no pause (no RUN_END between the question
    // and its answer).
    let mut expected: Vec<&str> = vec!["RUN_START"];
    for _ in 0..2 {
        expected.extend([
            "THOUGHT",
            "ACTION_REQUEST",
            "HOOK_EXECUTION_AUDIT",
            "ACTION_RESULT",
            "HOOK_EXECUTION_AUDIT",
        ]);
    }
    expected.extend([
        "THOUGHT",
        "ACTION_REQUEST",
        "HOOK_EXECUTION_AUDIT",
        "HUMAN_INPUT_REQUEST",
        "HUMAN_INPUT_RECEIVED",
        "ACTION_RESULT",
        "HOOK_EXECUTION_AUDIT",
        "THOUGHT",
        "RUN_END",
    ]);
    assert_eq!(replayed.types(), expected);
    assert_eq!(
        payload_fields(&replayed, "HUMAN_INPUT_RECEIVED", "response"),
        [json!("blue")]
    );
    // The hooks really ran again: 6 runs recorded (the answer's post_tool_execution hook
    // on `continue`), 6 replayed.
    let hooks = fs::read_to_string(workspace.join("hooks.log")).expect("hooks.log");
    assert_eq!(hooks.lines().count(), 12, "{hooks}");
    let listed = run
        .then()
        .args(["list-runs", "-w", "ws", "--format", "json"])
        .run()
        .code(0);
    let listed: Value = serde_json::from_str(listed.stdout()).expect("JSON");
    let replay_of: Vec<Value> = listed
        .as_array()
        .expect("array")
        .iter()
        .map(|run| json!([run["run_id"], run["replay_of"]]))
        .collect();
    assert!(
        replay_of.contains(&json!(["replay", {"run_id": "parent"}])),
        "{listed}"
    );
}

#[test]
fn a_changed_tool_command_is_the_first_divergent_observation_with_its_seq() {
    let test = recorded();
    let workspace = test.path().join("ws");
    let greet_result = seqs(&run_files(&workspace, "parent"), "ACTION_RESULT")[0];
    let agent = AGENT.replace("echo hello ${name}", "echo goodbye ${name}");
    let test = test.file("agent/agent.yaml", &agent);

    let run = replay(test, &["--format", "json"]).code(1);
    let outcome: Value = serde_json::from_str(run.stdout()).expect("JSON");
    assert_eq!(
        outcome["divergence"],
        json!({
            "kind": "observation",
            "seq": greet_result,
            "replay_seq": greet_result,
            "what": "observation of `greet`",
            "diff": "observation, line 1:\n- hello Ada\n+ goodbye Ada",
        })
    );
    // Without --until-divergence the recorded answers go on being served: the requests
    // differ only in the observation already reported.
    assert_eq!(outcome["outcome"], "divergence");
    assert_eq!(outcome["status"], "COMPLETED");
    assert_eq!(outcome["answers_replayed"], 4);
    let replayed = run_files(&workspace, "replay");
    let observations = payload_fields(&replayed, "ACTION_RESULT", "observation_content");
    assert_eq!(
        observations[0].as_str().map(str::trim_end),
        Some("goodbye Ada")
    );

    let run = run
        .then()
        .env("DELTA_BASE_URL", &closed_port())
        .args([
            "replay",
            "--run-id",
            "parent",
            "-w",
            "ws",
            "--new-run-id",
            "stop",
        ])
        .args(["--until-divergence", "--format", "json"])
        .run()
        .code(1);
    let outcome: Value = serde_json::from_str(run.stdout()).expect("JSON");
    assert_eq!(outcome["divergence"]["seq"], greet_result);
    assert_eq!(outcome["status"], "FAILED");
    assert_eq!(outcome["answers_replayed"], 1);
    let stopped = run_files(&workspace, "stop");
    assert_consistent(&stopped, "FAILED");
    assert_eq!(
        stopped.metadata()["error"]["message"],
        "replay: stopped at the first divergence (--until-divergence)"
    );
}

#[test]
fn a_changed_system_prompt_is_the_first_divergent_request() {
    let test = recorded();
    let workspace = test.path().join("ws");
    let first_thought = seqs(&run_files(&workspace, "parent"), "THOUGHT")[0];
    let test = test.file("agent/system_prompt.md", "You are a changed agent.\n");

    let run = replay(test, &[]).code(1);
    assert_eq!(
        run.stdout(),
        format!(
            "divergence at seq {first_thought}: request 1 (recorded THOUGHT seq \
             {first_thought})\nmessages[0].content, line 3:\n- You are a test agent.\n+ You \
             are a changed agent.\nreplay replay of run parent: FAILED, 0 of 4 answers \
             replayed, 0 observations compared\n"
        )
    );
    let replayed = run_files(&workspace, "replay");
    assert_consistent(&replayed, "FAILED");
    assert_eq!(replayed.types(), ["RUN_START", "RUN_END"]);
}

#[test]
fn replay_needs_no_model_no_key_and_no_network() {
    let test = recorded();
    // The recording's model is gone too: nothing listens where DELTA_BASE_URL points, no
    // key is set, and the default (OpenAI's) URL would need one.
    let run = replay(test, &["--format", "json"]).code(0);
    let outcome: Value = serde_json::from_str(run.stdout()).expect("JSON");
    assert_eq!(outcome["outcome"], "identical");
    let run = run
        .then()
        .args([
            "replay",
            "--run-id",
            "parent",
            "-w",
            "ws",
            "--new-run-id",
            "offline",
        ])
        .run()
        .code(0);
    assert!(run.stdout().starts_with("identical\n"), "{}", run.stdout());
    let log = run_files(&run.path().join("ws"), "offline").read("engine.log");
    assert!(!log.contains("127.0.0.1"), "{log}");
}

#[test]
fn workspace_from_replays_in_a_fresh_copy_of_the_starting_files() {
    const MAKES_A_DIR: &str = r#"
name: builder
llm:
  model: gpt-4o-mini
tools:
  - name: build
    description: Creates out/ once.
    exec: "mkdir out"
"#;
    const BUILDS: &str = r#"
steps:
  - message:
      content: "Building."
      tool_calls: [{name: build, arguments: {}}]
  - message: {content: "built"}
"#;
    let mock = mock(BUILDS);
    let test = Test::new()
        .agent("agent", MAKES_A_DIR)
        .file("clean/input.txt", "seed\n");
    let run = delta(test, &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "build"])
        .args(["--run-id", "parent"])
        .run()
        .code(0);
    // In the recording's workspace `out/` exists now: the same command fails.
    let run = replay(run.then(), &["--format", "json"]).code(1);
    let outcome: Value = serde_json::from_str(run.stdout()).expect("JSON");
    assert_eq!(outcome["divergence"]["kind"], "observation");
    assert!(
        outcome["divergence"]["diff"]
            .as_str()
            .expect("diff")
            .starts_with("status:\n- SUCCESS\n+ FAILED"),
        "{outcome}"
    );

    let run = run
        .then()
        .env("DELTA_BASE_URL", &closed_port())
        .args([
            "replay",
            "--run-id",
            "parent",
            "-w",
            "ws",
            "--new-run-id",
            "fresh",
        ])
        .args(["--workspace-from", "clean"])
        .run()
        .code(0);
    let fresh = run.path().join("agent/workspaces/W001");
    assert!(fresh.join("out").is_dir());
    assert_eq!(
        fs::read_to_string(fresh.join("input.txt")).expect("copied"),
        "seed\n"
    );
    let metadata = run_files(&fresh, "fresh").metadata();
    let recorded_ws = run.path().join("ws");
    assert_eq!(
        metadata["replay_of"],
        json!({"run_id": "parent", "work_dir": recorded_ws})
    );
    assert_eq!(metadata["workspace_id"], "W001");
}
