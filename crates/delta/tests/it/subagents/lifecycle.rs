//! One tree, one lifecycle (acceptance 2): Ctrl-C stops every run of the tree, children
//! first; after kill -9 of the process, `delta continue` of the top takes the tree over
//! and continues its unfinished children; a child's question pauses the tree and the
//! answer given to the top reaches it. Nothing runs twice.

use std::path::Path;
use std::process::Child;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;

use super::{
    PLAN_RUN, SLOW_LOOK, events, files, planner_script, reviewer_script, tree, tree_ids, tree_with,
    worker_script,
};
use crate::support::harness::Test;
use crate::support::run::{delta, wait_until};

/// The tree started as `p` in `ws`, in the background.
fn start(test: Test, planner: &mock_llm::MockServer) -> (Test, Child) {
    let test = delta(test, planner).args(PLAN_RUN);
    let child = test.spawn();
    (test, child)
}

fn signal(child: &Child, signal: Signal) {
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap());
    kill(pid, signal).unwrap();
}

/// Once both reviewers are inside their slow tool.
fn wait_for_reviewers(dir: &Path) {
    wait_until("both reviewers in their tool", || {
        dir.join("ws/started.p.1.1").exists() && dir.join("ws/started.p.2.1").exists()
    });
}

/// How many lines of `ws/tools.log` are `line`.
fn ran(dir: &Path, line: &str) -> usize {
    std::fs::read_to_string(dir.join("ws/tools.log"))
        .unwrap()
        .lines()
        .filter(|l| *l == line)
        .count()
}

/// Every tool of the tree ran exactly once.
#[track_caller]
fn each_tool_ran_once(dir: &Path) {
    for line in ["drafted p.1", "drafted p.2", "look p.1.1", "look p.2.1"] {
        assert_eq!(ran(dir, line), 1, "{line}");
    }
}

/// `delta continue` of the top of the tree, which finishes it.
fn continue_tree(
    test: Test,
    planner: &mock_llm::MockServer,
    extra: &[&str],
) -> crate::support::harness::Run {
    delta(test, planner)
        .args(["continue", "--run-id", "p", "-w", "ws"])
        .args(extra.iter().copied())
        .run()
}

/// One ACTION_RESULT per ACTION_REQUEST of run `id`, in the same order, however many
/// processes drove the run.
#[track_caller]
fn each_call_answered_once(dir: &Path, id: &str) {
    let run = files(dir, id);
    let ids = |kind| -> Vec<Value> {
        events(&run, kind)
            .iter()
            .map(|event| event["payload"]["action_id"].clone())
            .collect()
    };
    assert_eq!(ids("ACTION_REQUEST"), ids("ACTION_RESULT"), "{id}");
}

fn run_end_time(dir: &Path, id: &str) -> String {
    let journal = files(dir, id).journal();
    let end = journal.last().unwrap();
    assert_eq!(end["type"], "RUN_END");
    end["timestamp"].as_str().unwrap().to_owned()
}

#[test]
fn ctrl_c_stops_children_first_then_continue_finishes_the_tree() {
    let tree = tree_with(
        &planner_script(),
        &worker_script(),
        &reviewer_script(),
        SLOW_LOOK,
    );
    let (test, child) = start(tree.test, &tree.planner);
    let dir = test.path().to_path_buf();
    wait_for_reviewers(&dir);
    signal(&child, Signal::SIGINT);
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for id in tree_ids("p") {
        let metadata = files(&dir, &id).metadata();
        assert_eq!(metadata["status"], "INTERRUPTED", "{id}");
        assert_eq!(metadata["error"]["type"], "Interrupted", "{id}");
    }
    // Children first: each run ended no later than its caller.
    for (child_id, parent_id) in [
        ("p.1.1", "p.1"),
        ("p.2.1", "p.2"),
        ("p.1", "p"),
        ("p.2", "p"),
    ] {
        assert!(
            run_end_time(&dir, child_id) <= run_end_time(&dir, parent_id),
            "{child_id} ended after {parent_id}"
        );
    }
    // The calls whose children were stopped stay open for the continue.
    let planner = files(&dir, "p");
    assert_eq!(events(&planner, "ACTION_REQUEST").len(), 2);
    assert!(events(&planner, "ACTION_RESULT").is_empty());

    let run = continue_tree(test.then(), &tree.planner, &[]).code(0);
    let dir = run.path().to_path_buf();
    for id in tree_ids("p") {
        let run = files(&dir, &id);
        assert_eq!(run.metadata()["status"], "COMPLETED", "{id}");
    }
    for id in tree_ids("p") {
        each_call_answered_once(&dir, &id);
    }
    each_tool_ran_once(&dir);
    // The reviewer's tool stopped by the signal was answered as stopped, not run again.
    let looked = events(&files(&dir, "p.1.1"), "ACTION_RESULT");
    assert_eq!(looked[0]["payload"]["status"], "ERROR");
    assert!(
        looked[0]["payload"]["observation_content"]
            .as_str()
            .unwrap()
            .contains("interrupted by SIGINT"),
        "{looked:?}"
    );
    assert_eq!(
        files(&dir, "p").metadata()["result"],
        "planned: both parts done"
    );
}

