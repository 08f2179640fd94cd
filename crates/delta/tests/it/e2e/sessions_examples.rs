//! The persistent-session examples end to end: `examples/interactive-shell` and
//! `examples/python-repl` run their scripted models with the built `delta`, whose tools
//! find the built `delta-sessions` on PATH. The journal must show the state each session
//! kept between tool calls, and nothing of the session may outlive the run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support::harness::{ROOT, Test};
use crate::support::run::{RunFiles, assert_consistent, delta, mock, only_run};

const SESSIONS_BIN: &str = env!("CARGO_BIN_EXE_delta-sessions");

const SHELL_SCRIPT: &str =
    include_str!("../../../../../examples/interactive-shell/mock-script.yaml");
const PYTHON_SCRIPT: &str = include_str!("../../../../../examples/python-repl/mock-script.yaml");

/// The ids the two scripted models give their sessions (`session_start`'s optional id).
const SHELL_ID: &str = "sess_000000000001";
const PYTHON_ID: &str = "sess_000000000002";

/// Ends every session still active in a workspace when dropped, so a failing assertion
/// does not leave shells running after the test.
struct EndSessions(PathBuf);

impl Drop for EndSessions {
    fn drop(&mut self) {
        let Ok(listed) = sessions(&self.0, &["list"]) else {
            return;
        };
        let Ok(Value::Array(entries)) = serde_json::from_slice::<Value>(&listed.stdout) else {
            return;
        };
        for entry in entries.iter().filter(|e| e["status"] == "active") {
            if let Some(id) = entry["session_id"].as_str() {
                let _ignored = sessions(&self.0, &["end", id]);
            }
        }
    }
}

/// `delta-sessions --sessions-dir WORKSPACE/.sessions ARGS`.
fn sessions(workspace: &Path, args: &[&str]) -> std::io::Result<Output> {
    Command::new(SESSIONS_BIN)
        .arg("--sessions-dir")
        .arg(workspace.join(".sessions"))
        .args(args)
        .env_remove("DELTA_SESSIONS_DIR")
        .output()
}

/// The finished run of one example against `script`: its files, and the JSON each tool
/// printed (the observations, parsed), in call order.
struct ExampleRun {
    _test: Test,
    _guard: EndSessions,
    workspace: PathBuf,
    files: RunFiles,
    output: Output,
}

