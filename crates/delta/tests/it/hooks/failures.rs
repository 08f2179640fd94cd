//! Hooks never fail the run: a hook that cannot start, exits non-zero, is killed, or runs
//! past its timeout is a FAILED invocation that changes nothing, audited and warned about.

use std::path::Path;
use std::time::{Duration, Instant};

use delta_engine::hooks::HookRunner;
use delta_engine::hooks::{HookEvent, HookFailure};
use delta_engine::journal::{
    EventPayload, HookExecutionAudit, HookStatus, MessageLevel, SystemMessage,
};
use delta_engine::process::OutputPolicy;
use delta_engine::secrets::Redactor;
use serde_json::json;

use crate::hooks::support::{Fixture, process_gone, read};

#[tokio::test]
async fn a_hook_exiting_non_zero_is_audited_warned_and_its_output_ignored() {
    let fx = Fixture::new();
    fx.script(
        "hook.sh",
        r#"echo '{"messages": []}' > "${DELTA_HOOK_IO_PATH}output/payload_override.dat"
echo "cannot reach the summarizer" >&2
exit 3"#,
    );
    let mut runner = fx.runner("pre_llm_request:\n  command: [sh, \"${AGENT_HOME}/hook.sh\"]\n");
    let request = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});

    let outcome = runner
        .run(1, HookEvent::PreLlmRequest { request: &request })
        .await
        .unwrap();

    assert_eq!(outcome.result, Err(HookFailure::ExitCode(3)));
    assert_eq!(outcome.effect(), None);
    assert_eq!(
        outcome.journal_events(),
        [
            EventPayload::HookExecutionAudit(HookExecutionAudit {
                hook_name: "pre_llm_request".to_owned(),
                status: HookStatus::Failed,
                io_path_ref: "io/hooks/001_pre_llm_request/".to_owned(),
            }),
            EventPayload::SystemMessage(SystemMessage {
                level: MessageLevel::Warn,
                content: "pre_llm_request hook exited with code 3; proceeding with the request as built (details in io/hooks/001_pre_llm_request/)".to_owned(),
            }),
        ]
    );
    let meta = fx.invocation("001_pre_llm_request/execution_meta");
    assert_eq!(read(&meta.join("exit_code.txt")), "3\n");
    assert_eq!(
        read(&meta.join("stderr.log")),
        "cannot reach the summarizer\n"
    );
}

#[tokio::test]
async fn a_hook_past_its_timeout_is_killed_with_its_children() {
    let fx = Fixture::new();
    fx.script(
        "hook.sh",
        r#"sleep 300 &
echo $! > "${DELTA_HOOK_IO_PATH}output/child.pid"
wait"#,
    );
    let mut runner = fx.runner(
        "on_iteration_start:\n  command: [sh, \"${AGENT_HOME}/hook.sh\"]\n  timeout_ms: 500\n",
    );

    let outcome = runner.run(1, HookEvent::OnIterationStart).await.unwrap();

    assert_eq!(
        outcome.result,
        Err(HookFailure::TimedOut { timeout_ms: 500 })
    );
    assert_eq!(
        outcome.warning().unwrap().content,
        "on_iteration_start hook timed out after 500 ms and was killed with its child processes; the run goes on (details in io/hooks/001_on_iteration_start/)"
    );
    let dir = fx.invocation("001_on_iteration_start");
    let child: i32 = read(&dir.join("output/child.pid")).trim().parse().unwrap();
    // The kill is synchronous; reaping the orphaned child is up to init. Allow it a moment.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !process_gone(child) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(process_gone(child), "child {child} of the hook survived");
    assert_eq!(read(&dir.join("execution_meta/exit_code.txt")), "timeout\n");
}

#[tokio::test]
async fn a_hook_killed_by_a_signal_fails() {
    let fx = Fixture::new();
    fx.script("hook.sh", "kill -TERM $$");
    let mut runner = fx.runner("on_iteration_end:\n  command: [sh, \"${AGENT_HOME}/hook.sh\"]\n");

    let outcome = runner.run(1, HookEvent::OnIterationEnd).await.unwrap();

    assert_eq!(outcome.result, Err(HookFailure::Signal(15)));
    assert_eq!(
        read(&fx.invocation("001_on_iteration_end/execution_meta/exit_code.txt")),
        "signal 15\n"
    );
}

