//! What a successful hook can change: the request sent (pre_llm_request's
//! `payload_override.dat`) and whether a tool runs (pre_tool_execution's `control.json`).
//! Output that does not parse changes nothing and fails the invocation.

use delta_engine::hooks::{HookEffect, HookEvent, HookFailure, HookOutcome, ToolCallInfo};
use delta_engine::journal::HookStatus;
use rstest::rstest;
use serde_json::{Map, Value, json};

use crate::hooks::support::Fixture;

const REQUEST_HOOK: &str = "pre_llm_request:\n  command: [sh, \"${AGENT_HOME}/hook.sh\"]\n";
const TOOL_HOOK: &str = "pre_tool_execution:\n  command: [sh, \"${AGENT_HOME}/hook.sh\"]\n";

/// A hook script that writes `content` to `output/FILE`.
fn writes(file: &str, content: &str) -> String {
    format!("cat > \"${{DELTA_HOOK_IO_PATH}}output/{file}\" <<'JSON'\n{content}\nJSON")
}

async fn run_request_hook(fx: &Fixture) -> HookOutcome {
    let request = json!({"model": "m", "messages": [{"role": "system", "content": "base"}]});
    fx.runner(REQUEST_HOOK)
        .run(1, HookEvent::PreLlmRequest { request: &request })
        .await
        .unwrap()
}

async fn run_tool_hook(fx: &Fixture) -> HookOutcome {
    let args: Map<String, Value> = json!({"cmd": "rm -rf /"}).as_object().unwrap().clone();
    let call = ToolCallInfo {
        action_id: "act-1",
        tool_call_id: "call_1",
        tool_name: "shell",
        tool_args: &args,
        resolved_command: None,
    };
    fx.runner(TOOL_HOOK)
        .run(1, HookEvent::PreToolExecution(call))
        .await
        .unwrap()
}

#[rstest]
#[case::seed_001_section_6_4("payload_override.dat")]
#[case::seed_001_section_8_3("final_payload.json")]
#[tokio::test]
async fn an_override_replaces_the_request(#[case] file: &str) {
    let fx = Fixture::new();
    let rewritten = json!({"model": "m", "messages": [{"role": "system", "content": "rewritten"}]});
    fx.script("hook.sh", &writes(file, &rewritten.to_string()));

    let outcome = run_request_hook(&fx).await;

    assert_eq!(outcome.result, Ok(HookEffect::ReplaceRequest(rewritten)));
    assert_eq!(outcome.status(), HookStatus::Success);
}

#[tokio::test]
async fn without_an_override_the_request_stays() {
    let fx = Fixture::new();
    fx.script("hook.sh", "true");

    assert_eq!(run_request_hook(&fx).await.result, Ok(HookEffect::None));
}

#[rstest]
#[case::not_json(
    "{\"messages\": [",
    "wrote an invalid output/payload_override.dat: not JSON (EOF while parsing a list at line 2 column 0); write the complete request object"
)]
#[case::not_an_object(
    "[{\"role\": \"user\"}]",
    "wrote an invalid output/payload_override.dat: not a JSON object; write the complete request, e.g. {\"model\": …, \"messages\": […]}"
)]
#[case::no_messages(
    "{\"model\": \"m\"}",
    "wrote an invalid output/payload_override.dat: it has no \"messages\" array; start from input/payload.dat and change what you need"
)]
#[tokio::test]
async fn an_invalid_override_changes_nothing(#[case] content: &str, #[case] reason: &str) {
    let fx = Fixture::new();
    fx.script("hook.sh", &writes("payload_override.dat", content));

    let outcome = run_request_hook(&fx).await;

    assert_eq!(
        outcome.result.as_ref().map_err(ToString::to_string),
        Err(reason.to_owned())
    );
    assert_eq!(outcome.status(), HookStatus::Failed);
    assert_eq!(
        outcome.warning().unwrap().content,
        format!(
            "pre_llm_request hook {reason}; proceeding with the request as built (details in io/hooks/001_pre_llm_request/)"
        )
    );
}

