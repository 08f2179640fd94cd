//! The file and environment protocol of seed 001 §6.4 and seed 000 §2.7.3: what a hook
//! finds in `input/`, its environment and working directory, what the engine records in
//! `execution_meta/`, and how invocations are numbered.

use delta_engine::hooks::{HookEffect, HookEvent, HookOutcome, ToolCallInfo, ToolResultInfo};
use delta_engine::journal::{ActionStatus, EventPayload, HookExecutionAudit, HookStatus};
use delta_engine::run::{ErrorInfo, ErrorType, FinalStatus};
use serde_json::{Map, Value, json};

use crate::hooks::support::{Fixture, RUN_ID, env_value, every_hook_runs, read, read_json};

/// Copies what the hook sees into its `output/` directory.
const DUMP: &str = r#"
out="${DELTA_HOOK_IO_PATH}output"
env > "$out/env.txt"
pwd -P > "$out/cwd.txt"
ls "${DELTA_HOOK_IO_PATH}input" > "$out/input.txt"
echo "to stdout"
echo "to stderr" >&2
"#;

fn args() -> Map<String, Value> {
    json!({"directory": "src"}).as_object().unwrap().clone()
}

fn call(args: &Map<String, Value>) -> ToolCallInfo<'_> {
    ToolCallInfo {
        action_id: "act-1",
        tool_call_id: "call_1",
        tool_name: "list_files",
        tool_args: args,
        resolved_command: Some("ls -F src"),
    }
}

/// context.json without its timestamp (checked to be RFC 3339 UTC with milliseconds).
fn context_without_timestamp(fx: &Fixture, dir: &str) -> Value {
    let mut context = read_json(&fx.invocation(dir).join("input/context.json"));
    let timestamp = context
        .as_object_mut()
        .unwrap()
        .remove("timestamp")
        .unwrap();
    let timestamp = timestamp.as_str().unwrap();
    assert!(
        timestamp.len() == 24 && timestamp.ends_with('Z'),
        "timestamp {timestamp}"
    );
    context
}

fn common_context(fx: &Fixture, dir: &str, iteration: u32, step: u32) -> Map<String, Value> {
    json!({
        "run_id": RUN_ID,
        "iteration": iteration,
        "step": step,
        "workspace": fx.workspace.display().to_string(),
        "run_dir": fx.paths.dir().display().to_string(),
        "journal_path": fx.paths.journal().display().to_string(),
        "io_path": format!("{}/", fx.invocation(dir).display()),
    })
    .as_object()
    .unwrap()
    .clone()
}

fn with(mut base: Map<String, Value>, fields: Value) -> Value {
    base.extend(fields.as_object().unwrap().clone());
    Value::Object(base)
}

