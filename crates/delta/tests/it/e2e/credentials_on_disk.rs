//! Credentials that reach the engine by roads other than a tool's output — a server that
//! echoes the key, a model that copies it into tool arguments, a hook that writes it, a
//! base URL with userinfo — are masked before anything reaches disk (issue 12, items 7–9).

use std::path::Path;

use crate::support::harness::Test;
use crate::support::run::{API_KEY, delta, mock, only_run};

/// Every file under `dir` that contains `secret`.
fn files_holding(dir: &Path, secret: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).expect("list") {
                stack.push(entry.expect("entry").path());
            }
        } else if let Ok(bytes) = std::fs::read(&path)
            && bytes.windows(secret.len()).any(|w| w == secret.as_bytes())
        {
            found.push(path.display().to_string());
        }
    }
    found.sort();
    found
}

const AGENT: &str = r#"
name: echo
llm:
  model: test-model
tools:
  - name: save
    exec: "printf %s ${text}"
"#;

/// The hooks of the agent: a pre_tool_execution hook that only watches (its input holds
/// the tool's arguments), and a pre_llm_request hook that writes the key into its
/// override, as a hook reading `/proc/$PPID/environ` could.
fn hooks_yaml() -> String {
    format!(
        "pre_tool_execution:\n  command: [\"true\"]\n\
         pre_llm_request:\n  command: [\"sh\", \"-c\", \"sed 's/Remember/Key {API_KEY}; remember/' \\\"$DELTA_HOOK_IO_PATH/input/payload.dat\\\" > \\\"$DELTA_HOOK_IO_PATH/output/payload_override.dat\\\"\"]\n"
    )
}

/// A model that echoes the key in its text, copies it into a tool's arguments, and ends
/// with it in the final answer (the run's result).
fn echoing_script() -> String {
    format!(
        r#"
steps:
  - message:
      content: "Remember: your key is {API_KEY}."
      tool_calls:
        - {{name: save, arguments: {{text: "key={API_KEY}"}}}}
  - message: {{content: "The key was {API_KEY}."}}
"#
    )
}

// Regression for issue 12 items 8 and 9: the key echoed by the server or put by the model
// into tool arguments was stored in the journal, the metadata result, command.txt and
// hook inputs; a pre_llm_request hook's payload_override.dat holding it stayed on disk.
#[test]
fn a_key_echoed_by_the_server_or_the_model_reaches_no_file() {
    let mock = mock(&echoing_script());
    let run = delta(
        Test::new()
            .agent("agent", AGENT)
            .file("agent/hooks.yaml", &hooks_yaml()),
        &mock,
    )
    .args(["run", "--agent", "agent", "-w", "ws", "-v", "-m", "go"])
    .run()
    .code(0);
    assert_eq!(
        files_holding(&run.path().join("ws"), API_KEY),
        Vec::<String>::new()
    );
    let hook_overrides = files_holding(&run.path().join("ws"), "[REDACTED]; remember");
    assert!(
        hook_overrides
            .iter()
            .any(|f| f.ends_with("payload_override.dat")),
        "{hook_overrides:?}"
    );
    assert!(!run.stdout().contains(API_KEY), "{}", run.stdout());
    // Masked, not dropped: the records still say where the key was.
    let journal =
        std::fs::read_to_string(only_run(&run.path().join("ws")).dir.join("journal.jsonl"))
            .unwrap();
    assert!(journal.contains("key=[REDACTED]"), "{journal}");
}

// Regression for issue 12 item 7: credentials in DELTA_BASE_URL's userinfo were written to
// metadata.json, the journal, engine.log and stderr when the server failed.
#[test]
fn url_userinfo_credentials_are_written_nowhere() {
    let token = "TOKEN-userinfo-5e8a1c";
    let run = Test::new()
        .agent("agent", AGENT)
        .env(
            "DELTA_BASE_URL",
            &format!("http://user:{token}@127.0.0.1:9/v1"),
        )
        .env("DELTA_LLM_MAX_ATTEMPTS", "1")
        .args(["run", "--agent", "agent", "-w", "ws", "-v", "-m", "go"])
        .run()
        .code(1);
    assert_eq!(
        files_holding(&run.path().join("ws"), token),
        Vec::<String>::new()
    );
    assert!(!run.stderr().contains(token), "{}", run.stderr());
    assert!(!run.stdout().contains(token), "{}", run.stdout());
    assert!(
        run.stdout().contains("http://[REDACTED]@127.0.0.1:9/v1"),
        "{}",
        run.stdout()
    );
}

// Issue 24: the takeover of `delta continue` writes the journal and metadata.json before
// the engine starts; it is handed the run's redactor like every other writer, so a key
// pasted into the instruction is masked there too.
#[test]
fn a_key_in_the_instruction_of_a_continue_reaches_no_file() {
    let mock =
        mock("steps:\n  - message: {content: \"first\"}\n  - message: {content: \"second\"}\n");
    let run = delta(Test::new().agent("agent", AGENT), &mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "r1", "-m", "go",
        ])
        .run()
        .code(0);
    let instruction = format!("use the key {API_KEY} from now on");
    let run = delta(run.then(), &mock)
        .args(["continue", "--run-id", "r1", "-w", "ws", "-m", &instruction])
        .run()
        .code(0);
    assert_eq!(
        files_holding(&run.path().join("ws"), API_KEY),
        Vec::<String>::new()
    );
    let journal = std::fs::read_to_string(run.path().join("ws/.delta/r1/journal.jsonl")).unwrap();
    assert!(
        journal.contains("use the key [REDACTED] from now on"),
        "{journal}"
    );
}
