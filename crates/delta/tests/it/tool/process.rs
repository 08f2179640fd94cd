//! The process runner: outputs, exit codes and signals, large pipes, timeouts and
//! cancellation killing the whole process group, background processes left alone, and
//! the output policy (files, bounded memory, the output limit, redaction).

use std::path::{Path, PathBuf};
use std::time::Duration;

use delta_engine::process::{
    DEFAULT_OUTPUT_LIMIT, OUTPUT_KEEP_BYTES, OutputPolicy, ProcessError, ProcessOptions,
    run_process,
};
use delta_engine::secrets::Redactor;
use delta_engine::tool::DEFAULT_TOOL_TIMEOUT;
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
        output: OutputPolicy::default(),
        record: None,
    }
}

/// `opts` with both streams going to `out.log` and `err.log` in `dir`, cut at `limit`.
fn to_files(dir: &Path, limit: u64) -> ProcessOptions {
    ProcessOptions {
        output: OutputPolicy::new(limit, Redactor::default())
            .with_files(dir.join("out.log"), dir.join("err.log")),
        ..opts(dir, LONG)
    }
}

fn file(dir: &Path, name: &str) -> Vec<u8> {
    let path: PathBuf = dir.join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

const KEEP: u64 = OUTPUT_KEEP_BYTES as u64;

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
    assert_eq!(out.stdout.to_vec(), b"out\n");
    assert_eq!(out.stderr.to_vec(), b"err\n");
    assert!(out.stdout.is_complete() && out.stderr.is_complete());
    assert!(!out.output_limit_exceeded);
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
    assert_eq!(String::from_utf8(out.stdout.to_vec()).unwrap(), expected);
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
    assert!(matches!(error, ProcessError::NotStarted(_)), "{error:?}");
    assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
    // The message ends with the OS's wording for ENOENT: a search.
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
    let out = run_process(
        &argv(&["cat"]),
        Some(&data),
        &to_files(dir.path(), DEFAULT_OUTPUT_LIMIT),
    )
    .await
    .unwrap();
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.stdout.len(), data.len() as u64);
    assert!(file(dir.path(), "out.log") == data);
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
    // Only the head and tail of each stream stay in memory.
    for stream in [&out.stdout, &out.stderr] {
        assert_eq!(stream.head.len(), OUTPUT_KEEP_BYTES);
        assert_eq!(stream.tail.len(), OUTPUT_KEEP_BYTES);
        assert_eq!(stream.omitted, 3_000_000 - 2 * KEEP);
    }
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
    let grandchild = parse_pid(&String::from_utf8(out.stdout.to_vec()).unwrap());
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
    // The background sleep inherits stdout and keeps the pipe open after sh exits. With a
    // redactor, the end of the output is held back until the stream shows how it goes on:
    // it must still arrive when the stream is abandoned after the grace period.
    let options = ProcessOptions {
        output: OutputPolicy::new(
            DEFAULT_OUTPUT_LIMIT,
            Redactor::new(["sk-a-rather-long-secret-key"]),
        ),
        ..opts(dir.path(), LONG)
    };
    let command = sh("sleep 60 & echo $!");
    let run = run_process(&command, None, &options);
    let out = tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("run_process waited for the background process")
        .unwrap();
    assert_eq!(out.exit_code, Some(0));
    assert!(!out.timed_out);
    let background = parse_pid(&String::from_utf8(out.stdout.to_vec()).unwrap());
    // A normal exit leaves what the command started on purpose running.
    assert!(!is_gone(background), "background process was killed");
    kill(Pid::from_raw(background), Signal::SIGKILL).unwrap();
    assert!(wait_gone(background).await);
}

#[test]
fn default_tool_timeout_is_two_minutes() {
    assert_eq!(DEFAULT_TOOL_TIMEOUT, Duration::from_secs(120));
}

// Regression: output used to be collected in memory without limit, so a tool reading
// /dev/zero exhausted the engine's memory.
#[tokio::test]
async fn a_flooding_producer_and_its_group_are_killed_at_the_output_limit() {
    let dir = tempfile::tempdir().unwrap();
    const LIMIT: u64 = 1024 * 1024;
    let out = run_process(
        &sh("sleep 60 & echo $! >&2; cat /dev/zero"),
        None,
        &to_files(dir.path(), LIMIT),
    )
    .await
    .unwrap();
    assert!(out.output_limit_exceeded);
    assert!(!out.timed_out);
    assert_eq!(out.exit_code, None);
    assert_eq!(out.signal, Some(Signal::SIGKILL as i32));
    assert_eq!(out.exit_text(), "output limit exceeded");
    // The file holds exactly the limit; memory only the head and the tail.
    assert_eq!(file(dir.path(), "out.log").len() as u64, LIMIT);
    assert_eq!(out.stdout.len(), LIMIT);
    assert_eq!(out.stdout.head, vec![0; OUTPUT_KEEP_BYTES]);
    assert_eq!(out.stdout.tail, vec![0; OUTPUT_KEEP_BYTES]);
    assert_eq!(out.stdout.omitted, LIMIT - 2 * KEEP);
    let background = parse_pid(&String::from_utf8(out.stderr.to_vec()).unwrap());
    assert!(
        wait_gone(background).await,
        "background process {background} of the flooding command survived"
    );
}