#[tokio::test]
async fn a_tool_hook_sees_its_files_environment_and_workspace() {
    let fx = Fixture::new();
    fx.script("dump.sh", DUMP);
    let mut runner = fx.runner(&every_hook_runs("dump.sh"));
    let args = args();

    let outcome = runner
        .run(2, HookEvent::PreToolExecution(call(&args)))
        .await
        .unwrap();

    let dir_name = "001_pre_tool_execution";
    assert_eq!(
        outcome,
        HookOutcome {
            hook: delta_engine::config::HookName::PreToolExecution,
            step: 1,
            io_path_ref: format!("io/hooks/{dir_name}/"),
            result: Ok(HookEffect::None),
        }
    );
    let dir = fx.invocation(dir_name);
    assert_eq!(
        context_without_timestamp(&fx, dir_name),
        with(
            common_context(&fx, dir_name, 2, 1),
            json!({
                "hook_name": "pre_tool_execution",
                "action_id": "act-1",
                "tool_call_id": "call_1",
                "tool_name": "list_files",
                "tool_args": {"directory": "src"},
                "resolved_command": "ls -F src",
            })
        )
    );
    assert_eq!(
        read_json(&dir.join("input/payload.dat")),
        json!({
            "action_id": "act-1",
            "tool_call_id": "call_1",
            "tool_name": "list_files",
            "tool_args": {"directory": "src"},
            "resolved_command": "ls -F src",
        })
    );
    assert_eq!(
        read(&dir.join("output/input.txt")),
        "context.json\npayload.dat\n"
    );

    let env = read(&dir.join("output/env.txt"));
    let expected = [
        ("DELTA_RUN_ID", RUN_ID.to_owned()),
        ("DELTA_HOOK_NAME", "pre_tool_execution".to_owned()),
        ("DELTA_HOOK_IO_PATH", format!("{}/", dir.display())),
        ("RUN_DIR", fx.paths.dir().display().to_string()),
        ("JOURNAL_PATH", fx.paths.journal().display().to_string()),
        ("ITERATION_COUNT", "2".to_owned()),
        ("TOOL_NAME", "list_files".to_owned()),
        ("DELTA_API_KEY", String::new()),
        ("OPENAI_API_KEY", String::new()),
    ];
    for (name, value) in expected {
        assert_eq!(env_value(&env, name), Some(value.as_str()), "{name}");
    }
    for absent in ["TOOL_RESULT", "ERROR_MESSAGE", "RUN_STATUS"] {
        assert_eq!(env_value(&env, absent), None, "{absent}");
    }
    assert_eq!(
        read(&dir.join("output/cwd.txt")),
        format!("{}\n", fx.workspace.display())
    );

    let meta = dir.join("execution_meta");
    assert_eq!(
        read(&meta.join("command.txt")),
        format!("sh {}/dump.sh\n", fx.agent.display())
    );
    assert_eq!(read(&meta.join("stdout.log")), "to stdout\n");
    assert_eq!(read(&meta.join("stderr.log")), "to stderr\n");
    assert_eq!(read(&meta.join("exit_code.txt")), "0\n");
    let duration = read(&meta.join("duration_ms.txt"));
    assert!(duration.trim_end().parse::<u64>().is_ok(), "{duration:?}");
}

#[tokio::test]
async fn the_request_hook_gets_the_request_under_both_names() {
    let fx = Fixture::new();
    fx.script("dump.sh", DUMP);
    let mut runner = fx.runner(&every_hook_runs("dump.sh"));
    let request = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});

    let outcome = runner
        .run(1, HookEvent::PreLlmRequest { request: &request })
        .await
        .unwrap();

    assert_eq!(outcome.result, Ok(HookEffect::None));
    let dir = fx.invocation("001_pre_llm_request");
    assert_eq!(read_json(&dir.join("input/payload.dat")), request);
    assert_eq!(read_json(&dir.join("input/proposed_payload.json")), request);
    assert_eq!(
        context_without_timestamp(&fx, "001_pre_llm_request"),
        with(
            common_context(&fx, "001_pre_llm_request", 1, 1),
            json!({"hook_name": "pre_llm_request"})
        )
    );
}

#[tokio::test]
async fn the_response_hook_gets_the_body_byte_for_byte() {
    let fx = Fixture::new();
    fx.script("dump.sh", DUMP);
    let mut runner = fx.runner(&every_hook_runs("dump.sh"));
    let body = b"{\"choices\": [ {\"message\": {\"content\": \"ok\"}} ]}";

    runner
        .run(1, HookEvent::PostLlmResponse { body })
        .await
        .unwrap();

    let dir = fx.invocation("001_post_llm_response");
    assert_eq!(std::fs::read(dir.join("input/payload.dat")).unwrap(), body);
}

#[tokio::test]
async fn the_post_tool_hook_gets_the_result_in_payload_and_environment() {
    let fx = Fixture::new();
    fx.script("dump.sh", DUMP);
    let mut runner = fx.runner(&every_hook_runs("dump.sh"));
    let args = args();
    let result = ToolResultInfo {
        status: ActionStatus::Failed,
        exit_code: Some(2),
        observation: "ls: src: No such file",
    };

    runner
        .run(3, HookEvent::PostToolExecution(call(&args), result))
        .await
        .unwrap();

    let name = "001_post_tool_execution";
    let dir = fx.invocation(name);
    assert_eq!(
        context_without_timestamp(&fx, name),
        with(
            common_context(&fx, name, 3, 1),
            json!({
                "hook_name": "post_tool_execution",
                "action_id": "act-1",
                "tool_call_id": "call_1",
                "tool_name": "list_files",
                "tool_args": {"directory": "src"},
                "status": "FAILED",
                "exit_code": 2,
            })
        )
    );
    assert_eq!(
        read_json(&dir.join("input/payload.dat")),
        json!({
            "call": {
                "action_id": "act-1",
                "tool_call_id": "call_1",
                "tool_name": "list_files",
                "tool_args": {"directory": "src"},
                "resolved_command": "ls -F src",
            },
            "result": {"status": "FAILED", "exit_code": 2, "observation": "ls: src: No such file"},
        })
    );
    let env = read(&dir.join("output/env.txt"));
    assert_eq!(env_value(&env, "TOOL_NAME"), Some("list_files"));
    assert_eq!(
        env_value(&env, "TOOL_RESULT"),
        Some("ls: src: No such file")
    );
}

