//! The published schemas describe what the runner writes (`context.json`) and reads
//! (`control.json`).

use std::path::PathBuf;

use delta_engine::hooks::{HookControl, HookEvent, ToolCallInfo, ToolResultInfo};
use delta_engine::journal::ActionStatus;
use delta_engine::run::{ErrorInfo, ErrorType, FinalStatus};
use rstest::rstest;
use serde_json::{Map, Value, json};

use crate::support::{Fixture, read_json};

fn validator(name: &str) -> jsonschema::Validator {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("schemas")
        .join(name);
    jsonschema::validator_for(&read_json(&path)).unwrap()
}

#[tokio::test]
async fn every_context_json_written_matches_the_schema() {
    let fx = Fixture::new();
    fx.script("hook.sh", "true");
    let yaml: String = [
        "pre_llm_request",
        "post_llm_response",
        "pre_tool_execution",
        "post_tool_execution",
        "on_error",
        "on_run_end",
        "on_iteration_start",
        "on_iteration_end",
    ]
    .iter()
    .map(|hook| format!("{hook}:\n  command: [sh, \"${{AGENT_HOME}}/hook.sh\"]\n"))
    .collect();
    let mut runner = fx.runner(&yaml);
    let request = json!({"messages": []});
    let args: Map<String, Value> = json!({"a": 1}).as_object().unwrap().clone();
    let call = ToolCallInfo {
        action_id: "act",
        tool_call_id: "call",
        tool_name: "t",
        tool_args: &args,
        resolved_command: None,
    };
    let result = ToolResultInfo {
        status: ActionStatus::Error,
        exit_code: None,
        observation: "blocked",
    };
    let error = ErrorInfo::new(ErrorType::EngineError, "broken context");
    let events = [
        HookEvent::OnIterationStart,
        HookEvent::PreLlmRequest { request: &request },
        HookEvent::PostLlmResponse { body: b"{}" },
        HookEvent::PreToolExecution(call),
        HookEvent::PostToolExecution(call, result),
        HookEvent::OnError(&error),
        HookEvent::OnIterationEnd,
        HookEvent::OnRunEnd {
            status: FinalStatus::Failed,
            error: Some(&error),
            result: None,
        },
    ];
    let schema = validator("hook-context.schema.json");
    for event in events {
        let outcome = runner.run(1, event).await.unwrap();
        let context = read_json(
            &fx.paths
                .dir()
                .join(&outcome.io_path_ref)
                .join("input/context.json"),
        );
        let errors: Vec<String> = schema
            .iter_errors(&context)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{context:#}\n{errors:#?}");
    }
    // The hook's own fields are required by its name.
    assert!(!schema.is_valid(&json!({
        "run_id": "r", "iteration": 1, "step": 1, "timestamp": "2025-10-14T10:30:00.123Z",
        "workspace": "/w", "run_dir": "/w/.delta/r", "journal_path": "/w/.delta/r/journal.jsonl",
        "io_path": "/w/.delta/r/io/hooks/001_on_error/", "hook_name": "on_error"
    })));
}

#[rstest]
#[case::skip_with_observation(r#"{"skip": true, "observation": "no"}"#, true)]
#[case::skip_only(r#"{"skip": true}"#, true)]
#[case::empty("{}", true)]
#[case::unknown_field(r#"{"skip": true, "reason": "no"}"#, false)]
#[case::skip_as_string(r#"{"skip": "true"}"#, false)]
#[case::array("[]", false)]
fn the_control_schema_agrees_with_the_runner(#[case] document: &str, #[case] valid: bool) {
    let instance: Value = serde_json::from_str(document).unwrap();
    assert_eq!(
        validator("hook-control.schema.json").is_valid(&instance),
        valid
    );
    assert_eq!(HookControl::parse(document.as_bytes()).is_ok(), valid);
}
