//! `examples/code-reviewer`: the agent loads as shipped, its hook scripts keep the audit
//! trail and enforce the path policy, and the whole agent runs against its scripted model.

use std::path::{Path, PathBuf};

use delta_engine::config::{HookName, load_agent};
use delta_engine::hooks::{HookEffect, HookEvent, HookRunner, ToolCallInfo, ToolResultInfo};
use delta_engine::journal::ActionStatus;
use delta_engine::process::OutputPolicy;
use delta_engine::run::FinalStatus;
use rstest::rstest;
use serde_json::{Map, Value, json};

use crate::hooks::support::{Fixture, read};
use crate::support::harness::Test;
use crate::support::run::{assert_consistent, delta, mock, only_run};

fn example() -> PathBuf {
    Path::new(crate::support::harness::ROOT).join("examples/code-reviewer")
}

fn runner(fx: &Fixture) -> HookRunner {
    let agent = load_agent(&example(), &fx.workspace).unwrap();
    HookRunner::new(agent.hooks, &fx.paths, OutputPolicy::default())
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
    assert_eq!(records[1]["run_id"], crate::hooks::support::RUN_ID);
    assert_eq!(
        records[1]["data"]["result"],
        json!({"status": "SUCCESS", "exit_code": 0, "observation": "./main.py\n"})
    );
    let summary = read(&fx.workspace.join("audit/runs.log"));
    assert!(
        summary.ends_with(&format!(
            " run={} status=COMPLETED iterations=2 tool_calls=1 blocked=0\n",
            crate::hooks::support::RUN_ID
        )),
        "{summary}"
    );
}

#[test]
fn the_example_reviews_against_the_scripted_model_and_keeps_its_trail() {
    let script = std::fs::read_to_string(example().join("mock-script.yaml")).unwrap();
    let mock = mock(&script);
    let run = delta(
        Test::new().file("review/main.py", "print(\"hello\")\n"),
        &mock,
    )
    .args(["run", "--agent"])
    .arg(example())
    .args([
        "-w",
        "review",
        "-m",
        "Review this project.",
        "--format",
        "raw",
    ])
    .run()
    .code(0)
    .stdout_is("Findings: 0 high, 0 medium, 1 low.");

    let review = run.read("review/REVIEW.md");
    assert!(review.starts_with("# Review\n"), "{review}");
    let files = only_run(&run.path().join("review"));
    assert_consistent(&files, "COMPLETED");

    let trail: Vec<Value> = run
        .read("review/audit/tool-calls.jsonl")
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let summary: Vec<(String, String, String)> = trail
        .iter()
        .map(|record| {
            let call = if record["event"] == "pre_tool_execution" {
                &record["data"]
            } else {
                &record["data"]["call"]
            };
            (
                record["event"].as_str().unwrap().to_owned(),
                record["decision"].as_str().unwrap().to_owned(),
                call["tool_name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let row = |event: &str, decision: &str, tool: &str| {
        (event.to_owned(), decision.to_owned(), tool.to_owned())
    };
    assert_eq!(
        summary,
        [
            row("pre_tool_execution", "allowed", "list_files"),
            row("post_tool_execution", "done", "list_files"),
            row("pre_tool_execution", "allowed", "read_file"),
            row("post_tool_execution", "done", "read_file"),
            row("pre_tool_execution", "blocked", "read_file"),
            row("post_tool_execution", "done", "read_file"),
            row("pre_tool_execution", "allowed", "write_review"),
            row("post_tool_execution", "done", "write_review"),
        ]
    );
    assert_eq!(
        trail[1]["data"]["result"]["observation"], "./main.py\n",
        "the model saw the file list"
    );
    assert_eq!(trail[5]["data"]["result"]["status"], "ERROR");
    let run_id = files.dir.file_name().unwrap().to_str().unwrap().to_owned();
    let runs_log = run.read("review/audit/runs.log");
    assert!(
        runs_log.ends_with(&format!(
            " run={run_id} status=COMPLETED iterations=5 tool_calls=4 blocked=1\n"
        )),
        "{runs_log}"
    );
    let statuses: Vec<Value> = files
        .journal()
        .into_iter()
        .filter(|e| e["type"] == "HOOK_EXECUTION_AUDIT")
        .map(|e| e["payload"]["status"].clone())
        .collect();
    assert_eq!(statuses, vec![json!("SUCCESS"); 9]);
}