#[tokio::test]
async fn two_overrides_are_ambiguous_and_change_nothing() {
    let fx = Fixture::new();
    let request = r#"{"messages": []}"#;
    fx.script(
        "hook.sh",
        &format!(
            "{}\n{}",
            writes("payload_override.dat", request),
            writes("final_payload.json", request)
        ),
    );

    assert_eq!(
        run_request_hook(&fx).await.result,
        Err(HookFailure::InvalidOverride {
            file: "payload_override.dat",
            reason: "output/final_payload.json was written too; write only one of the two"
                .to_owned()
        })
    );
}

#[tokio::test]
async fn control_skip_blocks_the_tool_with_the_hooks_observation() {
    let fx = Fixture::new();
    fx.script(
        "hook.sh",
        &writes(
            "control.json",
            r#"{"skip": true, "observation": "Blocked: rm is not allowed."}"#,
        ),
    );

    let outcome = run_tool_hook(&fx).await;

    assert_eq!(
        outcome.result,
        Ok(HookEffect::SkipTool {
            observation: "Blocked: rm is not allowed.".to_owned()
        })
    );
    assert_eq!(outcome.status(), HookStatus::Success);
    assert_eq!(outcome.warning(), None);
}

#[tokio::test]
async fn control_skip_without_observation_explains_itself() {
    let fx = Fixture::new();
    fx.script("hook.sh", &writes("control.json", r#"{"skip": true}"#));

    assert_eq!(
        run_tool_hook(&fx).await.result,
        Ok(HookEffect::SkipTool {
            observation: "The call to `shell` was blocked by the pre_tool_execution hook."
                .to_owned()
        })
    );
}

#[rstest]
#[case::skip_false(r#"{"skip": false, "observation": "fine"}"#)]
#[case::empty_object("{}")]
#[tokio::test]
async fn control_without_skip_lets_the_tool_run(#[case] control: &str) {
    let fx = Fixture::new();
    fx.script("hook.sh", &writes("control.json", control));

    assert_eq!(run_tool_hook(&fx).await.result, Ok(HookEffect::None));
}

#[rstest]
#[case::not_json(
    "{\"skip\": tru",
    "expected ident at line 2 column 0; expected {\"skip\": true, \"observation\": \"why\"}"
)]
#[case::unknown_field(
    r#"{"skip": true, "reason": "x"}"#,
    "unknown field `reason`, expected `skip` or `observation`; expected {\"skip\": true, \"observation\": \"why\"}"
)]
#[case::not_an_object(
    "[true, \"x\"]",
    "not a JSON object; expected {\"skip\": true, \"observation\": \"why\"}"
)]
#[case::skip_not_a_boolean(
    r#"{"skip": "yes"}"#,
    "invalid type: string \"yes\", expected a boolean; expected {\"skip\": true, \"observation\": \"why\"}"
)]
#[tokio::test]
async fn an_invalid_control_changes_nothing(#[case] control: &str, #[case] reason: &str) {
    let fx = Fixture::new();
    fx.script("hook.sh", &writes("control.json", control));

    let outcome = run_tool_hook(&fx).await;

    assert_eq!(
        outcome.result,
        Err(HookFailure::InvalidControl(reason.to_owned()))
    );
    assert_eq!(
        outcome.warning().unwrap().content,
        format!(
            "pre_tool_execution hook wrote an invalid output/control.json: {reason}; proceeding with the tool call (details in io/hooks/001_pre_tool_execution/)"
        )
    );
}

/// Only pre_llm_request and pre_tool_execution steer; other hooks' output files are theirs.
#[tokio::test]
async fn other_hooks_cannot_steer() {
    let fx = Fixture::new();
    fx.script(
        "hook.sh",
        &format!(
            "{}\n{}",
            writes("control.json", r#"{"skip": true}"#),
            writes("payload_override.dat", "not json")
        ),
    );
    let mut runner = fx.runner(
        "post_llm_response:\n  command: [sh, \"${AGENT_HOME}/hook.sh\"]\n\
         on_iteration_start:\n  command: [sh, \"${AGENT_HOME}/hook.sh\"]\n",
    );

    let response = runner
        .run(1, HookEvent::PostLlmResponse { body: b"{}" })
        .await
        .unwrap();
    let iteration = runner.run(1, HookEvent::OnIterationStart).await.unwrap();

    assert_eq!(response.result, Ok(HookEffect::None));
    assert_eq!(iteration.result, Ok(HookEffect::None));
}
