//! The Janitor through the binary (seed 002 §3.5): a live owner is refused, a killed one is
//! cleaned up, a pid reused by an unrelated process counts as dead, another host needs
//! `--force`, and of two simultaneous continues exactly one proceeds.

use delta_engine::run::{ProcessIdentity, Timestamp, read_metadata, write_metadata};
use delta_engine::secrets::Redactor;

use crate::resume::fixture::Sleeper;
use crate::resume::support::{RunDir, assert_sound, delta, finish, mock, recorder, wait_until};
use crate::support::harness::{Run, Test};
use crate::support::snapshot::snapshot;

/// A run `id` in `ws/` stopped by its budget (INTERRUPTED) after one tool call, whose next
/// LLM answer is "Recovered." (after `delay_ms`).
fn interrupted_run(id: &str, delay_ms: u64) -> (Run, mock_llm::MockServer) {
    let mock = mock(&format!(
        r#"
steps:
  - message:
      tool_calls:
        - {{name: record, arguments: {{line: once, secs: "0"}}}}
  - message: {{content: "Recovered.", delay_ms: {delay_ms}, repeat: 2}}
"#
    ));
    let run = delta(recorder(), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-m", "Record."])
        .args(["--run-id", id, "--max-iterations", "1"])
        .run()
        .code(1);
    (run, mock)
}

/// Rewrites the run's metadata as if `owner` were running it now.
fn forge_owner(run: &Run, id: &str, owner: &ProcessIdentity) {
    let path = run.path().join("ws/.delta").join(id).join("metadata.json");
    let mut metadata = read_metadata(&path).unwrap();
    metadata.resume(owner, 30, Timestamp::now());
    write_metadata(&path, &metadata, &Redactor::default()).unwrap();
}

#[test]
fn a_live_owner_is_refused_and_a_killed_one_is_cleaned_up() {
    let mock = mock(
        r#"
steps:
  - message: {content: "Too late.", delay_ms: 60000}
  - message: {content: "Recovered."}
"#,
    );
    let test = delta(recorder(), &mock).args([
        "run", "--agent", "agent", "-w", "ws", "-m", "Slow.", "--run-id", "live-1",
    ]);
    let workspace = test.path().join("ws").display().to_string();
    let mut child = test.spawn();
    let pid = child.id();
    wait_until("the LLM request", || mock.requests().len() == 1);

    let refused = delta(Test::new(), &mock)
        .args(["continue", "--run-id", "live-1", "-w", &workspace])
        .run()
        .code(1)
        .stderr_is(&format!(
            "error: Run live-1 is still active (PID {pid}). Cannot continue while original \
             process is running.\n"
        ));
    drop(refused);

    child.kill().unwrap();
    child.wait().unwrap();
    let files = RunDir::new(std::path::Path::new(&workspace), "live-1");
    assert_eq!(files.status(), "RUNNING", "kill -9 leaves the run RUNNING");
    let run = delta(Test::new(), &mock)
        .args(["continue", "--run-id", "live-1", "-w", &workspace])
        .run()
        .code(0);
    snapshot!(run, @"
    exit code: 0
    ----- stdout -----
    --- Run Summary ---
    Run ID:     live-1
    Status:     COMPLETED
    Duration:   [DURATION]
    -------------------
    Result:
    Recovered.
    -------------------

    ----- stderr -----
    [Janitor] Cleaned up orphaned run live-1 (dead process)
    [Janitor] Process [PID] (delta) no longer exists; the run was marked INTERRUPTED
    ▶ run live-1 · agent recorder · model test-model
      workspace [TEMP]/ws

    ── iteration 1/30 ──
    Recovered.

    ✔ COMPLETED after 1 iteration
    ");
    // The snapshot shows [PID]; this pins which process it names.
    assert!(
        run.stderr()
            .contains(&format!("[Janitor] Process {pid} (delta) no longer exists"))
    );
    drop(run);
    assert_sound(&files, "COMPLETED").unwrap();
    assert_eq!(
        files.types(),
        ["RUN_START", "RUN_END", "THOUGHT", "RUN_END"].map(String::from),
        "the Janitor closes the killed process's part with RUN_END INTERRUPTED"
    );
    drop(test);
}

#[test]
fn a_pid_reused_by_an_unrelated_process_counts_as_dead() {
    let (run, mock) = interrupted_run("reused-1", 0);
    let sleeper = Sleeper::start();
    let owner = ProcessIdentity {
        pid: sleeper.pid(),
        start_ticks: Some(1),
        process_name: "delta".to_owned(),
        ..ProcessIdentity::current()
    };
    forge_owner(&run, "reused-1", &owner);
    let run = delta(run.then(), &mock)
        .args(["continue", "--run-id", "reused-1", "-w", "ws"])
        .run()
        .code(0);
    snapshot!(run, @"
    exit code: 0
    ----- stdout -----
    --- Run Summary ---
    Run ID:     reused-1
    Status:     COMPLETED
    Duration:   [DURATION]
    -------------------
    Result:
    Recovered.
    -------------------

    ----- stderr -----
    [Janitor] Cleaned up orphaned run reused-1 (dead process)
    [Janitor] PID [PID] now belongs to another process (sleep); the run's own process (delta) is gone and the run was marked INTERRUPTED
    [Janitor] The journal shows the run had ended INTERRUPTED before its process died; metadata.json now says so too
    ▶ run reused-1 · agent recorder · model test-model
      workspace [TEMP]/ws

    ── iteration 2/30 ──
    Recovered.

    ✔ COMPLETED after 2 iterations
    ");
    // The snapshot shows [PID]; this pins which process it names.
    let reused = format!(
        "[Janitor] PID {} now belongs to another process",
        sleeper.pid()
    );
    assert!(run.stderr().contains(&reused));
    let files = RunDir::new(&run.path().join("ws"), "reused-1");
    assert_sound(&files, "COMPLETED").unwrap();
    assert_eq!(run.read("ws/ledger.txt"), "once\n");
}

#[test]
fn another_host_is_refused_and_accepted_with_force() {
    let (run, mock) = interrupted_run("xhost-1", 0);
    let owner = ProcessIdentity {
        hostname: "build-host-7".to_owned(),
        pid: 4242,
        ..ProcessIdentity::current()
    };
    forge_owner(&run, "xhost-1", &owner);
    let workspace = run.path().join("ws").display().to_string();
    let this_host = ProcessIdentity::current().hostname;
    let run = delta(run.then(), &mock)
        .args(["continue", "--run-id", "xhost-1", "-w", "ws"])
        .run()
        .code(1)
        .stderr_is(&format!(
            "error: Run xhost-1 was started on host 'build-host-7'.\n\
             Cannot verify process status from host '{this_host}'.\n\n\
             If you're certain the original process is dead, use:\n  \
             delta continue --run-id xhost-1 -w {workspace} --force\n"
        ));
    let files = RunDir::new(&run.path().join("ws"), "xhost-1");
    assert_eq!(files.status(), "RUNNING");
    let run = delta(run.then(), &mock)
        .args(["continue", "--run-id", "xhost-1", "-w", "ws", "--force"])
        .run()
        .code(0);
    snapshot!(run, @"
    exit code: 0
    ----- stdout -----
    --- Run Summary ---
    Run ID:     xhost-1
    Status:     COMPLETED
    Duration:   [DURATION]
    -------------------
    Result:
    Recovered.
    -------------------

    ----- stderr -----
    [Janitor] Cleaned up orphaned run xhost-1 (dead process)
    [Janitor] --force: process 4242 on host 'build-host-7' could not be checked from '[HOST]' and was taken to be dead; the run was marked INTERRUPTED
    [Janitor] The journal shows the run had ended INTERRUPTED before its process died; metadata.json now says so too
    ▶ run xhost-1 · agent recorder · model test-model
      workspace [TEMP]/ws

    ── iteration 2/30 ──
    Recovered.

    ✔ COMPLETED after 2 iterations
    ");
    assert_sound(&files, "COMPLETED").unwrap();
}

#[test]
fn of_two_simultaneous_continues_exactly_one_proceeds() {
    for round in 0..3 {
        let id = format!("race-{round}");
        let (run, mock) = interrupted_run(&id, 300);
        let requests_before = mock.requests().len();
        let continue_once = || {
            delta(Test::new(), &mock)
                .args(["continue", "--run-id", &id, "-w"])
                .arg(run.path().join("ws"))
                .spawn()
        };
        let (first, second) = (continue_once(), continue_once());
        let outcomes = [finish(first), finish(second)];
        let winners = outcomes.iter().filter(|(code, ..)| *code == 0).count();
        assert_eq!(winners, 1, "round {round}: {outcomes:#?}");
        let (code, _, stderr) = outcomes
            .iter()
            .find(|(code, ..)| *code != 0)
            .unwrap()
            .clone();
        assert_eq!(code, 1, "{stderr}");
        // Which of the two refusals a loser sees depends on when it looked: a search.
        assert!(
            stderr.contains(&format!("Run {id} is still active (PID "))
                || stderr.contains(&format!(
                    "Run {id} is being continued by another delta process"
                )),
            "{stderr}"
        );
        assert_eq!(mock.requests().len(), requests_before + 1, "one LLM call");
        let files = RunDir::new(&run.path().join("ws"), &id);
        assert_sound(&files, "COMPLETED").unwrap();
        assert_eq!(run.read("ws/ledger.txt"), "once\n");
    }
}

/// Whether process `pid` is gone (a zombie left to a reaper counts as gone).
fn gone(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'))
    })
}

/// An agent whose tool starts a long child in its process group and waits for it.
const SPAWNER: &str = r#"
name: spawner
llm:
  model: gpt-4o-mini
tools:
  - name: spawn
    description: Start a long job and wait for it.
    shell: "sleep 300 & echo $! > job.pid; wait"
"#;

/// Issue 30 item 8: after `kill -9` of the engine and `delta continue`, the orphaned tool
/// and its children kept running after the continued run had finished. The Janitor ends
/// the dead owner's in-flight tool process group before taking over, and journals it.
#[test]
fn kill_9_mid_tool_ends_the_tools_process_group_and_journals_it() {
    let mock = mock(
        r#"
steps:
  - message:
      tool_calls:
        - {name: spawn, arguments: {}}
  - message: {content: "Checked."}
"#,
    );
    let test = delta(Test::new().agent("agent", SPAWNER), &mock).args([
        "run",
        "--agent",
        "agent",
        "-w",
        "ws",
        "-m",
        "Start it.",
        "--run-id",
        "spawn-1",
    ]);
    let workspace = test.path().join("ws");
    let mut child = test.spawn();
    let pid_file = workspace.join("job.pid");
    wait_until("the tool's child", || {
        std::fs::read_to_string(&pid_file).is_ok_and(|t| t.trim().parse::<i32>().is_ok())
    });
    // The engine records the group just after spawning it, so a busy machine can run the
    // tool this far first: killing the engine before the record exists tests nothing.
    let records = workspace.join(".delta/spawn-1/io/tool_executions");
    wait_until("the tool's process record", || {
        std::fs::read_dir(&records).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|entry| entry.path().join("process.json").exists())
        })
    });
    let job: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !gone(job),
        "kill -9 of the engine leaves the tool's child running"
    );

    let ws = workspace.display().to_string();
    let run = delta(Test::new(), &mock)
        .args(["continue", "--run-id", "spawn-1", "-w", &ws])
        .run()
        .code(0);
    wait_until("the job to be killed", || gone(job));
    assert!(
        run.stderr().contains("[Janitor] The tool `spawn` (action "),
        "{}",
        run.stderr()
    );
    let files = RunDir::new(&workspace, "spawn-1");
    let messages = files.payloads("SYSTEM_MESSAGE");
    assert!(
        messages.iter().any(|m| m["content"]
            .as_str()
            .unwrap()
            .contains("was still running when the engine running it died: its process group")),
        "{messages:?}"
    );
    assert_sound(&files, "COMPLETED").unwrap();
    drop(run);
}

