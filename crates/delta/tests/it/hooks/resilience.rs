//! End to end: hooks that exit non-zero, run past their timeout or write malformed
//! output never fail the run; each is audited FAILED and warned about, and a timed-out
//! hook is killed with its children.

use serde_json::{Value, json};

use crate::hooks::support::process_gone;
use crate::support::harness::Test;
use crate::support::run::{assert_consistent, delta, mock, only_run, wait_until};
use crate::support::snapshot::snapshot;

const AGENT: &str = r#"
name: resilient
llm:
  model: test-model
tools:
  - name: echo
    description: Prints its text.
    exec: "echo ${text}"
"#;

const HOOKS: &str = r#"
on_iteration_start:
  command: [sh, -c, "echo 'cannot reach the dashboard' >&2; exit 1"]
pre_llm_request:
  command: [sh, "${AGENT_HOME}/slow.sh"]
  timeout_ms: 500
pre_tool_execution:
  command: [sh, -c, "echo '{\"skip\": tru' > \"${DELTA_HOOK_IO_PATH}output/control.json\""]
"#;

/// Leaves a child that would outlive the hook if only the hook were killed.
const SLOW_HOOK: &str = r#"sleep 300 &
echo $! >> child.pids
wait
"#;

#[test]
fn failing_hooks_are_audited_and_warned_and_the_run_completes() {
    let mock = mock(
        "steps:\n  - message:\n      tool_calls: [{name: echo, arguments: {text: ran}}]\n  - message: {content: done}\n",
    );
    let test = Test::new()
        .agent("agent", AGENT)
        .file("agent/hooks.yaml", HOOKS)
        .file("agent/slow.sh", SLOW_HOOK);
    let run = delta(test, &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "go"])
        .run()
        .code(0);
    snapshot!(run, @r#"
    exit code: 0
    ----- stdout -----
    --- Run Summary ---
    Run ID:     [RUN_ID]
    Status:     COMPLETED
    Duration:   [DURATION]
    -------------------
    Result:
    done
    -------------------

    ----- stderr -----
    ▶ run [RUN_ID] · agent resilient · model test-model
      workspace [TEMP]/ws

    ── iteration 1/30 ──
    warning: on_iteration_start hook exited with code 1; the run goes on (details in io/hooks/001_on_iteration_start/)
    warning: pre_llm_request hook timed out after 500 ms and was killed with its child processes; proceeding with the request as built (details in io/hooks/002_pre_llm_request/)
    → echo {"text":"ran"}
    warning: pre_tool_execution hook wrote an invalid output/control.json: expected ident at line 2 column 0; expected {"skip": true, "observation": "why"}; proceeding with the tool call (details in io/hooks/003_pre_tool_execution/)
      ✓ exit 0 · [DURATION]
      │ ran

    ── iteration 2/30 ──
    warning: on_iteration_start hook exited with code 1; the run goes on (details in io/hooks/004_on_iteration_start/)
    warning: pre_llm_request hook timed out after 500 ms and was killed with its child processes; proceeding with the request as built (details in io/hooks/005_pre_llm_request/)
    done

    ✔ COMPLETED after 2 iterations
    "#);

    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "COMPLETED");
    let hook_events: Vec<Value> = files
        .journal()
        .into_iter()
        .filter(|e| e["type"] == "HOOK_EXECUTION_AUDIT" || e["type"] == "SYSTEM_MESSAGE")
        .map(|e| json!({"type": e["type"], "payload": e["payload"]}))
        .collect();
    let audit = |step: u32, hook: &str| {
        json!({"type": "HOOK_EXECUTION_AUDIT", "payload": {
            "hook_name": hook, "status": "FAILED",
            "io_path_ref": format!("io/hooks/{step:03}_{hook}/"),
        }})
    };
    let warn = |content: String| json!({"type": "SYSTEM_MESSAGE", "payload": {"level": "WARN", "content": content}});
    assert_eq!(
        hook_events,
        [
            audit(1, "on_iteration_start"),
            warn("on_iteration_start hook exited with code 1; the run goes on (details in io/hooks/001_on_iteration_start/)".into()),
            audit(2, "pre_llm_request"),
            warn("pre_llm_request hook timed out after 500 ms and was killed with its child processes; proceeding with the request as built (details in io/hooks/002_pre_llm_request/)".into()),
            audit(3, "pre_tool_execution"),
            warn("pre_tool_execution hook wrote an invalid output/control.json: expected ident at line 2 column 0; expected {\"skip\": true, \"observation\": \"why\"}; proceeding with the tool call (details in io/hooks/003_pre_tool_execution/)".into()),
            audit(4, "on_iteration_start"),
            warn("on_iteration_start hook exited with code 1; the run goes on (details in io/hooks/004_on_iteration_start/)".into()),
            audit(5, "pre_llm_request"),
            warn("pre_llm_request hook timed out after 500 ms and was killed with its child processes; proceeding with the request as built (details in io/hooks/005_pre_llm_request/)".into()),
        ]
    );
    // The failures changed nothing: the tool ran, the requests went out as built.
    let result = files
        .journal()
        .into_iter()
        .find(|e| e["type"] == "ACTION_RESULT")
        .unwrap();
    assert_eq!(result["payload"]["observation_content"], "ran\n");
    assert_eq!(files.requests(), mock.requests());
    assert_eq!(
        files.read("io/hooks/001_on_iteration_start/execution_meta/stderr.log"),
        "cannot reach the dashboard\n"
    );

    // Each timed-out hook's background child was killed with it.
    let pids = run.read("ws/child.pids");
    let pids: Vec<i32> = pids.lines().map(|pid| pid.parse().unwrap()).collect();
    assert_eq!(pids.len(), 2);
    for pid in pids {
        wait_until("the hook's child to be gone", || process_gone(pid));
    }
}
