//! Bad task sets and flags are refused before anything runs (exit 126), every problem of
//! the set listed at once with its file, place and fix, as `delta batch` lists a task
//! file's.

use std::fs;

use crate::support::harness::Test;
use crate::support::snapshot::snapshot;

const AGENT: &str = "name: a\nllm:\n  model: gpt-4o-mini\ntools: []\n";

/// A valid task `name` under `dir`.
fn task(test: Test, dir: &str) -> Test {
    test.file(
        &format!("{dir}/task.toml"),
        "[environment]\ndocker_image = \"localhost/delta-busybox:latest\"\n",
    )
    .file(&format!("{dir}/instruction.md"), "Do it.\n")
    .file(
        &format!("{dir}/tests/test.sh"),
        "#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n",
    )
}

#[test]
fn every_problem_of_a_task_set_is_listed_at_once() {
    let test = task(Test::new().agent("agent", AGENT), "tasks/good")
        .file("tasks/bad-toml/task.toml", "[agent]\ntimeout_sec = \n")
        .file("tasks/bad-toml/instruction.md", "x\n")
        .file("tasks/bad-toml/tests/test.sh", "#!/bin/sh\n")
        .file(
            "tasks/bad-type/task.toml",
            "[verifier]\ntimeout_sec = \"soon\"\n",
        )
        .file("tasks/bad-type/instruction.md", "x\n")
        .file("tasks/bad-type/tests/test.sh", "#!/bin/sh\n")
        .file(
            "tasks/no-instruction/task.toml",
            "[environment]\ndocker_image = \"x\"\n",
        )
        .file("tasks/no-instruction/tests/test.sh", "#!/bin/sh\n")
        .file(
            "tasks/no-tests/task.toml",
            "[environment]\ndocker_image = \"x\"\n",
        )
        .file("tasks/no-tests/instruction.md", "x\n")
        .file("tasks/no-toml/instruction.md", "x\n")
        .file("tasks/README.md", "Files beside the tasks are not tasks.\n")
        .file("other/eval.json", &other_eval())
        .args([
            "eval", "run", "tasks", "--agent", "agent", "--out", "other", "-k", "0",
        ]);
    let run = test.run().code(126);
    snapshot!(run.stderr());
    // Nothing was created: the other eval is as it was, and no trial directory exists.
    assert_eq!(
        fs::read_to_string(run.path().join("other/eval.json")).expect("eval.json"),
        other_eval()
    );
    assert!(!run.path().join("other/trials").exists());
}

#[test]
fn a_list_of_tasks_names_files_missing_directories_and_duplicates() {
    let test = task(Test::new().agent("agent", AGENT), "pool/one")
        .file("pool/notes.txt", "a file, not a task\n")
        .file("busy/something", "x\n")
        .file(
            "set/tasks.txt",
            "# one path a line, relative to this file\n../pool/one\n../pool/notes.txt\n\
             ../pool/missing\n../pool/one\n",
        )
        .args([
            "eval",
            "run",
            "set/tasks.txt",
            "--agent",
            "agent",
            "--out",
            "busy",
            "--task-filter",
            "nothing-*",
        ]);
    let run = test.run().code(126);
    snapshot!(run.stderr());
}

#[test]
fn neither_an_agent_nor_the_oracle_is_a_usage_error_and_both_are_too() {
    let run = Test::new()
        .args([
            "eval", "run", "tasks", "--out", "out", "--oracle", "--agent", "a",
        ])
        .run()
        .code(2);
    assert!(
        run.stderr().contains("cannot be used with"),
        "{}",
        run.stderr()
    );
    let run = task(Test::new(), "tasks/t")
        .args(["eval", "run", "tasks", "--out", "out"])
        .run()
        .code(126);
    snapshot!(run.stderr());
    assert!(!run.path().join("out").exists());
}

/// An eval of another agent with two attempts.
fn other_eval() -> String {
    "{\"tasks_source\": \"/elsewhere\", \"agent\": \"/another/agent\", \"oracle\": false, \
     \"attempts\": 2, \"timeout_multiplier\": 1.0, \"tasks\": []}\n"
        .to_owned()
}
