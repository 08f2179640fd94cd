//! Shared pieces of the end-to-end tests: the recording agent, the scripted model, run files
//! and the checks a continued run's journal must pass.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use mock_llm::{MockServer, ReadScript as _, Script};
use serde_json::Value;

use crate::support::harness::Test;

/// The API key every test run gets.
pub const API_KEY: &str = "sk-resume-test-5e1f";

/// An agent whose one tool appends a line to `ledger.txt` in the workspace and then waits:
/// counting the ledger's lines tells how often each call ran.
pub const RECORDER: &str = r#"
name: recorder
llm:
  model: test-model
tools:
  - name: record
    description: Append a line to ledger.txt, then wait the given seconds.
    shell: "printf '%s\n' ${line} >> ledger.txt; sleep ${secs}"
"#;

/// Starts the scripted model.
pub fn mock(script: &str) -> MockServer {
    MockServer::start(Script::from_yaml_str(script).expect("valid mock script"))
        .expect("start mock-llm")
}

/// A test directory with the recorder agent in `agent/`.
pub fn recorder() -> Test {
    Test::new().agent("agent", RECORDER)
}

/// `delta` pointed at `mock`, with fast retries.
pub fn delta(test: Test, mock: &MockServer) -> Test {
    test.env("DELTA_BASE_URL", &mock.base_url())
        .env("DELTA_API_KEY", API_KEY)
        .env("DELTA_LLM_BACKOFF_MS", "0")
        .env("DELTA_LLM_MAX_ATTEMPTS", "2")
}

/// The files of one run.
#[derive(Debug, Clone)]
pub struct RunDir {
    pub dir: PathBuf,
}

impl RunDir {
    pub fn new(workspace: &Path, run_id: &str) -> Self {
        RunDir {
            dir: workspace.join(".delta").join(run_id),
        }
    }

    /// Every journal line, parsed (a torn line fails the test).
    pub fn journal(&self) -> Vec<Value> {
        fs::read_to_string(self.dir.join("journal.jsonl"))
            .expect("read journal.jsonl")
            .lines()
            .map(|line| serde_json::from_str(line).expect("a journal line is JSON"))
            .collect()
    }

    pub fn types(&self) -> Vec<String> {
        self.journal()
            .iter()
            .map(|event| event["type"].as_str().expect("type").to_owned())
            .collect()
    }

    /// The payloads of the events of type `kind`.
    pub fn payloads(&self, kind: &str) -> Vec<Value> {
        self.journal()
            .into_iter()
            .filter(|event| event["type"] == kind)
            .map(|event| event["payload"].clone())
            .collect()
    }

    pub fn metadata(&self) -> Value {
        let text = fs::read_to_string(self.dir.join("metadata.json")).expect("read metadata");
        serde_json::from_str(&text).expect("metadata.json is JSON")
    }

    pub fn status(&self) -> String {
        self.metadata()["status"]
            .as_str()
            .expect("status")
            .to_owned()
    }
}

