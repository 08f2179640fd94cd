//! The LLM API misbehaving: retried when it may help, FAILED when it cannot, never a
//! panic, and always a consistent run directory.

use std::net::TcpListener;

use crate::support::harness::Test;
use crate::support::run::{
    API_KEY, HELLO_TASK, RunFiles, assert_consistent, assert_no_secret, delta, hello_world, mock,
    only_run,
};
use crate::support::snapshot::snapshot;

/// Runs hello-world against `script` and returns the run's files, after the checks every
/// faulty run must pass.
fn faulty_run(script: &str, code: i32, status: &str) -> (crate::support::harness::Run, RunFiles) {
    let mock = mock(script);
    let run = delta(hello_world(Test::new()), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", HELLO_TASK])
        .run()
        .code(code);
    // A guard for every caller, including those that pin files rather than stderr.
    assert!(!run.stderr().contains("panicked"), "{}", run.stderr());
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, status);
    assert_no_secret(run.path());
    (run, files)
}

/// The run's only LLM invocation: its directory and its parsed `metadata.json`.
fn only_invocation(files: &RunFiles) -> (std::path::PathBuf, serde_json::Value) {
    let dirs: Vec<_> = std::fs::read_dir(files.dir.join("io/invocations"))
        .expect("list io/invocations")
        .map(|entry| entry.expect("entry").path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let dir = dirs.into_iter().next().expect("one");
    let record = std::fs::read_to_string(dir.join("metadata.json")).expect("read");
    (dir, serde_json::from_str(&record).expect("JSON"))
}

#[test]
fn server_errors_are_retried_and_the_run_completes() {
    let script = "steps:\n  - error: {status: 500}\n  - error: {status: 503, retry_after: 0}\n  - message: {content: recovered}\n";
    let (run, files) = faulty_run(script, 0, "COMPLETED");
    assert_eq!(run.stdout().lines().nth(6), Some("recovered"));
    snapshot!(files.read("engine.log"));
    // The invocation record counts the attempts of the one successful call.
    let id = files.journal()[1]["payload"]["llm_invocation_ref"]
        .as_str()
        .expect("ref")
        .to_owned();
    let record: serde_json::Value =
        serde_json::from_str(&files.read(&format!("io/invocations/{id}/metadata.json")))
            .expect("JSON");
    assert_eq!(record["attempts"], 3);
    assert_eq!(record["status"], "SUCCESS");
}

#[test]
fn unauthorized_fails_at_once_with_the_server_message_on_stderr() {
    let script = r#"
steps:
  - error:
      status: 401
      body: {error: {message: "Incorrect API key provided: sk-e2e-***", type: invalid_request_error}}
"#;
    let (run, files) = faulty_run(script, 1, "FAILED");
    // The whole outcome: the server's message on stderr, and not the key.
    snapshot!(run, @"
    exit code: 1
    ----- stdout -----
    --- Run Summary ---
    Run ID:     [RUN_ID]
    Status:     FAILED
    Duration:   [DURATION]
    -------------------
    Error: the LLM API at http://127.0.0.1:[PORT]/v1/chat/completions answered HTTP 401: Incorrect API key provided: sk-e2e-*** (1 attempt(s)); check the API key in DELTA_API_KEY (or OPENAI_API_KEY) and that it may use this model
    -------------------

    ----- stderr -----
    ▶ run [RUN_ID] · agent hello-world · model gpt-4o-mini
      workspace [TEMP]/ws

    ── iteration 1/30 ──

    ✖ FAILED after 1 iteration
      LlmError: the LLM API at http://127.0.0.1:[PORT]/v1/chat/completions answered HTTP 401: Incorrect API key provided: sk-e2e-*** (1 attempt(s)); check the API key in DELTA_API_KEY (or OPENAI_API_KEY) and that it may use this model
    ");
    let metadata = files.metadata();
    assert_eq!(metadata["error"]["type"], "LlmError");
    assert_eq!(metadata["iterations"], 1);
    assert_eq!(files.types(), ["RUN_START", "RUN_END"]);
    // Not retried: a wrong key stays wrong.
    snapshot!(files.read("engine.log"));
    // The answer the call failed on is on record, as received.
    let (dir, record) = only_invocation(&files);
    let response: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("response.json")).expect("read"))
            .expect("the server's JSON");
    assert_eq!(
        response,
        serde_json::json!({"error": {"message": "Incorrect API key provided: sk-e2e-***", "type": "invalid_request_error"}})
    );
    assert_eq!(record["status"], "FAILED");
    assert_eq!(record["response_received"], true);
}