#[tokio::test]
async fn output_below_the_limit_is_stored_whole_with_head_and_tail_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let expected: String = (1..=100_000).map(|n| format!("{n}\n")).collect();
    let out = run_process(
        &argv(&["seq", "1", "100000"]),
        None,
        &to_files(dir.path(), DEFAULT_OUTPUT_LIMIT),
    )
    .await
    .unwrap();
    assert_eq!(out.exit_code, Some(0));
    assert!(!out.output_limit_exceeded);
    assert_eq!(file(dir.path(), "out.log"), expected.as_bytes());
    assert!(file(dir.path(), "err.log").is_empty());
    let bytes = expected.as_bytes();
    assert_eq!(out.stdout.head, &bytes[..OUTPUT_KEEP_BYTES]);
    assert_eq!(out.stdout.tail, &bytes[bytes.len() - OUTPUT_KEEP_BYTES..]);
    assert_eq!(out.stdout.omitted, bytes.len() as u64 - 2 * KEEP);
    assert!(out.stdout.tail.ends_with(b"\n99999\n100000\n"));
}

#[tokio::test]
async fn output_of_exactly_the_limit_is_within_it() {
    let dir = tempfile::tempdir().unwrap();
    let exact = run_process(
        &sh("head -c 4096 /dev/zero"),
        None,
        &to_files(dir.path(), 4096),
    )
    .await
    .unwrap();
    assert!(!exact.output_limit_exceeded);
    assert_eq!(exact.exit_code, Some(0));
    assert_eq!(file(dir.path(), "out.log").len(), 4096);

    let over = run_process(
        &sh("head -c 4097 /dev/zero"),
        None,
        &to_files(dir.path(), 4096),
    )
    .await
    .unwrap();
    assert!(over.output_limit_exceeded);
    assert_eq!(file(dir.path(), "out.log").len(), 4096);
    assert!(over.stdout.is_complete());
    assert_eq!(over.stdout.len(), 4096);
}

#[tokio::test]
async fn stderr_has_its_own_limit() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_process(
        &sh("echo fine; cat /dev/zero >&2"),
        None,
        &to_files(dir.path(), 64 * 1024),
    )
    .await
    .unwrap();
    assert!(out.output_limit_exceeded);
    assert_eq!(file(dir.path(), "out.log"), b"fine\n");
    assert_eq!(file(dir.path(), "err.log").len(), 64 * 1024);
    assert_eq!(out.stdout.to_vec(), b"fine\n");
}

#[tokio::test]
async fn the_secret_is_redacted_in_files_and_memory_even_split_across_reads() {
    let dir = tempfile::tempdir().unwrap();
    let options = ProcessOptions {
        output: OutputPolicy::new(
            DEFAULT_OUTPUT_LIMIT,
            Redactor::new(["sk-split-secret-1234"]),
        )
        .with_files(dir.path().join("out.log"), dir.path().join("err.log")),
        ..opts(dir.path(), LONG)
    };
    // The pause only makes it likely that the key arrives in two reads; the result must
    // be the same either way.
    let script = "printf 'key=sk-split-'; sleep 0.2; printf 'secret-1234\\n'; \
                  printf 'sk-split-secret-1234 sk-split' >&2";
    let out = run_process(&sh(script), None, &options).await.unwrap();
    assert_eq!(out.stdout.to_vec(), b"key=[REDACTED]\n");
    assert_eq!(out.stderr.to_vec(), b"[REDACTED] sk-split");
    assert_eq!(file(dir.path(), "out.log"), b"key=[REDACTED]\n");
    assert_eq!(file(dir.path(), "err.log"), b"[REDACTED] sk-split");
}

#[tokio::test]
async fn an_output_file_that_cannot_be_created_means_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir");
    let options = ProcessOptions {
        output: OutputPolicy::default()
            .with_files(missing.join("out.log"), missing.join("err.log")),
        ..opts(dir.path(), LONG)
    };
    let error = run_process(&sh("touch ran"), None, &options)
        .await
        .unwrap_err();
    assert!(matches!(error, ProcessError::NotStarted(_)), "{error:?}");
    assert!(
        error.to_string().starts_with(&format!(
            "cannot create {}",
            missing.join("out.log").display()
        )),
        "{error}"
    );
    assert!(!dir.path().join("ran").exists());
}
