//! An agent with Claude Code's tool names (the example's agent.yaml), the example's hook
//! scripts, and a `hooks.json` the test writes; helpers to read what a run journaled.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::harness::{ROOT, Test};
use crate::support::run::{RunFiles, assert_consistent};

/// The example's agent.yaml: tools `Bash` (command), `Write` (file_path, content), `Read`.
pub const AGENT: &str = include_str!("../../../../../../examples/claude-hooks/agent.yaml");

/// The example's hook scripts, copied into every test agent's `hooks/`.
const SCRIPTS: [&str; 8] = [
    "block-dangerous.sh",
    "protect_paths.py",
    "sandbox_paths.py",
    "inject-context.sh",
    "format_after_write.py",
    "stop-once.sh",
    "approval_gate.py",
    "tag_input.py",
];

/// `agent/` with the example's agent.yaml and scripts and this `hooks.json`.
pub fn agent(test: Test, hooks_json: &Value) -> Test {
    let examples = Path::new(ROOT).join("examples/claude-hooks/hooks");
    SCRIPTS
        .iter()
        .fold(test.agent("agent", AGENT), |test, script| {
            let text = std::fs::read_to_string(examples.join(script)).expect("read a script");
            test.file(&format!("agent/hooks/{script}"), &text)
        })
        .file("agent/hooks.json", &hooks_json.to_string())
}

/// The command line that runs an example script as a published configuration would
/// (through its interpreter: a script just written may not be exec'd while other test
/// threads fork, ETXTBSY), with its arguments.
pub fn script(name: &str, args: &str) -> String {
    let interpreter = if name.ends_with(".py") {
        "python3"
    } else {
        "bash"
    };
    let args = if args.is_empty() {
        String::new()
    } else {
        format!(" {args}")
    };
    format!("{interpreter} \"$CLAUDE_PLUGIN_ROOT\"/hooks/{name}{args}")
}

/// A matcher group of command hooks, for `hooks.json`.
pub fn group(matcher: Option<&str>, commands: &[String]) -> Value {
    let hooks: Vec<Value> = commands
        .iter()
        .map(|command| json!({"type": "command", "command": command}))
        .collect();
    match matcher {
        Some(matcher) => json!({"matcher": matcher, "hooks": hooks}),
        None => json!({"hooks": hooks}),
    }
}

/// The payloads of the journal's events of `kind`.
pub fn payloads(files: &RunFiles, kind: &str) -> Vec<Value> {
    files
        .journal()
        .into_iter()
        .filter(|event| event["type"] == kind)
        .map(|event| event["payload"].clone())
        .collect()
}

/// The CLAUDE_HOOK payloads of `event`.
pub fn firings(files: &RunFiles, event: &str) -> Vec<Value> {
    payloads(files, "CLAUDE_HOOK")
        .into_iter()
        .filter(|hook| hook["event"] == event)
        .collect()
}

/// The stdin a firing's hook got (`input.json` of its record).
pub fn stdin_of(files: &RunFiles, firing: &Value) -> Value {
    let path = firing["io_path_ref"].as_str().expect("io_path_ref");
    serde_json::from_str(&files.read(&format!("{path}input.json"))).expect("input.json is JSON")
}

/// Every message text of an LLM request, one string.
pub fn text_of(request: &Value) -> String {
    request["messages"].to_string()
}

/// The `(role, content)` of a request's messages.
pub fn messages(request: &Value) -> Vec<(String, String)> {
    request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or_default().to_owned(),
                m["content"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// What every run that ends must satisfy, for a run continued by one or more processes:
/// each process's part of the journal is a whole run (seq without gaps, each
/// ACTION_REQUEST answered, ending with a RUN_END), and the last RUN_END's status is
/// `status`, as metadata says.
#[track_caller]
pub fn settled(files: &RunFiles, status: &str) {
    let journal = files.journal();
    let ends = journal.iter().filter(|e| e["type"] == "RUN_END").count();
    if ends == 1 {
        assert_consistent(files, status);
        return;
    }
    for (index, event) in journal.iter().enumerate() {
        assert_eq!(event["seq"], index + 1, "seq gap at line {}", index + 1);
    }
    let last = journal.last().expect("an event");
    assert_eq!(last["type"], "RUN_END");
    assert_eq!(last["payload"]["status"], status);
    assert_eq!(files.metadata()["status"], status);
    let ids = |kind: &str| -> Vec<Value> {
        journal
            .iter()
            .filter(|e| e["type"] == kind)
            .map(|e| e["payload"]["action_id"].clone())
            .collect()
    };
    let mut requested = ids("ACTION_REQUEST");
    let mut answered = ids("ACTION_RESULT");
    requested.sort_by_key(Value::to_string);
    answered.sort_by_key(Value::to_string);
    assert_eq!(
        requested, answered,
        "every ACTION_REQUEST gets one ACTION_RESULT"
    );
}
