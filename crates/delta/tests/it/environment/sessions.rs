//! The persistent-session examples in each kind (issue 25: "the interactive-shell and
//! python-repl examples work in each kind, or the run refuses to start with the reason"):
//! their scripted models run under bwrap, landlock (with `/proc` allowed, which
//! delta-sessions needs) and in a container whose image has bash, python3 and
//! delta-sessions; landlock without `/proc`, and an image without delta-sessions, refuse.

use std::path::Path;

use serde_json::Value;

use super::support::{IMAGE, TOOLS_IMAGE, assert_success, payloads, require_components};
use crate::support::harness::{ROOT, Test};
use crate::support::run::{assert_consistent, delta, mock, only_run};

const SESSIONS_BIN: &str = env!("CARGO_BIN_EXE_delta-sessions");

/// `examples/{example}` (its configuration files) in `agent/`, with `environment` appended
/// to its agent.yaml, run against its scripted model with the built delta-sessions first
/// on a PATH of system directories (a PATH entry in a hidden home would not be there).
fn run_example(
    example: &str,
    environment: &str,
    prepare: impl FnOnce(&Path),
) -> (Test, std::process::Output) {
    require_components();
    let source = Path::new(ROOT).join("examples").join(example);
    let read = |name: &str| std::fs::read_to_string(source.join(name)).expect("read the example");
    let agent_yaml = format!("{}\nenvironment:\n{environment}", read("agent.yaml"));
    let test = Test::new()
        .file("agent/agent.yaml", &agent_yaml)
        .file("agent/system_prompt.md", &read("system_prompt.md"))
        .file("agent/context.yaml", &read("context.yaml"));
    prepare(test.path());
    let bin_dir = Path::new(SESSIONS_BIN).parent().expect("target dir");
    let mock = mock(&read("mock-script.yaml"));
    let test = delta(test, &mock)
        .env(
            "PATH",
            &format!("{}:/usr/local/bin:/usr/bin:/bin", bin_dir.display()),
        )
        .args(["run", "--agent", "agent", "-w", "ws", "-y", "-m", "go"]);
    let output = test
        .cmd()
        .env_remove("DELTA_SESSIONS_DIR")
        .output()
        .expect("run delta");
    (test, output)
}

/// The observations of the finished run, parsed as delta-sessions' JSON.
fn observations(test: &Test, output: &std::process::Output, what: &str) -> Vec<Value> {
    assert_success(output, what);
    let files = only_run(&test.path().join("ws"));
    assert_consistent(&files, "COMPLETED");
    payloads(&files, "ACTION_RESULT")
        .iter()
        .map(|result| {
            let text = result["observation_content"].as_str().expect("text");
            serde_json::from_str(text).unwrap_or_else(|e| panic!("{what}: {e}: {text}"))
        })
        .collect()
}

/// Whether the workspace holds no run.
fn no_run(test: &Test) -> bool {
    std::fs::read_dir(test.path().join("ws/.delta"))
        .map(|entries| entries.flatten().all(|entry| !entry.path().is_dir()))
        .unwrap_or(true)
}

/// A build directory in `agent/env`: the tools image plus the built delta-sessions.
fn sessions_image(dir: &Path) {
    let env = dir.join("agent/env");
    std::fs::create_dir_all(&env).expect("create the build directory");
    std::fs::copy(SESSIONS_BIN, env.join("delta-sessions")).expect("copy delta-sessions");
    std::fs::write(
        env.join("Dockerfile"),
        format!("FROM {TOOLS_IMAGE}\nCOPY delta-sessions /usr/bin/delta-sessions\n"),
    )
    .expect("write the Dockerfile");
}

/// A kind, its agent.yaml lines, and what prepares its test directory.
type Environment = (&'static str, &'static str, fn(&Path));

/// The environments the examples run in.
fn environments() -> [Environment; 3] {
    [
        ("bwrap", "  kind: bwrap\n", |_: &Path| {}),
        (
            "landlock",
            "  kind: landlock\n  allow_read: [/proc]\n",
            |_: &Path| {},
        ),
        (
            "container",
            "  kind: container\n  build: env\n",
            sessions_image,
        ),
    ]
}

#[test]
fn interactive_shell_works_in_every_kind() {
    for (kind, environment, prepare) in environments() {
        let (test, output) = run_example("interactive-shell", environment, prepare);
        let seen = observations(&test, &output, kind);
        assert_eq!(seen.len(), 4, "{kind}: {seen:#?}");
        assert_eq!(seen[0]["status"], "active", "{kind}");
        // A separate command saw what the previous one left: the session kept its state.
        let stdout = seen[2]["stdout"].as_str().expect("stdout");
        assert!(
            stdout.ends_with(
                "/project/src\nhello from a persistent shell\nhello from a persistent shell, in src\n"
            ),
            "{kind}: {stdout}"
        );
        assert_eq!(seen[3]["status"], "terminated", "{kind}");
        assert!(test.path().join("ws/project/src").is_dir(), "{kind}");
    }
}

#[test]
fn python_repl_works_in_every_kind() {
    for (kind, environment, prepare) in environments() {
        let (test, output) = run_example("python-repl", environment, prepare);
        let seen = observations(&test, &output, kind);
        assert_eq!(seen.len(), 6, "{kind}: {seen:#?}");
        assert_eq!(seen[2]["stdout"], "42\n", "{kind}");
        assert_eq!(seen[3]["exit_code"], 1, "{kind}: the exception");
        assert_eq!(
            seen[4]["stdout"], "x = 42, mean = 42, extra = 0\n",
            "{kind}: the state survived the exception"
        );
    }
}

#[test]
fn landlock_without_proc_refuses_delta_sessions() {
    let (test, output) = run_example("interactive-shell", "  kind: landlock\n", |_: &Path| {});
    assert_eq!(output.status.code(), Some(126));
    assert!(no_run(&test), "a run was created");
    crate::support::snapshot::snapshot!(String::from_utf8_lossy(&output.stderr), @r#"
    error: tool 'session_start' runs delta-sessions, which needs /proc (it tells a session's processes by their /proc entries), and the landlock environment hides /proc
      = help: add /proc to `allow_read` under `environment:` (tools can then read other processes' environment and command lines), or use `--environment bwrap` or `container`, which give the run its own /proc
    "#);
}

#[test]
fn an_image_without_delta_sessions_refuses_the_run() {
    let (test, output) = run_example(
        "interactive-shell",
        &format!("  kind: container\n  image: {IMAGE}\n"),
        |_: &Path| {},
    );
    assert_eq!(output.status.code(), Some(126));
    assert!(no_run(&test), "a run was created");
    // Nor is the container made for the refused run left behind.
    let left = std::process::Command::new("podman")
        .args(["ps", "-a", "-q", "--filter"])
        .arg(format!(
            "label=delta.workspace={}",
            test.path().join("ws").canonicalize().expect("ws").display()
        ))
        .output()
        .expect("podman ps");
    assert_eq!(
        String::from_utf8_lossy(&left.stdout),
        "",
        "a container was left"
    );
    crate::support::snapshot::snapshot!(String::from_utf8_lossy(&output.stderr), @r#"
    error: not found inside the container environment: 'delta-sessions' (tools 'session_start', 'session_exec', 'session_end')
      = help: install them in the image (localhost/delta-busybox:latest), e.g. in the Dockerfile given as `build:`
    "#);
}
