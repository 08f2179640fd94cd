//! An eval survives its driver: after `kill -9` of the driver the same command finishes it
//! with every trial exactly once in the results and none verified twice, and a second
//! driver is refused while the first lives; after `kill -9`
//! of the driver and its trials too, the lost trials run again from scratch; Ctrl-C stops
//! cleanly, leaving no container and no verdict for the trials it stopped.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Child;

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

use super::{container_ready, eval_run, no_containers_of, results};
use crate::support::harness::Test;
use crate::support::run::{delta, mock, wait_until};

/// The scripted agent's answers, the first one slow, so that trials are in flight when
/// the driver is killed.
const SLOW_SCRIPT: &str = r#"
mode: by_conversation
models: [gpt-4o-mini]
steps:
  - message:
      content: "Writing."
      tool_calls: [{name: sh, arguments: {command: "echo hello > hello.txt"}}]
      delay_ms: 1500
  - message: {content: "Done."}
"#;

const AGENT: &str = "name: slow\nllm:\n  model: gpt-4o-mini\ntools:\n  - name: sh\n    \
                     description: Run a shell command.\n    exec: \"sh -c ${command}\"\n";

/// Three tasks whose verifier appends a line to `/app/verifications` (the workspace,
/// visible on the host) each time it runs, so that a second verification shows.
fn tasks(test: Test) -> Test {
    ["one", "two", "three"].into_iter().fold(test, |test, name| {
        test.file(
            &format!("tasks/{name}/task.toml"),
            "[environment]\ndocker_image = \"localhost/delta-busybox:latest\"\nworkdir = \"/app\"\n",
        )
        .file(&format!("tasks/{name}/instruction.md"), "Write hello.txt.\n")
        .file(
            &format!("tasks/{name}/tests/test.sh"),
            "#!/bin/sh\necho verified >> /app/verifications\n\
             if [ -f /app/hello.txt ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
        )
    })
}

fn eval(test: Test, model: &mock_llm::MockServer) -> Test {
    eval_run(
        delta(tasks(test.agent("agent", AGENT)), model),
        "tasks",
        &["--agent", "agent", "-k", "2", "--jobs", "2"],
    )
}

/// Every trial once in the results, and each verified exactly once.
fn assert_each_once(out: &Path) {
    let results = results(out);
    let mut trials: Vec<String> = results
        .iter()
        .map(|r| r["trial"].as_str().expect("trial").to_owned())
        .collect();
    trials.sort();
    assert_eq!(
        trials,
        ["one.1", "one.2", "three.1", "three.2", "two.1", "two.2"],
        "every trial exactly once"
    );
    for result in &results {
        assert_eq!(result["status"], "passed", "{result:#}");
        let trial = result["trial"].as_str().expect("trial");
        let verifications = fs::read_to_string(
            out.join("trials")
                .join(trial)
                .join("workspace/verifications"),
        )
        .expect("the verifier's marks");
        assert_eq!(verifications.lines().count(), 1, "{trial} verified once");
    }
}

/// The pids of the `delta eval trial` processes of the eval in `out`.
fn trial_processes(out: &Path) -> Vec<i32> {
    let out = out.display().to_string();
    fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = fs::read(entry.path().join("cmdline")).ok()?;
            let words: Vec<String> = cmdline
                .split(|b| *b == 0)
                .map(|w| String::from_utf8_lossy(w).into_owned())
                .collect();
            let is_trial = words
                .windows(3)
                .any(|w| w[0] == "eval" && w[1] == "trial" && w[2] == out);
            is_trial.then_some(pid)
        })
        .collect()
}

fn wait_for_first_result(out: &Path, driver: &mut Child) {
    wait_until("a first trial's verdict", || {
        !results(out).is_empty() || driver.try_wait().ok().flatten().is_some()
    });
    assert!(
        driver.try_wait().expect("wait").is_none(),
        "the driver ended too soon"
    );
}

/// The eval of the three tasks, its driver running in the background with a first
/// verdict in.
struct Driven {
    _model: mock_llm::MockServer,
    test: Test,
    out: PathBuf,
    driver: Child,
}

