//! The batch driver under attack (issue 31): values its children would refuse, children
//! that keep refusing, inputs argv cannot carry, special files, a torn `results.jsonl`,
//! two drivers on one directory, signals while it waits, and credentials that must reach
//! no file. Each driver runs under a hang guard, so that a loop or a hang fails the test
//! instead of blocking the suite; every task must be recorded exactly once.

use std::fs;
use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::signal::Signal;
use rstest::rstest;
use serde_json::Value;

use super::{SLURM, agent, batch_args, batch_run, json_lines, metadata, signal, tasks};
use crate::support::bounded::{Ended, finish_within, start};
use crate::support::harness::Test;
use crate::support::run::{API_KEY, assert_in_no_file, delta, mock, run_files, wait_until};

/// Far above any driver here (a few tasks of a scripted model, and at most 3.5 s of
/// backoff for a task given up): a driver still running at this point loops or hangs.
const GUARD: Duration = Duration::from_secs(40);

/// One final answer, whatever the conversation.
const DONE: &str = "mode: by_conversation\nsteps:\n  - message: {content: done}\n";

/// `delta batch run tasks.jsonl --agent agent --out out --jobs 2` of `test`, started.
fn drive(test: Test) -> (Test, Child) {
    let test = batch_args(test, "2");
    let child = start(test.command());
    (test, child)
}

/// The same, run to its end under the guard.
fn drive_to_end(test: Test) -> (Test, Ended) {
    let (test, child) = drive(test);
    let ended = finish_within(child, GUARD, "a batch driver");
    (test, ended)
}

/// The same command as `test`'s (already given its arguments) again, to its end.
fn again(test: &Test) -> Ended {
    finish_within(start(test.command()), GUARD, "a batch driver run again")
}

/// Every line of `results.jsonl`, which must all be JSON, and the number of lines each
/// task has.
#[track_caller]
fn recorded(out: &Path) -> (Vec<Value>, std::collections::BTreeMap<String, usize>) {
    let lines = json_lines(&out.join("results.jsonl"));
    let mut counts = std::collections::BTreeMap::new();
    for line in &lines {
        *counts
            .entry(line["id"].as_str().expect("id").to_owned())
            .or_insert(0) += 1;
    }
    (lines, counts)
}

/// Asserts that each of `ids` has exactly one line in `results.jsonl`.
#[track_caller]
fn assert_recorded_once(out: &Path, ids: &[&str]) {
    let (lines, counts) = recorded(out);
    for id in ids {
        assert_eq!(counts.get(*id), Some(&1), "{id}: {lines:#?}");
    }
}

fn one_task(test: Test, line: &str) -> Test {
    test.file("tasks.jsonl", &format!("{line}\n"))
}

/// A second agent whose model has no price: a cost budget cannot be kept for it.
fn unpriced(test: Test) -> Test {
    test.agent(
        "unpriced",
        "name: unpriced\nllm:\n  model: no-such-priced-model\n",
    )
}

