//! SIGINT and SIGTERM mid-run: the work in flight is abandoned (a tool's whole process
//! group killed), the run ends INTERRUPTED with exit code 130, and its files stay
//! consistent.

use std::path::Path;
use std::process::Child;

use nix::errno::Errno;
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

use crate::support::harness::Test;
use crate::support::run::{assert_consistent, assert_no_secret, delta, mock, only_run, wait_until};
use crate::support::snapshot::snapshot;

const AGENT: &str = r#"
name: sleeper
llm:
  model: test-model
tools:
  - name: nap
    description: Sleeps in the background and waits, leaving its pid in the workspace.
    shell: "echo $$ > tool.pid; sleep ${seconds} & wait"
"#;

fn signal(child: &Child, signal: Signal) {
    let pid = Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    kill(pid, signal).expect("signal delta");
}

/// Waits for delta to exit and returns its exit code and stderr.
fn finish(child: Child) -> (i32, String) {
    let output = child.wait_with_output().expect("wait for delta");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn sigint_during_a_slow_llm_call_interrupts_the_run() {
    let mock = mock("steps:\n  - message: {content: too late, delay_ms: 60000}\n");
    let test = delta(Test::new().agent("agent", AGENT), &mock).args([
        "run",
        "--agent",
        "agent",
        "-w",
        "ws",
        "-m",
        "wait for it",
    ]);
    let child = test.spawn();
    wait_until("the LLM request", || mock.requests().len() == 1);
    signal(&child, Signal::SIGINT);
    let (code, stderr) = finish(child);
    assert_eq!(code, 130, "{stderr}");
    snapshot!(stderr, @"
    ▶ run [RUN_ID] · agent sleeper · model test-model
      workspace [TEMP]/ws

    ── iteration 1/30 ──

    ■ INTERRUPTED after 1 iteration
      Interrupted: interrupted by SIGINT
    ");
    let files = only_run(&test.path().join("ws"));
    assert_consistent(&files, "INTERRUPTED");
    let metadata = files.metadata();
    assert_eq!(metadata["error"]["type"], "Interrupted");
    assert_eq!(metadata["error"]["message"], "interrupted by SIGINT");
    assert_eq!(files.types(), ["RUN_START", "RUN_END"]);
    // The call's request is on record, and its record says why it has no response.
    let invocations = files.dir.join("io/invocations");
    let entries: Vec<_> = std::fs::read_dir(&invocations).expect("list").collect();
    assert_eq!(entries.len(), 1);
    let dir = entries
        .into_iter()
        .next()
        .expect("one")
        .expect("entry")
        .path();
    assert!(dir.join("request.json").is_file());
    assert!(!dir.join("response.json").exists());
    let record = std::fs::read_to_string(dir.join("metadata.json")).expect("read");
    snapshot!(record, @r#"
    {
      "invocation_id": "[UUID]",
      "iteration": 1,
      "model": "test-model",
      "response_model": null,
      "status": "CANCELLED",
      "started_at": "[TIME]",
      "duration_ms": [DURATION],
      "api": "chat",
      "token_usage": null,
      "finish_reason": null,
      "attempts": 1,
      "retries": [],
      "error": "cancelled by SIGINT",
      "response_received": false,
      "context": {
        "estimated_tokens": 65,
        "budget_tokens": null,
        "left_out_iterations": 0,
        "left_out_messages": 0,
        "kept_messages": 0,
        "cut_sources": [],
        "fits": true
      }
    }
    "#);
    assert_no_secret(test.path());
}

fn group_is_gone(pgid: i32) -> bool {
    killpg(Pid::from_raw(pgid), None) == Err(Errno::ESRCH)
}

fn read_pid(path: &Path) -> Option<i32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[rstest::rstest]
#[case::sigint(Signal::SIGINT)]
#[case::sigterm(Signal::SIGTERM)]
fn a_signal_during_a_slow_tool_kills_its_process_group_and_interrupts_the_run(
    #[case] sent: Signal,
) {
    let name = sent.as_str();
    let script = "steps:\n  - message: {tool_calls: [{name: nap, arguments: {seconds: \"60\"}}]}\n  - message: {content: never}\n";
    let mock = mock(script);
    let test = delta(Test::new().agent("agent", AGENT), &mock).args([
        "run", "--agent", "agent", "-w", "ws", "-m", "nap", "--format", "json",
    ]);
    let child = test.spawn();
    let pid_file = test.path().join("ws/tool.pid");
    wait_until("the tool to start", || read_pid(&pid_file).is_some());
    let pgid = read_pid(&pid_file).expect("pid");
    assert!(!group_is_gone(pgid), "the tool's group runs");
    signal(&child, sent);
    let output = child.wait_with_output().expect("wait for delta");
    assert_eq!(output.status.code(), Some(130));
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(result["status"], "INTERRUPTED");
    assert_eq!(result["error"]["message"], format!("interrupted by {name}"));

    // The shell and its background sleep were killed with the group, not left behind.
    wait_until("the tool's process group to disappear", || {
        group_is_gone(pgid)
    });

    let files = only_run(&test.path().join("ws"));
    assert_consistent(&files, "INTERRUPTED");
    assert_eq!(
        files.types(),
        [
            "RUN_START",
            "THOUGHT",
            "ACTION_REQUEST",
            "ACTION_RESULT",
            "RUN_END"
        ]
    );
    let result = &files.journal()[3]["payload"];
    assert_eq!(result["status"], "ERROR");
    assert!(
        result["observation_content"]
            .as_str()
            .expect("text")
            .starts_with(&format!(
                "Error: the run was interrupted by {name} while this command ran"
            )),
        "{result}"
    );
    let record = files
        .dir
        .join("io/tool_executions")
        .join(result["execution_ref"].as_str().expect("ref"));
    assert_eq!(
        std::fs::read_to_string(record.join("exit_code.txt")).expect("read"),
        "interrupted\n"
    );
    assert_eq!(mock.requests().len(), 1, "no LLM call after the signal");
}
