//! Every firing is visible: a CLAUDE_HOOK journal line (event, hook, exit code, decision,
//! duration) with its `io/claude_hooks/` record, the same line in the `--format jsonl`
//! stream, a note in `delta view`, the exports (ATIF, OTLP), and `delta replay`, where the
//! hooks run again and a changed decision is a divergence. Seed hooks keep their own
//! protocol beside them in one agent.

use serde_json::{Value, json};

use super::support::{agent, firings, group, payloads, script, settled};
use crate::support::harness::Test;
use crate::support::run::{delta, mock, run_files};

/// A blocked `rm -rf`, an `echo`, a final answer sent back once.
const SCRIPT: &str = "mode: sequential\nsteps:\n\
     - message:\n    tool_calls:\n\
     \x20     - {name: Bash, arguments: {command: 'rm -rf data'}}\n\
     \x20     - {name: Bash, arguments: {command: 'echo hi'}}\n\
     - message: {content: 'Done.'}\n\
     - message: {content: 'Done. Changed nothing.'}\n";

/// Runs the agent with [`hooks`] as run `r1` of `ws`.
fn recorded(test: Test, mock: &mock_llm::MockServer) -> crate::support::harness::Run {
    delta(agent(test, &hooks()), mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "r1", "-m", "go",
        ])
        .run()
        .code(0)
}

fn hooks() -> Value {
    json!({"hooks": {
        "PreToolUse": [group(Some("Bash"), &[script("block-dangerous.sh", "")])],
        "Stop": [group(None, &[script("stop-once.sh", "")])],
    }})
}

#[test]
fn every_firing_is_journaled_and_streamed() {
    let mock = mock(SCRIPT);
    let run = delta(agent(Test::new(), &hooks()), &mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "r1", "-m", "go",
        ])
        .args(["--format", "jsonl"])
        .run()
        .code(0);
    let files = run_files(&run.path().join("ws"), "r1");
    settled(&files, "COMPLETED");
    let journaled: Vec<String> = files
        .read("journal.jsonl")
        .lines()
        .filter(|line| line.contains("\"type\":\"CLAUDE_HOOK\""))
        .map(str::to_owned)
        .collect();
    let streamed: Vec<String> = run
        .stdout()
        .lines()
        .filter(|line| line.contains("\"type\":\"CLAUDE_HOOK\""))
        .map(str::to_owned)
        .collect();
    assert_eq!(journaled.len(), 4, "two PreToolUse, two Stop");
    assert_eq!(
        streamed, journaled,
        "the stream carries each line byte for byte"
    );

    let guard = &firings(&files, "PreToolUse")[0];
    assert_eq!(guard["command"], script("block-dangerous.sh", ""));
    assert_eq!(guard["source"], "hooks.json");
    assert_eq!(guard["matcher"], "Bash");
    assert_eq!(guard["status"], "SUCCESS");
    assert_eq!(guard["exit_code"], 2);
    assert_eq!(guard["ended"], "2");
    assert_eq!(guard["decision"], "deny");
    assert_eq!(guard["tool_use_id"], "call_0_0");
    assert!(guard["duration_ms"].is_u64());
    let record = guard["io_path_ref"].as_str().unwrap();
    assert_eq!(record, "io/claude_hooks/001_PreToolUse/");
    assert_eq!(files.read(&format!("{record}exit_code.txt")), "2\n");
    assert_eq!(
        files.read(&format!("{record}command.txt")),
        format!("{}\n", script("block-dangerous.sh", ""))
    );
    assert!(
        files
            .read(&format!("{record}stderr.log"))
            .starts_with("Blocked by block-dangerous.sh")
    );
    let stdin: Value = serde_json::from_str(&files.read(&format!("{record}input.json"))).unwrap();
    assert_eq!(stdin["hook_event_name"], "PreToolUse");
    assert!(files.dir.join(format!("{record}stdout.log")).is_file());
    assert!(files.dir.join(format!("{record}duration_ms.txt")).is_file());
}