#[rstest]
#[case::zero_iterations(
    r#""max_iterations": 0"#,
    "max_iterations: \"0\" is not a positive number of iterations"
)]
#[case::zero_dollars(
    r#""max_cost_usd": 0"#,
    "max_cost_usd: \"0\" is not a positive amount of US dollars"
)]
#[case::negative_dollars(
    r#""max_cost_usd": -0.5"#,
    "max_cost_usd: \"-0.5\" is not a positive amount"
)]
#[case::zero_tokens(
    r#""max_tokens": 0"#,
    "max_tokens: \"0\" is not a positive number of tokens"
)]
#[case::zero_duration(
    r#""max_duration": "0s""#,
    "max_duration: \"0s\" is not a positive duration"
)]
#[case::cost_without_a_price(
    r#""max_cost_usd": 1, "agent": "unpriced""#,
    "task t: a cost budget needs the price of no-such-priced-model, which is not known"
)]
#[case::an_unknown_fsync_policy(
    r#""env": {"DELTA_FSYNC": "sometimes"}"#,
    "task t: DELTA_FSYNC=\"sometimes\""
)]
#[case::a_bad_retry_setting(r#""env": {"DELTA_LLM_MAX_ATTEMPTS": "many"}"#, "task t: ")]
fn values_the_child_would_refuse_are_refused_before_anything_runs(
    #[case] extra: &str,
    #[case] problem: &str,
) {
    let model = mock(DONE);
    let test = one_task(
        unpriced(delta(agent(Test::new(), "0"), &model)),
        &format!(r#"{{"id": "t", "message": "Go.", {extra}}}"#),
    );
    let (test, ended) = drive_to_end(test);
    assert_eq!(ended.code, Some(126), "{}", ended.stderr);
    assert!(
        ended.stderr.contains(problem),
        "{problem}:\n{}",
        ended.stderr
    );
    assert!(
        ended.stderr.contains("nothing was created or run"),
        "{}",
        ended.stderr
    );
    assert!(!test.path().join("out").exists());
}

#[rstest]
#[case::a_nul_in_an_env_value(r#""env": {"A": "x\u0000y"}"#, "env: the value of A holds a NUL")]
#[case::an_equals_sign_in_an_env_name(
    r#""env": {"A=B": "x"}"#,
    "env: \"A=B\" is not an environment variable name"
)]
#[case::an_empty_env_name(r#""env": {"": "x"}"#, "env: \"\" is not an environment variable name")]
#[case::a_nul_in_an_env_name(
    r#""env": {"A\u0000": "x"}"#,
    "env: \"A\\0\" is not an environment variable name"
)]
fn env_the_child_cannot_be_given_is_refused_by_line(#[case] extra: &str, #[case] problem: &str) {
    let model = mock(DONE);
    let test = one_task(
        delta(agent(Test::new(), "0"), &model),
        &format!(r#"{{"id": "t", "message": "Go.", {extra}}}"#),
    );
    let (test, ended) = drive_to_end(test);
    assert_eq!(ended.code, Some(126), "{}", ended.stderr);
    assert!(
        ended.stderr.contains(&format!("line 1: {problem}")),
        "{problem}:\n{}",
        ended.stderr
    );
    assert!(!test.path().join("out").exists());
}

/// A message over the 16 MiB a run's message may have is refused by line, as `delta run`
/// refuses it; one just under is carried.
#[test]
fn a_message_over_the_limit_is_refused_by_line() {
    let message = "x".repeat(16 * 1024 * 1024 + 1);
    let test = one_task(
        agent(Test::new(), "0"),
        &format!(r#"{{"id": "t", "message": "{message}"}}"#),
    );
    let (test, ended) = drive_to_end(test);
    assert_eq!(ended.code, Some(126), "{}", ended.stderr);
    assert!(
        ended.stderr.contains(
            "line 1: message: the message is 16777217 bytes, more than the 16 MiB a run's message may have"
        ),
        "{}",
        ended.stderr
    );
    assert!(!test.path().join("out").exists());
}

/// No key for api.openai.com: every task would be refused by its child (exit 126); the
/// driver says so before anything runs.
#[test]
fn missing_credentials_are_refused_before_anything_runs() {
    let test = one_task(agent(Test::new(), "0"), r#"{"id": "t", "message": "Go."}"#);
    let (test, ended) = drive_to_end(test);
    assert_eq!(ended.code, Some(126), "{}", ended.stderr);
    assert!(
        ended
            .stderr
            .contains("task t: no API key is set for https://api.openai.com/v1"),
        "{}",
        ended.stderr
    );
    assert!(!test.path().join("out").exists());
}

#[rstest]
#[case::nan("nan")]
#[case::infinity("inf")]
#[case::zero("0")]
#[case::negative("-1")]
fn batch_max_cost_usd_takes_what_run_takes(#[case] value: &str) {
    let model = mock(DONE);
    let cost = format!("--max-cost-usd={value}");
    let run = batch_run(tasks(delta(agent(Test::new(), "0"), &model), 1), &[&cost])
        .run()
        .code(2);
    assert!(
        run.stderr()
            .contains(&format!("{value:?} is not a positive amount of US dollars")),
        "{}",
        run.stderr()
    );
    assert!(!run.path().join("out").exists());
}

/// A message argv cannot carry (too long for one argument, a NUL), or that looks like a
/// flag, reaches the run exactly.
#[rstest]
#[case::three_hundred_kb("x".repeat(300_000))]
#[case::two_mb("word ".repeat(400_000))]
#[case::a_flag("--help".to_owned())]
#[case::a_dash("-".to_owned())]
#[case::a_nul("before\u{0}after".to_owned())]
fn a_message_argv_cannot_carry_reaches_the_run(#[case] message: String) {
    let model = mock(DONE);
    let line = serde_json::json!({"id": "t", "message": message}).to_string();
    let (test, ended) = drive_to_end(one_task(delta(agent(Test::new(), "0"), &model), &line));
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    let out = test.path().join("out");
    assert_recorded_once(&out, &["t"]);
    let journal = run_files(&out.join("runs/t"), "t").journal();
    assert_eq!(journal[0]["type"], "RUN_START");
    assert_eq!(journal[0]["payload"]["task"], message.as_str());
}

/// A completed batch of `count` tasks in `out`, to be damaged by the test.
fn finished_batch(script: &str, count: usize) -> (Test, mock_llm::MockServer) {
    let model = mock(script);
    let (test, ended) = drive_to_end(tasks(delta(agent(Test::new(), "0"), &model), count));
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    (test, model)
}

/// The task whose run is made to refuse every `delta run` and `delta continue`, and how;
/// then the driver must give up on it, once, saying why, within its backoff.
#[rstest]
#[case::a_run_recorded_on_another_host("another host", "left the run RUNNING")]
#[case::damaged_metadata("damaged metadata", "without creating the run")]
#[case::a_file_where_the_run_goes("a file as the run", "without creating the run")]
fn a_task_whose_child_keeps_refusing_is_recorded_once_with_why(
    #[case] damage: &str,
    #[case] why: &str,
) {
    let (test, _model) = finished_batch(DONE, 2);
    let out = test.path().join("out");
    let run_dir = out.join("runs/task-000/.delta/task-000");
    match damage {
        "another host" => {
            let mut metadata = metadata(&out, "task-000");
            metadata["status"] = "RUNNING".into();
            metadata["hostname"] = "a-host-that-is-not-this-one".into();
            fs::write(run_dir.join("metadata.json"), metadata.to_string()).unwrap();
        }
        "damaged metadata" => fs::write(run_dir.join("metadata.json"), "{").unwrap(),
        _ => {
            fs::remove_dir_all(&run_dir).unwrap();
            fs::write(&run_dir, "not a directory").unwrap();
        }
    }
    let keep: Vec<Value> = json_lines(&out.join("results.jsonl"))
        .into_iter()
        .filter(|r| r["id"] != "task-000")
        .collect();
    let text: String = keep.iter().map(|r| format!("{r}\n")).collect();
    fs::write(out.join("results.jsonl"), text).unwrap();

    let ended = again(&test);
    assert_eq!(ended.code, Some(1), "{}", ended.stderr);
    assert_recorded_once(&out, &["task-000", "task-001"]);
    let (lines, _) = recorded(&out);
    let given_up = lines.iter().find(|r| r["id"] == "task-000").unwrap();
    assert_eq!(given_up["error"]["type"], "BatchTaskError", "{given_up:#}");
    let message = given_up["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "the batch driver gave up on this task after 4 attempts in a row without progress: "
        ),
        "{message}"
    );
    assert!(message.contains(why), "{why}: {message}");
    let log = fs::metadata(test.path().join("out/runs/task-000/.delta-batch.log"))
        .map(|m| m.len())
        .unwrap_or(0);
    assert!(log < 64 * 1024, "the task's log grew to {log} bytes");
}

/// Special files in `workspace_from` are left out of the copy (a FIFO would block it
/// forever), each named in the task's log; the rest is copied and the task runs.
#[rstest]
#[case::fifo("fifo")]
#[case::socket("socket")]
fn special_files_in_workspace_from_are_left_out(#[case] kind: &str) {
    let model = mock(DONE);
    let test = delta(agent(Test::new(), "0"), &model)
        .file("seed/notes.txt", "kept\n")
        .file("seed/sub/deep.txt", "kept too\n");
    let special = test.path().join("seed/sub").join(kind);
    let _socket = if kind == "fifo" {
        nix::unistd::mkfifo(&special, nix::sys::stat::Mode::S_IRWXU).unwrap();
        None
    } else {
        Some(std::os::unix::net::UnixListener::bind(&special).unwrap())
    };
    let test = one_task(
        test,
        r#"{"id": "t", "message": "Go.", "workspace_from": "seed"}"#,
    );
    let (test, ended) = drive_to_end(test);
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    let workspace = test.path().join("out/runs/t");
    assert_eq!(
        fs::read_to_string(workspace.join("notes.txt")).unwrap(),
        "kept\n"
    );
    assert_eq!(
        fs::read_to_string(workspace.join("sub/deep.txt")).unwrap(),
        "kept too\n"
    );
    assert!(!workspace.join("sub").join(kind).exists());
    let log = fs::read_to_string(workspace.join(".delta-batch.log")).unwrap();
    assert!(
        log.contains(&format!(
            "delta batch: workspace_from: {} was left out: it is not a regular file, a \
             directory or a symlink",
            special.display()
        )),
        "{log}"
    );
    assert_recorded_once(&test.path().join("out"), &["t"]);
}

/// `results.jsonl` cut by a crash: in the middle of a line, inside a multi-byte
/// character, or right before the newline. The re-run reads every intact line, records
/// the torn one's task again on a line of its own, and nothing twice.
#[rstest]
#[case::mid_line(|line: &[u8]| line.len() / 2)]
#[case::inside_a_multi_byte_character(|line: &[u8]| {
    let at = line.windows(3).position(|w| w == "数".as_bytes()).expect("数");
    at + 1
})]
#[case::before_the_newline(|line: &[u8]| line.len() - 1)]
fn a_torn_results_tail_is_read_around_and_the_next_line_starts_fresh(
    #[case] cut: fn(&[u8]) -> usize,
) {
    let (test, _model) = finished_batch(
        "mode: by_conversation\nsteps:\n  - message: {content: \"数字 ✓ done\"}\n",
        3,
    );
    let path = test.path().join("out/results.jsonl");
    let bytes = fs::read(&path).unwrap();
    let last_start = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    let torn_id = serde_json::from_slice::<Value>(&bytes[last_start..]).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let at = last_start + cut(&bytes[last_start..]);
    fs::write(&path, &bytes[..at]).unwrap();

    let status = Test::new()
        .current_dir(test.path())
        .args(["batch", "status", "out", "--format", "json"])
        .run()
        .code(0);
    let status: Value = serde_json::from_str(status.stdout()).unwrap();
    assert_eq!(status["summary"]["by_status"]["COMPLETED"], 2, "{status:#}");

    let ended = again(&test);
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    let text = fs::read(&path).unwrap();
    assert_eq!(text.last(), Some(&b'\n'));
    assert_recorded_once(
        &test.path().join("out"),
        &["task-000", "task-001", "task-002"],
    );
    let (lines, _) = recorded(&test.path().join("out"));
    assert_eq!(lines.last().unwrap()["id"], torn_id.as_str());
}