/// A server echoing the key in the answer a call fails on: response.json keeps the answer,
/// the key redacted (`faulty_run` checks that no file holds the key).
#[test]
fn an_echoed_key_is_redacted_from_the_kept_answer() {
    let script = format!(
        "steps:\n  - error:\n      status: 401\n      body: {{error: {{message: \"bad key {API_KEY}\"}}}}\n"
    );
    // The run owns the test directory: it must live while its files are read.
    let (_run, files) = faulty_run(&script, 1, "FAILED");
    let (dir, record) = only_invocation(&files);
    let response = std::fs::read_to_string(dir.join("response.json")).expect("read");
    snapshot!(response, @r#"{"error":{"message":"bad key [REDACTED]"}}"#);
    assert_eq!(record["response_received"], true);
}

#[test]
fn dropped_connections_fail_after_the_retries() {
    let script = "steps:\n  - drop_connection: {repeat: 3}\n";
    let (run, files) = faulty_run(script, 1, "FAILED");
    // The cause after "last:" is the HTTP client's wording for a dropped connection, which
    // depends on when the drop is seen (closed before the message, reset by peer).
    assert!(
        run.stderr().contains("cannot reach the LLM API"),
        "{}",
        run.stderr()
    );
    snapshot!(run.stderr(), @"
    ▶ run [RUN_ID] · agent hello-world · model gpt-4o-mini
      workspace [TEMP]/ws

    ── iteration 1/30 ──
      llm: retry 1/2 in 0 ms after connection failed: client error (SendRequest): connection closed before message completed
      llm: retry 2/2 in 0 ms after connection failed: client error (SendRequest): connection closed before message completed

    ✖ FAILED after 1 iteration
      LlmError: cannot reach the LLM API at http://127.0.0.1:[PORT]/v1/chat/completions (3 attempt(s); last: connection failed: client error (SendRequest): connection closed before message completed); is the server running? check DELTA_BASE_URL (or OPENAI_BASE_URL) and the network
    ");
    assert_eq!(files.read("engine.log").matches(": retry ").count(), 2);
    // Nothing arrived: no response.json, and the record says so.
    let (dir, record) = only_invocation(&files);
    assert!(dir.join("request.json").is_file());
    assert!(!dir.join("response.json").exists());
    assert_eq!(record["status"], "FAILED");
    assert_eq!(record["response_received"], false);
}

#[test]
fn a_dropped_connection_once_is_survived() {
    let script = "steps:\n  - drop_connection: {}\n  - message: {content: fine}\n";
    faulty_run(script, 0, "COMPLETED");
}

#[test]
fn a_garbage_response_fails_the_run_without_retrying() {
    let script = "steps:\n  - malformed: {body: \"<html>502 Bad Gateway</html>\"}\n";
    let (run, files) = faulty_run(script, 1, "FAILED");
    snapshot!(run.stderr(), @"
    ▶ run [RUN_ID] · agent hello-world · model gpt-4o-mini
      workspace [TEMP]/ws

    ── iteration 1/30 ──

    ✖ FAILED after 1 iteration
      LlmError: the LLM API at http://127.0.0.1:[PORT]/v1/chat/completions answered HTTP 200 with a body that is not a chat completion (not JSON: expected value at line 1 column 1); it began: <html>502 Bad Gateway</html>; check that DELTA_BASE_URL points at an OpenAI-compatible API (usually ending in /v1)
    ");
    snapshot!(files.metadata()["error"]["message"], @r#""the LLM API at http://127.0.0.1:[PORT]/v1/chat/completions answered HTTP 200 with a body that is not a chat completion (not JSON: expected value at line 1 column 1); it began: <html>502 Bad Gateway</html>; check that DELTA_BASE_URL points at an OpenAI-compatible API (usually ending in /v1)""#);
    let (dir, record) = only_invocation(&files);
    assert_eq!(
        std::fs::read(dir.join("response.json")).expect("read"),
        b"<html>502 Bad Gateway</html>"
    );
    assert_eq!(record["response_received"], true);
}

#[test]
fn nothing_listening_fails_the_run_with_a_clear_message() {
    // A port that was free a moment ago: connecting is refused.
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    let run = hello_world(Test::new())
        .env("DELTA_BASE_URL", &format!("http://127.0.0.1:{port}/v1"))
        .env("DELTA_API_KEY", API_KEY)
        .env("DELTA_LLM_BACKOFF_MS", "0")
        .env("DELTA_LLM_MAX_ATTEMPTS", "2")
        .args([
            "run", "--agent", "agent", "-w", "ws", "-m", HELLO_TASK, "--format", "json",
        ])
        .run()
        .code(1);
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "FAILED");
    let output: serde_json::Value = serde_json::from_str(run.stdout()).expect("JSON");
    assert_eq!(output["error"]["type"], "LlmError");
    let message = output["error"]["message"].as_str().expect("message");
    assert!(
        message.starts_with(&format!(
            "cannot reach the LLM API at http://127.0.0.1:{port}/v1/chat/completions (2 attempt(s)"
        )),
        "{message}"
    );
}

#[test]
fn a_missing_api_key_for_openai_is_a_configuration_error_before_anything_is_created() {
    let run = hello_world(Test::new())
        .args(["run", "--agent", "agent", "-w", "ws", "-m", HELLO_TASK])
        .run()
        .code(126)
        .stdout_is("");
    snapshot!(run.stderr(), @"
    error: no API key is set for https://api.openai.com/v1
      = help: set DELTA_API_KEY (or OPENAI_API_KEY) in the environment, or add the line `DELTA_API_KEY=<your key>` to one of these .env files (earlier ones win over later ones and over the environment): [TEMP]/ws/.env, [TEMP]/agent/.env; a local OpenAI-compatible server needs no key: point DELTA_BASE_URL at it instead, e.g. DELTA_BASE_URL=http://localhost:11434/v1
    ");
    assert!(!run.path().join("ws").exists());
    assert!(!run.path().join("agent/workspaces").exists());
}

#[test]
fn an_invalid_agent_exits_126_and_creates_nothing() {
    let run = Test::new()
        .agent(
            "agent",
            "name: broken\nllm: {model: m}\ntools:\n  - name: t\n    exec: \"ls | wc\"\n",
        )
        .env("DELTA_BASE_URL", "http://127.0.0.1:9/v1")
        .args(["run", "--agent", "agent", "-m", "go", "-y"])
        .run()
        .code(126);
    snapshot!(run.stderr(), @r#"
    error: Shell metacharacter '|' not allowed in exec: mode. Use shell: mode or remove pipe.
      --> [TEMP]/agent/agent.yaml:4:5
      = help: exec: runs the program directly, without a shell; write `shell:` instead of `exec:` to use '|', or quote it ("|") to pass it as literal text
    "#);
    assert!(!run.path().join("agent/workspaces").exists());
}

#[test]
fn a_bad_run_id_is_a_usage_error_and_a_taken_one_fails_before_touching_the_run() {
    let mock = mock("steps:\n  - message: {content: first}\n");
    let run = delta(hello_world(Test::new()), &mock)
        .args([
            "run",
            "--agent",
            "agent",
            "-w",
            "ws",
            "-m",
            "x",
            "--run-id",
            "../escape",
        ])
        .run()
        .code(2);
    snapshot!(run.stderr(), @r#"
    error: invalid value '../escape' for '--run-id <ID>': invalid run id "../escape": it starts with '.'; a run id is 1 to 128 characters from A-Z a-z 0-9 . _ - and starts with a letter or digit (for example a UUID, or [RUN_ID])

    For more information, try '--help'.
    "#);
    assert!(!run.path().join("ws").exists());

    let run = delta(run.then(), &mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "-m", "x", "--run-id", "job-1",
        ])
        .run()
        .code(0);
    let before = run.read("ws/.delta/job-1/metadata.json");
    let journal = run.read("ws/.delta/job-1/journal.jsonl");
    let run = delta(run.then(), &mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "-m", "y", "--run-id", "job-1",
        ])
        .run()
        .code(1)
        .stdout_is("");
    // The fix is said once, on the help line (the message used to repeat it).
    let workspace = run.path().canonicalize().unwrap().join("ws");
    assert_eq!(
        run.stderr(),
        format!(
            "error: run job-1 already exists in {0}\n  = help: choose another --run-id, or \
             resume that run with `delta continue --run-id job-1 -w {0}`\n",
            workspace.display()
        )
    );
    assert_eq!(run.read("ws/.delta/job-1/metadata.json"), before);
    assert_eq!(run.read("ws/.delta/job-1/journal.jsonl"), journal);
    assert_eq!(mock.requests().len(), 1);
}

// `--run-id VERSION` was reported as "run VERSION already exists": .delta/VERSION is the
// workspace's layout file. Such names are refused as run ids, before anything runs.
#[test]
fn a_run_id_naming_a_file_of_the_delta_directory_is_refused() {
    let mock = mock("steps:\n  - message: {content: first}\n");
    let mut run = delta(hello_world(Test::new()), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "x"])
        .run()
        .code(0);
    for id in ["VERSION", "version"] {
        run = delta(run.then(), &mock)
            .args([
                "run", "--agent", "agent", "-w", "ws", "-m", "x", "--run-id", id,
            ])
            .run()
            .code(2);
        snapshot!(format!("run_id_{id}"), run.stderr());
    }
    assert_eq!(run.read("ws/.delta/VERSION"), "1.10\n");
    assert_eq!(mock.requests().len(), 1);
}