#[tokio::test]
async fn a_hook_that_cannot_start_fails_and_is_recorded() {
    let fx = Fixture::new();
    let mut runner =
        fx.runner("on_iteration_end:\n  command: [\"${AGENT_HOME}/missing-hook\", \"--flag\"]\n");

    let outcome = runner.run(1, HookEvent::OnIterationEnd).await.unwrap();

    let missing = fx.agent.join("missing-hook");
    assert_eq!(
        outcome.result,
        Err(HookFailure::Spawn(format!(
            "cannot run '{}': No such file or directory (os error 2)",
            missing.display()
        )))
    );
    assert_eq!(outcome.status(), HookStatus::Failed);
    let meta = fx.invocation("001_on_iteration_end/execution_meta");
    assert_eq!(
        read(&meta.join("command.txt")),
        format!("{} --flag\n", missing.display())
    );
    assert_eq!(read(&meta.join("exit_code.txt")), "not started\n");
    assert_eq!(
        read(&meta.join("stderr.log")),
        format!(
            "Error: cannot run '{}': No such file or directory (os error 2)\n",
            missing.display()
        )
    );
}

#[tokio::test]
async fn a_run_directory_that_cannot_take_hook_records_fails_the_hook_not_the_run() {
    let fx = Fixture::new();
    fx.script("hook.sh", "true");
    let hooks_dir = fx.paths.hooks_dir();
    std::fs::remove_dir(&hooks_dir).unwrap();
    std::fs::write(&hooks_dir, "not a directory").unwrap();
    let mut runner = fx.runner("on_iteration_end:\n  command: [sh, \"${AGENT_HOME}/hook.sh\"]\n");

    let outcome = runner.run(1, HookEvent::OnIterationEnd).await.unwrap();

    // The reason ends with the OS's wording for the failed mkdir: a search for the path.
    assert!(
        matches!(&outcome.result, Err(HookFailure::Prepare(reason)) if reason.contains(&hooks_dir.display().to_string())),
        "{:?}",
        outcome.result
    );
    assert_eq!(outcome.io_path_ref, "io/hooks/001_on_iteration_end/");
    assert_eq!(outcome.status(), HookStatus::Failed);
    assert!(Path::new(&hooks_dir).is_file());
    assert_eq!(outcome.effect(), None);
}

#[tokio::test]
async fn a_hook_running_when_the_run_is_stopped_is_killed_and_recorded() {
    let fx = Fixture::new();
    fx.script(
        "hook.sh",
        r#"sleep 300 &
echo $! > "${DELTA_HOOK_IO_PATH}output/child.pid.tmp"
mv "${DELTA_HOOK_IO_PATH}output/child.pid.tmp" "${DELTA_HOOK_IO_PATH}output/child.pid"
wait"#,
    );
    let mut runner = fx.runner("on_iteration_start:\n  command: [sh, \"${AGENT_HOME}/hook.sh\"]\n");
    let pid_file = fx.invocation("001_on_iteration_start/output/child.pid");
    // Stands for the engine's shutdown: fires once the hook is surely running.
    let stop = async {
        while !pid_file.exists() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };

    let outcome = runner
        .run_until(1, HookEvent::OnIterationStart, stop)
        .await
        .unwrap();

    assert_eq!(outcome.result, Err(HookFailure::Interrupted));
    assert_eq!(
        outcome.warning().unwrap().content,
        "on_iteration_start hook was stopped because the run is being interrupted (details in io/hooks/001_on_iteration_start/)"
    );
    let child: i32 = read(&pid_file).trim().parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !process_gone(child) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(process_gone(child), "child {child} of the hook survived");
    assert_eq!(
        read(&fx.invocation("001_on_iteration_start/execution_meta/exit_code.txt")),
        "interrupted\n"
    );
}

#[tokio::test]
async fn a_hook_flooding_its_output_is_killed_at_the_limit() {
    let fx = Fixture::new();
    fx.script("hook.sh", "echo started >&2\ncat /dev/zero");
    let hooks = fx.hooks("on_iteration_end:\n  command: [sh, \"${AGENT_HOME}/hook.sh\"]\n");
    let output = OutputPolicy::new(256 * 1024, Redactor::default());
    let mut runner = HookRunner::new(hooks, &fx.paths, output);

    let outcome = runner.run(1, HookEvent::OnIterationEnd).await.unwrap();

    assert_eq!(
        outcome.result,
        Err(HookFailure::OutputLimitExceeded {
            limit_bytes: 256 * 1024
        })
    );
    assert_eq!(
        outcome.warning().unwrap().content,
        "on_iteration_end hook wrote more than 262144 bytes to stdout or stderr and was killed with its child processes; the run goes on (details in io/hooks/001_on_iteration_end/)"
    );
    let meta = fx.invocation("001_on_iteration_end/execution_meta");
    assert_eq!(read(&meta.join("exit_code.txt")), "output limit exceeded\n");
    assert_eq!(
        std::fs::metadata(meta.join("stdout.log")).unwrap().len(),
        256 * 1024
    );
    assert_eq!(read(&meta.join("stderr.log")), "started\n");
}