/// A driver whose stderr is collected as it comes, to know when it has started.
struct Watched {
    child: Child,
    stderr: Arc<Mutex<String>>,
    reader: std::thread::JoinHandle<()>,
}

impl Watched {
    fn start(test: &Test) -> Self {
        let mut child = start(test.command());
        let stderr = Arc::new(Mutex::new(String::new()));
        let pipe = child.stderr.take().expect("stderr");
        let sink = Arc::clone(&stderr);
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                let mut text = sink.lock().unwrap();
                text.push_str(&line);
                text.push('\n');
            }
        });
        Self {
            child,
            stderr,
            reader,
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits until it said `text` (it prints `N of M task(s) to run` once its signal
    /// handlers are in place).
    fn wait_for(&self, text: &str) {
        wait_until(text, || self.stderr().contains(text));
    }

    fn finish(self) -> Ended {
        self.finish_under(GUARD)
    }

    /// Its end, or a failed test once `guard` has passed.
    fn finish_under(self, guard: Duration) -> Ended {
        let mut ended = finish_within(self.child, guard, "a batch driver");
        self.reader.join().expect("the stderr reader");
        ended.stderr = self.stderr.lock().unwrap().clone();
        ended
    }
}

/// Every journal of the batch starts once: one RUN_START, seq 1.
#[track_caller]
fn assert_each_run_started_once(out: &Path, count: usize) {
    for i in 0..count {
        let id = format!("task-{i:03}");
        let journal = run_files(&out.join("runs").join(&id), &id).journal();
        let starts = journal.iter().filter(|e| e["type"] == "RUN_START").count();
        assert_eq!(starts, 1, "{id}");
        for (index, event) in journal.iter().enumerate() {
            assert_eq!(event["seq"], index + 1, "{id}");
        }
    }
}

/// A second driver on a directory another one drives is refused at once, naming it; the
/// first records every task once.
#[test]
fn a_second_driver_on_the_same_out_is_refused_while_the_first_lives() {
    let model = mock(super::script());
    let test = batch_args(tasks(delta(agent(Test::new(), "0.2"), &model), 6), "1");
    let first = Watched::start(&test);
    first.wait_for("6 of 6 task(s) to run");
    let second = again(&test);
    assert_eq!(second.code, Some(1), "{}", second.stderr);
    let pid = first.child.id();
    assert!(
        second.stderr.contains(&format!(
            "is being driven by another `delta batch`: PID {pid} (delta) on host"
        )),
        "{}",
        second.stderr
    );
    assert!(
        second.stderr.contains("one driver per batch directory"),
        "{}",
        second.stderr
    );
    let ended = first.finish();
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    let out = test.path().join("out");
    let ids: Vec<String> = (0..6).map(|i| format!("task-{i:03}")).collect();
    assert_recorded_once(&out, &ids.iter().map(String::as_str).collect::<Vec<_>>());
    assert_each_run_started_once(&out, 6);
}

/// Two drivers started together: one drives, the other is refused; nothing is recorded
/// or started twice.
#[test]
fn two_drivers_started_together_record_every_task_once() {
    let model = mock(super::script());
    let test = batch_args(tasks(delta(agent(Test::new(), "0.1"), &model), 6), "2");
    let one = start(test.command());
    let two = start(test.command());
    let one = finish_within(one, GUARD, "the first driver");
    let two = finish_within(two, GUARD, "the second driver");
    let mut codes = [one.code, two.code];
    codes.sort_unstable();
    assert_eq!(codes, [Some(0), Some(1)], "{}\n{}", one.stderr, two.stderr);
    let out = test.path().join("out");
    let ids: Vec<String> = (0..6).map(|i| format!("task-{i:03}")).collect();
    assert_recorded_once(&out, &ids.iter().map(String::as_str).collect::<Vec<_>>());
    assert_each_run_started_once(&out, 6);
}

/// The lock of a driver that ended without clearing it: gone from this host, it is taken
/// over (and said so); recorded on another host, which cannot be checked, it is refused.
#[rstest]
#[case::a_dead_driver_of_this_host(true)]
#[case::a_driver_of_another_host(false)]
fn a_lock_left_by_a_driver_is_judged_by_the_janitors_rules(#[case] this_host: bool) {
    let model = mock(DONE);
    let test = tasks(delta(agent(Test::new(), "0"), &model), 2);
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let pid = gone.id();
    gone.wait().unwrap();
    let host = if this_host {
        nix::unistd::gethostname()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    } else {
        "a-host-that-is-not-this-one".to_owned()
    };
    let record = serde_json::json!({
        "pid": pid, "hostname": host, "process_name": "delta", "start_ticks": 1,
        "since": "2026-01-01T00:00:00Z"
    });
    let test = test.file("out/driver.lock", &record.to_string());
    let (test, ended) = drive_to_end(test);
    if this_host {
        assert_eq!(ended.code, Some(0), "{}", ended.stderr);
        assert!(
            ended.stderr.contains(&format!(
                "the batch's previous driver (PID {pid} (delta) on host '{host}', since \
                 2026-01-01T00:00:00Z) is gone; this one takes over"
            )),
            "{}",
            ended.stderr
        );
        assert_recorded_once(&test.path().join("out"), &["task-000", "task-001"]);
        assert_eq!(
            fs::read_to_string(test.path().join("out/driver.lock")).unwrap(),
            "",
            "a driver that ends clears its record"
        );
    } else {
        assert_eq!(ended.code, Some(1), "{}", ended.stderr);
        assert!(
            ended
                .stderr
                .contains("is recorded as driven from another host (PID"),
            "{}",
            ended.stderr
        );
        assert!(!test.path().join("out/results.jsonl").exists());
    }
}

/// Submitting to Slurm is driving too: refused while a local driver runs (before sbatch
/// is called, so no cluster is needed).
#[test]
fn a_slurm_submission_is_refused_while_a_local_driver_runs() {
    let model = mock(super::script());
    let test = batch_args(tasks(delta(agent(Test::new(), "0.2"), &model), 4), "1");
    let local = Watched::start(&test);
    local.wait_for("4 of 4 task(s) to run");
    let submit = batch_run(delta(Test::new().current_dir(test.path()), &model), &SLURM)
        .run()
        .code(1);
    assert!(
        submit
            .stderr()
            .contains("is being driven by another `delta batch`"),
        "{}",
        submit.stderr()
    );
    assert!(
        !test.path().join("out/slurm").exists(),
        "nothing was submitted"
    );
    let ended = local.finish();
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
}

/// SIGINT or SIGTERM while the driver waits, not in a child: on a run another live
/// process owns, or between the attempts of a task whose child keeps refusing. It ends
/// (130) without recording the task as ended, and leaves no run RUNNING of its own.
#[rstest]
#[case::sigterm_while_waiting_on_a_busy_run("busy", Signal::SIGTERM)]
#[case::sigint_while_waiting_on_a_busy_run("busy", Signal::SIGINT)]
#[case::sigterm_while_backing_off("refusing", Signal::SIGTERM)]
#[case::sigint_while_backing_off("refusing", Signal::SIGINT)]
fn a_signal_is_answered_while_the_driver_waits(#[case] wait: &str, #[case] sent: Signal) {
    let (test, _model) = finished_batch(DONE, 1);
    let out = test.path().join("out");
    let run_dir = out.join("runs/task-000/.delta/task-000");
    // Held by this test: a live owner the driver must wait for.
    let _owner = if wait == "busy" {
        let mut metadata = metadata(&out, "task-000");
        metadata["status"] = "RUNNING".into();
        fs::write(run_dir.join("metadata.json"), metadata.to_string()).unwrap();
        let file = fs::File::open(run_dir.join("run.lock")).unwrap();
        Some(
            nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock)
                .map_err(|(_, errno)| errno)
                .unwrap(),
        )
    } else {
        fs::write(run_dir.join("metadata.json"), "{").unwrap();
        None
    };
    fs::write(out.join("results.jsonl"), "").unwrap();
    let driver = Watched::start(&test);
    driver.wait_for("1 of 1 task(s) to run");
    if wait == "refusing" {
        // At least one refused attempt: the driver is in its backoff or its next attempt.
        wait_until("a first attempt", || {
            fs::read_to_string(out.join("runs/task-000/.delta-batch.log"))
                .is_ok_and(|log| log.matches("already exists").count() >= 2)
        });
    }
    signal(driver.child.id(), sent);
    let ended = driver.finish();
    assert_eq!(ended.code, Some(130), "{}", ended.stderr);
    assert_eq!(
        fs::read_to_string(out.join("results.jsonl")).unwrap(),
        "",
        "nothing recorded as an end"
    );
}

