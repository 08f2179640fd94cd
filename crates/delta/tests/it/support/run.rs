//! Shared pieces of the end-to-end tests: the example agent, the scripted model, and the
//! checks every run's files must pass.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mock_llm::{MockProfile, MockServer, ReadScript as _, Script, ServerOptions};
use serde_json::Value;

use super::harness::{ROOT, Test};

/// The API key every test run gets: a marker that must never be found in a file.
pub const API_KEY: &str = "sk-e2e-canary-3f9c1d7a5b2e";

/// The scripted model of the hello-world example.
pub const HELLO_SCRIPT: &str = include_str!("../../../../../examples/hello-world/mock-script.yaml");

/// The task the hello-world runs are given.
pub const HELLO_TASK: &str = "Create hello.txt with a greeting";

/// Starts the scripted model, as strict as the OpenAI API about what it accepts (issue
/// 11: a lenient mock let requests through that real servers refuse).
pub fn mock(script: &str) -> MockServer {
    strict_mock(script, MockProfile::Openai)
}

/// Starts the scripted model validating requests as `profile`'s server does.
pub fn strict_mock(script: &str, profile: MockProfile) -> MockServer {
    let options = ServerOptions {
        strict: Some(profile),
        ..ServerOptions::default()
    };
    MockServer::start_with(
        Script::from_yaml_str(script).expect("valid mock script"),
        options,
    )
    .expect("start mock-llm")
}

/// A copy of `examples/hello-world` in `agent/` of the test directory (configuration
/// files only: no workspaces, no demo files).
pub fn hello_world(test: Test) -> Test {
    let example = Path::new(ROOT).join("examples/hello-world");
    ["agent.yaml", "system_prompt.md", "context.yaml"]
        .into_iter()
        .fold(test, |test, name| {
            let text = fs::read_to_string(example.join(name)).expect("read the example");
            test.file(&format!("agent/{name}"), &text)
        })
}

/// `delta` pointed at `mock`, with the canary key and fast retries.
pub fn delta(test: Test, mock: &MockServer) -> Test {
    test.env("DELTA_BASE_URL", &mock.base_url())
        .env("DELTA_API_KEY", API_KEY)
        .env("DELTA_LLM_BACKOFF_MS", "0")
        .env("DELTA_LLM_MAX_ATTEMPTS", "3")
}

/// The files of one run.
pub struct RunFiles {
    pub dir: PathBuf,
}

impl RunFiles {
    /// Every journal line, parsed.
    pub fn journal(&self) -> Vec<Value> {
        fs::read_to_string(self.dir.join("journal.jsonl"))
            .expect("read journal.jsonl")
            .lines()
            .map(|line| serde_json::from_str(line).expect("a journal line is JSON"))
            .collect()
    }

    /// The `type` of every journal line.
    pub fn types(&self) -> Vec<String> {
        self.journal()
            .iter()
            .map(|event| event["type"].as_str().expect("type").to_owned())
            .collect()
    }

    pub fn metadata(&self) -> Value {
        let text = fs::read_to_string(self.dir.join("metadata.json")).expect("read metadata");
        serde_json::from_str(&text).expect("metadata.json is JSON")
    }

    pub fn read(&self, relative: &str) -> String {
        let path = self.dir.join(relative);
        fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
    }

    /// The request body of each LLM call, in journal order of the THOUGHTs (a failed
    /// call has no THOUGHT and is not included).
    pub fn requests(&self) -> Vec<Value> {
        self.journal()
            .iter()
            .filter(|event| event["type"] == "THOUGHT")
            .map(|event| {
                let id = event["payload"]["llm_invocation_ref"]
                    .as_str()
                    .expect("ref");
                serde_json::from_str(&self.read(&format!("io/invocations/{id}/request.json")))
                    .expect("request.json is JSON")
            })
            .collect()
    }
}

/// The files of run `id` in `workspace`.
pub fn run_files(workspace: &Path, id: &str) -> RunFiles {
    RunFiles {
        dir: workspace.join(".delta").join(id),
    }
}

/// The single run in `workspace`.
#[track_caller]
pub fn only_run(workspace: &Path) -> RunFiles {
    let runs = runs_in(workspace);
    assert_eq!(runs.len(), 1, "runs in {}: {runs:?}", workspace.display());
    RunFiles {
        dir: runs[0].clone(),
    }
}

/// Every run directory in `workspace/.delta`.
pub fn runs_in(workspace: &Path) -> Vec<PathBuf> {
    let mut runs: Vec<PathBuf> = fs::read_dir(workspace.join(".delta"))
        .expect("list .delta")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.is_dir())
        .collect();
    runs.sort();
    runs
}

/// What every finished run must satisfy: seq 1..n without gaps, RUN_START first, exactly
/// one RUN_END and it is last, with the status metadata.json has; every ACTION_REQUEST
/// answered by one ACTION_RESULT; metadata final and consistent.
#[track_caller]
pub fn assert_consistent(run: &RunFiles, status: &str) {
    let journal = run.journal();
    for (index, event) in journal.iter().enumerate() {
        assert_eq!(event["seq"], index + 1, "seq gap at line {}", index + 1);
    }
    let types = run.types();
    assert_eq!(types.first().map(String::as_str), Some("RUN_START"));
    assert_eq!(
        types.last().map(String::as_str),
        Some("RUN_END"),
        "{types:?}"
    );
    assert_eq!(types.iter().filter(|t| *t == "RUN_END").count(), 1);
    let end = journal.last().expect("an event");
    assert_eq!(end["payload"]["status"], status);

    let requested: Vec<&Value> = journal
        .iter()
        .filter(|e| e["type"] == "ACTION_REQUEST")
        .map(|e| &e["payload"]["action_id"])
        .collect();
    let answered: Vec<&Value> = journal
        .iter()
        .filter(|e| e["type"] == "ACTION_RESULT")
        .map(|e| &e["payload"]["action_id"])
        .collect();
    assert_eq!(
        requested, answered,
        "every ACTION_REQUEST gets its ACTION_RESULT"
    );

    let metadata = run.metadata();
    assert_eq!(metadata["status"], status);
    assert!(metadata["end_time"].is_string(), "{metadata:#}");
    // Indexing a missing field gives null, so an absent RUN_END error matches null.
    assert_eq!(metadata["error"], end["payload"]["error"]);
    let thoughts = types.iter().filter(|t| *t == "THOUGHT").count();
    let iterations = metadata["iterations"].as_u64().expect("iterations") as usize;
    assert!(
        iterations == thoughts || iterations == thoughts + 1,
        "iterations {iterations}, THOUGHTs {thoughts}"
    );
}

/// Fails when `API_KEY` occurs in any file under `dir`.
#[track_caller]
pub fn assert_no_secret(dir: &Path) {
    assert_in_no_file(dir, API_KEY);
}

/// Fails when `needle` (a secret) occurs in any file under `dir`.
#[track_caller]
pub fn assert_in_no_file(dir: &Path, needle: &str) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            for entry in fs::read_dir(&path).expect("list") {
                stack.push(entry.expect("entry").path());
            }
        } else if let Ok(bytes) = fs::read(&path) {
            let found = bytes
                .windows(needle.len())
                .any(|window| window == needle.as_bytes());
            assert!(!found, "{needle} was written to {}", path.display());
        }
    }
}

/// Polls `condition` until it holds; a hang guard, not a timing assertion.
#[track_caller]
pub fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !condition() {
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}