/// Linux refuses to start a process with one environment string over 128 KiB: a huge
/// result must not stop the hook from running.
#[tokio::test]
async fn a_huge_tool_result_is_cut_in_the_environment_and_whole_in_the_payload() {
    let fx = Fixture::new();
    fx.script(
        "size.sh",
        r#"printf '%s' "$TOOL_RESULT" > "${DELTA_HOOK_IO_PATH}output/tool_result.txt""#,
    );
    let mut runner =
        fx.runner("post_tool_execution:\n  command: [sh, \"${AGENT_HOME}/size.sh\"]\n");
    let args = args();
    let observation = "é".repeat(100_000);
    let result = ToolResultInfo {
        status: ActionStatus::Success,
        exit_code: Some(0),
        observation: &observation,
    };

    let outcome = runner
        .run(1, HookEvent::PostToolExecution(call(&args), result))
        .await
        .unwrap();

    assert_eq!(outcome.result, Ok(HookEffect::None));
    let dir = fx.invocation("001_post_tool_execution");
    let seen = read(&dir.join("output/tool_result.txt"));
    assert_eq!(
        seen,
        format!(
            "{}\n[truncated to 65536 of 200000 bytes; the whole text is in input/payload.dat]",
            "é".repeat(32_768)
        )
    );
    assert_eq!(
        read_json(&dir.join("input/payload.dat"))["result"]["observation"],
        json!(observation)
    );
}

#[tokio::test]
async fn the_error_hook_gets_the_error() {
    let fx = Fixture::new();
    fx.script("dump.sh", DUMP);
    let mut runner = fx.runner(&every_hook_runs("dump.sh"));
    let error = ErrorInfo::new(ErrorType::LlmError, "HTTP 500 from the LLM API")
        .with_details("after 3 attempts");

    runner.run(4, HookEvent::OnError(&error)).await.unwrap();

    let name = "001_on_error";
    let dir = fx.invocation(name);
    let error_json = json!({
        "type": "LlmError",
        "message": "HTTP 500 from the LLM API",
        "details": "after 3 attempts",
    });
    assert_eq!(
        context_without_timestamp(&fx, name),
        with(
            common_context(&fx, name, 4, 1),
            json!({"hook_name": "on_error", "error": error_json})
        )
    );
    assert_eq!(read_json(&dir.join("input/payload.dat")), error_json);
    let env = read(&dir.join("output/env.txt"));
    assert_eq!(
        env_value(&env, "ERROR_MESSAGE"),
        Some("HTTP 500 from the LLM API")
    );
}

#[tokio::test]
async fn the_run_end_hook_gets_the_status_and_result() {
    let fx = Fixture::new();
    fx.script("dump.sh", DUMP);
    let mut runner = fx.runner(&every_hook_runs("dump.sh"));
    let result = json!({"answer": 42});

    runner
        .run(
            3,
            HookEvent::OnRunEnd {
                status: FinalStatus::Completed,
                error: None,
                result: Some(&result),
            },
        )
        .await
        .unwrap();

    let name = "001_on_run_end";
    let dir = fx.invocation(name);
    assert_eq!(
        context_without_timestamp(&fx, name),
        with(
            common_context(&fx, name, 3, 1),
            json!({"hook_name": "on_run_end", "status": "COMPLETED"})
        )
    );
    assert_eq!(
        read_json(&dir.join("input/payload.dat")),
        json!({"status": "COMPLETED", "error": null, "result": {"answer": 42}})
    );
    let env = read(&dir.join("output/env.txt"));
    assert_eq!(env_value(&env, "RUN_STATUS"), Some("COMPLETED"));
    assert_eq!(env_value(&env, "ITERATION_COUNT"), Some("3"));
}

