//! Many runs at once: no shared mutable state, so none waits for or disturbs another.

use std::collections::BTreeSet;
use std::process::Output;

use crate::support::harness::Test;
use crate::support::run::{
    HELLO_SCRIPT, HELLO_TASK, RunFiles, assert_consistent, delta, hello_world, mock, only_run,
    runs_in,
};

const RUNS: usize = 20;

/// Starts `RUNS` copies of `test`'s command at once and waits for all of them.
fn run_all(test: &Test) -> Vec<Output> {
    let children: Vec<_> = (0..RUNS).map(|_| test.spawn()).collect();
    children
        .into_iter()
        .map(|child| child.wait_with_output().expect("wait for delta"))
        .collect()
}

#[track_caller]
fn assert_all_completed(outputs: &[Output]) {
    for output in outputs {
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn twenty_runs_of_one_agent_each_get_their_own_numbered_workspace() {
    let mock = mock(HELLO_SCRIPT);
    let test = delta(hello_world(Test::new()), &mock)
        .args(["run", "--agent", "agent", "-y", "-m", HELLO_TASK]);
    assert_all_completed(&run_all(&test));

    let workspaces = test.path().join("agent/workspaces");
    let names: BTreeSet<String> = std::fs::read_dir(&workspaces)
        .expect("list workspaces")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.starts_with('W'))
        .collect();
    let expected: BTreeSet<String> = (1..=RUNS).map(|n| format!("W{n:03}")).collect();
    assert_eq!(names, expected);
    for name in &names {
        let files = only_run(&workspaces.join(name));
        assert_consistent(&files, "COMPLETED");
        assert_eq!(files.metadata()["workspace_id"], name.as_str());
        assert_eq!(
            std::fs::read_to_string(workspaces.join(name).join("hello.txt")).expect("output"),
            "Hello, world!\nWritten by a Delta Engine agent.\n"
        );
    }
    let last = std::fs::read_to_string(workspaces.join("LAST_USED")).expect("LAST_USED");
    assert!(names.contains(last.trim()), "LAST_USED = {last:?}");
}

#[test]
fn twenty_runs_in_one_workspace_each_get_their_own_run_directory() {
    let mock = mock(HELLO_SCRIPT);
    let test = delta(hello_world(Test::new()), &mock).args([
        "run", "--agent", "agent", "-w", "shared", "-m", HELLO_TASK, "--format", "raw",
    ]);
    let outputs = run_all(&test);
    assert_all_completed(&outputs);
    let runs = runs_in(&test.path().join("shared"));
    assert_eq!(runs.len(), RUNS);
    let ids: BTreeSet<String> = runs
        .into_iter()
        .map(|dir| {
            let files = RunFiles { dir };
            assert_consistent(&files, "COMPLETED");
            assert_eq!(files.types().len(), 11, "each journal is whole and its own");
            files.metadata()["run_id"].as_str().expect("id").to_owned()
        })
        .collect();
    assert_eq!(ids.len(), RUNS);
    assert_eq!(mock.requests().len(), RUNS * 3);
}