#[test]
fn kill_9_while_two_children_run_then_continue_runs_nothing_twice() {
    let tree = tree_with(
        &planner_script(),
        &worker_script(),
        &reviewer_script(),
        SLOW_LOOK,
    );
    let (test, child) = start(tree.test, &tree.planner);
    let dir = test.path().to_path_buf();
    wait_for_reviewers(&dir);
    signal(&child, Signal::SIGKILL);
    let _ = child.wait_with_output().unwrap();
    for id in tree_ids("p") {
        assert_eq!(files(&dir, &id).metadata()["status"], "RUNNING", "{id}");
    }

    let run = continue_tree(test.then(), &tree.planner, &[]).code(0);
    let dir = run.path().to_path_buf();
    assert!(
        run.stderr().contains("[Janitor] Cleaned up orphaned run p"),
        "{}",
        run.stderr()
    );
    let mut found: Vec<String> = crate::support::run::runs_in(&dir.join("ws"))
        .iter()
        .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    found.sort();
    let mut expected = tree_ids("p").to_vec();
    expected.sort();
    assert_eq!(found, expected, "no child was started again");
    for id in tree_ids("p") {
        let run = files(&dir, &id);
        assert_eq!(run.metadata()["status"], "COMPLETED", "{id}");
        each_call_answered_once(&dir, &id);
    }
    each_tool_ran_once(&dir);
    for reviewer in ["p.1.1", "p.2.1"] {
        let looked = events(&files(&dir, reviewer), "ACTION_RESULT");
        assert_eq!(
            looked[0]["payload"]["observation_content"],
            delta_engine::resume::INTERRUPTED_NOT_RERUN,
            "{reviewer}"
        );
    }
    let planner = files(&dir, "p").metadata();
    assert_eq!(planner["result"], "planned: both parts done");
    assert_eq!(planner["subtree"]["runs"], 5);
}

/// A reviewer that asks the human before it approves.
fn asking_reviewer() -> String {
    let usage = super::usage();
    format!(
        "mode: by_conversation\nsteps:\n  - message:\n      tool_calls: [{{name: ask_human, \
         arguments: {{prompt: \"Ship it?\"}}}}]\n      {usage}\n  - message:\n      content: \
         \"reviewer: approved\"\n      {usage}\n"
    )
}

#[test]
fn a_childs_ask_human_pauses_the_tree_and_continue_answers_it() {
    let tree = tree_with(
        &planner_script(),
        &worker_script(),
        &asking_reviewer(),
        super::LOOK,
    );
    let run = delta(tree.test, &tree.planner)
        .args(PLAN_RUN)
        .args(["--format", "json"])
        .run()
        .code(101);
    let result: Value = serde_json::from_str(run.stdout()).unwrap();
    assert_eq!(result["status"], "WAITING_FOR_INPUT");
    assert_eq!(result["interaction"]["prompt"], "Ship it?");
    let dir = run.path().to_path_buf();
    for id in tree_ids("p") {
        assert_eq!(
            files(&dir, &id).metadata()["status"],
            "WAITING_FOR_INPUT",
            "{id}"
        );
    }
    // The first child's question is the tree's, relayed under the call's action id.
    let planner = files(&dir, "p");
    let relayed = events(&planner, "HUMAN_INPUT_REQUEST");
    assert_eq!(relayed.len(), 1);
    assert_eq!(
        relayed[0]["payload"]["request_id"],
        events(&planner, "ACTION_REQUEST")[0]["payload"]["action_id"]
    );

    // One answer at a time: the first goes to p.1's reviewer, then p.2's asks.
    let run = continue_tree(run.then(), &tree.planner, &["-m", "yes, ship"]).code(101);
    let dir = run.path().to_path_buf();
    let received = events(&files(&dir, "p.1.1"), "HUMAN_INPUT_RECEIVED");
    assert_eq!(received.len(), 1);
    assert_eq!(received[0]["payload"]["response"], "yes, ship");
    assert_eq!(files(&dir, "p.1").metadata()["status"], "COMPLETED");
    assert_eq!(
        files(&dir, "p.2.1").metadata()["status"],
        "WAITING_FOR_INPUT"
    );
    // The answer was the child's: the planner was not told it as a message.
    assert!(events(&files(&dir, "p"), "USER_MESSAGE").is_empty());

    let run = continue_tree(run.then(), &tree.planner, &["-m", "ship too"]).code(0);
    let dir = run.path().to_path_buf();
    let received = events(&files(&dir, "p.2.1"), "HUMAN_INPUT_RECEIVED");
    assert_eq!(received[0]["payload"]["response"], "ship too");
    for id in tree_ids("p") {
        assert_eq!(files(&dir, &id).metadata()["status"], "COMPLETED", "{id}");
    }
    for id in tree_ids("p") {
        each_call_answered_once(&dir, &id);
    }
}

/// The names of the tools offered in each request of run `id`.
fn offered(dir: &Path, id: &str) -> Vec<Vec<String>> {
    files(dir, id)
        .requests()
        .iter()
        .map(|request| {
            request["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .collect()
}

#[test]
fn no_ask_human_holds_for_children() {
    for (flag, offered_to_children) in [(None, true), (Some("--no-ask-human"), false)] {
        let tree = tree();
        let run = delta(tree.test, &tree.planner)
            .args(PLAN_RUN)
            .args(flag)
            .run()
            .code(0);
        let dir = run.path().to_path_buf();
        for id in tree_ids("p") {
            for names in offered(&dir, &id) {
                assert_eq!(
                    names.iter().any(|name| name == "ask_human"),
                    offered_to_children,
                    "{flag:?} {id}: {names:?}"
                );
            }
        }
    }
}
