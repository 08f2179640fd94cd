//! Hooks in a tree: each run's hooks fire in that run with its own id, and the caller's
//! `on_subagent_end` fires when a child's part ends, before the call's
//! `post_tool_execution`.

use super::{PLAN_RUN, files, tree};
use crate::support::run::delta;

const LOGGING_HOOKS: &str = r#"
post_tool_execution:
  command: [sh, -c, "echo \"$DELTA_RUN_ID post_tool_execution $TOOL_NAME\" >> hooks.log"]
on_run_end:
  command: [sh, -c, "echo \"$DELTA_RUN_ID on_run_end $RUN_STATUS\" >> hooks.log"]
on_subagent_end:
  command: [sh, -c, "echo \"$DELTA_RUN_ID on_subagent_end $SUBAGENT_RUN_ID $SUBAGENT_STATUS\" >> hooks.log"]
"#;

#[test]
fn hooks_fire_in_each_run_with_its_own_id_and_on_subagent_end_in_the_parent() {
    let tree = tree();
    let test = ["planner", "worker", "reviewer"]
        .iter()
        .fold(tree.test, |test, agent| {
            test.file(&format!("agents/{agent}/hooks.yaml"), LOGGING_HOOKS)
        });
    let run = delta(test, &tree.planner).args(PLAN_RUN).run().code(0);
    let log = run.read("ws/hooks.log");
    let lines: Vec<&str> = log.lines().collect();
    let position = |line: &str| {
        lines
            .iter()
            .position(|l| *l == line)
            .unwrap_or_else(|| panic!("no {line:?} in\n{log}"))
    };
    for id in ["p", "p.1", "p.2", "p.1.1", "p.2.1"] {
        position(&format!("{id} on_run_end COMPLETED"));
    }
    for (parent, child, tool) in [
        ("p", "p.1", "work"),
        ("p", "p.2", "work"),
        ("p.1", "p.1.1", "review"),
        ("p.2", "p.2.1", "review"),
    ] {
        let ended = position(&format!("{parent} on_subagent_end {child} COMPLETED"));
        // The child's own end comes first, then the caller's hooks for the call.
        assert!(
            position(&format!("{child} on_run_end COMPLETED")) < ended,
            "{log}"
        );
        let post = lines
            .iter()
            .enumerate()
            .skip(ended)
            .find(|(_, l)| **l == format!("{parent} post_tool_execution {tool}"))
            .map(|(index, _)| index);
        assert!(post.is_some(), "{log}");
    }
    assert_eq!(log.matches("on_subagent_end").count(), 4, "{log}");
    // Journaled in the run that fired it.
    let audits: Vec<String> = files(run.path(), "p")
        .journal()
        .iter()
        .filter(|event| event["type"] == "HOOK_EXECUTION_AUDIT")
        .map(|event| event["payload"]["hook_name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        audits
            .iter()
            .filter(|name| *name == "on_subagent_end")
            .count(),
        2
    );
}
