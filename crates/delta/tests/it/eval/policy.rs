//! Which trials count: an agent stopped by the task's timeout is verified and counted (as
//! in Harbor), a run that FAILED on the model's API is errored although its verifier ran
//! (its rewards kept beside it), and unknown task.toml keys are warned about, not fatal.

use super::{container_ready, eval_run, results};
use crate::support::harness::Test;
use crate::support::run::{delta, mock};

const AGENT: &str = "name: a\nllm:\n  model: gpt-4o-mini\ntools:\n  - name: sh\n    \
                     description: Run a shell command.\n    exec: \"sh -c ${command}\"\n";

/// One task on the busybox image whose verifier gives 1 when `/app/hello.txt` exists;
/// `toml` is added to its task.toml.
fn task(test: Test, toml: &str) -> Test {
    test.agent("agent", AGENT)
        .file(
            "tasks/t/task.toml",
            &format!(
                "[environment]\ndocker_image = \"localhost/delta-busybox:latest\"\n\
                 workdir = \"/app\"\n{toml}"
            ),
        )
        .file("tasks/t/instruction.md", "Write hello.txt.\n")
        .file(
            "tasks/t/tests/test.sh",
            "#!/bin/sh\nif [ -f /app/hello.txt ]; then echo 1; else echo 0; fi \
             > /logs/verifier/reward.txt\n",
        )
}

#[test]
fn an_agent_stopped_by_the_tasks_timeout_is_verified_and_counted() {
    container_ready();
    // The model takes 3 s to answer; the task gives the agent 1 s.
    let model = mock(
        "mode: by_conversation\nsteps:\n  - message: {content: \"Thinking.\", delay_ms: 3000, \
         tool_calls: [{name: sh, arguments: {command: \"echo hello > hello.txt\"}}]}\n  \
         - message: {content: \"Done.\"}\n",
    );
    let run = eval_run(
        delta(task(Test::new(), "[agent]\ntimeout_sec = 1.0\n"), &model),
        "tasks",
        &["--agent", "agent"],
    )
    .run()
    .code(0);
    let results = results(&run.path().join("out"));
    let trial = &results[0];
    assert_eq!(trial["run_status"], "INTERRUPTED", "{trial:#}");
    assert_eq!(trial["status"], "failed", "{trial:#}");
    assert_eq!(trial["reward"], 0.0);
    assert_eq!(trial["error"], serde_json::Value::Null);
}

#[test]
fn a_run_failed_on_the_models_api_is_errored_with_its_rewards_kept() {
    container_ready();
    let model = mock("steps:\n  - error: {status: 500, repeat: 10}\n");
    let run = eval_run(
        delta(task(Test::new(), "bogus_key = true\n"), &model),
        "tasks",
        &["--agent", "agent"],
    )
    .run()
    .code(0);
    // Unknown keys are kept and warned about, with their line; the eval runs.
    assert!(
        run.stderr().contains(
            "tasks/t/task.toml:4:1: unknown key `environment.bogus_key` kept in eval.json"
        ),
        "{}",
        run.stderr()
    );
    let results = results(&run.path().join("out"));
    let trial = &results[0];
    assert_eq!(trial["run_status"], "FAILED", "{trial:#}");
    assert_eq!(trial["status"], "errored");
    assert_eq!(trial["error"]["class"], "model_api");
    assert_eq!(trial["reward"], serde_json::Value::Null);
    assert_eq!(trial["rewards"], serde_json::json!({"reward": 0.0}));
}