/// What every run's journal must satisfy however often its processes were killed: seq
/// 1..n without gaps, one RUN_START and it is first; every ACTION_REQUEST answered by
/// exactly one later ACTION_RESULT and every ACTION_RESULT answering one; every THOUGHT's
/// tool calls answered exactly once before the next THOUGHT; the last line a RUN_END with
/// the status metadata.json has. A run WAITING_FOR_INPUT has exactly its `ask_human` call
/// open.
#[track_caller]
pub fn assert_sound(run: &RunDir, status: &str) -> Result<(), String> {
    let journal = run.journal();
    for (index, event) in journal.iter().enumerate() {
        if event["seq"] != index + 1 {
            return Err(format!("seq {} at line {}", event["seq"], index + 1));
        }
    }
    let types = run.types();
    if types.first().map(String::as_str) != Some("RUN_START")
        || types.iter().filter(|t| *t == "RUN_START").count() != 1
    {
        return Err(format!("RUN_START must be first and alone: {types:?}"));
    }
    let mut open_requests: Vec<String> = Vec::new();
    let mut open_asks: Vec<String> = Vec::new();
    let mut seen_actions: Vec<String> = Vec::new();
    let mut pending_calls: Vec<String> = Vec::new();
    for event in &journal {
        let payload = &event["payload"];
        match event["type"].as_str().unwrap_or_default() {
            "THOUGHT" => {
                if !pending_calls.is_empty() {
                    return Err(format!(
                        "calls {pending_calls:?} unanswered at seq {}",
                        event["seq"]
                    ));
                }
                pending_calls = payload["tool_calls"]
                    .as_array()
                    .expect("tool_calls")
                    .iter()
                    .map(|c| c["id"].as_str().expect("id").to_owned())
                    .collect();
            }
            "ACTION_REQUEST" => {
                let id = payload["action_id"].as_str().expect("action_id").to_owned();
                if seen_actions.contains(&id) {
                    return Err(format!("action {id} requested twice"));
                }
                seen_actions.push(id.clone());
                if payload["tool_name"] == "ask_human" {
                    open_asks.push(id.clone());
                }
                open_requests.push(id);
            }
            "ACTION_RESULT" => {
                let id = payload["action_id"].as_str().expect("action_id");
                let Some(at) = open_requests.iter().position(|open| open == id) else {
                    return Err(format!("result for {id} without an open request"));
                };
                open_requests.remove(at);
                let call = payload["tool_call_id"].as_str().expect("tool_call_id");
                let Some(at) = pending_calls.iter().position(|c| c == call) else {
                    return Err(format!("result for call {call} that is not pending"));
                };
                pending_calls.remove(at);
            }
            _ => {}
        }
    }
    let paused = status == "WAITING_FOR_INPUT"
        && open_requests.len() == 1
        && pending_calls.len() == 1
        && open_asks.contains(&open_requests[0]);
    if !paused && (!open_requests.is_empty() || !pending_calls.is_empty()) {
        return Err(format!(
            "unanswered at the end: requests {open_requests:?}, calls {pending_calls:?}"
        ));
    }
    let last = journal.last().expect("an event");
    if last["type"] != "RUN_END" || last["payload"]["status"] != status {
        return Err(format!("last event {last}"));
    }
    if run.metadata()["status"] != status {
        return Err(format!("metadata status {}", run.metadata()["status"]));
    }
    Ok(())
}

/// Polls `condition` until it holds; a hang guard, not a timing assertion.
#[track_caller]
pub fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !condition() {
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits for a spawned delta and returns its exit code, stdout and stderr.
pub fn finish(child: Child) -> (i32, String, String) {
    let output = child.wait_with_output().expect("wait for delta");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The `content` of the last message with `role` in a recorded chat request.
pub fn last_message(request: &Value, role: &str) -> Option<String> {
    request["messages"]
        .as_array()?
        .iter()
        .rev()
        .find(|m| m["role"] == role)
        .and_then(|m| m["content"].as_str().map(str::to_owned))
}

/// A `delta` command run in `dir` against `mock`, its environment scrubbed like the
/// harness's; stdin, stdout and stderr are the caller's to set.
pub fn delta_command(dir: &Path, mock: &MockServer) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_delta"));
    command
        .current_dir(dir)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("DELTA_FSYNC")
        .env("DELTA_BASE_URL", mock.base_url())
        .env("DELTA_API_KEY", API_KEY)
        .env("DELTA_LLM_BACKOFF_MS", "0")
        .env("NO_COLOR", "1");
    command
}

/// Writes the recorder agent into `dir/agent`.
pub fn write_recorder(dir: &Path) {
    for (name, text) in [
        ("agent/agent.yaml", RECORDER),
        ("agent/system_prompt.md", "You record steps.\n"),
        (
            "agent/context.yaml",
            crate::support::harness::DEFAULT_CONTEXT_YAML,
        ),
    ] {
        let path = dir.join(name);
        fs::create_dir_all(path.parent().expect("parent")).expect("create agent dir");
        fs::write(path, text).expect("write agent file");
    }
}
