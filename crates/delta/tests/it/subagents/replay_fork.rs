//! Replay and fork of a tree: `delta replay` of the top replays each sub-agent from its own
//! recording, and the tree is identical when every run is; `delta fork` after a sub-agent
//! call keeps its recorded result instead of running the child again.

use serde_json::Value;

use super::{
    PLAN_RUN, edit, events, files, planner_script, reviewer_script, tree_with, worker_script,
};
use crate::support::harness::{Run, Test};
use crate::support::run::{delta, mock, run_files, runs_in};

/// The reviewers' tool, its output the same in every run (run ids are masked).
const ECHO_LOOK: &str = "echo look $DELTA_RUN_ID";

fn replay(test: Test, new_id: &str) -> Run {
    test.args([
        "replay",
        "--run-id",
        "plan-1",
        "-w",
        "ws",
        "--new-run-id",
        new_id,
        "--workspace-from",
        "clean",
        "--format",
        "json",
    ])
    .run()
}

#[test]
fn replay_of_the_tree_is_identical_and_replays_children() {
    let tree = tree_with(
        &planner_script(),
        &worker_script(),
        &reviewer_script(),
        ECHO_LOOK,
    );
    let run = delta(tree.test.file("clean/.keep", ""), &tree.planner)
        .args([
            "run",
            "--agent",
            "agents/planner",
            "-w",
            "ws",
            "-m",
            "Plan the job",
            "--run-id",
            "plan-1",
        ])
        .run()
        .code(0);
    // No model and no key: every answer comes from the recordings.
    let run = replay(run.then(), "plan-2").code(0);
    let outcome: Value = serde_json::from_str(run.stdout()).unwrap();
    assert_eq!(outcome["outcome"], "identical", "{outcome:#}");
    let children = outcome["subagents"].as_array().unwrap();
    assert_eq!(children.len(), 2);
    for (n, child) in children.iter().enumerate() {
        assert_eq!(child["run_id"], format!("plan-2.{}", n + 1));
        assert_eq!(child["replay_of"], format!("plan-1.{}", n + 1));
        assert_eq!(child["answers_replayed"], 3);
        let grandchild = &child["subagents"][0];
        assert_eq!(grandchild["run_id"], format!("plan-2.{}.1", n + 1));
        assert_eq!(grandchild["answers_replayed"], 2);
        assert_eq!(grandchild["outcome"], "identical");
    }
    // The replayed tree is a tree of its own, in the fresh workspace.
    let workspace = std::path::PathBuf::from(outcome["work_dir"].as_str().unwrap());
    assert_eq!(runs_in(&workspace).len(), 5);
    let grandchild = run_files(&workspace, "plan-2.2.1").metadata();
    assert_eq!(grandchild["replay_of"]["run_id"], "plan-1.2.1");
    assert_eq!(grandchild["called_by"]["run_id"], "plan-2.2");
    assert_eq!(grandchild["status"], "COMPLETED");
}

#[test]
fn a_changed_grandchild_tool_is_the_trees_divergence() {
    let tree = tree_with(
        &planner_script(),
        &worker_script(),
        &reviewer_script(),
        ECHO_LOOK,
    );
    let run = delta(tree.test.file("clean/.keep", ""), &tree.planner)
        .args([
            "run",
            "--agent",
            "agents/planner",
            "-w",
            "ws",
            "-m",
            "Plan the job",
            "--run-id",
            "plan-1",
        ])
        .run()
        .code(0);
    let changed = edit(
        run.then(),
        "agents/reviewer/agent.yaml",
        "echo look",
        "echo seen",
    );
    let run = replay(changed, "plan-3").code(1);
    let outcome: Value = serde_json::from_str(run.stdout()).unwrap();
    assert_eq!(outcome["outcome"], "divergence");
    assert_eq!(outcome["divergence"]["kind"], "observation");
    assert_eq!(
        outcome["divergence"]["what"],
        "sub-agent run plan-3.1: sub-agent run plan-3.1.1: observation of `look`"
    );
}

#[test]
fn fork_after_a_child_call_reuses_its_result() {
    let tree = tree_with(
        &planner_script(),
        &worker_script(),
        &reviewer_script(),
        ECHO_LOOK,
    );
    let run = delta(tree.test, &tree.planner).args(PLAN_RUN).run().code(0);
    let dir = run.path().to_path_buf();
    // The boundary after both agent calls' results.
    let planner = files(&dir, "p");
    let last_result = events(&planner, "ACTION_RESULT")
        .last()
        .map(|event| event["seq"].as_u64().unwrap())
        .unwrap();
    let forked = mock("steps:\n  - message: {content: \"forked: used the workers' answers\"}\n");
    let run = delta(run.then(), &forked)
        .args([
            "fork",
            "--run-id",
            "p",
            "-w",
            "ws",
            "--at",
            &last_result.to_string(),
            "--new-run-id",
            "f",
        ])
        .run()
        .code(0);
    let dir = run.path().to_path_buf();
    let fork = files(&dir, "f");
    assert_eq!(
        fork.metadata()["result"],
        "forked: used the workers' answers"
    );
    // No child of the fork: the recorded results were kept, not produced again.
    assert!(!dir.join("ws/.delta/f.1").exists());
    assert_eq!(runs_in(&dir.join("ws")).len(), 6);
    let sent = &forked.requests()[0];
    let tool_answers: Vec<&Value> = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| &message["content"])
        .collect();
    assert_eq!(
        tool_answers,
        ["worker: reviewed and done", "worker: reviewed and done"]
    );
    // The kept calls still name the original children.
    let results = events(&fork, "ACTION_RESULT");
    assert_eq!(results[0]["payload"]["subagent"]["run_id"], "p.1");
    let metadata = fork.metadata();
    assert!(metadata.get("children").is_none(), "{metadata:#}");
    assert!(metadata.get("subtree").is_none(), "{metadata:#}");
}
