//! `examples/code-reviewer`: the agent loads as shipped, and its hook scripts keep the
//! audit trail and enforce the path policy.

use std::path::{Path, PathBuf};

use delta_engine::config::{HookName, load_agent};
use delta_engine::hooks::{HookEffect, HookEvent, HookRunner, ToolCallInfo, ToolResultInfo};
use delta_engine::journal::ActionStatus;
use delta_engine::run::FinalStatus;
use rstest::rstest;
use serde_json::{Map, Value, json};

use crate::support::{Fixture, read};

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/code-reviewer")
}

fn runner(fx: &Fixture) -> HookRunner {
    let agent = load_agent(&example(), &fx.workspace).unwrap();
    HookRunner::new(agent.hooks, &fx.paths)
}

fn trail(fx: &Fixture) -> Vec<Value> {
    read(&fx.workspace.join("audit/tool-calls.jsonl"))
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

#[test]
fn the_example_loads_without_warnings() {
    let fx = Fixture::new();
    let agent = load_agent(&example(), &fx.workspace).unwrap();
    assert_eq!(agent.warnings, Vec::<String>::new());
    let hooks: Vec<HookName> = agent.hooks.iter().map(|(name, _)| name).collect();
    assert_eq!(
        hooks,
        [
            HookName::PreToolExecution,
            HookName::PostToolExecution,
            HookName::OnError,
            HookName::OnRunEnd
        ]
    );
    let tools: Vec<&str> = agent.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["list_files", "read_file", "search", "write_review"]);
}

#[rstest]
#[case::absolute(json!({"path": "/etc/passwd"}), true)]
#[case::parent(json!({"path": "../secrets.txt"}), true)]
#[case::nested_parent(json!({"path": "src/../../x"}), true)]
#[case::bare_parent(json!({"path": ".."}), true)]
#[case::trailing_parent(json!({"path": "src/.."}), true)]
#[case::relative(json!({"path": "src/main.py"}), false)]
#[case::current(json!({"path": "."}), false)]
#[case::dots_in_a_name(json!({"path": "notes..txt"}), false)]
#[tokio::test]
async fn the_policy_refuses_paths_outside_the_workspace(
    #[case] args: Value,
    #[case] blocked: bool,
) {
    let fx = Fixture::new();
    let mut runner = runner(&fx);
    let args: Map<String, Value> = args.as_object().unwrap().clone();
    let call = ToolCallInfo {
        action_id: "act-1",
        tool_call_id: "call_1",
        tool_name: "read_file",
        tool_args: &args,
        resolved_command: None,
    };

    let outcome = runner
        .run(1, HookEvent::PreToolExecution(call))
        .await
        .unwrap();

    let expected = if blocked {
        HookEffect::SkipTool {
            observation: "Refused by the audit policy: paths must stay inside the working \
                          directory (no absolute paths, no ..)."
                .to_owned(),
        }
    } else {
        HookEffect::None
    };
    assert_eq!(outcome.result, Ok(expected));
    let records = trail(&fx);
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["event"], "pre_tool_execution");
    assert_eq!(
        records[0]["decision"],
        if blocked { "blocked" } else { "allowed" }
    );
    assert_eq!(records[0]["data"]["tool_args"], Value::Object(args));
}

#[tokio::test]
async fn the_trail_records_outcomes_and_the_run_summary() {
    let fx = Fixture::new();
    let mut runner = runner(&fx);
    let args: Map<String, Value> = json!({"path": "."}).as_object().unwrap().clone();
    let call = ToolCallInfo {
        action_id: "act-1",
        tool_call_id: "call_1",
        tool_name: "list_files",
        tool_args: &args,
        resolved_command: Some("find ."),
    };
    let result = ToolResultInfo {
        status: ActionStatus::Success,
        exit_code: Some(0),
        observation: "./main.py\n",
    };

    for event in [
        HookEvent::PreToolExecution(call),
        HookEvent::PostToolExecution(call, result),
        HookEvent::OnRunEnd {
            status: FinalStatus::Completed,
            error: None,
            result: None,
        },
    ] {
        let outcome = runner.run(2, event).await.unwrap();
        assert_eq!(outcome.result, Ok(HookEffect::None));
    }

    let records = trail(&fx);
    assert_eq!(records.len(), 2);
    assert_eq!(records[1]["event"], "post_tool_execution");
    assert_eq!(records[1]["iteration"], 2);
    assert_eq!(records[1]["run_id"], crate::support::RUN_ID);
    assert_eq!(
        records[1]["data"]["result"],
        json!({"status": "SUCCESS", "exit_code": 0, "observation": "./main.py\n"})
    );
    let summary = read(&fx.workspace.join("audit/runs.log"));
    assert!(
        summary.ends_with(&format!(
            " run={} status=COMPLETED iterations=2 tool_calls=1 blocked=0\n",
            crate::support::RUN_ID
        )),
        "{summary}"
    );
}
