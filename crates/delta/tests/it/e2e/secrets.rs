//! The API key reaches the server and the tools that may need it, and nothing else: no
//! file, no log, no output, whatever a tool, generator or hook prints.

use std::path::Path;

use serde_json::Value;

use crate::support::harness::Test;
use crate::support::run::{
    API_KEY, HELLO_SCRIPT, HELLO_TASK, assert_consistent, assert_no_secret, delta, hello_world,
    mock, only_run,
};
use crate::support::snapshot::snapshot;

const REDACTED: &str = "[REDACTED]";

#[test]
fn the_api_key_is_sent_but_written_nowhere() {
    let mock = mock(HELLO_SCRIPT);
    let run = delta(hello_world(Test::new()), &mock)
        .args([
            "run", "--agent", "agent", "-y", "-v", "-m", HELLO_TASK, "--format", "json",
        ])
        .run()
        .code(0);
    let recorded = mock.recorded();
    assert_eq!(recorded.len(), 3);
    assert!(recorded.iter().all(|request| request.has_authorization));
    // The agent directory holds the workspace (workspaces/W001) and so every run file.
    assert!(run.path().join("agent/workspaces/W001/.delta").is_dir());
    assert_no_secret(run.path());
    // The whole outcome (RunResult JSON and the verbose stream), which holds no key.
    snapshot!(run);
}

#[test]
fn a_key_from_the_agent_env_file_is_not_copied_anywhere() {
    let mock = mock(HELLO_SCRIPT);
    let run = hello_world(Test::new())
        .file("agent/.env", &format!("DELTA_API_KEY={API_KEY}\n"))
        .env("DELTA_BASE_URL", &mock.base_url())
        .args(["run", "--agent", "agent", "-w", "ws", "-m", HELLO_TASK])
        .run()
        .code(0);
    assert!(
        mock.recorded()
            .iter()
            .all(|request| request.has_authorization)
    );
    std::fs::remove_file(run.path().join("agent/.env")).expect("remove the key's own file");
    assert_no_secret(run.path());
}

/// Tools that show the key three ways: `env`, hello-world's `read_file` on
/// `/proc/self/environ` (NUL-separated), and a test that only says whether it is set.
const LEAKY_AGENT: &str = r#"
name: leaky
llm:
  model: test-model
tools:
  - name: show_env
    exec: "env"
  - name: read_file
    exec: "cat ${path}"
  - name: has_key
    shell: '[ -n "$DELTA_API_KEY" ] && echo yes || echo no'
  - name: key_on_stderr
    shell: 'printf "key=%s\n" "$DELTA_API_KEY" >&2; exit 3'
"#;

const LEAKY_SCRIPT: &str = r#"
steps:
  - message:
      content: "Let me look around."
      tool_calls:
        - {name: show_env, arguments: {}}
        - {name: read_file, arguments: {path: /proc/self/environ}}
        - {name: has_key, arguments: {}}
        - {name: key_on_stderr, arguments: {}}
  - message: {content: "done"}
"#;

/// The `observation_content` of every ACTION_RESULT, by tool name in call order.
fn observations(journal: &[Value]) -> Vec<String> {
    journal
        .iter()
        .filter(|event| event["type"] == "ACTION_RESULT")
        .map(|event| {
            event["payload"]["observation_content"]
                .as_str()
                .expect("observation")
                .to_owned()
        })
        .collect()
}

/// Every ACTION_RESULT's execution directory.
fn execution_dirs(run_dir: &Path, journal: &[Value]) -> Vec<std::path::PathBuf> {
    journal
        .iter()
        .filter(|event| event["type"] == "ACTION_RESULT")
        .map(|event| {
            let id = event["payload"]["execution_ref"].as_str().expect("ref");
            run_dir.join("io/tool_executions").join(id)
        })
        .collect()
}

