//! Issue 30 item 4: every exit path of `run`, `continue`, `fork` and `replay` prints
//! exactly one RESULT line with `--format jsonl` (last, its `exit_code` the process's,
//! valid against stream-line.schema.json; `run_id` null for a refusal before any run
//! exists) and exactly one JSON object with `--format json`. Before, errors that exit 2
//! (`--message-file /nonexistent`, a bad `--run-id`, bad flag values, a missing `-m`)
//! printed nothing on stdout.

use std::path::Path;

use serde_json::Value;

use crate::support::harness::{ROOT, Run, Stdin, Test};
use crate::support::run::{HELLO_SCRIPT, HELLO_TASK, delta, hello_world, mock, wait_until};

/// One exit path: how to start it in the fixture's directory, and the exit it ends with.
struct Case {
    name: &'static str,
    args: Vec<String>,
    /// The mock script of the run, when it reaches a model.
    script: Option<&'static str>,
    stdin: Option<&'static str>,
    /// Reach no model and have no key: the credentials refusal.
    no_model: bool,
    /// Stop it with SIGTERM once its first LLM request is in flight.
    sigterm: bool,
    exit: i32,
}

fn case(name: &'static str, exit: i32, args: &[&str]) -> Case {
    Case {
        name,
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        script: Some(ANSWER),
        stdin: None,
        no_model: false,
        sigterm: false,
        exit,
    }
}

const ANSWER: &str = "steps:\n  - message: {content: \"Done.\", repeat: 20}\n";
const FAILING: &str = "steps:\n  - error: {status: 401}\n";
const ASKING: &str = r#"
steps:
  - message:
      tool_calls:
        - {name: ask_human, arguments: {prompt: "Which color?"}}
"#;
const SLOW: &str = "steps:\n  - message: {content: \"late\", delay_ms: 60000}\n";

fn cases() -> Vec<Case> {
    fn run<'a>(extra: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec!["run", "--agent", "agent", "-w", "ws", "-y"];
        args.extend_from_slice(extra);
        args
    }
    vec![
        case("run completed", 0, &run(&["-m", "go"])),
        Case {
            script: Some(FAILING),
            ..case("run failed", 1, &run(&["-m", "go"]))
        },
        Case {
            script: Some(HELLO_SCRIPT),
            ..case(
                "run budget spent",
                1,
                &run(&["-m", HELLO_TASK, "--max-iterations", "1"]),
            )
        },
        Case {
            script: Some(ASKING),
            ..case("run waits for input", 101, &run(&["-m", "go"]))
        },
        case(
            "run config error",
            126,
            &["run", "--agent", "nowhere", "-y", "-m", "go"],
        ),
        Case {
            no_model: true,
            ..case("run without credentials", 126, &run(&["-m", "go"]))
        },
        Case {
            script: Some(SLOW),
            sigterm: true,
            ..case("run interrupted", 130, &run(&["-m", "go"]))
        },
        case("run without -m", 2, &run(&[])),
        case("run bad run id", 2, &run(&["-m", "go", "--run-id", "../x"])),
        case(
            "run bad flag value",
            2,
            &run(&["-m", "go", "--max-iterations", "0"]),
        ),
        case("run unknown flag", 2, &run(&["-m", "go", "--bogus"])),
        case("run old --task flag", 2, &run(&["--task", "go"])),
        case(
            "run missing message file",
            2,
            &run(&["--message-file", "/nonexistent"]),
        ),
        Case {
            stdin: Some(""),
            ..case("run empty task on stdin", 2, &run(&["-m", "-"]))
        },
        case(
            "run taken run id",
            1,
            &run(&["-m", "go", "--run-id", "done"]),
        ),
        case(
            "continue completed",
            0,
            &["continue", "--run-id", "more", "-w", "ws", "-m", "more"],
        ),
        case(
            "continue unknown run",
            1,
            &["continue", "--run-id", "nope", "-w", "ws", "-m", "x"],
        ),
        case(
            "continue without --run-id",
            2,
            &["continue", "-w", "ws", "-m", "x"],
        ),
        case(
            "continue without -m",
            2,
            &["continue", "--run-id", "done", "-w", "ws"],
        ),
        case(
            "continue empty -m",
            2,
            &["continue", "--run-id", "done", "-w", "ws", "-m", " "],
        ),
        case(
            "continue bad flag",
            2,
            &["continue", "--run-id", "done", "-w", "ws", "--bogus"],
        ),
        case(
            "fork continued",
            0,
            &[
                "fork", "--run-id", "done", "-w", "ws", "--at", "1", "-m", "again",
            ],
        ),
        case(
            "fork bad --at",
            2,
            &["fork", "--run-id", "done", "-w", "ws", "--at", "999"],
        ),
        case(
            "fork unknown run",
            1,
            &["fork", "--run-id", "nope", "-w", "ws"],
        ),
        Case {
            script: None,
            ..case(
                "replay identical",
                0,
                &[
                    "replay",
                    "--run-id",
                    "done",
                    "-w",
                    "ws",
                    "--workspace-from",
                    "clean",
                ],
            )
        },
        case(
            "replay unknown run",
            1,
            &["replay", "--run-id", "nope", "-w", "ws"],
        ),
        case(
            "replay bad flag",
            2,
            &["replay", "--run-id", "done", "-w", "ws", "--bogus"],
        ),
    ]
}

