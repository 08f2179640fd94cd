//! Issue 30 item 10: what a newcomer hit in the first hour, one test each.

use crate::support::harness::{ROOT, Test};
use crate::support::run::{HELLO_SCRIPT, HELLO_TASK, delta, hello_world, mock};

#[test]
fn a_batch_with_a_bad_agent_says_error_once() {
    let run = Test::new()
        .file("bad/agent.yaml", "name: x\n")
        .file("tasks.jsonl", "{\"id\": \"a\", \"message\": \"x\"}\n")
        .args([
            "batch",
            "run",
            "tasks.jsonl",
            "--agent",
            "bad",
            "--out",
            "out",
        ])
        .run()
        .code(126)
        .stderr_has("error: missing required key `llm`");
    assert!(!run.stderr().contains("error: error:"), "{}", run.stderr());
}

#[test]
fn batch_status_of_a_missing_directory_says_what_a_batch_directory_is() {
    Test::new()
        .args(["batch", "status", "nowhere"])
        .run()
        .code(1)
        .stderr_has("nowhere is not a batch directory: it does not exist")
        .stderr_has("= help: give the --out directory of a `delta batch run");
    let run = Test::new()
        .file("empty/notes.txt", "")
        .args(["batch", "status", "empty"])
        .run()
        .code(1)
        .stderr_has("empty is not a batch directory: it has no batch.json");
    assert!(!run.stderr().contains("os error"), "{}", run.stderr());
}

#[test]
fn a_bad_task_line_names_the_column_inside_that_line() {
    let run = hello_world(Test::new())
        .file(
            "tasks.jsonl",
            "{\"id\": \"a\", \"message\": \"x\"}\n\n\n\n{\"id\": \"b\", \"mesage\": \"x\"}\n",
        )
        .args([
            "batch",
            "run",
            "tasks.jsonl",
            "--agent",
            "agent",
            "--out",
            "out",
        ])
        .run()
        .code(126)
        .stderr_has("line 5, column 20: unknown field `mesage`");
    assert!(
        !run.stderr().contains("at line 1 column"),
        "{}",
        run.stderr()
    );
}

#[test]
fn the_pre_1_8_task_flag_points_to_m() {
    hello_world(Test::new())
        .args(["run", "--agent", "agent", "--task", "go"])
        .run()
        .code(2)
        .stdout_is("")
        .stderr_has("error: --task is gone since v1.8: use -m/--message TEXT");
}

#[test]
fn a_replay_into_a_fresh_workspace_says_where_it_went() {
    let model = mock(HELLO_SCRIPT);
    let run = delta(hello_world(Test::new().file("clean/.keep", "")), &model)
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "r1", "-m", HELLO_TASK,
        ])
        .run()
        .code(0);
    let went = run.path().join("agent/workspaces/W001");
    let recorded = run;
    let run = Test::new()
        .current_dir(recorded.path())
        .args([
            "replay",
            "--run-id",
            "r1",
            "-w",
            "ws",
            "--workspace-from",
            "clean",
        ])
        .run()
        .code(0);
    assert!(
        run.stderr().contains(&format!(
            "The replay ran in workspace {} (seeded from --workspace-from); see it with: \
             delta list-runs -w {}",
            went.display(),
            went.display()
        )),
        "{}",
        run.stderr()
    );
}

/// The docs' conformance figures are the suite's, and the install section installs the
/// runner `delta export --format scenario` tells users to run.
#[test]
fn the_docs_count_the_scenarios_there_are_and_install_the_conformance_runner() {
    let scenarios = std::fs::read_dir(format!("{ROOT}/fixtures/scenarios"))
        .unwrap()
        .filter(|entry| {
            entry
                .as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|e| e == "yaml")
        })
        .count();
    let conformance = std::fs::read_to_string(format!("{ROOT}/docs/conformance.md")).unwrap();
    assert!(
        conformance.contains(&format!("The whole suite, {scenarios} scenarios,")),
        "docs/conformance.md does not say {scenarios} scenarios"
    );
    let readme = std::fs::read_to_string(format!("{ROOT}/README.md")).unwrap();
    assert!(
        readme.contains("cargo install --locked --path crates/delta-conformance"),
        "the README's install section does not install delta-conformance"
    );
}
