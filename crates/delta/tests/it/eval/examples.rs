//! The example tasks in real containers (podman with runc and the offline busybox image
//! that tests/setup.sh builds): the oracle passes every task meant to pass, the scripted
//! agent gets the rewards its script earns, errored trials are reported apart, the
//! verifier sees the trajectory and the tests only after the agent, `delta view --eval`
//! links every trial, and a finished eval runs nothing again.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde_json::Value;

use super::{container_ready, eval_run, examples, no_containers_of, results, statuses};
use crate::support::harness::{ROOT, Test};
use crate::support::run::{delta, mock};

#[test]
fn the_oracle_passes_every_example_task_meant_to_pass() {
    container_ready();
    let run = eval_run(Test::new(), &examples(), &["--oracle", "--jobs", "2"])
        .run()
        .code(0);
    let out = run.path().join("out");
    let results = results(&out);
    assert_eq!(results.len(), 8, "one line per trial: {results:#?}");
    assert_eq!(
        statuses(&results),
        BTreeMap::from([
            (
                "build-fails".into(),
                ("errored".into(), "environment_build".into())
            ),
            ("count-lines".into(), ("passed".into(), "1".into())),
            ("hello".into(), ("passed".into(), "1".into())),
            ("hidden-tests".into(), ("passed".into(), "1".into())),
            (
                "no-reward".into(),
                ("errored".into(), "reward_missing".into())
            ),
            ("partial-credit".into(), ("passed".into(), "1".into())),
            ("prebuilt-image".into(), ("passed".into(), "1".into())),
            (
                "verifier-timeout".into(),
                ("errored".into(), "verifier_timeout".into())
            ),
        ])
    );
    let by_task: BTreeMap<&str, &Value> = results
        .iter()
        .map(|r| (r["task"].as_str().expect("task"), r))
        .collect();
    // The oracle ran solve.sh: its output and exit code beside the trial, no agent run.
    let hello = by_task["hello"];
    assert_eq!(hello["run_id"], Value::Null);
    assert_eq!(hello["agent_exit_code"], 0);
    assert!(out.join("trials/hello.1/agent/exit-code.txt").is_file());
    assert!(out.join("trials/hello.1/agent/oracle.txt").is_file());
    assert_eq!(
        by_task["partial-credit"]["rewards"],
        serde_json::json!({"count": 1.0, "hello": 1.0, "reward": 1.0})
    );
    // The build's log is the error's log, and it says why.
    let build = &by_task["build-fails"]["error"];
    assert_eq!(build["log"], "images/build-fails.log");
    let log = fs::read_to_string(out.join("images/build-fails.log")).expect("the build log");
    assert!(log.contains("this step fails on purpose"), "{log}");
    // The verifier that slept past its 2 s is killed; what it printed so far is kept.
    assert_eq!(
        by_task["verifier-timeout"]["error"]["log"],
        "trials/verifier-timeout.1/verifier/test-stdout.txt"
    );
    let report: Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).expect("summary"))
            .expect("JSON");
    assert_eq!(
        (&report["passed"], &report["failed"], &report["errored"]),
        (&5.into(), &0.into(), &3.into())
    );
    no_containers_of(&out);
}