fn driven_to_a_first_verdict() -> Driven {
    container_ready();
    let model = mock(SLOW_SCRIPT);
    let test = eval(Test::new(), &model);
    let out = test.path().join("out");
    let mut driver = test.spawn();
    wait_for_first_result(&out, &mut driver);
    Driven {
        _model: model,
        test,
        out,
        driver,
    }
}

#[test]
fn kill_9_of_the_driver_then_the_same_command_records_every_trial_once_verified_once() {
    let Driven {
        _model,
        test,
        out,
        mut driver,
    } = driven_to_a_first_verdict();
    kill(Pid::from_raw(driver.id() as i32), Signal::SIGKILL).expect("kill -9");
    driver.wait().expect("reaped");
    // The trials in flight are orphans in their own process groups: they finish, and the
    // next driver (the same command) waits for them instead of running them again.
    let run = test.run().code(0);
    assert_each_once(&out);
    assert!(
        run.stdout().contains("6 trial(s) of 3 task(s)"),
        "{}",
        run.stdout()
    );
    // The killed driver's record in driver.lock is taken over, and said so.
    assert!(
        run.stderr().contains(&format!(
            "the eval's previous driver (PID {} (delta)",
            driver.id()
        )),
        "{}",
        run.stderr()
    );
    no_containers_of(&out);
}

#[test]
fn a_second_driver_on_the_same_out_is_refused_while_the_first_lives() {
    let Driven {
        _model,
        test,
        out,
        mut driver,
    } = driven_to_a_first_verdict();
    let second = test.run().code(1);
    assert!(
        second.stderr().contains(&format!(
            "is being driven by another `delta eval run`: PID {} (delta)",
            driver.id()
        )),
        "{}",
        second.stderr()
    );
    assert!(
        second
            .stderr()
            .contains(&format!("delta eval report {}", out.display())),
        "{}",
        second.stderr()
    );
    let status = driver.wait().expect("the first driver ends");
    assert_eq!(status.code(), Some(0));
    assert_each_once(&out);
    no_containers_of(&out);
}

#[test]
fn kill_9_of_the_driver_and_its_trials_runs_the_lost_trials_again() {
    let Driven {
        _model,
        test,
        out,
        mut driver,
    } = driven_to_a_first_verdict();
    let finished: Vec<String> = results(&out)
        .iter()
        .map(|r| r["trial"].as_str().expect("trial").to_owned())
        .collect();
    kill(Pid::from_raw(driver.id() as i32), Signal::SIGKILL).expect("kill -9");
    for pid in trial_processes(&out) {
        // The trial and everything it started (its run's engine lives in it).
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    }
    driver.wait().expect("reaped");
    let run = test.run().code(0);
    let results = results(&out);
    assert_eq!(results.len(), 6, "{}", run.stderr());
    // The trials that had their verdict were not run again; the lost ones ran from
    // scratch, their containers and files removed first.
    for trial in &finished {
        let verifications = fs::read_to_string(
            out.join("trials")
                .join(trial)
                .join("workspace/verifications"),
        )
        .expect("marks");
        assert_eq!(verifications.lines().count(), 1, "{trial}");
    }
    assert_each_once(&out);
    no_containers_of(&out);
}

#[test]
fn ctrl_c_stops_cleanly_and_leaves_no_container() {
    container_ready();
    let model = mock(SLOW_SCRIPT);
    let test = eval(Test::new(), &model);
    let out = test.path().join("out");
    let mut driver = test.spawn();
    wait_until("trials in flight", || trial_processes(&out).len() == 2);
    kill(Pid::from_raw(driver.id() as i32), Signal::SIGINT).expect("SIGINT");
    let status = driver.wait().expect("the driver ends");
    assert_eq!(status.code(), Some(130));
    assert!(trial_processes(&out).is_empty(), "no trial left running");
    no_containers_of(&out);
    // The stopped trials have no verdict: the next run runs them.
    let stopped = 6 - results(&out).len();
    assert!(stopped >= 2, "the two trials in flight were stopped");
    let run = test.run().code(0);
    assert!(
        run.stderr()
            .contains(&format!("{stopped} of 6 trial(s) to run")),
        "{}",
        run.stderr()
    );
    assert_each_once(&out);
}
