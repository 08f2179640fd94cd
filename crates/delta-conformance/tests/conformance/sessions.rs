//! The runner's handling of the sessions implementation, with a shell script standing in
//! for `delta-sessions`: `sessions` steps, `{session_id}`, the schema checks of their
//! output, `delta-sessions` on PATH for the scenario, skipping when there is none, and
//! the teardown that ends sessions and fails a scenario that leaves processes behind.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

use super::support::{repo, runner, sibling};

/// A fixtures directory with these scenarios and an empty agent; its schemas are the
/// repository's `sessions-*` schemas and runner schemas that accept anything. `fake` is
/// written as `fake-sessions.sh`.
fn fixtures(scenarios: &[(&str, &str)], fake: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["scenarios", "agents/empty", "schemas"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
    }
    std::fs::write(dir.path().join("agents/empty/agent.yaml"), "name: empty\n").unwrap();
    for kind in ["journal-event", "metadata", "run-result", "list-runs"] {
        std::fs::write(dir.path().join(format!("schemas/{kind}.schema.json")), "{}").unwrap();
    }
    for kind in ["start", "exec", "end", "list", "cleanup", "error"] {
        let name = format!("sessions-{kind}.schema.json");
        std::fs::copy(
            repo().join("schemas").join(&name),
            dir.path().join("schemas").join(&name),
        )
        .unwrap();
    }
    for (name, yaml) in scenarios {
        std::fs::write(dir.path().join(format!("scenarios/{name}.yaml")), yaml).unwrap();
    }
    std::fs::write(dir.path().join("fake-sessions.sh"), fake).unwrap();
    dir
}

/// The runner on `dir`'s scenarios with `sh -c` as the implementation and a PATH of the
/// system directories only (no `delta-sessions` a developer installed), JSON report.
fn run(dir: &Path, extra: &[&str]) -> (Output, Value) {
    run_with_env(dir, extra, &[])
}

fn run_with_env(dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> (Output, Value) {
    let mock = sibling("mock-llm");
    let output = Command::new(runner())
        .args(["run", "--impl", "sh -c", "--format", "json", "--jobs", "2"])
        .arg("--fixtures")
        .arg(dir)
        .arg("--schemas")
        .arg(dir.join("schemas"))
        .arg("--mock-llm")
        .arg(mock)
        .args(extra)
        .env("PATH", "/usr/bin:/bin")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let report = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "the report is not JSON ({e}); stderr:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output, report)
}

fn scenario<'r>(report: &'r Value, name: &str) -> &'r Value {
    report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("{name} is not in the report: {report:#}"))
}

fn fake_option(dir: &Path) -> String {
    format!("sh {}", dir.join("fake-sessions.sh").display())
}

/// Answers like delta-sessions, except that `end` leaves out `session_id`.
const CHATTY_FAKE: &str = r#"
case $1 in
  start) printf '{"session_id": "sess_0123456789ab", "command": "bash", "work_dir": "%s", "status": "active"}\n' "$PWD" ;;
  exec) printf '{"stdout": "ran %s\\n", "stderr": "", "exit_code": 0, "execution_time_ms": 1}\n' "$2" ;;
  end) echo '{"status": "terminated"}' ;;
  list) echo '[]' ;;
  *) echo '{"error": "unknown command", "hint": "see --help"}'; exit 2 ;;
esac
"#;

const STEPS: &str = r#"
name: steps
description: sessions steps against the fake
seed: "000 §2.3.2"
quote: the sentence the check rests on
tags: [sessions]
steps:
  - sessions: start
    expect:
      exit: 0
      stdout: {json: {/work_dir: {equals: "{tmp}"}}}
  - sessions: [exec, "{session_id}", "pwd"]
    expect:
      stdout: {json: {/stdout: {equals: "ran sess_0123456789ab\n"}}}
  - sessions: bogus
    expect: {exit: 2}
  - shell: delta-sessions list
    expect:
      stdout: {schema: sessions-list, equals: "[]\n"}
  - sessions: [end, "{session_id}"]
    expect: {exit: 0}
"#;

#[test]
fn sessions_steps_run_the_implementation_and_their_output_must_match_the_schemas() {
    let dir = fixtures(&[("steps", STEPS)], CHATTY_FAKE);
    let (output, report) = run(dir.path(), &["--impl-sessions", &fake_option(dir.path())]);
    assert_eq!(output.status.code(), Some(1));
    let steps = scenario(&report, "steps");
    // Everything held (the start's id reached the exec step as {session_id}, the error
    // document of `bogus` matched sessions-error, the shell step found the fake on PATH)
    // except the schema of `end`'s output, which lacks session_id.
    // Reports name the schema directory `schemas/`, wherever it is.
    assert_eq!(
        steps["failures"],
        json!([{
            "step": "step 5 (delta-sessions end {session_id})",
            "expected": "stdout (delta-sessions) is one document matching schemas/sessions-end.schema.json",
            "observed": "line 1: /session_id: \"session_id\" is a required property"
        }]),
        "{steps:#}"
    );
}