#[test]
fn a_scripted_agent_gets_the_expected_rewards_with_errored_trials_apart() {
    container_ready();
    let model = mock(
        &fs::read_to_string(Path::new(ROOT).join("examples/eval-agent/mock-script.yaml"))
            .expect("script"),
    );
    let agent = Path::new(ROOT).join("examples/eval-agent");
    let agent = agent.to_str().expect("a UTF-8 path");
    let run = eval_run(
        delta(Test::new(), &model),
        &examples(),
        &["--agent", agent, "--jobs", "2"],
    )
    .run()
    .code(0);
    let out = run.path().join("out");
    let results = results(&out);
    assert_eq!(
        statuses(&results),
        BTreeMap::from([
            (
                "build-fails".into(),
                ("errored".into(), "environment_build".into())
            ),
            ("count-lines".into(), ("failed".into(), "0".into())),
            ("hello".into(), ("passed".into(), "1".into())),
            ("hidden-tests".into(), ("passed".into(), "1".into())),
            (
                "no-reward".into(),
                ("errored".into(), "reward_missing".into())
            ),
            ("partial-credit".into(), ("failed".into(), "0.5".into())),
            ("prebuilt-image".into(), ("passed".into(), "1".into())),
            (
                "verifier-timeout".into(),
                ("errored".into(), "verifier_timeout".into())
            ),
        ])
    );
    // The agent could not see the tests or the solution: /tests appeared after it ended.
    let seen = fs::read_to_string(out.join("trials/hidden-tests.1/workspace/seen.txt"))
        .expect("the agent's listing");
    assert!(seen.contains("/tests: No such file or directory"), "{seen}");
    assert!(
        seen.contains("/solution: No such file or directory"),
        "{seen}"
    );
    // Its run went through the launch path in the task's container, and its ATIF
    // trajectory is beside the trial.
    let hello: &Value = results
        .iter()
        .find(|r| r["task"] == "hello")
        .expect("hello");
    assert_eq!(hello["run_id"], "hello.1");
    assert_eq!(hello["run_status"], "COMPLETED");
    let trajectory: Value = serde_json::from_str(
        &fs::read_to_string(out.join(hello["paths"]["trajectory"].as_str().expect("path")))
            .expect("trajectory.json"),
    )
    .expect("JSON");
    assert!(
        trajectory["schema_version"]
            .as_str()
            .is_some_and(|v| v.starts_with("ATIF-")),
        "{trajectory}"
    );
    let metadata: Value = serde_json::from_str(
        &fs::read_to_string(out.join("trials/hello.1/workspace/.delta/hello.1/metadata.json"))
            .expect("metadata"),
    )
    .expect("JSON");
    assert_eq!(metadata["environment"]["kind"], "container");
    // The scores count errored trials both ways: (1 + 0 + 0.5 + 1 + 1 + 0 + 0 + 0)/8 with
    // errored as 0, 3.5/5 over the verified.
    let report = Test::new()
        .args([
            "eval",
            "report",
            out.to_str().expect("path"),
            "--format",
            "json",
        ])
        .run()
        .code(0);
    let report: Value = serde_json::from_str(report.stdout()).expect("JSON");
    assert_eq!(
        (&report["passed"], &report["failed"], &report["errored"]),
        (&3.into(), &2.into(), &3.into())
    );
    assert!((report["mean_reward"].as_f64().expect("mean") - 3.5 / 8.0).abs() < 1e-9);
    assert!((report["mean_reward_verified"].as_f64().expect("mean") - 0.7).abs() < 1e-9);
    assert_eq!(report["tasks"]["partial-credit"]["mean_reward"], 0.5);
    no_containers_of(&out);

    // The table links every trial to its run's page and its verifier's output.
    let view = Test::new()
        .args(["view", "--eval", out.to_str().expect("path")])
        .run()
        .code(0);
    let page = fs::read_to_string(out.join("index.html")).expect("the table");
    assert_eq!(
        page.matches("<tr data-trial=").count(),
        8,
        "{}",
        view.stdout()
    );
    for trial in ["hello.1", "count-lines.1", "partial-credit.1"] {
        let run_page = format!("trials/{trial}/workspace/.delta/{trial}/view.html");
        assert!(page.contains(&format!("href=\"{run_page}\"")), "{trial}");
        assert!(out.join(&run_page).is_file(), "{run_page}");
        assert!(page.contains(&format!("href=\"trials/{trial}/verifier/test-stdout.txt\"")));
    }

    // The same command again: nothing to run, nothing rebuilt, the same results.
    let again = eval_run(
        delta(run.then(), &model),
        &examples(),
        &["--agent", agent, "--jobs", "2"],
    )
    .run()
    .code(0);
    assert!(
        again.stderr().contains("0 of 8 trial(s) to run"),
        "{}",
        again.stderr()
    );
    assert_eq!(super::results(&out), results);
}

#[test]
fn the_verifier_sees_the_trajectory_at_logs_agent() {
    container_ready();
    let model = mock(
        &fs::read_to_string(Path::new(ROOT).join("examples/eval-agent/mock-script.yaml"))
            .expect("script"),
    );
    let test = Test::new()
        .file(
            "tasks/trajectory/task.toml",
            "[environment]\ndocker_image = \"localhost/delta-busybox:latest\"\nworkdir = \"/app\"\n",
        )
        .file("tasks/trajectory/instruction.md", "Do anything.\n")
        .file(
            "tasks/trajectory/tests/test.sh",
            "#!/bin/sh\n# Reward 1 when the agent's ATIF trajectory is where Harbor's verifiers look.\n\
             if grep -q '\"schema_version\": \"ATIF-' /logs/agent/trajectory.json; then\n  \
             echo 1 > /logs/verifier/reward.txt\nelse\n  echo 0 > /logs/verifier/reward.txt\nfi\n",
        );
    let agent = Path::new(ROOT).join("examples/eval-agent");
    let run = eval_run(
        delta(test, &model),
        "tasks",
        &["--agent", agent.to_str().expect("path")],
    )
    .run()
    .code(0);
    let results = results(&run.path().join("out"));
    assert_eq!(results[0]["status"], "passed", "{:#}", results[0]);
}
