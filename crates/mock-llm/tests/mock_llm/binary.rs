//! The `mock-llm` binary: port on stdout, serving, signals, and bad scripts.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};

use mock_llm::ReadScript as _;
use serde_json::{Value, json};

use crate::support::{chat_body, client, get_json};

const BIN: &str = env!("CARGO_BIN_EXE_mock-llm");

/// `mock-llm --script SCRIPT` run to its end (for scripts it refuses).
fn serve(script: &std::path::Path) -> std::process::Output {
    Command::new(BIN)
        .arg("--script")
        .arg(script)
        .output()
        .unwrap()
}

/// Kills the server if the test fails before stopping it, so no process outlives the test.
struct Running(Option<Child>);

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[tokio::test]
async fn prints_its_port_then_serves_and_records_until_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.yaml");
    std::fs::write(
        &script,
        "models: [bin-model]\nsteps:\n  - message: {content: from the binary}\n",
    )
    .unwrap();
    let record = dir.path().join("record.jsonl");
    let child = Command::new(BIN)
        .arg("--script")
        .arg(&script)
        .arg("--port")
        .arg("0")
        .arg("--record")
        .arg(&record)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut running = Running(Some(child));
    let child = running.0.as_mut().unwrap();
    let mut first_line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first_line)
        .unwrap();
    let port: u16 = first_line
        .strip_suffix('\n')
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("first stdout line is not a port: {first_line:?}"));
    assert_ne!(port, 0);

    let base = format!("http://127.0.0.1:{port}/v1");
    let models = get_json(&format!("{base}/models")).await;
    assert_eq!(models["data"][0]["id"], "bin-model");
    let completion: Value = client()
        .post(format!("{base}/chat/completions"))
        .bearer_auth("sk-binary-canary")
        .json(&chat_body(0))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        completion["choices"][0]["message"]["content"],
        "from the binary"
    );

    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let output = running.0.take().unwrap().wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");

    let recorded = std::fs::read_to_string(&record).unwrap();
    assert!(!recorded.contains("sk-binary-canary"));
    let line: Value = serde_json::from_str(recorded.trim_end()).unwrap();
    assert_eq!(
        line,
        json!({"index": 0, "step": 0, "path": "/v1/chat/completions",
               "body": chat_body(0), "has_authorization": true})
    );
}

#[test]
fn invalid_script_exits_2_naming_file_line_and_fix() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bad.yaml");
    std::fs::write(&script, "steps:\n  - message:\n      contnt: hi\n").unwrap();
    let output = serve(&script);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "error: invalid mock script: unknown field `contnt`, expected one of content, \
             tool_calls, usage, finish_reason, reasoning, redacted_reasoning, delay_ms, stream_hold_until, repeat\n  --> {}:3:7\n  = help: a \
             script is `steps:` (a list; each entry is one of `message`, `error`, \
             `drop_connection`, `malformed`) with optional `mode` and `models`; see \
             `mock-llm --help` or schemas/mock-script.schema.json\n",
            script.display()
        )
    );
}

#[test]
fn missing_script_file_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("absent.yaml");
    let output = serve(&script);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(&format!(
            "error: cannot read mock script {}: ",
            script.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.ends_with("\n  = help: check the path given to --script\n"),
        "{stderr}"
    );
}

#[test]
fn help_documents_the_script_format() {
    let output = Command::new(BIN).arg("--help").output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let help = String::from_utf8_lossy(&output.stdout);
    for needle in [
        "--script <FILE>",
        "--record <FILE>",
        "SCRIPT FORMAT",
        "by_conversation",
        "drop_connection",
        "retry_after",
        "repeat",
    ] {
        assert!(help.contains(needle), "--help lacks {needle:?}:\n{help}");
    }
    // The example in --help is a valid script.
    let example: String = help
        .split_once("SCRIPT FORMAT")
        .unwrap()
        .1
        .lines()
        .skip(2)
        .take_while(|line| !line.is_empty())
        .map(|line| format!("{}\n", line.strip_prefix("  ").unwrap()))
        .collect();
    let script = mock_llm::Script::from_yaml_str(&example).unwrap();
    assert_eq!(script.len(), 7);
}

#[test]
fn missing_script_argument_is_a_usage_error() {
    let output = Command::new(BIN).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--script <FILE>"));
}