/// The fixture: the hello-world agent and, in `ws/`, the completed runs `done` (forked
/// and replayed) and `more` (continued).
fn fixture() -> Run {
    let model = mock(HELLO_SCRIPT);
    // `clean/` is the empty directory the recording started in, for the replay.
    let first = delta(hello_world(Test::new().file("clean/.keep", "")), &model)
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "done", "-m", HELLO_TASK,
        ])
        .run()
        .code(0);
    let model = mock(HELLO_SCRIPT);
    delta(first.then(), &model)
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "more", "-m", HELLO_TASK,
        ])
        .run()
        .code(0)
}

/// What one run of a case left: its exit code, stdout and stderr.
struct Ended {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run_case(dir: &Path, case: &Case, format: &str) -> Ended {
    let model = mock(case.script.unwrap_or(ANSWER));
    let mut test = Test::new()
        .current_dir(dir)
        .args(&case.args)
        .args(["--format", format]);
    if !case.no_model {
        test = delta(test, &model);
    }
    if let Some(stdin) = case.stdin {
        test = test.stdin(Stdin::Text(stdin.to_owned()));
    }
    if !case.sigterm {
        let run = test.run();
        return Ended {
            code: run.exit_code(),
            stdout: run.stdout().to_owned(),
            stderr: run.stderr().to_owned(),
        };
    }
    let child = test.spawn();
    wait_until("the LLM request", || !model.requests().is_empty());
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let output = child.wait_with_output().unwrap();
    Ended {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

#[test]
fn every_exit_path_prints_exactly_one_result_line() {
    let fixture = fixture();
    let schema = {
        let text = std::fs::read_to_string(Path::new(ROOT).join("schemas/stream-line.schema.json"))
            .unwrap();
        jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap()
    };
    for case in cases() {
        let name = case.name;
        let run = run_case(fixture.path(), &case, "jsonl");
        assert_eq!(
            run.code, case.exit,
            "{name}: exit code; stderr:\n{}",
            run.stderr
        );
        let lines: Vec<Value> = run
            .stdout
            .lines()
            .map(|line| {
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{name}: {e}: {line}"))
            })
            .collect();
        let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "RESULT").collect();
        assert_eq!(
            results.len(),
            1,
            "{name}: one RESULT line in\n{}",
            run.stdout
        );
        let result = lines.last().unwrap();
        assert_eq!(result["type"], "RESULT", "{name}: the RESULT line is last");
        assert_eq!(result["exit_code"], case.exit, "{name}: {result}");
        for line in &lines {
            assert!(schema.is_valid(line), "{name}: invalid line {line}");
        }
        if case.exit == 2 && !name.starts_with("continue") {
            assert_eq!(result["run_id"], Value::Null, "{name}: no run was created");
        }

        let run = run_case(fixture.path(), &case, "json");
        assert_eq!(
            run.code, case.exit,
            "{name} (json): stderr:\n{}",
            run.stderr
        );
        let value: Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("{name} (json): {e}: {}", run.stdout));
        assert!(value.is_object(), "{name} (json): {value}");
    }
}