// Regression: tools inherit the engine's environment (a sub-agent run as a tool needs the
// key), and a tool printing it used to put the key into stdout.log, the journal's
// ACTION_RESULT and the next request.json.
#[test]
fn a_tool_printing_its_environment_shows_the_key_redacted_while_still_receiving_it() {
    let mock = mock(LEAKY_SCRIPT);
    let run = delta(Test::new().agent("agent", LEAKY_AGENT), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-v", "-m", "leak it"])
        .run()
        .code(0);
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "COMPLETED");
    let journal = files.journal();
    let seen = observations(&journal);
    assert_eq!(seen.len(), 4);
    let marked = format!("DELTA_API_KEY={REDACTED}");
    // The environment listing differs per machine: only the key's line is pinned.
    assert!(seen[0].contains(&marked), "env: {}", seen[0]);
    assert!(seen[1].contains(&marked), "/proc/self/environ: {}", seen[1]);
    // The tool still has the key: only what it prints is redacted.
    assert_eq!(seen[2], "yes\n");
    assert_eq!(seen[3], format!("[stderr]\nkey={REDACTED}\n[exit code: 3]"));

    let dirs = execution_dirs(&files.dir, &journal);
    let stdout_log = std::fs::read(dirs[1].join("stdout.log")).expect("stdout.log");
    let marked_nul = format!("DELTA_API_KEY={REDACTED}\0");
    assert!(
        stdout_log
            .windows(marked_nul.len())
            .any(|window| window == marked_nul.as_bytes()),
        "stdout.log keeps the rest of /proc/self/environ byte for byte"
    );
    assert_eq!(
        std::fs::read_to_string(dirs[3].join("stderr.log")).expect("stderr.log"),
        format!("key={REDACTED}\n")
    );
    // The model is sent the redacted observations (the machine's environment: a search).
    let second = &mock.recorded()[1].body;
    let tool_message = second["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("a tool message");
    assert!(
        tool_message["content"]
            .as_str()
            .expect("text")
            .contains(&marked)
    );
    // The request and the verbose stream carry the machine's environment: a search.
    assert!(!second.to_string().contains(API_KEY));
    assert_no_secret(run.path());
    assert!(!run.stdout().contains(API_KEY));
    assert!(!run.stderr().contains(API_KEY));
}

#[test]
fn hello_world_reading_proc_self_environ_writes_no_key() {
    let script = r#"
steps:
  - message:
      content: "Reading it."
      tool_calls: [{name: read_file, arguments: {path: /proc/self/environ}}]
  - message: {content: "done", repeat: 1}
"#;
    let mock = mock(script);
    let run = delta(hello_world(Test::new()), &mock)
        .args([
            "run",
            "--agent",
            "agent",
            "-w",
            "ws",
            "-m",
            "read the environment",
        ])
        .run()
        .code(0);
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "COMPLETED");
    // /proc/self/environ differs per machine: only the key's entry is pinned.
    assert!(observations(&files.journal())[0].contains(&format!("DELTA_API_KEY={REDACTED}")));
    assert_no_secret(run.path());
}

const GENERATOR_CONTEXT: &str = r#"
sources:
  - type: file
    path: '${AGENT_HOME}/system_prompt.md'
  - type: computed_file
    id: environment
    generator:
      command: ["sh", "-c", "mkdir -p .ctx && env > .ctx/env.md && env && env >&2"]
    output_path: '${CWD}/.ctx/env.md'
  - type: journal
"#;

#[test]
fn a_generator_printing_the_key_into_its_output_file_reaches_the_model_redacted() {
    let mock = mock("steps:\n  - message: {content: done}\n");
    let run = delta(
        Test::new()
            .agent("agent", LEAKY_AGENT)
            .file("agent/context.yaml", GENERATOR_CONTEXT),
        &mock,
    )
    .args(["run", "--agent", "agent", "-w", "ws", "-m", "look"])
    .run()
    .code(0);
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "COMPLETED");
    let request = files.requests().remove(0);
    let block = request["messages"][1]["content"].as_str().expect("text");
    assert!(
        block.starts_with("# Context Block: environment\n\n"),
        "{block}"
    );
    // The generator's block is the machine's environment: only the key's line is pinned.
    assert!(
        block.contains(&format!("DELTA_API_KEY={REDACTED}")),
        "{block}"
    );
    // The request holds that environment too: a search.
    assert!(!mock.recorded()[0].body.to_string().contains(API_KEY));
    // The generator wrote that file itself: the engine cannot stop a process writing the
    // key into its own files, only keep it out of everything the engine writes. (A search:
    // the file is the machine's environment.)
    let own_file = run.path().join("ws/.ctx/env.md");
    assert!(
        std::fs::read_to_string(&own_file)
            .expect("env.md")
            .contains(API_KEY)
    );
    std::fs::remove_file(own_file).expect("remove the generator's own file");
    assert_no_secret(run.path());
}

