//! Tool output is bounded: a tool that never stops writing is killed at the output limit,
//! the model hears so, and the run goes on to a consistent end.

use crate::support::harness::Test;
use crate::support::run::{assert_consistent, delta, hello_world, mock, only_run};
use crate::support::snapshot::snapshot;

const MIB: u64 = 1024 * 1024;

// Regression: `read_file {path: /dev/zero}` made the engine buffer output until memory
// ran out; it died and left the run RUNNING with no RUN_END.
#[test]
fn a_tool_reading_dev_zero_is_cut_at_the_limit_and_the_run_completes() {
    let script = r#"
steps:
  - message:
      content: "Reading it."
      tool_calls: [{name: read_file, arguments: {path: /dev/zero}}]
  - message: {content: "That file never ends."}
"#;
    let mock = mock(script);
    let run = delta(hello_world(Test::new()), &mock)
        .env("DELTA_TOOL_OUTPUT_LIMIT_MB", "1")
        .args([
            "run",
            "--agent",
            "agent",
            "-w",
            "ws",
            "-m",
            "read /dev/zero",
        ])
        .run()
        .code(0);
    assert_eq!(run.stdout().lines().nth(6), Some("That file never ends."));
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "COMPLETED");
    assert_eq!(
        files.types(),
        [
            "RUN_START",
            "THOUGHT",
            "ACTION_REQUEST",
            "ACTION_RESULT",
            "THOUGHT",
            "RUN_END"
        ]
    );
    let journal = files.journal();
    let result = &journal[3]["payload"];
    assert_eq!(result["status"], "FAILED");
    let id = result["execution_ref"].as_str().expect("ref");
    let observation = result["observation_content"].as_str().expect("text");
    assert!(
        observation.ends_with("\n[output exceeded 1 MiB; process group killed]"),
        "{observation:?}"
    );
    assert!(observation.starts_with("\0\0\0\0"));
    // The marker line in the middle, whole (the bytes around it are checked above).
    let marker: Vec<&str> = observation
        .lines()
        .filter(|l| l.starts_with("[..."))
        .collect();
    assert_eq!(
        marker,
        [format!(
            "[... 121250 characters and 917504 more bytes omitted; full output in io/tool_executions/{id}/ ...]"
        )]
    );
    assert!(observation.chars().count() <= 10_000);

    // The whole output up to the limit is on disk, and the record says why it stopped.
    let record = files.dir.join("io/tool_executions").join(id);
    let stdout_log = std::fs::metadata(record.join("stdout.log")).expect("stdout.log");
    assert_eq!(stdout_log.len(), MIB);
    assert_eq!(
        files.read(&format!("io/tool_executions/{id}/exit_code.txt")),
        "output limit exceeded\n"
    );
    // The model's next request carries that observation.
    let second = &mock.recorded()[1].body;
    let tool_message = second["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("a tool message");
    assert_eq!(tool_message["content"], observation);
}

#[test]
fn a_malformed_output_limit_is_a_configuration_error_before_anything_is_created() {
    let mock = mock("steps:\n  - message: {content: never}\n");
    let run = delta(hello_world(Test::new()), &mock)
        .env("DELTA_TOOL_OUTPUT_LIMIT_MB", "lots")
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "anything"])
        .run()
        .code(126);
    snapshot!(run.stderr(), @r#"
    error: DELTA_TOOL_OUTPUT_LIMIT_MB="lots" is not a whole number of MiB greater than 0
      = help: fix DELTA_TOOL_OUTPUT_LIMIT_MB, or unset it for the default
    "#);
    assert!(!run.path().join("ws").exists());
    assert!(mock.recorded().is_empty());
}
