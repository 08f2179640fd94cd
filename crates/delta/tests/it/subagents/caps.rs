//! The caps of a tree: how deep it nests and how many children one turn starts, each
//! refused as the call's observation while the run goes on; and calls within the cap
//! really run at once.

use super::{
    LOOK, edit, events, files, planner_script, planner_script_calling, reviewer_script, tree_with,
    worker_script,
};
use crate::support::harness::Test;
use crate::support::run::{delta, mock, runs_in};

#[test]
fn depth_cap_refused_as_the_observation_and_the_run_goes_on() {
    let script = "mode: by_conversation\nsteps:\n  - message:\n      tool_calls: [{name: again, \
                  arguments: {message: deeper}}]\n  - message: {content: \"stopped here\"}\n";
    let mock = mock(script);
    let test = Test::new().agent(
        "recur",
        "name: recur\nllm: {model: m}\nsubagents: {max_depth: 2}\ntools:\n  - name: again\n    \
         description: Hands the task to a copy of this agent.\n    agent: .\n",
    );
    let run = delta(test, &mock)
        .args([
            "run", "--agent", "recur", "-w", "ws", "-m", "go deep", "--run-id", "r",
        ])
        .run()
        .code(0);
    let dir = run.path().to_path_buf();
    let mut ids: Vec<String> = runs_in(&dir.join("ws"))
        .iter()
        .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    ids.sort();
    assert_eq!(ids, ["r", "r.1", "r.1.1"]);
    let deepest = files(&dir, "r.1.1");
    assert_eq!(deepest.metadata()["called_by"]["depth"], 2);
    let refused = events(&deepest, "ACTION_RESULT");
    assert_eq!(refused.len(), 1);
    assert_eq!(refused[0]["payload"]["status"], "ERROR");
    assert!(refused[0]["payload"].get("subagent").is_none());
    assert_eq!(
        refused[0]["payload"]["observation_content"],
        "Error: not run: sub-agents nest at most 2 deep (subagents.max_depth, the smallest \
         along this tree); this run is at depth 2, so its sub-agent would be at depth 3. Do \
         this part of the work yourself."
    );
    for id in ["r", "r.1", "r.1.1"] {
        assert_eq!(files(&dir, id).metadata()["status"], "COMPLETED", "{id}");
    }
}

#[test]
fn concurrency_cap_refused_as_the_observation() {
    let mut tree = tree_with(
        &planner_script_calling(&["alpha", "beta", "gamma"]),
        &worker_script(),
        &reviewer_script(),
        LOOK,
    );
    tree.test = edit(
        tree.test,
        "agents/planner/agent.yaml",
        "tools:\n",
        "subagents: {max_concurrent: 2}\ntools:\n",
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
    let dir = run.path().to_path_buf();
    let planner = files(&dir, "p");
    let results = events(&planner, "ACTION_RESULT");
    let statuses: Vec<&str> = results
        .iter()
        .map(|r| r["payload"]["status"].as_str().unwrap())
        .collect();
    // The refused call is answered at once, before the two children end.
    assert_eq!(statuses, ["ERROR", "SUCCESS", "SUCCESS"]);
    assert_eq!(
        results[0]["payload"]["observation_content"],
        "Error: not run: at most 2 sub-agents run at once (subagents.max_concurrent of agent \
         'planner'), and this turn already starts 2. Call it again after their answers have \
         come."
    );
    assert_eq!(planner.metadata()["status"], "COMPLETED");
    assert_eq!(planner.metadata()["subtree"]["runs"], 5);
    assert!(!dir.join("ws/.delta/p.3").exists());
}

#[test]
fn parallel_agent_calls_run_concurrently() {
    // Each child's tool waits until both children have reached it: run one after the
    // other, the first would give up and fail.
    let meet = "touch here.$DELTA_RUN_ID; for i in $(seq 1 400); do [ $(ls here.* | wc -l) -ge \
                2 ] && exit 0; sleep 0.05; done; exit 1";
    let mut tree = tree_with(
        &planner_script(),
        "mode: by_conversation\nsteps:\n  - message:\n      tool_calls: [{name: write, arguments: {}}]\n  - message: {content: met}\n",
        &reviewer_script(),
        LOOK,
    );
    tree.test = edit(
        tree.test,
        "agents/worker/agent.yaml",
        "echo ${text} $DELTA_RUN_ID >> tools.log",
        meet,
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
    let dir = run.path().to_path_buf();
    for worker in ["p.1", "p.2"] {
        let results = events(&files(&dir, worker), "ACTION_RESULT");
        assert_eq!(
            results[0]["payload"]["exit_code"], 0,
            "{worker}: {results:?}"
        );
    }
}
