//! End to end (the built `delta` against mock-llm): all eight hooks fire at their points,
//! in order, with their environment, and `on_run_end` fires however the run ends.

use std::process::Child;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;

use crate::hooks::support::every_hook_runs;
use crate::support::harness::Test;
use crate::support::run::{
    API_KEY, RunFiles, assert_consistent, assert_no_secret, delta, mock, only_run, wait_until,
};

const AGENT: &str = r#"
name: hooked
llm:
  model: test-model
tools:
  - name: echo
    description: Prints its text.
    exec: "echo ${text}"
  - name: broken
    description: A tool whose program does not exist.
    exec: "/nonexistent/delta-test-program ${x}"
"#;

/// Every hook appends one line to order.log and its whole environment to env.log.
const LOG_HOOK: &str = r#"printf '%s %s %s %s\n' "$DELTA_HOOK_NAME" "$ITERATION_COUNT" \
  "${TOOL_NAME:-${RUN_STATUS:--}}" "${ERROR_MESSAGE:+error}" >> order.log
{ echo "== $DELTA_HOOK_NAME"; env; } >> env.log
"#;

fn hooked_agent() -> Test {
    Test::new()
        .agent("agent", AGENT)
        .file("agent/hooks.yaml", &every_hook_runs("log.sh"))
        .file("agent/log.sh", LOG_HOOK)
}

fn order(test_dir: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(test_dir.join("ws/order.log"))
        .unwrap()
        .lines()
        .map(|line| line.trim_end().to_owned())
        .collect()
}

/// The HOOK_EXECUTION_AUDIT payloads of the run, in journal order.
fn audits(files: &RunFiles) -> Vec<Value> {
    files
        .journal()
        .into_iter()
        .filter(|event| event["type"] == "HOOK_EXECUTION_AUDIT")
        .map(|event| event["payload"].clone())
        .collect()
}

/// Every invocation is audited SUCCESS under its own, increasing step.
#[track_caller]
fn assert_audited_in_order(files: &RunFiles, order: &[String]) {
    let audits = audits(files);
    let expected: Vec<Value> = order
        .iter()
        .zip(1..)
        .map(|(line, step)| {
            let hook = line.split(' ').next().unwrap();
            serde_json::json!({
                "hook_name": hook,
                "status": "SUCCESS",
                "io_path_ref": format!("io/hooks/{step:03}_{hook}/"),
            })
        })
        .collect();
    assert_eq!(audits, expected);
    for audit in &audits {
        let dir = files.dir.join(audit["io_path_ref"].as_str().unwrap());
        assert!(
            dir.join("input/context.json").is_file(),
            "{}",
            dir.display()
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("execution_meta/exit_code.txt")).unwrap(),
            "0\n"
        );
    }
}

#[test]
fn all_eight_hooks_fire_in_order_through_a_three_step_run() {
    let script = r#"
steps:
  - message:
      tool_calls: [{name: echo, arguments: {text: one}}]
  - message:
      tool_calls:
        - {name: echo, arguments: {text: two}}
        - {name: broken, arguments: {x: "1"}}
  - message: {content: done}
"#;
    let mock = mock(script);
    let run = delta(hooked_agent(), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "go"])
        .run()
        .code(0);

    let order = order(run.path());
    assert_eq!(
        order,
        [
            "on_iteration_start 1 -",
            "pre_llm_request 1 -",
            "post_llm_response 1 -",
            "pre_tool_execution 1 echo",
            "post_tool_execution 1 echo",
            "on_iteration_end 1 -",
            "on_iteration_start 2 -",
            "pre_llm_request 2 -",
            "post_llm_response 2 -",
            "pre_tool_execution 2 echo",
            "post_tool_execution 2 echo",
            "pre_tool_execution 2 broken",
            "on_error 2 - error",
            "post_tool_execution 2 broken",
            "on_iteration_end 2 -",
            "on_iteration_start 3 -",
            "pre_llm_request 3 -",
            "post_llm_response 3 -",
            "on_iteration_end 3 -",
            "on_run_end 3 COMPLETED",
        ]
    );
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "COMPLETED");
    assert_audited_in_order(&files, &order);
    // The audit of on_run_end comes before RUN_END: the run's record is complete.
    let types = files.types();
    assert_eq!(
        types[types.len() - 2..],
        ["HOOK_EXECUTION_AUDIT", "RUN_END"]
    );

    let env = run.read("ws/env.log");
    let run_id = files.dir.file_name().unwrap().to_str().unwrap().to_owned();
    // env.log is each hook's whole environment, which differs per machine: searched.
    assert!(env.contains(&format!("DELTA_RUN_ID={run_id}\n")), "{env}");
    assert!(
        env.contains(&format!("RUN_DIR={}\n", files.dir.display())),
        "{env}"
    );
    assert!(env.contains(&format!(
        "JOURNAL_PATH={}\n",
        files.dir.join("journal.jsonl").display()
    )));
    assert!(env.contains(&format!(
        "DELTA_HOOK_IO_PATH={}/\n",
        files.dir.join("io/hooks/001_on_iteration_start").display()
    )));
    assert!(env.contains("TOOL_RESULT=two\n"), "{env}");
    assert!(env.contains("\nDELTA_API_KEY=\n"), "{env}");
    assert!(!env.contains(API_KEY));
    assert_no_secret(run.path());
}

