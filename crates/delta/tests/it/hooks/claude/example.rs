//! examples/claude-hooks as its README runs it: its agent, hooks.json, scripts and mock
//! script, a run that pauses for the deploy's approval and a `continue -m yes`.

use serde_json::{Value, json};

use super::support::{firings, messages, payloads, settled};
use crate::support::harness::{ROOT, Test};
use crate::support::run::{delta, mock, run_files};

#[test]
fn the_example_runs_as_its_readme_says() {
    let script = std::fs::read_to_string(format!("{ROOT}/examples/claude-hooks/mock-script.yaml"))
        .expect("read the mock script");
    let mock = mock(&script);
    let agent = format!("{ROOT}/examples/claude-hooks");
    let test = Test::new().file("project/TODO.md", "- [ ] ship it\n");
    let run = delta(test, &mock)
        .args([
            "run", "--agent", &agent, "-w", "project", "--run-id", "demo",
        ])
        .args(["-m", "Clean the build, write notes, deploy to staging."])
        .run()
        .code(101);
    assert!(!run.path().join("project/deploy.log").exists());
    let run = delta(run.then(), &mock)
        .args(["continue", "--run-id", "demo", "-w", "project", "-m", "yes"])
        .run()
        .code(0);

    assert!(
        !run.path().join("project/.env").exists(),
        "protect_paths.py let .env through"
    );
    assert_eq!(run.read("project/notes.md"), "# Notes\n\nBuild cleaned.\n");
    assert_eq!(run.read("project/deploy.log"), "deployed to staging\n");
    let files = run_files(&run.path().join("project"), "demo");
    settled(&files, "COMPLETED");
    assert_eq!(
        files.metadata()["result"],
        "Deployed to staging. Files changed: notes.md, deploy.log."
    );
    let statuses: Vec<Value> = payloads(&files, "ACTION_RESULT")
        .iter()
        .map(|r| r["status"].clone())
        .collect();
    assert_eq!(
        statuses,
        [
            json!("ERROR"),
            json!("ERROR"),
            json!("SUCCESS"),
            json!("SUCCESS")
        ]
    );
    let decisions = |event| -> Vec<Value> {
        firings(&files, event)
            .iter()
            .map(|f| f.get("decision").cloned().unwrap_or(Value::Null))
            .collect()
    };
    // Bash: block-dangerous.sh and approval_gate.py on each call; Write: protect_paths.py.
    assert_eq!(
        decisions("PreToolUse"),
        [
            json!("deny"),
            Value::Null,
            json!("deny"),
            Value::Null,
            Value::Null,
            json!("ask"),
        ]
    );
    assert_eq!(decisions("Stop"), [json!("block"), Value::Null]);
    assert_eq!(firings(&files, "SessionStart").len(), 2, "run and continue");
    // The first request carries what the context hooks added.
    let first = messages(&mock.requests()[0]);
    assert!(first.contains(&(
        "system".to_owned(),
        "Open TODO items in this workspace: 1".to_owned()
    )));
}