/// The copy of `workspace_from` the driver below makes: a sparse file costs nothing to
/// create but all of its bytes to copy, some tens of seconds for this one.
const SPARSE: u64 = 16 << 30;

/// Far above a copy that stops within its current 1 MiB chunk, far below one that went
/// on through the whole of `SPARSE`.
const COPY_GUARD: Duration = Duration::from_secs(10);

/// SIGINT or SIGTERM while the driver copies a task's `workspace_from`: the copy stops
/// within a chunk and the driver ends (130) leaving no workspace, no run and nothing
/// recorded; run again, it copies the workspace and completes the task, once.
#[rstest]
#[case::sigterm(Signal::SIGTERM)]
#[case::sigint(Signal::SIGINT)]
fn a_signal_is_answered_while_the_driver_copies_a_workspace(#[case] sent: Signal) {
    let model = mock(DONE);
    let test = one_task(
        delta(agent(Test::new(), "0"), &model).file("seed/notes.txt", "kept\n"),
        r#"{"id": "t", "message": "Go.", "workspace_from": "seed"}"#,
    );
    let test = batch_args(test, "2");
    let big = test.path().join("seed/big");
    fs::File::create(&big).unwrap().set_len(SPARSE).unwrap();
    let out = test.path().join("out");
    let copying = out.join("runs/.t.copying/big");
    let driver = Watched::start(&test);
    wait_until("the copy of the big file", || {
        fs::metadata(&copying).is_ok_and(|m| m.len() > 0)
    });
    signal(driver.child.id(), sent);
    let ended = driver.finish_under(COPY_GUARD);
    assert_eq!(ended.code, Some(130), "{}", ended.stderr);
    assert_eq!(
        fs::read_to_string(out.join("results.jsonl")).unwrap_or_default(),
        "",
        "nothing recorded as an end"
    );
    assert!(
        !out.join("runs/.t.copying").exists(),
        "the half copy is gone"
    );
    assert!(!out.join("runs/t").exists(), "no workspace, so no run");

    // The same task, without the tens of seconds of copying.
    fs::File::options()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len(3 << 20)
        .unwrap();
    let ended = again(&test);
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    assert_recorded_once(&out, &["t"]);
    assert_eq!(metadata(&out, "t")["status"], "COMPLETED");
    let workspace = out.join("runs/t");
    assert_eq!(fs::metadata(workspace.join("big")).unwrap().len(), 3 << 20);
    assert_eq!(
        fs::read_to_string(workspace.join("notes.txt")).unwrap(),
        "kept\n"
    );
}