#[test]
fn scenarios_needing_sessions_are_reported_not_run_without_an_implementation() {
    let needs_program = r#"
name: needs-program
description: an agent whose tools run delta-sessions
seed: "000 §2.3.2"
quote: the sentence the check rests on
requires: [delta-sessions]
steps:
  - shell: "true"
"#;
    let has_step = r#"
name: has-step
description: a sessions step
seed: "000 §2.3.2"
quote: the sentence the check rests on
steps:
  - sessions: list
"#;
    let plain = r#"
name: plain
description: needs nothing
seed: "000 §2.3.2"
quote: the sentence the check rests on
steps:
  - shell: "! command -v delta-sessions"
"#;
    let dir = fixtures(
        &[
            ("needs-program", needs_program),
            ("has-step", has_step),
            ("plain", plain),
        ],
        "",
    );
    let (output, report) = run(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(1), "not run is not a pass");
    let reason = "not run (no --impl-sessions): no delta-sessions beside the --impl program or \
                  on PATH";
    for name in ["needs-program", "has-step"] {
        assert_eq!(scenario(&report, name)["status"], "NOT_RUN");
        assert_eq!(scenario(&report, name)["reason"], reason);
    }
    assert_eq!(report["total"]["not_run"], 2);
    // The text report says so on the scenario's line and in the totals.
    let output = Command::new(runner())
        .args(["run", "--impl", "sh -c", "--jobs", "2"])
        .arg("--fixtures")
        .arg(dir.path())
        .arg("--schemas")
        .arg(dir.path().join("schemas"))
        .arg("--mock-llm")
        .arg(sibling("mock-llm"))
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains(&format!(
            "NOT RUN  has-step [000 §2.3.2] (0.00s): {reason}\n"
        )),
        "{text}"
    );
    assert!(text.contains("2 not run"), "{text}");
    // Only scenarios that need it get delta-sessions on PATH.
    let (_, report) = run(dir.path(), &["--impl-sessions", "true"]);
    assert_eq!(scenario(&report, "plain")["status"], "PASS", "{report:#}");
    assert_eq!(scenario(&report, "needs-program")["status"], "PASS");
}

/// A session whose `start` leaves a process running in the scenario directory (out of
/// the step's process group, as a real session's holder is), which `end` stops only when
/// `FAKE_END` is `kill`.
const LINGERING_FAKE: &str = r#"
entry() {
  printf '{"session_id": "sess_0123456789ab", "command": "bash", "status": "active", "created_at": "2025-10-02T10:30:00.123Z", "execution_count": 0, "work_dir": "%s"}' "$PWD"
}
case $1 in
  start)
    # Like a real holder, answer only once the process has left the step's process group:
    # the runner kills that group as soon as the step ends.
    setsid sh -c 'echo $$ > .fake-pid.tmp && mv .fake-pid.tmp .fake-pid && exec sleep 300' > /dev/null 2>&1 < /dev/null &
    while [ ! -s .fake-pid ]; do sleep 0.01; done
    printf '{"session_id": "sess_0123456789ab", "command": "bash", "work_dir": "%s", "status": "active"}\n' "$PWD" ;;
  list)
    if [ -f .fake-pid ]; then echo "[$(entry)]"; else echo '[]'; fi ;;
  end)
    if [ "$FAKE_END" = kill ]; then kill "$(cat .fake-pid)"; fi
    rm -f .fake-pid
    echo "$2" >> "$FAKE_LOG"
    printf '{"status": "terminated", "session_id": "%s"}\n' "$2" ;;
esac
"#;

#[test]
fn teardown_ends_running_sessions_and_fails_a_scenario_that_leaves_processes() {
    let scenario_yaml = |name: &str, end: &str| {
        format!(
            "name: {name}\ndescription: a session left running\nseed: \"000 §2.3.2\"\nquote: Terminate Session\nenv: {{FAKE_END: {end}}}\n\
             steps:\n  - sessions: start\n    expect: {{exit: 0}}\n"
        )
    };
    let dir = fixtures(
        &[
            ("ended", scenario_yaml("ended", "kill").as_str()),
            ("lingers", scenario_yaml("lingers", "keep").as_str()),
        ],
        LINGERING_FAKE,
    );
    // FAKE_LOG reaches the fake through --pass-env.
    let log = dir.path().join("ended.log");
    let (_, report) = run_with_env(
        dir.path(),
        &[
            "--impl-sessions",
            &fake_option(dir.path()),
            "--pass-env",
            "FAKE_LOG",
        ],
        &[("FAKE_LOG", log.to_str().unwrap())],
    );

    // The runner ended both sessions through `list` and `end`.
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "sess_0123456789ab\nsess_0123456789ab\n"
    );
    assert_eq!(scenario(&report, "ended")["status"], "PASS", "{report:#}");

    // `end` that leaves the process running fails the scenario, and the runner kills it.
    let lingers = scenario(&report, "lingers");
    assert_eq!(lingers["status"], "FAIL");
    let failure = &lingers["failures"][0];
    assert!(
        failure["expected"]
            .as_str()
            .unwrap()
            .starts_with("no process is left running in "),
        "{failure:#}"
    );
    let observed = failure["observed"].as_str().unwrap();
    assert!(
        observed.starts_with("pid ") && observed.ends_with(" (sleep 300)"),
        "{observed}"
    );
    let pid = observed
        .strip_prefix("pid ")
        .and_then(|rest| rest.split(' ').next())
        .unwrap();
    let gone = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map_or(true, |stat| stat.contains(") Z "))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !gone() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(gone(), "process {pid} still runs");
}