#[tokio::test]
async fn iteration_hooks_have_a_context_and_no_payload() {
    let fx = Fixture::new();
    fx.script("dump.sh", DUMP);
    let mut runner = fx.runner(&every_hook_runs("dump.sh"));

    runner.run(5, HookEvent::OnIterationStart).await.unwrap();
    runner.run(5, HookEvent::OnIterationEnd).await.unwrap();

    for (name, step, hook) in [
        ("001_on_iteration_start", 1, "on_iteration_start"),
        ("002_on_iteration_end", 2, "on_iteration_end"),
    ] {
        assert_eq!(
            context_without_timestamp(&fx, name),
            with(
                common_context(&fx, name, 5, step),
                json!({"hook_name": hook})
            )
        );
        assert_eq!(
            read(&fx.invocation(name).join("output/input.txt")),
            "context.json\n"
        );
    }
}

#[tokio::test]
async fn steps_increase_across_hooks_and_continue_after_existing_directories() {
    let fx = Fixture::new();
    fx.script("dump.sh", "true");
    let yaml = every_hook_runs("dump.sh");
    let request = json!({"model": "m", "messages": []});
    let mut runner = fx.runner(&yaml);
    assert_eq!(runner.next_step(), 1);

    runner.run(1, HookEvent::OnIterationStart).await.unwrap();
    runner
        .run(1, HookEvent::PreLlmRequest { request: &request })
        .await
        .unwrap();
    runner.run(1, HookEvent::OnIterationEnd).await.unwrap();
    assert_eq!(
        fx.invocations(),
        [
            "001_on_iteration_start",
            "002_pre_llm_request",
            "003_on_iteration_end"
        ]
    );

    // A continued run gets a new runner: it must not reuse a step.
    let mut resumed = fx.runner(&yaml);
    assert_eq!(resumed.next_step(), 4);
    let outcome = resumed.run(2, HookEvent::OnIterationStart).await.unwrap();
    assert_eq!(outcome.step, 4);
    assert_eq!(outcome.io_path_ref, "io/hooks/004_on_iteration_start/");

    std::fs::create_dir(fx.invocation("999_on_error")).unwrap();
    let mut resumed = fx.runner(&yaml);
    let outcome = resumed.run(3, HookEvent::OnIterationStart).await.unwrap();
    assert_eq!(outcome.io_path_ref, "io/hooks/1000_on_iteration_start/");
    assert!(fx.invocation("1000_on_iteration_start/input").is_dir());
}

#[tokio::test]
async fn an_unconfigured_hook_runs_nothing_and_writes_nothing() {
    let fx = Fixture::new();
    fx.script("dump.sh", DUMP);
    let mut runner = fx.runner("on_run_end:\n  command: [sh, \"${AGENT_HOME}/dump.sh\"]\n");

    assert_eq!(runner.run(1, HookEvent::OnIterationStart).await, None);

    assert_eq!(fx.invocations(), Vec::<String>::new());
    assert_eq!(runner.next_step(), 1);
}

#[tokio::test]
async fn aliases_run_under_the_canonical_name() {
    let fx = Fixture::new();
    fx.script("dump.sh", DUMP);
    let mut runner = fx.runner("pre_tool_exec:\n  command: [sh, \"${AGENT_HOME}/dump.sh\"]\n");
    let args = args();

    let outcome = runner
        .run(1, HookEvent::PreToolExecution(call(&args)))
        .await
        .unwrap();

    assert_eq!(outcome.io_path_ref, "io/hooks/001_pre_tool_execution/");
    assert_eq!(outcome.audit().hook_name, "pre_tool_execution");
}

#[tokio::test]
async fn a_successful_hook_is_audited_without_a_warning() {
    let fx = Fixture::new();
    fx.script("dump.sh", "true");
    let mut runner = fx.runner(&every_hook_runs("dump.sh"));

    let outcome = runner.run(1, HookEvent::OnIterationEnd).await.unwrap();

    assert_eq!(outcome.warning(), None);
    assert_eq!(
        outcome.journal_events(),
        [EventPayload::HookExecutionAudit(HookExecutionAudit {
            hook_name: "on_iteration_end".to_owned(),
            status: HookStatus::Success,
            io_path_ref: "io/hooks/001_on_iteration_end/".to_owned(),
        })]
    );
}