/// A key echoed by the model reaches the run's stream, which the driver logs: wherever
/// the key came from (the driver's environment, the task's `env`, a `.env` in the task's
/// workspace, the userinfo of the task's `DELTA_BASE_URL`), no file of the batch holds it.
#[rstest]
#[case::from_the_drivers_environment("driver")]
#[case::from_the_tasks_env("task")]
#[case::from_a_dot_env_of_the_workspace("dotenv")]
#[case::from_the_userinfo_of_the_tasks_base_url("url")]
fn no_credential_reaches_a_file_of_the_batch(#[case] from: &str) {
    let key = match from {
        "driver" => API_KEY.to_owned(),
        other => format!("sk-{other}-canary-0b5e7d21c4"),
    };
    let model = mock(&format!(
        "mode: by_conversation\nsteps:\n  - message: {{content: \"The key is {key}, of course.\"}}\n"
    ));
    let line = match from {
        "task" => {
            format!(r#"{{"id": "t", "message": "Go.", "env": {{"DELTA_API_KEY": "{key}"}}}}"#)
        }
        "dotenv" => r#"{"id": "t", "message": "Go.", "workspace_from": "seed"}"#.to_owned(),
        "url" => {
            let url = model
                .base_url()
                .replacen("http://", &format!("http://user:{key}@"), 1);
            format!(r#"{{"id": "t", "message": "Go.", "env": {{"DELTA_BASE_URL": "{url}"}}}}"#)
        }
        _ => r#"{"id": "t", "message": "Go."}"#.to_owned(),
    };
    let test = one_task(delta(agent(Test::new(), "0"), &model), &line)
        .file("seed/.env", &format!("DELTA_API_KEY={key}\n"));
    let (test, ended) = drive_to_end(test);
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    let out = test.path().join("out");
    let log = fs::read_to_string(out.join("runs/t/.delta-batch.log")).unwrap();
    assert!(log.contains("The key is [REDACTED], of course."), "{log}");
    // The user's own .env, copied as part of the workspace they gave, is theirs.
    let _ = fs::remove_file(out.join("runs/t/.env"));
    assert_in_no_file(&out, &key);
    assert_in_no_file(&out, API_KEY);
}

/// Whether this machine lets a test mount a small tmpfs in a namespace of its own
/// (`unshare -rm`); in CI (CI=true) it must.
#[allow(clippy::print_stderr, reason = "a skip is said aloud, never silent")]
fn private_mounts() -> bool {
    let works = std::process::Command::new("unshare")
        .args(["-rm", "true"])
        .status()
        .is_ok_and(|status| status.success());
    if !works {
        assert!(
            std::env::var_os("CI").is_none(),
            "unshare -rm does not work here: CI needs user namespaces (or root) for the \
             full-disk test"
        );
        eprintln!("SKIPPED: unshare -rm does not work here (no user namespaces)");
    }
    works
}

/// `--out` on a file system that fills up (a 96 KiB tmpfs, mounted in a namespace of the
/// test's own): children cannot create their runs, results cannot be written. The driver
/// gives each task up after its capped backoff, stops launching once the directory cannot
/// be written, and ends with an error; no task is recorded twice. A run whose end could
/// not be written (its process is gone; the Janitor resumes it once there is room) is
/// recorded as given up, saying so.
#[test]
fn a_full_disk_under_out_ends_the_batch_with_an_error() {
    if !private_mounts() {
        return;
    }
    let model = mock(DONE);
    let test = tasks(delta(agent(Test::new(), "0"), &model), 6);
    fs::create_dir(test.path().join("out")).unwrap();
    let delta_bin = env!("CARGO_BIN_EXE_delta");
    // Everything under `out` lives in the namespace: what the test checks is printed
    // before the namespace goes away.
    let script = format!(
        "mount -t tmpfs -o size=96k tmpfs out || exit 99
        '{delta_bin}' batch run tasks.jsonl --agent agent --out out --jobs 2
        code=$?
        echo \"--- results\" >&2; cat out/results.jsonl >&2 2>/dev/null
        echo \"--- statuses\" >&2; cat out/runs/*/.delta/*/metadata.json 2>/dev/null | grep -o '\"status\": *\"[A-Z_]*\"' >&2
        exit $code"
    );
    let mut command = std::process::Command::new("unshare");
    command
        .args(["-rm", "sh", "-c", &script])
        .current_dir(test.path());
    for (key, value) in test.command().get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    let ended = finish_within(start(command), GUARD, "a batch driver on a full disk");
    assert_eq!(ended.code, Some(1), "{}", ended.stderr);
    assert!(
        ended.stderr.contains("No space left on device"),
        "{}",
        ended.stderr
    );
    let (results, statuses) = ended
        .stderr
        .split_once("--- results\n")
        .and_then(|(_, rest)| rest.split_once("--- statuses\n"))
        .expect("the script's report");
    let results: Vec<Value> = results
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .collect();
    let mut ids: Vec<&str> = results
        .iter()
        .map(|result| result["id"].as_str().unwrap_or_default())
        .collect();
    let count = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), count, "a task recorded twice: {results:#?}");
    let said = results
        .iter()
        .filter(|result| {
            result["status"] == "RUNNING"
                && result["error"]["type"] == "BatchTaskError"
                && result["error"]["details"]
                    .as_str()
                    .is_some_and(|details| details.contains("No space left on device"))
        })
        .count();
    assert!(
        statuses.matches("RUNNING").count() <= said,
        "a run left RUNNING without a word: {}",
        ended.stderr
    );
}