/// Issue 30 item 9: killed after its second LLM call, `metadata.json` showed one
/// iteration and one call while the journal had two answers: cost totals and budgets
/// missed the killed call. The takeover rebuilds usage from `io/invocations`.
#[test]
fn usage_is_rebuilt_from_the_invocation_records_after_kill_9() {
    let mock = mock(
        r#"
steps:
  - message:
      tool_calls:
        - {name: record, arguments: {line: one, secs: "0"}}
  - message:
      tool_calls:
        - {name: record, arguments: {line: two, secs: "300"}}
  - message: {content: "Done.", repeat: 2}
"#,
    );
    let test = delta(recorder(), &mock).args([
        "run", "--agent", "agent", "-w", "ws", "-m", "Record.", "--run-id", "usage-1",
    ]);
    let workspace = test.path().join("ws");
    let mut child = test.spawn();
    let ledger = workspace.join("ledger.txt");
    wait_until("the second tool call", || {
        std::fs::read_to_string(&ledger).is_ok_and(|t| t.lines().count() == 2)
    });
    child.kill().unwrap();
    child.wait().unwrap();
    let files = RunDir::new(&workspace, "usage-1");
    let before = files.metadata();
    assert_eq!(
        before["iterations"], 1,
        "metadata.json lags one call behind"
    );
    assert_eq!(before["usage"]["model_usage"]["test-model"]["calls"], 1);

    let ws = workspace.display().to_string();
    delta(Test::new(), &mock)
        .args(["continue", "--run-id", "usage-1", "-w", &ws])
        .run()
        .code(0);
    let after = files.metadata();
    assert_eq!(
        after["usage"]["model_usage"]["test-model"]["calls"], 3,
        "{after:#}"
    );
    assert_eq!(after["iterations"], 3, "{after:#}");
    assert_eq!(mock.requests().len(), 3);
    // The tokens are every call's, as the responses reported them.
    let per_call = before["usage"]["input_tokens"].as_u64().unwrap();
    assert!(after["usage"]["input_tokens"].as_u64().unwrap() > 2 * per_call);
}