impl ExampleRun {
    /// `delta run` of `examples/{example}` (its configuration files copied into the test
    /// directory), with the directory of the built `delta-sessions` first on PATH and
    /// DELTA_SESSIONS_DIR unset, so that sessions land where the tools' working directory
    /// puts them: the workspace.
    fn new(example: &str, script: &str, task: &str) -> Self {
        let source = Path::new(ROOT).join("examples").join(example);
        let test = ["agent.yaml", "system_prompt.md", "context.yaml"]
            .into_iter()
            .fold(Test::new(), |test, name| {
                let text = std::fs::read_to_string(source.join(name)).expect("read the example");
                test.file(&format!("agent/{name}"), &text)
            });
        let bin_dir = Path::new(SESSIONS_BIN).parent().expect("target dir");
        let path = std::env::join_paths(std::iter::once(bin_dir.to_path_buf()).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .expect("PATH");
        let mock = mock(script);
        let test = delta(test, &mock)
            .env("PATH", path.to_str().expect("UTF-8 PATH"))
            .args(["run", "--agent", "agent", "-w", "ws", "-m", task]);
        let workspace = test.path().join("ws");
        let guard = EndSessions(workspace.clone());
        let output = test
            .cmd()
            .env_remove("DELTA_SESSIONS_DIR")
            .output()
            .expect("run delta");
        let files = only_run(&workspace);
        ExampleRun {
            _test: test,
            _guard: guard,
            workspace,
            files,
            output,
        }
    }

    #[track_caller]
    fn assert_completed(&self) {
        assert_eq!(
            self.output.status.code(),
            Some(0),
            "--- stdout ---\n{}\n--- stderr ---\n{}",
            String::from_utf8_lossy(&self.output.stdout),
            String::from_utf8_lossy(&self.output.stderr)
        );
        assert_consistent(&self.files, "COMPLETED");
    }

    /// The ACTION_REQUEST payloads, in order.
    fn requests(&self) -> Vec<Value> {
        self.events("ACTION_REQUEST")
    }

    /// Each ACTION_RESULT's observation parsed as the JSON document delta-sessions
    /// printed; every call must have succeeded (a failed command is still exit 0).
    fn observations(&self) -> Vec<Value> {
        self.events("ACTION_RESULT")
            .iter()
            .map(|result| {
                assert_eq!(result["status"], "SUCCESS", "{result:#}");
                let text = result["observation_content"].as_str().expect("text");
                serde_json::from_str(text)
                    .unwrap_or_else(|e| panic!("not one JSON document ({e}): {text}"))
            })
            .collect()
    }

    fn events(&self, kind: &str) -> Vec<Value> {
        self.files
            .journal()
            .into_iter()
            .filter(|e| e["type"] == kind)
            .map(|e| e["payload"].clone())
            .collect()
    }

    /// The session ended with the run: `list` says so, and no process of it is left
    /// (its holder led a process session of its own, so every process the shell
    /// started, background jobs included, belongs to that session).
    #[track_caller]
    fn assert_session_gone(&self, id: &str) {
        let listed = sessions(&self.workspace, &["list"]).expect("delta-sessions list");
        let listed: Value = serde_json::from_slice(&listed.stdout).expect("list is JSON");
        assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed:#}");
        assert_eq!(listed[0]["session_id"], id);
        assert_eq!(listed[0]["status"], "terminated");

        let metadata = self
            .workspace
            .join(".sessions")
            .join(id)
            .join("metadata.json");
        let metadata: Value =
            serde_json::from_str(&std::fs::read_to_string(&metadata).expect("metadata.json"))
                .expect("metadata is JSON");
        let holder = metadata["pid"].as_i64().expect("pid");
        let shell = metadata["shell_pid"].as_i64().expect("shell_pid");
        assert!(!running(holder), "the holder {holder} outlived the run");
        assert!(!running(shell), "the interpreter {shell} outlived the run");
        assert_eq!(session_members(holder), Vec::<i64>::new());
    }
}

/// Whether `pid` is a running process (a zombie has finished running).
fn running(pid: i64) -> bool {
    stat_fields(pid).is_some_and(|fields| fields[0] != "Z")
}

/// The live processes whose session id (field 6 of /proc/PID/stat) is `sid`.
fn session_members(sid: i64) -> Vec<i64> {
    let entries = std::fs::read_dir("/proc").expect("list /proc");
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i64>().ok())
        .filter(|pid| stat_fields(*pid).is_some_and(|f| f[0] != "Z" && f[3] == sid.to_string()))
        .collect()
}

/// The fields of /proc/PID/stat after the command name: state, ppid, pgrp, session, ….
fn stat_fields(pid: i64) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    Some(rest.split(' ').map(str::to_owned).collect())
}

fn tool_names(requests: &[Value]) -> Vec<&str> {
    requests
        .iter()
        .map(|r| r["tool_name"].as_str().expect("tool_name"))
        .collect()
}

#[test]
fn interactive_shell_keeps_directory_variables_and_functions_between_tool_calls() {
    let run = ExampleRun::new(
        "interactive-shell",
        SHELL_SCRIPT,
        "Create project/src and show that the shell keeps its state between commands",
    );
    run.assert_completed();

    let requests = run.requests();
    assert_eq!(
        tool_names(&requests),
        [
            "session_start",
            "session_exec",
            "session_exec",
            "session_end"
        ]
    );
    assert_eq!(
        requests[0]["resolved_command"],
        format!("delta-sessions start '--id={SHELL_ID}'")
    );
    assert!(
        requests[2]["resolved_command"]
            .as_str()
            .is_some_and(|c| c.starts_with(&format!(
                "delta-sessions exec --timeout 100 {SHELL_ID} < (stdin: "
            ))),
        "{}",
        requests[2]["resolved_command"]
    );

    let observations = run.observations();
    let started = &observations[0];
    assert_eq!(started["session_id"], SHELL_ID);
    assert_eq!(started["command"], "bash");
    assert_eq!(started["status"], "active");
    let work_dir = started["work_dir"].as_str().expect("work_dir");
    assert_eq!(
        Path::new(work_dir).canonicalize().expect("work_dir exists"),
        run.workspace.canonicalize().expect("workspace"),
        "the session starts in the workspace"
    );

    // The first command only changed state; the second, a separate process call, sees it.
    assert_eq!(
        observations[1],
        json!({"stdout": "", "stderr": "", "exit_code": 0,
               "execution_time_ms": observations[1]["execution_time_ms"]})
    );
    assert_eq!(
        observations[2]["stdout"],
        format!(
            "{work_dir}/project/src\nhello from a persistent shell\n\
             hello from a persistent shell, in src\n"
        )
    );
    assert_eq!(observations[2]["stderr"], "");
    assert_eq!(observations[2]["exit_code"], 0);
    assert_eq!(
        observations[3],
        json!({"status": "terminated", "session_id": SHELL_ID})
    );
    assert!(run.workspace.join("project/src").is_dir());

    assert_eq!(
        run.files.metadata()["result"]["work_dir"],
        "project/src",
        "the final answer is the run's result"
    );
    run.assert_session_gone(SHELL_ID);
}

