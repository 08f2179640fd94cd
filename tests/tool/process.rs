//! The process runner: outputs, exit codes and signals, large pipes, timeouts and
//! cancellation killing the whole process group, and background processes left alone.

use std::path::Path;
use std::time::Duration;

use delta_engine::tool::{DEFAULT_TOOL_TIMEOUT, ProcessOptions, run_process};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

fn argv(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| s.to_string()).collect()
}

fn sh(script: &str) -> Vec<String> {
    argv(&["sh", "-c", script])
}

fn opts(dir: &Path, timeout: Duration) -> ProcessOptions {
    ProcessOptions {
        cwd: dir.to_path_buf(),
        env: Vec::new(),
        timeout,
    }
}

const LONG: Duration = Duration::from_secs(30);

/// Gone, or a zombie nobody reaped yet: either way it no longer runs.
fn is_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// Polls (up to 10 s) because a killed process disappears asynchronously.
async fn wait_gone(pid: i32) -> bool {
    for _ in 0..400 {
        if is_gone(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    false
}

fn parse_pid(text: &str) -> i32 {
    text.trim()
        .parse()
        .unwrap_or_else(|_| panic!("not a pid: {text:?}"))
}

#[tokio::test]
async fn captures_stdout_stderr_and_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_process(
        &sh("echo out; echo err >&2; exit 3"),
        None,
        &opts(dir.path(), LONG),
    )
    .await
    .unwrap();
    assert_eq!(out.stdout, b"out\n");
    assert_eq!(out.stderr, b"err\n");
    assert_eq!(out.exit_code, Some(3));
    assert_eq!(out.signal, None);
    assert!(!out.timed_out);
}

#[tokio::test]
async fn reports_the_signal_that_ended_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_process(&sh("kill -TERM $$"), None, &opts(dir.path(), LONG))
        .await
        .unwrap();
    assert_eq!(out.exit_code, None);
    assert_eq!(out.signal, Some(Signal::SIGTERM as i32));
    assert!(!out.timed_out);
}

#[tokio::test]
async fn runs_in_cwd_with_extra_environment() {
    let dir = tempfile::tempdir().unwrap();
    let options = ProcessOptions {
        env: vec![("DELTA_TEST_VALUE".to_string(), "a b".to_string())],
        ..opts(dir.path(), LONG)
    };
    let out = run_process(
        &sh(r#"printf '%s|%s' "$DELTA_TEST_VALUE" "$(pwd -P)""#),
        None,
        &options,
    )
    .await
    .unwrap();
    let expected = format!("a b|{}", dir.path().canonicalize().unwrap().display());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), expected);
}

#[tokio::test]
async fn without_stdin_the_process_reads_end_of_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_process(&argv(&["cat"]), None, &opts(dir.path(), LONG))
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(0));
    assert!(out.stdout.is_empty());
}

#[tokio::test]
async fn missing_program_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let error = run_process(
        &argv(&["delta-no-such-program-xyz", "a"]),
        None,
        &opts(dir.path(), LONG),
    )
    .await
    .unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
    assert!(
        error.to_string().contains("'delta-no-such-program-xyz'"),
        "{error}"
    );
}

#[tokio::test]
async fn empty_argv_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let error = run_process(&[], None, &opts(dir.path(), LONG))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
}

#[tokio::test]
async fn large_stdin_and_stdout_do_not_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let data: Vec<u8> = (0..8 * 1024 * 1024).map(|i| (i % 251) as u8).collect();
    let out = run_process(&argv(&["cat"]), Some(&data), &opts(dir.path(), LONG))
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.stdout.len(), data.len());
    assert!(out.stdout == data);
}

#[tokio::test]
async fn large_output_on_both_pipes() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_process(
        &sh("head -c 3000000 /dev/zero; head -c 3000000 /dev/zero >&2"),
        None,
        &opts(dir.path(), LONG),
    )
    .await
    .unwrap();
    assert_eq!(out.stdout.len(), 3_000_000);
    assert_eq!(out.stderr.len(), 3_000_000);
}

#[tokio::test]
async fn stdin_the_process_never_reads_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let data = vec![b'x'; 4 * 1024 * 1024];
    let out = run_process(&argv(&["true"]), Some(&data), &opts(dir.path(), LONG))
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(0));
}

#[tokio::test]
async fn timeout_kills_the_whole_group_including_grandchildren() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_process(
        &sh("sleep 60 & echo $!; sleep 60; wait"),
        None,
        &opts(dir.path(), Duration::from_millis(300)),
    )
    .await
    .unwrap();
    assert!(out.timed_out);
    assert_eq!(out.signal, Some(Signal::SIGKILL as i32));
    assert_eq!(out.exit_code, None);
    let grandchild = parse_pid(&String::from_utf8(out.stdout).unwrap());
    assert!(
        wait_gone(grandchild).await,
        "grandchild {grandchild} survived"
    );
}

#[tokio::test]
async fn dropping_the_future_kills_the_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let script = "sleep 60 & echo $! > child.pid; echo $$ > leader.pid; wait";
    let pid_file = dir.path().join("leader.pid");
    let (command, options) = (sh(script), opts(dir.path(), LONG));
    let run = run_process(&command, None, &options);
    tokio::select! {
        _ = run => panic!("the command finished on its own"),
        () = async {
            while std::fs::read_to_string(&pid_file).map_or(true, |s| !s.ends_with('\n')) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        } => {}
    }
    let leader = parse_pid(&std::fs::read_to_string(&pid_file).unwrap());
    let child = parse_pid(&std::fs::read_to_string(dir.path().join("child.pid")).unwrap());
    assert!(
        wait_gone(child).await,
        "background child {child} survived the drop"
    );
    assert!(wait_gone(leader).await, "leader {leader} survived the drop");
}

#[tokio::test]
async fn background_process_holding_stdout_neither_hangs_nor_dies() {
    let dir = tempfile::tempdir().unwrap();
    // The background sleep inherits stdout and keeps the pipe open after sh exits.
    let (command, options) = (sh("sleep 60 & echo $!"), opts(dir.path(), LONG));
    let run = run_process(&command, None, &options);
    let out = tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("run_process waited for the background process")
        .unwrap();
    assert_eq!(out.exit_code, Some(0));
    assert!(!out.timed_out);
    let background = parse_pid(&String::from_utf8(out.stdout).unwrap());
    // A normal exit leaves what the command started on purpose running.
    assert!(!is_gone(background), "background process was killed");
    kill(Pid::from_raw(background), Signal::SIGKILL).unwrap();
    assert!(wait_gone(background).await);
}

#[test]
fn default_tool_timeout_is_two_minutes() {
    assert_eq!(DEFAULT_TOOL_TIMEOUT, Duration::from_secs(120));
}