#[test]
fn view_and_exports_show_the_firings() {
    let mock = mock(SCRIPT);
    let run = recorded(Test::new(), &mock);
    let run = delta(run.then(), &mock)
        .args(["view", "--run-id", "r1", "-w", "ws", "-o", "page.html"])
        .run()
        .code(0);
    let page = run.read("page.html");
    assert!(
        page.contains("data-hook=\"PreToolUse\""),
        "no PreToolUse note"
    );
    assert!(page.contains("data-hook=\"Stop\""), "no Stop note");
    assert!(page.contains("<span class=\"badge status-warn\">deny</span>"));
    assert!(page.contains("io/claude_hooks/001_PreToolUse/"));

    let run = delta(run.then(), &mock)
        .args(["export", "--run-id", "r1", "-w", "ws", "--format", "atif"])
        .run()
        .code(0);
    let atif: Value = serde_json::from_str(run.stdout()).unwrap();
    let notes: Vec<&Value> = atif["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|step| step["extra"]["events"].as_array())
        .flatten()
        .filter(|note| note.get("claude_hook").is_some())
        .collect();
    let decisions: Vec<(Value, Value)> = notes
        .iter()
        .map(|n| (n["claude_hook"].clone(), n["decision"].clone()))
        .collect();
    assert_eq!(
        decisions,
        [
            (json!("PreToolUse"), json!("deny")),
            (json!("PreToolUse"), Value::Null),
            (json!("Stop"), json!("block")),
            (json!("Stop"), Value::Null),
        ]
    );

    let run = delta(run.then(), &mock)
        .args(["export", "--run-id", "r1", "-w", "ws", "--format", "otlp"])
        .run()
        .code(0);
    let otlp: Value = serde_json::from_str(run.stdout()).unwrap();
    let mut events = Vec::new();
    named(&otlp, "delta.claude_hook", &mut events);
    let decisions: Vec<Option<&str>> = events
        .iter()
        .map(|event| {
            event["attributes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|a| a["key"] == "delta.hook.decision")
                .and_then(|a| a["value"]["stringValue"].as_str())
        })
        .collect();
    assert_eq!(decisions, [Some("deny"), None, Some("block"), None]);
}

/// Every object under `value` whose `name` is `name`, in document order.
fn named<'a>(value: &'a Value, name: &str, found: &mut Vec<&'a Value>) {
    match value {
        Value::Object(object) => {
            if object.get("name").and_then(Value::as_str) == Some(name) {
                found.push(value);
            }
            for inner in object.values() {
                named(inner, name, found);
            }
        }
        Value::Array(items) => {
            for inner in items {
                named(inner, name, found);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

#[test]
fn replay_reruns_hooks_and_reports_a_changed_decision() {
    let mock = mock(SCRIPT);
    let run = recorded(Test::new(), &mock);
    let run = delta(run.then(), &mock)
        .args(["replay", "--run-id", "r1", "-w", "ws", "--new-run-id", "r2"])
        .args(["--format", "json"])
        .run()
        .code(0);
    let outcome: Value = serde_json::from_str(run.stdout()).unwrap();
    assert_eq!(outcome["outcome"], "identical");
    let replayed = run_files(&run.path().join("ws"), "r2");
    let decisions = |files| -> Vec<Value> {
        payloads(files, "CLAUDE_HOOK")
            .iter()
            .map(|f| f.get("decision").cloned().unwrap_or(Value::Null))
            .collect()
    };
    let recorded = run_files(&run.path().join("ws"), "r1");
    assert_eq!(
        decisions(&replayed),
        decisions(&recorded),
        "the hooks ran again"
    );

    // The guard loosened: the replay's firing decides otherwise, and says so first.
    let loosened = run.then().file(
        "agent/hooks/block-dangerous.sh",
        "cat > /dev/null; exit 0\n",
    );
    let run = delta(loosened, &mock)
        .args(["replay", "--run-id", "r1", "-w", "ws", "--new-run-id", "r3"])
        .args(["--format", "json"])
        .run()
        .code(1);
    let outcome: Value = serde_json::from_str(run.stdout()).unwrap();
    assert_eq!(outcome["divergence"]["kind"], "hook");
    assert_eq!(outcome["divergence"]["what"], "hook firing 1");
    assert_eq!(
        outcome["divergence"]["diff"],
        format!(
            "- PreToolUse `{0}`: deny\n+ PreToolUse `{0}`: none",
            script("block-dangerous.sh", "")
        )
    );
}

#[test]
fn seed_and_claude_hooks_in_one_agent() {
    let mock = mock(SCRIPT);
    let seed = "pre_tool_execution:\n  command: [sh, -c, \"echo seed >> seed.log\"]\n";
    let run = recorded(Test::new().file("agent/hooks.yaml", seed), &mock);
    let files = run_files(&run.path().join("ws"), "r1");
    settled(&files, "COMPLETED");
    // The seed hook runs for both calls (the denied one too, after its ACTION_REQUEST),
    // with its own records; the Claude Code hooks with theirs.
    assert_eq!(run.read("ws/seed.log"), "seed\nseed\n");
    let audits: Vec<Value> = payloads(&files, "HOOK_EXECUTION_AUDIT")
        .iter()
        .map(|a| a["io_path_ref"].clone())
        .collect();
    assert_eq!(
        audits,
        [
            json!("io/hooks/001_pre_tool_execution/"),
            json!("io/hooks/002_pre_tool_execution/")
        ]
    );
    assert_eq!(firings(&files, "PreToolUse").len(), 2);
    assert!(
        files
            .dir
            .join("io/claude_hooks/001_PreToolUse/input.json")
            .is_file()
    );
}
