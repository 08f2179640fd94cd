//! The live stream on stderr tells the user what is under way: retries and waits of the
//! LLM call without `-v`, and on a terminal the running tool with its elapsed time.

use std::process::Command;

use crate::support::harness::Test;
use crate::support::run::{delta, mock};

const AGENT: &str = r#"
name: slow
llm:
  model: test-model
tools:
  - name: slow_tool
    exec: "sleep ${seconds}"
"#;

// Regression for issue 12 item 13: an LLM call waiting to retry after HTTP 429 showed
// nothing without -v (or a spinner saying "thinking").
#[test]
fn llm_retries_are_shown_without_verbose() {
    let mock = mock(
        r#"
steps:
  - error: {status: 429}
  - message: {content: "done"}
"#,
    );
    delta(Test::new().agent("agent", AGENT), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "go"])
        .run()
        .code(0)
        .stderr_has("llm: retry 1/")
        .stderr_has("after HTTP 429");
}

// Regression for issue 12 item 13: while a tool ran, a terminal showed nothing. Run under
// a pseudo-terminal (`script`), the running tool is named with its elapsed time.
#[test]
fn a_running_tool_is_shown_on_a_terminal_with_its_elapsed_time() {
    let mock = mock(
        r#"
steps:
  - message:
      content: "Waiting a moment."
      tool_calls: [{name: slow_tool, arguments: {seconds: "1"}}]
  - message: {content: "done"}
"#,
    );
    let test = Test::new().agent("agent", AGENT);
    let dir = test.path().to_path_buf();
    let command = format!(
        "{} run --agent agent -w ws -m go",
        env!("CARGO_BIN_EXE_delta")
    );
    let output = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(&dir)
        .env("DELTA_BASE_URL", mock.base_url())
        .env("DELTA_API_KEY", "sk-live-stream-test-key")
        .env("NO_COLOR", "1")
        .output()
        .expect("script(1) from util-linux runs the command on a pseudo-terminal");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{text}");
    assert!(text.contains("slow_tool running… 0.0 s"), "{text}");
}
