//! End to end: `pre_llm_request` changes what the model receives, and a security hook in
//! `pre_tool_execution` keeps a tool from running.

use serde_json::Value;

use crate::support::harness::Test;
use crate::support::run::{assert_consistent, delta, mock, only_run};
use crate::support::snapshot::snapshot;

const AGENT: &str = r#"
name: steered
llm:
  model: test-model
tools:
  - name: run_command
    description: Runs a shell command line in the workspace.
    exec: "sh -c ${command}"
"#;

/// Rewrites the system message with sed (no jq needed): payload.dat is pretty-printed,
/// so the system prompt's text is on a line of its own.
const REWRITE_HOOK: &str = r#"sed 's/You are a test agent\./You are a REWRITTEN agent./' \
  "${DELTA_HOOK_IO_PATH}input/payload.dat" > "${DELTA_HOOK_IO_PATH}output/payload_override.dat"
"#;

#[test]
fn pre_llm_request_rewrites_what_the_model_receives_and_request_json_records_it() {
    let mock = mock(
        "steps:\n  - message:\n      tool_calls: [{name: run_command, arguments: {command: 'echo hi'}}]\n  - message: {content: done}\n",
    );
    let test = Test::new()
        .agent("agent", AGENT)
        .file(
            "agent/hooks.yaml",
            "pre_llm_request:\n  command: [sh, \"${AGENT_HOME}/rewrite.sh\"]\n",
        )
        .file("agent/rewrite.sh", REWRITE_HOOK);
    let run = delta(test, &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "go"])
        .run()
        .code(0);

    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "COMPLETED");
    let received = mock.requests();
    assert_eq!(received.len(), 2);
    // request.json is what was actually sent; the hook's input is what was built.
    assert_eq!(files.requests(), received);
    for (index, body) in received.iter().enumerate() {
        let step = index + 1;
        let built: Value = serde_json::from_str(&files.read(&format!(
            "io/hooks/00{step}_pre_llm_request/input/payload.dat"
        )))
        .unwrap();
        let system = built["messages"][0]["content"].as_str().unwrap();
        snapshot!(format!("system_prompt_{step}"), system);
        let mut rewritten = built.clone();
        rewritten["messages"][0]["content"] =
            system.replace("a test agent", "a REWRITTEN agent").into();
        assert_eq!(*body, rewritten);
    }
    // The journal, the run's memory, is not rewritten.
    snapshot!(files.read("journal.jsonl"));
}

/// docs/hooks.md's pre_tool_execution example, verbatim.
const NO_RM_HOOK: &str = r#"#!/bin/sh
# Block any tool call whose arguments contain "rm ".
set -eu
io="$DELTA_HOOK_IO_PATH"
if grep -q 'rm ' "${io}input/payload.dat"; then
  printf '%s\n' '{"skip": true, "observation": "Blocked by policy: commands containing rm are not allowed."}' \
    > "${io}output/control.json"
fi
"#;

#[test]
fn a_security_hook_blocks_a_tool_call_and_the_model_sees_why() {
    let mock = mock(
        "steps:\n  - message:\n      tool_calls:\n        - {name: run_command, arguments: {command: 'rm canary.txt'}}\n        - {name: run_command, arguments: {command: 'cat canary.txt'}}\n  - message: {content: done}\n",
    );
    let test = Test::new()
        .agent("agent", AGENT)
        .file(
            "agent/hooks.yaml",
            "pre_tool_execution:\n  command: [sh, \"${AGENT_HOME}/no-rm.sh\"]\n  timeout_ms: 5000\n",
        )
        .file("agent/no-rm.sh", NO_RM_HOOK)
        .file("ws/canary.txt", "still here\n");
    let run = delta(test, &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "go"])
        .run()
        .code(0);

    assert_eq!(run.read("ws/canary.txt"), "still here\n");
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "COMPLETED");
    let results: Vec<Value> = files
        .journal()
        .into_iter()
        .filter(|event| event["type"] == "ACTION_RESULT")
        .map(|event| event["payload"].clone())
        .collect();
    let blocked = "Blocked by policy: commands containing rm are not allowed.";
    assert_eq!(results[0]["status"], "ERROR");
    assert_eq!(results[0]["observation_content"], blocked);
    assert_eq!(results[0]["exit_code"], Value::Null);
    // Nothing ran for the blocked call; the other call ran normally.
    let blocked_ref = results[0]["execution_ref"].as_str().unwrap();
    assert!(
        !files
            .dir
            .join("io/tool_executions")
            .join(blocked_ref)
            .exists()
    );
    assert_eq!(results[1]["status"], "SUCCESS");
    assert_eq!(results[1]["observation_content"], "still here\n");
    // The model's next request carries the hook's observation as the call's result.
    let second = &mock.requests()[1];
    let tool_messages: Vec<&Value> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .collect();
    assert_eq!(tool_messages[0]["content"], blocked);
    // Blocking is the hook's decision, not an error: no on_error in the journal.
    snapshot!(files.read("journal.jsonl"));
}
