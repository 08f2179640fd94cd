//! Agent tools in agent.yaml: what `delta tool expand` shows of them, the errors that name
//! the fix (exit 126, nothing run), and a tool's `workspace:` running the child in a
//! sub-directory of the caller's workspace.

use super::{PLAN_RUN, edit, files, tree};
use crate::support::harness::Test;
use crate::support::run::delta;
use crate::support::snapshot::snapshot;

#[test]
fn tool_expand_shows_agent_tools() {
    let tree = tree();
    let run = tree
        .test
        .args(["tool", "expand", "agents/worker"])
        .run()
        .code(0);
    snapshot!(run.stdout(), @r#"
    tools:
      - name: write
        command: ["sh", "-c", "echo \"$1\" $DELTA_RUN_ID >> tools.log", "--"]
        parameters:
          - name: text
            type: string
            inject_as: argument
            position: 0
    agent_tools:
      - name: review
        description: Asks a reviewer.
        agent: [TEMP]/agents/reviewer
        message: ${message}
        parameters:
          - name: message
            required: true
    "#);
}

fn refused(agent_yaml: &str) -> String {
    let run = Test::new()
        .agent("a", agent_yaml)
        .agent("a/helper", "name: helper\nllm: {model: m}\n")
        .args(["run", "--agent", "a", "-w", "ws", "-m", "go"])
        .run()
        .code(126);
    assert!(!run.path().join("ws").exists(), "nothing was created");
    run.stderr().to_owned()
}

#[test]
fn agent_tool_mistakes_are_refused_with_the_fix() {
    let head = "name: a\nllm: {model: m}\ntools:\n";
    snapshot!(refused(&format!("{head}  - {{name: ask, agent: missing}}\n")), @r"
    error: the agent of tool 'ask' is not an agent directory: [TEMP]/a/missing has no agent.yaml
      --> [TEMP]/a/agent.yaml:4:5
      = help: point `agent:` at a directory holding agent.yaml, relative to this agent's directory (`.` is this agent)
    ");
    snapshot!(refused(&format!("{head}  - {{name: ask, agent: helper, exec: ls}}\n")), @r"
    error: An agent tool runs a sub-agent, not a command: it cannot also have exec
      --> [TEMP]/a/agent.yaml:4:5
      = help: remove exec, or make it a separate tool
    ");
    snapshot!(refused(&format!("{head}  - {{name: ask, agent: helper, workspace: ../out}}\n")), @r"
    error: The sub-agent workspace '../out' must be a relative path inside the calling run's workspace (no '..', not absolute)
      --> [TEMP]/a/agent.yaml:4:5
      = help: name a directory inside the workspace, e.g. `workspace: reviews`
    ");
    snapshot!(refused(&format!("{head}  - {{name: ask, exec: ls, message: hi}}\n")), @r"
    error: `message` belongs to agent tools (with `agent:`); a command tool takes its input from its parameters
      --> [TEMP]/a/agent.yaml:4:5
      = help: remove `message`
    ");
    snapshot!(refused(&format!("{head}  - {{name: ask, agent: helper}}\nsubagents: {{max_depth: 0}}\n")), @r"
    error: `subagents.max_depth` must be at least 1
      --> [TEMP]/a/agent.yaml:5:24
      = help: give a positive number, or omit it for the default (5)
    ");
}

#[test]
fn a_tool_workspace_runs_the_child_in_a_subdirectory() {
    let tree = tree();
    let test = edit(
        tree.test,
        "agents/worker/agent.yaml",
        "agent: ../reviewer\n",
        "agent: ../reviewer\n    workspace: reviews\n",
    );
    let run = delta(test, &tree.planner).args(PLAN_RUN).run().code(0);
    let dir = run.path();
    let reviews = dir.join("ws/reviews");
    let reviewer = crate::support::run::run_files(&reviews, "p.1.1").metadata();
    assert_eq!(reviewer["work_dir"], reviews.display().to_string());
    assert_eq!(
        reviewer["called_by"]["work_dir"],
        dir.join("ws").display().to_string()
    );
    // The reviewer's tool ran there.
    assert!(reviews.join("tools.log").is_file());
    let worker = files(dir, "p.1").metadata();
    assert_eq!(
        worker["children"][0]["work_dir"],
        reviews.display().to_string()
    );
    assert_eq!(worker["subtree"]["runs"], 2);
    let listed = run
        .then()
        .args(["list-runs", "-w", "ws", "--tree", "--format", "json"])
        .run()
        .code(0);
    let listing: serde_json::Value = serde_json::from_str(listed.stdout()).unwrap();
    let ids: Vec<&str> = listing
        .as_array()
        .unwrap()
        .iter()
        .map(|run| run["run_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["p", "p.1", "p.1.1", "p.2", "p.2.1"]);
    assert_eq!(listing[2]["work_dir"], reviews.display().to_string());
}
