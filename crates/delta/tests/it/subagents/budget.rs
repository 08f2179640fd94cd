//! Shared budgets: a child spends from its parent's budget, so a tree's limit cuts it
//! wherever the tree is, within one call; a larger budget given to the top continues it.

use super::{
    COMPLETION_TOKENS, LOOK, PROMPT_TOKENS, events, files, planner_script_calling, reviewer_script,
    tree_with, worker_script,
};
use crate::support::run::delta;

#[test]
fn a_budget_cut_mid_tree_stops_every_ancestor_within_one_call() {
    // One worker: the calls come one after the other (planner, worker ×2, reviewer…), so
    // the limit falls inside the reviewer, two levels below the budget's owner.
    let tree = tree_with(
        &planner_script_calling(&["alpha"]),
        &worker_script(),
        &reviewer_script(),
        LOOK,
    );
    let per_call = PROMPT_TOKENS + COMPLETION_TOKENS;
    let limit = 3 * per_call + 100;
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
            "--max-tokens",
            &limit.to_string(),
        ])
        .run()
        .code(1);
    let dir = run.path().to_path_buf();
    // The fourth call (the reviewer's first) was allowed, the fifth was not.
    let used = 4 * per_call;
    for id in ["p", "p.1", "p.1.1"] {
        let metadata = files(&dir, id).metadata();
        assert_eq!(metadata["status"], "INTERRUPTED", "{id}");
        assert_eq!(metadata["error"]["type"], "BudgetExceeded", "{id}");
        assert_eq!(metadata["error"]["budget"]["limit"], limit as f64, "{id}");
        assert_eq!(metadata["error"]["budget"]["used"], used as f64, "{id}");
    }
    let planner = files(&dir, "p").metadata();
    assert_eq!(planner["budget"]["tokens"]["used"], used);
    assert_eq!(
        planner["subtree"]["usage"]["input_tokens"],
        4 * PROMPT_TOKENS
    );
    assert!(
        files(&dir, "p.1.1").metadata()["error"]["details"]
            .as_str()
            .unwrap()
            .contains("the budget is the one of run p"),
    );
    // The cut is the tree's: the calls stay open for a continue.
    assert!(events(&files(&dir, "p"), "ACTION_RESULT").is_empty());

    let run = delta(run.then(), &tree.planner)
        .args([
            "continue",
            "--run-id",
            "p",
            "-w",
            "ws",
            "--max-tokens",
            "100000",
        ])
        .run()
        .code(0);
    let dir = run.path().to_path_buf();
    for id in ["p", "p.1", "p.1.1"] {
        assert_eq!(files(&dir, id).metadata()["status"], "COMPLETED", "{id}");
    }
    let planner = files(&dir, "p").metadata();
    assert_eq!(
        planner["subtree"]["usage"]["input_tokens"],
        7 * PROMPT_TOKENS
    );
    assert_eq!(planner["budget"]["tokens"]["used"], 7 * per_call);
}
