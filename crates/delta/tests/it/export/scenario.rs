//! `delta export --format scenario` (issue 17): a recorded run becomes a conformance
//! scenario that `delta-conformance` replays. It passes against `delta` and fails against
//! a broken wrapper of `fixtures/broken/`; bad input is refused with exit codes 1 and 2;
//! the recorded scenarios checked into `fixtures/` are exactly what the export makes of
//! their runs (`UPDATE_RECORDED=1` rewrites them).

use std::path::{Path, PathBuf};
use std::process::Command;

use mock_llm::{MockProfile, MockServer, ServerOptions};
use serde_json::Value;

use crate::e2e::real_llm;
use crate::support::harness::{ROOT, Run, Stdin, Test};
use crate::support::run::{HELLO_SCRIPT, HELLO_TASK, delta, hello_world, mock};
use crate::support::snapshot::snapshot;

/// A binary built beside `delta`: `delta-conformance` and `mock-llm` belong to other
/// packages, which `cargo test --workspace` (what CI runs) builds before any test.
fn sibling(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_BIN_EXE_delta")).with_file_name(name);
    assert!(
        path.is_file(),
        "{} is missing: run the tests with `cargo test --workspace` (or `cargo build --workspace` first)",
        path.display()
    );
    path
}

/// `delta-conformance run --format json` of the scenarios in `fixtures`, against `implementation`:
/// the exit code and the parsed report.
fn conformance(fixtures: &Path, implementation: &str) -> (i32, Value) {
    let output = Command::new(sibling("delta-conformance"))
        .args(["run", "--format", "json", "--jobs", "1", "--fixtures"])
        .arg(fixtures)
        .arg("--schemas")
        .arg(Path::new(ROOT).join("schemas"))
        .arg("--mock-llm")
        .arg(sibling("mock-llm"))
        .args(["--impl", implementation])
        .output()
        .expect("run delta-conformance");
    let report = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "the report is not JSON ({e}):\n{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.code().unwrap_or(-1), report)
}

/// Each scenario's name and status, and the ids of its checks that did not pass.
fn outcome(report: &Value) -> Vec<(String, String, Vec<String>)> {
    report["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .map(|scenario| {
            let failed = scenario["checks"]
                .as_array()
                .expect("checks")
                .iter()
                .filter(|check| check["status"] != "pass")
                .map(|check| check["id"].as_str().expect("id").to_string())
                .collect();
            (
                scenario["name"].as_str().expect("name").to_string(),
                scenario["status"].as_str().expect("status").to_string(),
                failed,
            )
        })
        .collect()
}

/// `delta export --run-id ID -w ws --format scenario -o OUT EXTRA…` in `run`'s directory.
fn export(run: &Run, id: &str, out: &str, extra: &[&str]) -> Run {
    Test::new()
        .current_dir(run.path())
        .args([
            "export", "--run-id", id, "-w", "ws", "--format", "scenario", "-o", out,
        ])
        .args(extra)
        .run()
}

/// The hello-world run with a file already in its workspace, completed (exit 0) or
/// stopped by its iteration budget (exit 1).
fn hello_run(id: &str, max_iterations: &str, code: i32) -> Run {
    let mock = mock(HELLO_SCRIPT);
    let test = hello_world(Test::new())
        .file("ws/notes/todo.txt", "greet the world\n")
        .file("ws/big.log", &"x".repeat(70_000))
        .file("ws/.env", "WS_SECRET=canary-ws-env-51c2\n")
        .file("agent/.env", "AGENT_SECRET=canary-agent-env-93e0\n");
    delta(test, &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "--run-id", id])
        .args(["--max-iterations", max_iterations, "-m", HELLO_TASK])
        .run()
        .code(code)
}

/// A broken implementation of `fixtures/broken/` (its script and arguments) wrapping `delta`.
fn wrapper(words: &[&str]) -> String {
    format!(
        "sh {} {} {}",
        Path::new(ROOT)
            .join("fixtures/broken")
            .join(words[0])
            .display(),
        words[1..].join(" "),
        Path::new(env!("CARGO_BIN_EXE_delta")).display()
    )
}

