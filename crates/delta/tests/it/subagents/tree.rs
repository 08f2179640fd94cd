//! The depth-3 tree end to end: results, journals, the links between runs and the exact
//! roll-up of their cost (acceptance 1).

use serde_json::Value;

use super::{
    COMPLETION_TOKENS, PLAN_RUN, PLANNER_PRICE, PROMPT_TOKENS, REVIEWER_PRICE, WORKER_PRICE,
    call_cost, events, files, tree, tree_ids,
};
use crate::support::run::{assert_consistent, delta, runs_in};
use crate::support::snapshot::snapshot;

/// Equal at the cent's hundredth.
#[track_caller]
fn assert_cost(actual: &Value, expected: f64) {
    let actual = actual
        .as_f64()
        .unwrap_or_else(|| panic!("a cost: {actual}"));
    assert_eq!(
        (actual * 10_000.0).round(),
        (expected * 10_000.0).round(),
        "cost {actual} != {expected}"
    );
}

#[test]
fn depth_3_tree_results_journals_links_and_exact_roll_up() {
    let tree = tree();
    let run = delta(tree.test, &tree.planner)
        .args(PLAN_RUN)
        .args(["--format", "json"])
        .run()
        .code(0);
    let dir = run.path().to_path_buf();
    let ids = tree_ids("p");
    let mut found: Vec<String> = runs_in(&dir.join("ws"))
        .iter()
        .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    found.sort();
    let mut expected_ids = ids.to_vec();
    expected_ids.sort();
    assert_eq!(
        found, expected_ids,
        "one run per agent call, ids from the parent's"
    );
    for id in &ids {
        assert_consistent(&files(&dir, id), "COMPLETED");
    }

    // Each child's answer is its call's observation, the call naming the child run.
    let planner = files(&dir, "p");
    let requests = events(&planner, "ACTION_REQUEST");
    let results = events(&planner, "ACTION_RESULT");
    assert_eq!(requests.len(), 2);
    for (n, (request, result)) in requests.iter().zip(&results).enumerate() {
        let child = format!("p.{}", n + 1);
        assert_eq!(request["payload"]["subagent"]["run_id"], child.as_str());
        assert_eq!(result["payload"]["subagent"]["run_id"], child.as_str());
        assert_eq!(result["payload"]["status"], "SUCCESS");
        assert_eq!(
            result["payload"]["observation_content"],
            "worker: reviewed and done"
        );
        let worker = files(&dir, &child);
        let metadata = worker.metadata();
        assert_eq!(metadata["called_by"]["run_id"], "p");
        assert_eq!(metadata["called_by"]["depth"], 1);
        assert_eq!(metadata["called_by"]["tool_name"], "work");
        assert_eq!(
            metadata["called_by"]["action_id"],
            request["payload"]["action_id"]
        );
        let task = &worker.journal()[0]["payload"]["task"];
        assert_eq!(
            task,
            if n == 0 {
                "Do part alpha"
            } else {
                "Do part beta"
            }
        );
        let reviewer = files(&dir, &format!("{child}.1")).metadata();
        assert_eq!(reviewer["called_by"]["run_id"], child.as_str());
        assert_eq!(reviewer["called_by"]["depth"], 2);
        assert_eq!(reviewer["result"], "reviewer: approved");
        let review = events(&worker, "ACTION_RESULT");
        assert_eq!(
            review[1]["payload"]["observation_content"],
            "reviewer: approved"
        );
    }
    // Both requests come before both results: the children ran as one group.
    let types = planner.types();
    let first_result = types.iter().position(|t| t == "ACTION_RESULT").unwrap();
    let last_request = types.iter().rposition(|t| t == "ACTION_REQUEST").unwrap();
    assert!(last_request < first_result, "{types:?}");

    // The roll-up: each run's own usage, each parent's whole tree, exact.
    let planner_cost = 2.0 * call_cost(PLANNER_PRICE);
    let worker_cost = 3.0 * call_cost(WORKER_PRICE);
    let reviewer_cost = 2.0 * call_cost(REVIEWER_PRICE);
    let total = planner_cost + 2.0 * (worker_cost + reviewer_cost);
    let metadata = planner.metadata();
    assert_cost(&metadata["usage"]["total_cost_usd"], planner_cost);
    assert_eq!(metadata["subtree"]["runs"], 5);
    assert_cost(&metadata["subtree"]["usage"]["total_cost_usd"], total);
    assert_eq!(
        metadata["subtree"]["usage"]["input_tokens"],
        PROMPT_TOKENS * 12
    );
    assert_eq!(
        metadata["subtree"]["usage"]["model_usage"]["worker-model"]["calls"],
        6
    );
    assert_eq!(
        metadata["children"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["run_id"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["p.1", "p.2"]
    );
    let worker = files(&dir, "p.1").metadata();
    assert_eq!(worker["subtree"]["runs"], 2);
    assert_cost(
        &worker["subtree"]["usage"]["total_cost_usd"],
        worker_cost + reviewer_cost,
    );
    assert!(files(&dir, "p.1.1").metadata().get("subtree").is_none());

    // The sum of the children's trees and the parent's own usage is the parent's tree.
    let children_sum: f64 = ["p.1", "p.2"]
        .iter()
        .map(|id| {
            files(&dir, id).metadata()["subtree"]["usage"]["total_cost_usd"]
                .as_f64()
                .unwrap()
        })
        .sum();
    assert_cost(
        &metadata["subtree"]["usage"]["total_cost_usd"],
        children_sum + metadata["usage"]["total_cost_usd"].as_f64().unwrap(),
    );

    // RunResult: the planner's own usage, and its tree's.
    let result: Value = serde_json::from_str(run.stdout()).unwrap();
    assert_eq!(result["result"], "planned: both parts done");
    assert_eq!(
        result["metrics"]["usage"]["input_tokens"],
        PROMPT_TOKENS * 2
    );
    assert_eq!(result["metrics"]["subtree"], metadata["subtree"]);
    assert_eq!(
        result["metrics"]["subtree"]["usage"]["output_tokens"],
        COMPLETION_TOKENS * 12
    );

    // list-runs shows the tree: indented with --tree, annotated without; json carries it.
    let listed = run
        .then()
        .args(["list-runs", "-w", "ws", "--tree"])
        .run()
        .code(0);
    snapshot!(listed.stdout(), @r#"
    p            COMPLETED  "Plan the job"     [DURATION] ago  (5 runs, $0.0334)
    └─ p.1       COMPLETED  "Do part alpha"    [DURATION] ago  (2 runs, $0.0147)
       └─ p.1.1  COMPLETED  "Check the draft"  [DURATION] ago
    └─ p.2       COMPLETED  "Do part beta"     [DURATION] ago  (2 runs, $0.0147)
       └─ p.2.1  COMPLETED  "Check the draft"  [DURATION] ago
    "#);
    let flat = listed
        .then()
        .args(["list-runs", "-w", "ws", "--format", "json"])
        .run()
        .code(0);
    let listing: Value = serde_json::from_str(flat.stdout()).unwrap();
    let entry = |id: &str| {
        listing
            .as_array()
            .unwrap()
            .iter()
            .find(|run| run["run_id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(entry("p")["subtree"], metadata["subtree"]);
    assert_eq!(entry("p.2.1")["called_by"]["run_id"], "p.2");
    assert_eq!(entry("p.2.1")["called_by"]["depth"], 2);
}

#[test]
fn the_live_stream_indents_each_sub_agent_under_its_caller() {
    // One worker, so that the stream's order is the calls' order.
    let tree = super::tree_with(
        &super::planner_script_calling(&["alpha"]),
        &super::worker_script(),
        &super::reviewer_script(),
        super::LOOK,
    );
    let run = delta(tree.test, &tree.planner)
        .args([
            "run",
            "--agent",
            "agents/planner",
            "-w",
            "ws",
            "-m",
            "Plan",
            "--run-id",
            "p",
        ])
        .run()
        .code(0);
    snapshot!(run.stderr(), @r#"
    ▶ run p · agent planner · model planner-model
      workspace [TEMP]/ws

    ── iteration 1/30 ──
    Splitting the work.
    → work {"part":"alpha"}
        ▶ sub-agent p.1 · agent worker
        → write {"text":"drafted"}
          ✓ exit 0 · [DURATION]
        → review {"message":"Check the draft"}
            ▶ sub-agent p.1.1 · agent reviewer
            → look {}
              ✓ exit 0 · [DURATION]
            ■ sub-agent p.1.1 COMPLETED after 2 iteration(s)
          ✓ exit 0 · [DURATION]
        ■ sub-agent p.1 COMPLETED after 3 iteration(s)
      ✓ exit 0 · [DURATION]
      │ worker: reviewed and done

    ── iteration 2/30 ──
    planned: both parts done

    ✔ COMPLETED after 2 iterations
    "#);
}
