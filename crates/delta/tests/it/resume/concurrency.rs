//! Ten runs in one workspace at once (seed 002 §3, "frontierless"): half answer their
//! question on stdin (`-i`), half pause and are continued later, all at once and in
//! another order. Every run completes, and every journal holds only its own run.

use std::io::Write;
use std::process::{Child, Stdio};

use serde_json::json;

use crate::resume::support::{RunDir, assert_sound, delta_command, finish, mock, write_recorder};

const RUNS: usize = 10;

const SCRIPT: &str = r#"
mode: by_conversation
steps:
  - message:
      tool_calls:
        - {name: ask_human, arguments: {prompt: "Which answer?"}}
  - message:
      delay_ms: 30
      tool_calls:
        - {name: record, arguments: {line: recorded, secs: "0.02"}}
  - message: {content: "done"}
"#;

#[test]
fn ten_runs_share_a_workspace_pause_and_continue_in_any_order() {
    let base = tempfile::tempdir().unwrap();
    write_recorder(base.path());
    let mock = mock(SCRIPT);
    let ws = base.path().join("ws");
    let ws_arg = ws.display().to_string();

    let started: Vec<Child> = (0..RUNS)
        .map(|i| {
            let interactive = i % 2 == 0;
            let mut command = delta_command(base.path(), &mock);
            command
                .args(["run", "--agent", "agent", "-w", &ws_arg])
                .args(["-m", &format!("task-{i}"), "--run-id", &format!("par-{i}")])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            if interactive {
                command.arg("-i");
            }
            let mut child = command.spawn().unwrap();
            let mut stdin = child.stdin.take().unwrap();
            if interactive {
                stdin.write_all(format!("answer-{i}\n").as_bytes()).unwrap();
            }
            drop(stdin);
            child
        })
        .collect();
    for (i, child) in started.into_iter().enumerate() {
        let (code, _, stderr) = finish(child);
        let expected = if i % 2 == 0 { 0 } else { 101 };
        assert_eq!(code, expected, "par-{i}: {stderr}");
    }

    // The paused ones, continued all at once, last started first.
    let continued: Vec<(usize, Child)> = (0..RUNS)
        .rev()
        .filter(|i| i % 2 == 1)
        .map(|i| {
            let child = delta_command(base.path(), &mock)
                .args(["continue", "--run-id", &format!("par-{i}"), "-w", &ws_arg])
                .args(["-m", &format!("answer-{i}")])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (i, child)
        })
        .collect();
    for (i, child) in continued {
        let (code, _, stderr) = finish(child);
        assert_eq!(code, 0, "par-{i}: {stderr}");
    }

    for i in 0..RUNS {
        let run = RunDir::new(&ws, &format!("par-{i}"));
        assert_sound(&run, "COMPLETED").unwrap_or_else(|e| panic!("par-{i}: {e}"));
        assert_eq!(run.payloads("RUN_START")[0]["task"], format!("task-{i}"));
        assert_eq!(
            run.payloads("HUMAN_INPUT_RECEIVED")[0]["response"],
            json!(format!("answer-{i}"))
        );
        assert_eq!(
            run.payloads("USER_MESSAGE"),
            Vec::<serde_json::Value>::new()
        );
        assert_eq!(run.metadata()["result"], "done");
    }
    // What the model saw: each conversation with its own task got its own answer.
    for request in mock.requests() {
        let messages = request["messages"].as_array().unwrap();
        let task = messages
            .iter()
            .find(|m| m["role"] == "user")
            .and_then(|m| m["content"].as_str())
            .unwrap();
        let i = task.strip_prefix("task-").unwrap();
        for tool in messages.iter().filter(|m| m["role"] == "tool").take(1) {
            assert_eq!(tool["content"], format!("answer-{i}"), "{request}");
        }
    }
    let ledger = std::fs::read_to_string(ws.join("ledger.txt")).unwrap();
    assert_eq!(ledger.lines().count(), RUNS);
    let listed = delta_command(base.path(), &mock)
        .args([
            "list-runs",
            "-w",
            &ws_arg,
            "--status",
            "COMPLETED",
            "--format",
            "raw",
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&listed.stdout).lines().count(),
        RUNS
    );
}