#[test]
fn an_exported_run_passes_against_delta_and_fails_against_a_broken_implementation() {
    let run = hello_run("hello", "10", 0);
    let exported = export(&run, "hello", "out", &["--name", "recorded-hello"]).code(0);
    snapshot!(exported.stderr(), @r"
    wrote scenario recorded-hello to out/scenarios/recorded-hello.yaml (3 recorded answer(s), 3 tool call(s))
      note: big.log: in the workspace before the run, binary or larger than 65536 bytes; not recreated by the scenario
    replay it: delta-conformance run --fixtures out --filter recorded-hello --impl delta
    ");
    let fixtures = run.path().join("out");
    let scenario = std::fs::read_to_string(fixtures.join("scenarios/recorded-hello.yaml")).unwrap();
    // The workspace as the run found it is recreated; what the run wrote is expected.
    assert!(
        scenario.contains(
            "  - path: \"{workspace}/notes/todo.txt\"\n    content: |\n      greet the world\n"
        ),
        "{scenario}"
    );
    assert!(
        scenario.contains("        - path: \"{workspace}/hello.txt\"\n          text:\n"),
        "{scenario}"
    );
    assert!(fixtures.join("agents/recorded-hello/agent.yaml").is_file());
    // `.env` files hold credentials: neither the workspace's nor the agent's travels.
    let mut copied = Vec::new();
    for entry in std::fs::read_dir(fixtures.join("agents/recorded-hello")).unwrap() {
        copied.push(entry.unwrap().file_name().into_string().unwrap());
    }
    copied.sort();
    assert_eq!(copied, ["agent.yaml", "context.yaml", "system_prompt.md"]);
    assert!(!scenario.contains("canary-ws-env"), "{scenario}");

    let (code, report) = conformance(&fixtures, env!("CARGO_BIN_EXE_delta"));
    assert_eq!(
        (code, outcome(&report)),
        (0, vec![("recorded-hello".into(), "PASS".into(), vec![])]),
        "{report:#}"
    );
    // A journal line without `seq`: the runner's journal checks of the one step fail (the
    // envelope of seed 001 §7.1, and the schema's envelope).
    let (code, report) = conformance(&fixtures, &wrapper(&["rewrite-after.sh", "no-first-seq"]));
    assert_eq!(
        (code, outcome(&report)),
        (
            1,
            vec![(
                "recorded-hello".into(),
                "FAIL".into(),
                vec!["step-1/journal".into(), "step-1/journal-envelope".into()]
            )]
        ),
        "{report:#}"
    );
}

#[test]
fn a_run_stopped_by_its_budget_fails_an_implementation_that_exits_0() {
    let run = hello_run("short", "2", 1);
    export(&run, "short", "out", &[]).code(0);
    let fixtures = run.path().join("out");
    let scenario = std::fs::read_to_string(fixtures.join("scenarios/recorded-short.yaml")).unwrap();
    assert!(
        scenario.contains("      - --max-iterations\n      - \"2\"\n"),
        "{scenario}"
    );
    let (code, report) = conformance(&fixtures, env!("CARGO_BIN_EXE_delta"));
    assert_eq!(code, 0, "{report:#}");
    let (code, report) = conformance(&fixtures, &wrapper(&["remap-exit.sh", "1", "0"]));
    assert_eq!(
        (code, outcome(&report)),
        (
            1,
            vec![(
                "recorded-short".into(),
                "FAIL".into(),
                vec!["step-1".into()]
            )]
        ),
        "{report:#}"
    );
    let failure = &report["scenarios"][0]["failures"][0];
    assert!(
        failure.to_string().contains("exit code"),
        "the failure names the exit code: {failure:#}"
    );
}

/// An `ask_human` answered on the terminal (`-i`) is replayed from the step's stdin.
#[test]
fn an_interactive_answer_is_replayed_on_stdin() {
    let mock = mock(
        "steps:\n  - message:\n      tool_calls:\n        - {name: ask_human, arguments: {prompt: Colour?}}\n  - message: {content: Noted.}\n",
    );
    let run = delta(basic_agent(Test::new()), &mock)
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "asked", "-i",
        ])
        .args(["-m", "Ask me."])
        .stdin(Stdin::Text("ochre\n".into()))
        .run()
        .code(0);
    export(&run, "asked", "out", &[]).code(0);
    let fixtures = run.path().join("out");
    let scenario = std::fs::read_to_string(fixtures.join("scenarios/recorded-asked.yaml")).unwrap();
    assert!(
        scenario
            .contains("      - -i\n      - --format\n      - json\n    stdin: |\n      ochre\n"),
        "{scenario}"
    );
    let (code, report) = conformance(&fixtures, env!("CARGO_BIN_EXE_delta"));
    assert_eq!(
        (code, outcome(&report)),
        (0, vec![("recorded-asked".into(), "PASS".into(), vec![])]),
        "{report:#}"
    );
}