#[test]
fn python_repl_keeps_its_globals_through_an_exception() {
    let run = ExampleRun::new(
        "python-repl",
        PYTHON_SCRIPT,
        "Compute x = 6 * 7 and show that the session survives an exception",
    );
    run.assert_completed();

    let requests = run.requests();
    assert_eq!(
        tool_names(&requests),
        [
            "session_start",
            "session_exec",
            "session_exec",
            "session_exec",
            "session_exec",
            "session_end"
        ]
    );
    assert_eq!(
        requests[0]["resolved_command"],
        format!("delta-sessions start '--id={PYTHON_ID}' python3")
    );
    assert_eq!(
        requests[2]["tool_args"],
        json!({"session_id": PYTHON_ID, "code": "x"})
    );

    let observations = run.observations();
    assert_eq!(observations[0]["session_id"], PYTHON_ID);
    assert_eq!(observations[0]["command"], "python3");
    assert_eq!(observations[1]["stdout"], "");
    assert_eq!(observations[1]["exit_code"], 0);

    // A later call sees x; the bare expression is echoed as at the >>> prompt.
    assert_eq!(observations[2]["stdout"], "42\n");
    assert_eq!(observations[2]["exit_code"], 0);

    // The exception: a traceback on stderr, exit code 1, and the tool call still succeeded.
    let failed = &observations[3];
    assert_eq!(failed["stdout"], "");
    assert_eq!(failed["exit_code"], 1);
    let traceback = failed["stderr"].as_str().expect("stderr");
    assert!(
        traceback.starts_with("Traceback (most recent call last):\n"),
        "{traceback}"
    );
    assert!(
        traceback.ends_with("ZeroDivisionError: division by zero\n"),
        "{traceback}"
    );
    // The frames above vary by Python version: a search for the driver's.
    assert!(
        !traceback.contains("python_driver"),
        "the driver's frames are hidden: {traceback}"
    );

    // After it, everything survived: the import, x, samples, and `extra`, which the
    // failing snippet assigned before the line that raised.
    assert_eq!(observations[4]["stdout"], "x = 42, mean = 42, extra = 0\n");
    assert_eq!(observations[4]["exit_code"], 0);
    assert_eq!(
        observations[5],
        json!({"status": "terminated", "session_id": PYTHON_ID})
    );

    assert_eq!(run.files.metadata()["result"]["x"], 42);
    run.assert_session_gone(PYTHON_ID);
}

/// The real-model path: a model that calls `session_start` without arguments, as the
/// system prompt says, gets a generated id (the `--id=` word is left out).
#[test]
fn session_start_without_an_id_generates_one() {
    let script = r#"
steps:
  - message:
      tool_calls:
        - name: session_start
  - message:
      content: "Started."
"#;
    let run = ExampleRun::new("interactive-shell", script, "Start a shell");
    run.assert_completed();
    assert_eq!(
        run.requests()[0]["resolved_command"],
        "delta-sessions start"
    );
    let started = &run.observations()[0];
    let id = started["session_id"].as_str().expect("session_id");
    assert!(
        id.len() == 17
            && id.starts_with("sess_")
            && id[5..]
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "{id}"
    );
    assert_ne!(id, SHELL_ID);

    // The model can use it; here the test ends the session the model left running.
    let ended = sessions(&run.workspace, &["end", id]).expect("delta-sessions end");
    assert!(ended.status.success(), "{ended:?}");
    run.assert_session_gone(id);
}
