//! Where a run goes: `-w PATH`, or the agent's numbered workspaces.

use crate::harness::Test;
use crate::support::{HELLO_SCRIPT, HELLO_TASK, delta, hello_world, mock, only_run};

#[test]
fn without_a_terminal_each_run_gets_a_new_numbered_workspace_without_asking() {
    let mock = mock(HELLO_SCRIPT);
    let run = delta(hello_world(Test::new()), &mock)
        .args(["run", "--agent", "agent", "-m", HELLO_TASK])
        .run()
        .code(0);
    assert!(
        !run.stderr().contains("Reuse workspace"),
        "{}",
        run.stderr()
    );
    let run = delta(run.then(), &mock)
        .args(["run", "--agent", "agent", "-m", HELLO_TASK])
        .run()
        .code(0);
    assert_eq!(run.read("agent/workspaces/LAST_USED"), "W002\n");
    for id in ["W001", "W002"] {
        let files = only_run(&run.path().join("agent/workspaces").join(id));
        assert_eq!(files.metadata()["workspace_id"], id);
    }
}

#[test]
fn work_dir_is_created_when_missing_and_recognised_as_numbered_when_it_is_one() {
    let mock = mock(HELLO_SCRIPT);
    let run = delta(hello_world(Test::new()), &mock)
        .args([
            "run",
            "--agent",
            "agent",
            "-w",
            "deep/new/ws",
            "-m",
            HELLO_TASK,
        ])
        .run()
        .code(0);
    let files = only_run(&run.path().join("deep/new/ws"));
    assert_eq!(files.metadata()["workspace_id"], serde_json::Value::Null);
    assert_eq!(
        files.metadata()["work_dir"],
        run.path()
            .join("deep/new/ws")
            .canonicalize()
            .unwrap()
            .to_str()
            .unwrap()
    );
    assert_eq!(run.read("deep/new/ws/.delta/VERSION"), "1.10\n");

    let run = delta(run.then(), &mock)
        .args([
            "run",
            "--agent",
            "agent",
            "-w",
            "agent/workspaces/W007",
            "-m",
            HELLO_TASK,
        ])
        .run()
        .code(0);
    let files = only_run(&run.path().join("agent/workspaces/W007"));
    assert_eq!(files.metadata()["workspace_id"], "W007");
}

#[test]
fn the_agent_defaults_to_the_current_directory_and_task_is_gone() {
    let mock = mock(HELLO_SCRIPT);
    let run = delta(hello_world(Test::new()), &mock)
        .current_dir("agent")
        .args(["run", "-y", "-m", HELLO_TASK])
        .run()
        .code(0);
    only_run(&run.path().join("agent/workspaces/W001"));
    delta(run.then(), &mock)
        .current_dir("agent")
        .args(["run", "-y", "--task", HELLO_TASK])
        .run()
        .code(2)
        .stderr_has("--task");
}