#[test]
fn on_error_and_on_run_end_fire_when_the_llm_fails() {
    let mock = mock("steps:\n  - error: {status: 401}\n");
    let run = delta(hooked_agent(), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "go"])
        .run()
        .code(1);

    let order = order(run.path());
    assert_eq!(
        order,
        [
            "on_iteration_start 1 -",
            "pre_llm_request 1 -",
            "on_error 1 - error",
            "on_run_end 1 FAILED",
        ]
    );
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "FAILED");
    assert_audited_in_order(&files, &order);
    let error = files.dir.join("io/hooks/003_on_error/input/payload.dat");
    let error: Value = serde_json::from_str(&std::fs::read_to_string(error).unwrap()).unwrap();
    assert_eq!(error["type"], "LlmError");
    assert_eq!(error, files.metadata()["error"]);
}

#[test]
fn on_run_end_fires_when_the_iteration_budget_is_spent() {
    let mock =
        mock("steps:\n  - message:\n      tool_calls: [{name: echo, arguments: {text: a}}]\n");
    let run = delta(hooked_agent(), &mock)
        .args([
            "run",
            "--agent",
            "agent",
            "-w",
            "ws",
            "-m",
            "go",
            "--max-iterations",
            "1",
        ])
        .run()
        .code(1);

    let order = order(run.path());
    assert_eq!(order.last().unwrap(), "on_run_end 1 INTERRUPTED");
    assert_eq!(order.len(), 7);
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "INTERRUPTED");
    assert_audited_in_order(&files, &order);
}

fn sigint(child: &Child) {
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap());
    kill(pid, Signal::SIGINT).unwrap();
}

#[test]
fn on_run_end_fires_when_the_run_is_interrupted_by_sigint() {
    let mock = mock("steps:\n  - message: {content: too late, delay_ms: 60000}\n");
    let test =
        delta(hooked_agent(), &mock).args(["run", "--agent", "agent", "-w", "ws", "-m", "go"]);
    let child = test.spawn();
    wait_until("the LLM request", || mock.requests().len() == 1);
    sigint(&child);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));

    let order = order(test.path());
    assert_eq!(
        order,
        [
            "on_iteration_start 1 -",
            "pre_llm_request 1 -",
            "on_run_end 1 INTERRUPTED",
        ]
    );
    let files = only_run(&test.path().join("ws"));
    assert_consistent(&files, "INTERRUPTED");
    assert_audited_in_order(&files, &order);
}

// An answer given by `delta continue` passes the question's post_tool_execution hook, as
// an answer given on the terminal does, before the calls of the same turn run.
#[test]
fn an_answer_given_by_continue_passes_the_post_tool_execution_hook() {
    let script = r#"
steps:
  - message:
      tool_calls:
        - {name: ask_human, arguments: {prompt: "Which colour?"}}
        - {name: echo, arguments: {text: after}}
  - message: {content: done}
"#;
    let mock = mock(script);
    let paused = delta(hooked_agent(), &mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "asked", "-m", "go",
        ])
        .run()
        .code(101);
    let finished = delta(paused.then(), &mock)
        .args(["continue", "--run-id", "asked", "-w", "ws", "-m", "blue"])
        .run()
        .code(0);
    let order = order(finished.path());
    assert_eq!(
        order,
        [
            "on_iteration_start 1 -",
            "pre_llm_request 1 -",
            "post_llm_response 1 -",
            "pre_tool_execution 1 ask_human",
            "on_run_end 1 WAITING_FOR_INPUT",
            "post_tool_execution 1 ask_human",
            "pre_tool_execution 1 echo",
            "post_tool_execution 1 echo",
            "on_iteration_start 2 -",
            "pre_llm_request 2 -",
            "post_llm_response 2 -",
            "on_iteration_end 2 -",
            "on_run_end 2 COMPLETED",
        ]
    );
    let files = only_run(&finished.path().join("ws"));
    assert_eq!(files.metadata()["status"], "COMPLETED");
    let answer = audits(&files)
        .into_iter()
        .find(|audit| audit["hook_name"] == "post_tool_execution")
        .expect("the question's post_tool_execution audit");
    let payload: Value = serde_json::from_str(
        &std::fs::read_to_string(
            files
                .dir
                .join(answer["io_path_ref"].as_str().unwrap())
                .join("input/payload.dat"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(payload["call"]["tool_name"], "ask_human");
    assert_eq!(
        payload["result"],
        serde_json::json!({"status": "SUCCESS", "exit_code": 0, "observation": "blue"})
    );
}
