//! Several PreToolUse hooks on one call run one after another in the configured order
//! (hooks.json's, then hooks.yaml's `claude_hooks:`): each sees the input the ones before
//! it produced, the last input is what runs (Claude Code keeps only one rewrite,
//! anthropics/claude-code#15897), and a deny from any of them wins.

use rstest::rstest;
use serde_json::{Value, json};

use super::support::{agent, firings, group, payloads, script, settled, stdin_of};
use crate::support::harness::Test;
use crate::support::run::{delta, mock, run_files};

const ONE_CALL: &str = "mode: sequential\nsteps:\n\
     - message:\n    tool_calls:\n\
     \x20     - {name: Bash, arguments: {command: 'echo x'}}\n\
     - message: {content: 'Done.'}\n";

#[test]
fn three_stacked_rewriters_compose_in_order() {
    let mock = mock(ONE_CALL);
    // A and B in hooks.json, C in hooks.yaml: hooks.json's run first.
    let hooks = json!({"hooks": {"PreToolUse": [
        group(Some("Bash"), &[script("tag_input.py", "A")]),
        group(Some("Bash|Write"), &[script("tag_input.py", "B")]),
    ]}});
    let yaml = "claude_hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: python3 \"$CLAUDE_PLUGIN_ROOT\"/hooks/tag_input.py C\n";
    let test = agent(Test::new(), &hooks).file("agent/hooks.yaml", yaml);
    let run = delta(test, &mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "r1", "-m", "go",
        ])
        .run()
        .code(0);
    assert_eq!(
        run.read("ws/tags.log"),
        "A saw: echo x\nB saw: echo x A\nC saw: echo x A B\n"
    );
    let files = run_files(&run.path().join("ws"), "r1");
    settled(&files, "COMPLETED");
    let result = &payloads(&files, "ACTION_RESULT")[0];
    assert_eq!(result["observation_content"], "x A B C\n");
    let sources: Vec<(Value, Value)> = firings(&files, "PreToolUse")
        .iter()
        .map(|f| (f["source"].clone(), f["updated_input"]["command"].clone()))
        .collect();
    assert_eq!(
        sources,
        [
            (json!("hooks.json"), json!("echo x A")),
            (json!("hooks.json"), json!("echo x A B")),
            (json!("hooks.yaml"), json!("echo x A B C")),
        ]
    );
}

#[rstest]
#[case::first(0)]
#[case::middle(1)]
#[case::last(2)]
fn a_deny_among_stacked_rewriters_wins(#[case] denier: usize) {
    let mock = mock(
        "mode: sequential\nsteps:\n\
         - message:\n    tool_calls:\n\
         \x20     - {name: Bash, arguments: {command: 'touch ran'}}\n\
         - message: {content: 'Done.'}\n",
    );
    let tags = ["A", "B", "C"];
    let commands: Vec<String> = tags
        .iter()
        .enumerate()
        .map(|(i, tag)| {
            let deny = if i == denier { " --deny touch" } else { "" };
            script("tag_input.py", &format!("{tag}{deny}"))
        })
        .collect();
    let hooks = json!({"hooks": {"PreToolUse": [group(Some("Bash"), &commands)]}});
    let run = delta(agent(Test::new(), &hooks), &mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "r1", "-m", "go",
        ])
        .run()
        .code(0);
    assert!(!run.path().join("ws/ran").exists(), "the denied call ran");
    // Every hook ran (a deny does not stop the others), each on the input so far.
    let log = run.read("ws/tags.log");
    assert_eq!(log.lines().count(), 3, "{log}");
    let files = run_files(&run.path().join("ws"), "r1");
    let decisions: Vec<Value> = firings(&files, "PreToolUse")
        .iter()
        .map(|f| f["decision"].clone())
        .collect();
    let mut expected = vec![json!("allow"); 3];
    expected[denier] = json!("deny");
    assert_eq!(decisions, expected);
    let result = &payloads(&files, "ACTION_RESULT")[0];
    assert_eq!(result["status"], "ERROR");
    assert_eq!(
        result["observation_content"],
        format!(
            "Error: a PreToolUse hook blocked this call: {}: no touch",
            tags[denier]
        )
    );
    let last = stdin_of(&files, &firings(&files, "PreToolUse")[2]);
    assert!(
        last["tool_input"]["command"]
            .as_str()
            .unwrap()
            .starts_with("touch ran"),
        "{last}"
    );
}
