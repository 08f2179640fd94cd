//! A tool that deletes or moves the run's own files: the engine notices after the tool,
//! restores the journal from the file it holds open, says so, and stops the run (issue
//! 12, item 1).

use crate::support::harness::Test;
use crate::support::run::{delta, mock};

fn agent(command: &str) -> String {
    format!(
        "name: cleaner\nllm:\n  model: test-model\ntools:\n  - name: clean\n    shell: \"{command}\"\n"
    )
}

/// The model calls `clean` every time: without the check it loops to its budget.
const SCRIPT: &str = r#"
mode: by_conversation
steps:
  - message:
      content: "Cleaning up."
      tool_calls: [{name: clean, arguments: {}}]
  - message:
      content: "Cleaning again."
      tool_calls: [{name: clean, arguments: {}}]
  - message: {content: "done"}
"#;

// Regression for issue 12 item 1: `rm -rf .delta`, `mv .delta x` or removing the journal
// made the run vanish: the engine kept appending to the deleted file, the model lost its
// memory and looped to the budget, and no journal remained.
#[test]
fn a_tool_removing_the_run_files_is_noticed_and_the_journal_restored() {
    for (case, command) in [
        ("rm", "rm -rf .delta"),
        ("mv", "mv .delta moved"),
        ("journal", "rm -f .delta/$DELTA_RUN_ID/journal.jsonl"),
    ] {
        let mock = mock(SCRIPT);
        let run = delta(Test::new().agent("agent", &agent(command)), &mock)
            .args(["run", "--agent", "agent", "-w", "ws", "--run-id", "r1"])
            .args(["--max-iterations", "5", "-m", "clean"])
            .run()
            .code(1);
        let dir = run.path().join("ws/.delta/r1");
        let journal = std::fs::read_to_string(dir.join("journal.jsonl"))
            .unwrap_or_else(|e| panic!("{case}: no journal: {e}\n{}", run.stderr()));
        let types: Vec<String> = journal
            .lines()
            .map(|line| {
                let event: serde_json::Value = serde_json::from_str(line).unwrap();
                event["type"].as_str().unwrap().to_owned()
            })
            .collect();
        assert_eq!(
            types,
            [
                "RUN_START",
                "THOUGHT",
                "ACTION_REQUEST",
                "ACTION_RESULT",
                "SYSTEM_MESSAGE",
                "RUN_END"
            ],
            "{case}: {journal}"
        );
        assert!(
            journal.contains("was deleted or moved away during tool `clean`"),
            "{case}: {journal}"
        );
        // engine.log follows its path: what happened after the restore is where a user
        // looks, not in the file the tool removed.
        let log = std::fs::read_to_string(dir.join("engine.log"))
            .unwrap_or_else(|e| panic!("{case}: no engine.log: {e}"));
        assert!(
            log.contains("ERROR The run's journal") && log.contains("run ended FAILED"),
            "{case}: {log}"
        );
        let metadata: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("metadata.json")).unwrap())
                .unwrap();
        assert_eq!(metadata["status"], "FAILED", "{case}");
        assert_eq!(metadata["error"]["type"], "RunFilesRemoved", "{case}");
        assert_eq!(
            mock.recorded().len(),
            1,
            "{case}: the model was asked again"
        );
        let seqs: Vec<u64> = journal
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["seq"]
                    .as_u64()
                    .unwrap()
            })
            .collect();
        assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>(), "{case}");
    }
}

// Regression for issue 12 item 1: a journal emptied before `continue` was silently
// restarted from the task in metadata.json.
#[test]
fn a_journal_emptied_before_continue_is_not_restarted_from_metadata() {
    let mock = mock(
        "steps:\n  - message:\n      content: \"one\"\n      tool_calls: [{name: clean, arguments: {}}]\n  - message: {content: \"done\"}\n",
    );
    let run = delta(Test::new().agent("agent", &agent("true")), &mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "r2", "-m", "go",
        ])
        .run()
        .code(0);
    let journal = run.path().join("ws/.delta/r2/journal.jsonl");
    std::fs::write(&journal, "").unwrap();
    let again = delta(run.then(), &mock)
        .args(["continue", "--run-id", "r2", "-w", "ws", "-m", "more"])
        .run()
        .code(1)
        .stderr_has("is missing or empty, but metadata.json records 2 iteration(s)");
    assert_eq!(
        std::fs::read_to_string(again.path().join("ws/.delta/r2/journal.jsonl")).unwrap(),
        ""
    );
}
