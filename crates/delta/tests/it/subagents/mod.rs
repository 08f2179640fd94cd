//! Sub-agents (issue 29): agent tools whose calls start child runs in the same process,
//! linked in their files, sharing budgets, stopping, resuming and replaying as one tree.
//!
//! The tree most tests use ([`tree`]): a planner that calls two workers in one turn, each
//! of which calls one reviewer; every agent has its own scripted model (its agent
//! directory's `.env` names it, and an agent's `.env` wins over the environment), priced
//! differently, so that the cost roll-up can be checked exactly.

mod budget;
mod caps;
mod config;
mod example;
mod export_view;
mod hooks;
mod lifecycle;
mod replay_fork;
mod tree;

use mock_llm::MockServer;
use serde_json::Value;

use crate::support::harness::Test;
use crate::support::run::{RunFiles, mock, run_files};

/// Tokens every scripted answer reports.
/// The arguments of the planner tree's top run `p` in `ws`, which most tests start.
pub const PLAN_RUN: [&str; 9] = [
    "run",
    "--agent",
    "agents/planner",
    "-w",
    "ws",
    "-m",
    "Plan the job",
    "--run-id",
    "p",
];

pub const PROMPT_TOKENS: u64 = 1234;
pub const COMPLETION_TOKENS: u64 = 56;

/// Dollars per million (input, output) tokens of each agent's model.
pub const PLANNER_PRICE: (f64, f64) = (1.5, 2.25);
pub const WORKER_PRICE: (f64, f64) = (3.0, 4.5);
pub const REVIEWER_PRICE: (f64, f64) = (0.75, 9.0);

/// The cost of one scripted answer at `price`.
pub fn call_cost((input, output): (f64, f64)) -> f64 {
    (PROMPT_TOKENS as f64 * input + COMPLETION_TOKENS as f64 * output) / 1_000_000.0
}

fn agent_yaml(name: &str, (input, output): (f64, f64), tools: &str) -> String {
    format!(
        "name: {name}\nllm:\n  model: {name}-model\n  pricing: {{input_per_million: {input}, \
         output_per_million: {output}}}\ntools:\n{tools}"
    )
}

pub fn usage() -> String {
    format!("usage: {{prompt_tokens: {PROMPT_TOKENS}, completion_tokens: {COMPLETION_TOKENS}}}")
}

/// The planner: one turn with two `work` calls, then its answer.
pub fn planner_script() -> String {
    planner_script_calling(&["alpha", "beta"])
}

/// The planner: one turn with a `work` call per part, then its answer.
pub fn planner_script_calling(parts: &[&str]) -> String {
    let usage = usage();
    let calls: String = parts
        .iter()
        .map(|part| format!("        - {{name: work, arguments: {{part: {part}}}}}\n"))
        .collect();
    let repeat = parts.len();
    format!(
        "mode: by_conversation\nsteps:\n  - message:\n      content: \"Splitting the work.\"\n      \
         tool_calls:\n{calls}      {usage}\n  - message:\n      content: \"planned: both parts \
         done\"\n      {usage}\n      repeat: {repeat}\n"
    )
}

/// A worker: writes its part, asks its reviewer, then answers.
pub fn worker_script() -> String {
    let usage = usage();
    format!(
        "mode: by_conversation\nsteps:\n  - message:\n      tool_calls: [{{name: write, arguments: \
         {{text: drafted}}}}]\n      {usage}\n  - message:\n      tool_calls: [{{name: review, \
         arguments: {{message: \"Check the draft\"}}}}]\n      {usage}\n  - message:\n      \
         content: \"worker: reviewed and done\"\n      {usage}\n"
    )
}

/// A reviewer: looks at the files, then approves.
pub fn reviewer_script() -> String {
    let usage = usage();
    format!(
        "mode: by_conversation\nsteps:\n  - message:\n      tool_calls: [{{name: look, arguments: \
         {{}}}}]\n      {usage}\n  - message:\n      content: \"reviewer: approved\"\n      {usage}\n"
    )
}

/// The three agents and their models, ready to run (the models stop when this is dropped).
pub struct Tree {
    pub test: Test,
    pub planner: MockServer,
    pub _worker: MockServer,
    pub _reviewer: MockServer,
}

/// The reviewers' tool: a line in `ws/tools.log`, then the log.
pub const LOOK: &str = "echo look $DELTA_RUN_ID >> tools.log; cat tools.log";

/// A reviewers' tool that leaves its line and `started.RUN_ID`, then takes a while: long
/// enough for a test to stop the tree while both reviewers are in it.
pub const SLOW_LOOK: &str =
    "echo look $DELTA_RUN_ID >> tools.log; touch started.$DELTA_RUN_ID; sleep 8";

/// The planner → 2 workers → 1 reviewer each tree, with the scripts given and `look` as
/// the reviewers' tool. Tools leave a line in `ws/tools.log` per run, so a test can count
/// how often each ran.
pub fn tree_with(planner: &str, worker: &str, reviewer: &str, look: &str) -> Tree {
    let planner_mock = mock(planner);
    let worker_mock = mock(worker);
    let reviewer_mock = mock(reviewer);
    let test = Test::new()
        .agent(
            "agents/planner",
            &agent_yaml(
                "planner",
                PLANNER_PRICE,
                "  - name: work\n    description: Hands one part of the job to a worker.\n    \
                 agent: ../worker\n    message: \"Do part ${part}\"\n",
            ),
        )
        .agent(
            "agents/worker",
            &agent_yaml(
                "worker",
                WORKER_PRICE,
                "  - name: write\n    shell: \"echo ${text} $DELTA_RUN_ID >> tools.log\"\n  - name: \
                 review\n    description: Asks a reviewer.\n    agent: ../reviewer\n",
            ),
        )
        .agent(
            "agents/reviewer",
            &agent_yaml(
                "reviewer",
                REVIEWER_PRICE,
                &format!("  - name: look\n    shell: \"{look}\"\n"),
            ),
        )
        .file(
            "agents/worker/.env",
            &format!("DELTA_BASE_URL={}\n", worker_mock.base_url()),
        )
        .file(
            "agents/reviewer/.env",
            &format!("DELTA_BASE_URL={}\n", reviewer_mock.base_url()),
        );
    Tree {
        test,
        planner: planner_mock,
        _worker: worker_mock,
        _reviewer: reviewer_mock,
    }
}

/// The tree with its default scripts.
pub fn tree() -> Tree {
    tree_with(
        &planner_script(),
        &worker_script(),
        &reviewer_script(),
        LOOK,
    )
}

/// The ids of the default tree's runs when the planner is `root`.
pub fn tree_ids(root: &str) -> [String; 5] {
    [
        root.to_owned(),
        format!("{root}.1"),
        format!("{root}.1.1"),
        format!("{root}.2"),
        format!("{root}.2.1"),
    ]
}

/// The journal events of `run` of `kind`.
pub fn events(run: &RunFiles, kind: &str) -> Vec<Value> {
    run.journal()
        .into_iter()
        .filter(|event| event["type"] == kind)
        .collect()
}

/// The files of run `id` in the test's workspace `ws`.
pub fn files(test_dir: &std::path::Path, id: &str) -> RunFiles {
    run_files(&test_dir.join("ws"), id)
}

/// `test` with `from` replaced by `to` in its file `path`.
pub fn edit(test: Test, path: &str, from: &str, to: &str) -> Test {
    let text = std::fs::read_to_string(test.path().join(path)).unwrap();
    assert!(text.contains(from), "{path} lacks {from:?}");
    test.file(path, &text.replace(from, to))
}