#[test]
fn a_failing_generator_quoting_the_key_fails_the_run_with_it_redacted() {
    let mock = mock("steps:\n  - message: {content: never}\n");
    let context = "sources:\n  - type: computed_file\n    generator:\n      command: [\"sh\", \"-c\", \"echo key=$DELTA_API_KEY >&2; exit 4\"]\n    output_path: '${CWD}/never.md'\n  - type: journal\n";
    let run = delta(
        Test::new()
            .agent("agent", LEAKY_AGENT)
            .file("agent/context.yaml", context),
        &mock,
    )
    .args(["run", "--agent", "agent", "-w", "ws", "-m", "look"])
    .run()
    .code(1);
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "FAILED");
    snapshot!(files.metadata()["error"]["message"], @r#""context source #1 in context.yaml: generator `sh -c 'echo key=$DELTA_API_KEY >&2; exit 4'` exited with code 4; its stderr: key=[REDACTED]""#);
    snapshot!(files.read("engine.log"), @"
    [TIME] INFO run [RUN_ID] started: agent 'leaky' ([TEMP]/agent), workspace [TEMP]/ws, model test-model, max_iterations 30, pid [PID]
    [TIME] INFO iteration 1 started
    [TIME] ERROR context source #1 in context.yaml: generator `sh -c 'echo key=$DELTA_API_KEY >&2; exit 4'` exited with code 4; its stderr: key=[REDACTED]
    [TIME] INFO run ended FAILED after 1 iteration(s): ContextError: context source #1 in context.yaml: generator `sh -c 'echo key=$DELTA_API_KEY >&2; exit 4'` exited with code 4; its stderr: key=[REDACTED]
    ");
    assert_no_secret(run.path());
    snapshot!(run, @"
    exit code: 1
    ----- stdout -----
    --- Run Summary ---
    Run ID:     [RUN_ID]
    Status:     FAILED
    Duration:   [DURATION]
    -------------------
    Error: context source #1 in context.yaml: generator `sh -c 'echo key=$DELTA_API_KEY >&2; exit 4'` exited with code 4; its stderr: key=[REDACTED]
    -------------------

    ----- stderr -----
    ▶ run [RUN_ID] · agent leaky · model test-model
      workspace [TEMP]/ws

    ── iteration 1/30 ──

    ✖ FAILED after 1 iteration
      ContextError: context source #1 in context.yaml: generator `sh -c 'echo key=$DELTA_API_KEY >&2; exit 4'` exited with code 4; its stderr: key=[REDACTED]
    ");
}

/// A hook cannot read the key from its environment (it is blanked), but it can from its
/// parent's, the engine's: `/proc/$PPID/environ`.
const PARENT_KEY: &str =
    r#"key=$(tr '\0' '\n' < /proc/$PPID/environ | sed -n 's/^DELTA_API_KEY=//p')"#;

#[test]
fn a_hook_reading_the_engines_environment_leaks_the_key_nowhere() {
    let pre_tool = format!(
        "{PARENT_KEY}; echo \"out $key\"; echo \"err $key\" >&2; \
         printf '{{\"skip\": true, \"observation\": \"blocked %s\"}}' \"$key\" \
         > \"${{DELTA_HOOK_IO_PATH}}output/control.json\""
    );
    let hooks = format!(
        "pre_tool_execution:\n  command: [sh, -c, {}]\n",
        serde_json::to_string(&pre_tool).expect("JSON string")
    );
    let script = r#"
steps:
  - message:
      content: "Checking."
      tool_calls: [{name: has_key, arguments: {}}]
  - message: {content: "done"}
"#;
    let mock = mock(script);
    let run = delta(
        Test::new()
            .agent("agent", LEAKY_AGENT)
            .file("agent/hooks.yaml", &hooks),
        &mock,
    )
    .args(["run", "--agent", "agent", "-w", "ws", "-m", "check"])
    .run()
    .code(0);
    let files = only_run(&run.path().join("ws"));
    assert_consistent(&files, "COMPLETED");
    assert_eq!(
        observations(&files.journal()),
        [format!("blocked {REDACTED}")]
    );
    let meta = files
        .dir
        .join("io/hooks/001_pre_tool_execution/execution_meta");
    let read = |name: &str| std::fs::read_to_string(meta.join(name)).expect("log");
    assert_eq!(read("stdout.log"), format!("out {REDACTED}\n"));
    assert_eq!(read("stderr.log"), format!("err {REDACTED}\n"));
    // control.json is in the run's record (io/hooks/): the engine rewrites it masked once
    // read (issue 12 item 9), where a generator's file in the workspace stays its own.
    let control = files
        .dir
        .join("io/hooks/001_pre_tool_execution/output/control.json");
    assert!(
        std::fs::read_to_string(&control)
            .expect("control")
            .contains(&format!("blocked {REDACTED}"))
    );
    assert_no_secret(run.path());
}