/// An agent whose tool starts a delta-sessions session, then blocks.
fn session_starter() -> String {
    format!(
        r#"
name: session-starter
llm:
  model: gpt-4o-mini
tools:
  - name: open_shell
    description: Start a shell session and keep working.
    shell: "'{}' start --sessions-dir sessions > started.json && sleep 300"
"#,
        env!("CARGO_BIN_EXE_delta-sessions")
    )
}

/// Issue 30 item 8, session holders: a holder runs in its own process session, so ending
/// the killed call's process group left it running. The Janitor ends the holders the
/// call started, through delta-sessions' own end, and journals it.
#[test]
fn a_session_started_by_the_killed_call_is_ended() {
    let mock = mock(
        r#"
steps:
  - message:
      tool_calls:
        - {name: open_shell, arguments: {}}
  - message: {content: "Checked."}
"#,
    );
    let test = delta(Test::new().agent("agent", &session_starter()), &mock).args([
        "run",
        "--agent",
        "agent",
        "-w",
        "ws",
        "-m",
        "Open a shell.",
        "--run-id",
        "holder-1",
    ]);
    let workspace = test.path().join("ws");
    let mut child = test.spawn();
    let started = workspace.join("started.json");
    wait_until("the session to start", || {
        std::fs::read_to_string(&started).is_ok_and(|t| t.contains("session_id"))
    });
    let started: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&started).unwrap()).unwrap();
    let session = started["session_id"].as_str().unwrap().to_owned();
    let metadata = workspace
        .join("sessions")
        .join(&session)
        .join("metadata.json");
    let read_metadata = || -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(&metadata).unwrap()).unwrap()
    };
    let holder = i32::try_from(read_metadata()["pid"].as_i64().unwrap()).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !gone(holder),
        "kill -9 of the engine leaves the holder running"
    );

    let ws = workspace.display().to_string();
    let run = delta(Test::new(), &mock)
        .args(["continue", "--run-id", "holder-1", "-w", &ws])
        .run()
        .code(0);
    wait_until("the holder to be ended", || gone(holder));
    assert_eq!(read_metadata()["status"], "terminated");
    let ended = format!("the holders of the sessions it started ({session})");
    assert!(run.stderr().contains(&ended), "{}", run.stderr());
    let files = RunDir::new(&workspace, "holder-1");
    let messages = files.payloads("SYSTEM_MESSAGE");
    assert!(
        messages
            .iter()
            .any(|m| m["content"].as_str().unwrap().contains(&ended)),
        "{messages:?}"
    );
    assert_sound(&files, "COMPLETED").unwrap();
    drop(run);
}