#[test]
fn bad_input_is_refused_with_the_right_exit_code() {
    let failing = mock("steps:\n  - error: {status: 401}\n");
    let run = delta(hello_world(Test::new()), &failing)
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "mute", "-m", "x",
        ])
        .run()
        .code(1);
    let run = delta(run.then(), &mock(HELLO_SCRIPT))
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", "ok", "-m", HELLO_TASK,
        ])
        .run()
        .code(0);
    std::fs::create_dir_all(run.path().join("full")).unwrap();
    std::fs::write(run.path().join("full/x"), "").unwrap();

    snapshot!(export(&run, "nope", "out", &[]), @"
    exit code: 1
    ----- stdout -----

    ----- stderr -----
    error: no run nope in ws; list the runs there with `delta list-runs -w ws`
    ");
    snapshot!(export(&run, "mute", "out", &[]), @"
    exit code: 1
    ----- stdout -----

    ----- stderr -----
    error: run mute has no recorded LLM answer (no THOUGHT in its journal); a scenario replays the model's answers
      = help: export a run that got at least one answer from the model (`delta list-runs` shows the runs)
    ");
    snapshot!(export(&run, "ok", "full", &[]), @"
    exit code: 1
    ----- stdout -----

    ----- stderr -----
    error: full exists and is not an empty directory
      = help: give -o a new or empty directory
    ");
    snapshot!(export(&run, "ok", "out", &["--name", "Bad_Name"]), @r#"
    exit code: 2
    ----- stdout -----

    ----- stderr -----
    error: invalid scenario name "Bad_Name": use lowercase letters, digits and '-', starting with a letter or digit
      = help: e.g. --name recorded-hello-world
    "#);
    snapshot!(export(&run, "ok", "out", &["--redact-content"]), @"
    exit code: 2
    ----- stdout -----

    ----- stderr -----
    error: --redact-content cannot be used with --format scenario: a replay needs the recorded texts
      = help: --format scenario writes a directory (-o DIR, --name, --mock-profile); atif and otlp write a document (--redact-content, --otlp-endpoint with otlp)
    ");
    snapshot!(
        Test::new()
            .current_dir(run.path())
            .args(["export", "--run-id", "ok", "-w", "ws", "--format", "scenario"])
            .run(),
        @"
    exit code: 2
    ----- stdout -----

    ----- stderr -----
    error: --format scenario needs -o DIR, the directory to write it to
      = help: --format scenario writes a directory (-o DIR, --name, --mock-profile); atif and otlp write a document (--redact-content, --otlp-endpoint with otlp)
    "
    );
    snapshot!(
        Test::new()
            .current_dir(run.path())
            .args(["export", "--run-id", "ok", "-w", "ws", "--format", "atif", "--name", "x"])
            .run(),
        @"
    exit code: 2
    ----- stdout -----

    ----- stderr -----
    error: --name needs --format scenario
      = help: --format scenario writes a directory (-o DIR, --name, --mock-profile); atif and otlp write a document (--redact-content, --otlp-endpoint with otlp)
    "
    );
    assert!(
        !run.path().join("out").exists(),
        "nothing written on a refusal"
    );
}

/// The agent is copied in memory: a data file of model-weights size is refused, not read.
#[test]
fn an_agent_file_over_16_mib_is_refused() {
    let run = hello_run("big", "10", 0);
    let weights = std::fs::File::create(run.path().join("agent/weights.bin")).unwrap();
    weights.set_len(17 * 1024 * 1024).unwrap();
    snapshot!(export(&run, "big", "out", &[]), @"
    exit code: 1
    ----- stdout -----

    ----- stderr -----
    error: [TEMP]/agent/weights.bin is larger than 16777216 bytes, too large to copy into a scenario
      = help: keep large data files out of the agent directory: its tools can read them from elsewhere
    ");
    assert!(!run.path().join("out").exists());
}

/// A name longer than a file name may be (issue 31) is refused as a usage error before
/// anything is written; the longest accepted name is written.
#[rstest::rstest]
#[case::one_over_the_limit(201)]
#[case::longer_than_a_file_name(260)]
#[case::far_over(4000)]
fn a_scenario_name_too_long_exits_2_and_writes_nothing(#[case] chars: usize) {
    let run = hello_run("long", "10", 0);
    let refused = export(&run, "long", "out", &["--name", &"a".repeat(chars)]).code(2);
    assert_eq!(
        refused.stderr(),
        format!(
            "error: the scenario name has {chars} characters, more than the 200 a scenario \
             name may have (it names a file and a directory)\n  = help: e.g. --name \
             recorded-hello-world\n"
        )
    );
    assert!(!run.path().join("out").exists(), "nothing is written");
    let longest = "b".repeat(200);
    export(&run, "long", "out", &["--name", &longest]).code(0);
    assert!(
        run.path()
            .join("out/scenarios")
            .join(format!("{longest}.yaml"))
            .is_file()
    );
}

/// A write that fails half way (here a path the OS finds too long, for the agent's files
/// but not for the scenario file) leaves nothing behind, so the same `-o` is accepted
/// again.
#[test]
fn an_export_that_fails_half_way_leaves_nothing() {
    let run = hello_run("deep", "10", 0);
    let before = entries(run.path());
    // Nested directories up to ~3,860 bytes: scenarios/NAME.yaml fits in PATH_MAX (4,096),
    // agents/NAME/system_prompt.md does not.
    let deep: String = std::iter::repeat_n("d".repeat(99), 39)
        .collect::<Vec<_>>()
        .join("/");
    let name = "n".repeat(200);
    let failed = export(&run, "deep", &deep, &["--name", &name]).code(1);
    assert!(
        failed.stderr().contains("File name too long"),
        "{}",
        failed.stderr()
    );
    assert_eq!(
        entries(run.path()),
        before,
        "the output directory and the parents it made are gone"
    );
}

fn entries(dir: &Path) -> Vec<std::ffi::OsString> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    names.sort();
    names
}

/// A recorded scenario of `fixtures/`: how its run is made.
struct Recording {
    name: &'static str,
    id: &'static str,
    extra: &'static [&'static str],
}

/// The three checked-in recordings: the hello-world example; the exchange recorded with a
/// real model (SmolLM2 on llama-cpp-python) replayed through the strict llama-cpp mock;
/// a `basic` agent run that pauses on `ask_human`, is continued twice and has a FAILED
/// tool call.
const RECORDINGS: [Recording; 3] = [
    Recording {
        name: "recorded-hello-world",
        id: "hello-world",
        extra: &[],
    },
    Recording {
        name: "recorded-llama-cpp-smollm2",
        id: "smollm2",
        extra: &["--mock-profile", "llama-cpp"],
    },
    Recording {
        name: "recorded-ask-continue-fail",
        id: "ask-continue",
        extra: &[],
    },
];

const ASK_CONTINUE_SCRIPT: &str = r#"
steps:
  - message:
      content: "I need a colour first."
      tool_calls:
        - name: ask_human
          arguments: {prompt: "Which colour?"}
  - message:
      tool_calls:
        - name: write_file
          arguments: {path: colour.txt, content: "ochre\n"}
  - message: {content: "Wrote colour.txt."}
  - message:
      content: "Failing as asked."
      tool_calls:
        - name: fail_with
          arguments: {message: boom}
  - message: {content: "The tool failed with exit code 3."}
"#;

/// `basic`'s files in `agent/`.
fn basic_agent(test: Test) -> Test {
    let dir = Path::new(ROOT).join("fixtures/agents/basic");
    ["agent.yaml", "system_prompt.md", "context.yaml"]
        .into_iter()
        .fold(test, |test, name| {
            let text = std::fs::read_to_string(dir.join(name)).unwrap();
            test.file(&format!("agent/{name}"), &text)
        })
}

/// The recording's run, in `ws/` of the returned run's directory.
fn record(recording: &Recording) -> Run {
    let run_args = [
        "run",
        "--agent",
        "agent",
        "-w",
        "ws",
        "--run-id",
        recording.id,
    ];
    match recording.id {
        "hello-world" => delta(hello_world(Test::new()), &mock(HELLO_SCRIPT))
            .args(run_args)
            .args(["-m", HELLO_TASK])
            .run()
            .code(0),
        "smollm2" => {
            let fixture = real_llm::fixture();
            let exchange = fixture["exchange"].as_array().unwrap();
            let mock = MockServer::start_with(
                real_llm::script(exchange),
                ServerOptions {
                    strict: Some(MockProfile::LlamaCpp),
                    ..ServerOptions::default()
                },
            )
            .unwrap();
            delta(real_llm::smollm2_agent(Test::new()), &mock)
                .args(run_args)
                .args(["--max-iterations", &exchange.len().to_string()])
                .args(["-m", fixture["task"].as_str().unwrap()])
                .run()
                .code(1)
        }
        _ => {
            let mock = mock(ASK_CONTINUE_SCRIPT);
            let run = delta(basic_agent(Test::new()), &mock)
                .args(run_args)
                .args(["-m", "Ask me for a colour, then write it to colour.txt."])
                .run()
                .code(101);
            let continue_args = ["continue", "--run-id", recording.id, "-w", "ws"];
            let run = delta(run.then(), &mock)
                .args(continue_args)
                .args(["-m", "ochre"])
                .run()
                .code(0);
            delta(run.then(), &mock)
                .args(continue_args)
                .args(["-m", "Now call fail_with once."])
                .run()
                .code(0)
        }
    }
}

/// Every file under `dir`, relative, sorted, with its bytes and executable bit.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>, bool)> {
    use std::os::unix::fs::PermissionsExt as _;
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap().display().to_string();
                let mode = std::fs::metadata(&path).unwrap().permissions().mode();
                files.push((rel, std::fs::read(&path).unwrap(), mode & 0o111 != 0));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn the_recorded_scenarios_in_fixtures_are_what_export_makes_of_their_runs() {
    let fixtures = Path::new(ROOT).join("fixtures");
    let update = std::env::var_os("UPDATE_RECORDED").is_some();
    for recording in &RECORDINGS {
        let run = record(recording);
        export(
            &run,
            recording.id,
            "out",
            &[&["--name", recording.name], recording.extra].concat(),
        )
        .code(0);
        let out = run.path().join("out");
        let scenario = format!("scenarios/{}.yaml", recording.name);
        let agent = format!("agents/{}", recording.name);
        if update {
            let target = fixtures.join(&agent);
            if target.exists() {
                std::fs::remove_dir_all(&target).unwrap();
            }
            std::fs::create_dir_all(fixtures.join("agents")).unwrap();
            std::fs::rename(out.join(&agent), &target).unwrap();
            std::fs::copy(out.join(&scenario), fixtures.join(&scenario)).unwrap();
            continue;
        }
        assert_eq!(
            std::fs::read_to_string(out.join(&scenario)).unwrap(),
            std::fs::read_to_string(fixtures.join(&scenario)).unwrap_or_default(),
            "fixtures/{scenario} differs from what `delta export` makes now: \
             rerun with UPDATE_RECORDED=1 and review the diff"
        );
        assert_eq!(
            tree(&out.join(&agent)),
            tree(&fixtures.join(&agent)),
            "fixtures/{agent} differs; rerun with UPDATE_RECORDED=1"
        );
    }
}
