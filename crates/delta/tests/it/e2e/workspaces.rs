//! Where a run goes: `-w PATH`, or the agent's numbered workspaces.

use crate::support::harness::Test;
use crate::support::run::{HELLO_SCRIPT, HELLO_TASK, delta, hello_world, mock, only_run};
use crate::support::snapshot::snapshot;

#[test]
fn without_a_terminal_each_run_gets_a_new_numbered_workspace_without_asking() {
    let mock = mock(HELLO_SCRIPT);
    let run = delta(hello_world(Test::new()), &mock)
        .args(["run", "--agent", "agent", "-m", HELLO_TASK])
        .run()
        .code(0);
    // Nothing asked ("Reuse workspace …?"): the whole stream.
    snapshot!(run.stderr(), @r#"
    ▶ run [RUN_ID] · agent hello-world · model gpt-4o-mini
      workspace [TEMP]/agent/workspaces/W001

    ── iteration 1/30 ──
    Let me see what is in the workspace first.
    → list_files {"directory":"."}
      ✓ exit 0 · [DURATION]
      │ (no output)

    ── iteration 2/30 ──
    The workspace is empty. I'll create hello.txt and check it.
    → write_file {"content":"Hello, world!\nWritten by a Delta Engine agent.\n","path":"hello.txt"}
      ✓ exit 0 · [DURATION]
      │ Hello, world!
      │ Written by a Delta Engine agent.
    → count_lines {"path":"hello.txt"}
      ✓ exit 0 · [DURATION]
      │ 2

    ── iteration 3/30 ──
    {"summary": "Created hello.txt with a two-line greeting.", "files": ["hello.txt"], "lines": 2}

    ✔ COMPLETED after 3 iterations
    "#);
    let run = delta(run.then(), &mock)
        .args(["run", "--agent", "agent", "-m", HELLO_TASK])
        .run()
        .code(0);
    assert_eq!(run.read("agent/workspaces/LAST_USED"), "W002\n");
    for id in ["W001", "W002"] {
        let files = only_run(&run.path().join("agent/workspaces").join(id));
        assert_eq!(files.metadata()["workspace_id"], id);
    }
}

#[test]
fn work_dir_is_created_when_missing_and_recognised_as_numbered_when_it_is_one() {
    let mock = mock(HELLO_SCRIPT);
    let run = delta(hello_world(Test::new()), &mock)
        .args([
            "run",
            "--agent",
            "agent",
            "-w",
            "deep/new/ws",
            "-m",
            HELLO_TASK,
        ])
        .run()
        .code(0);
    let files = only_run(&run.path().join("deep/new/ws"));
    assert_eq!(files.metadata()["workspace_id"], serde_json::Value::Null);
    assert_eq!(
        files.metadata()["work_dir"],
        run.path()
            .join("deep/new/ws")
            .canonicalize()
            .unwrap()
            .to_str()
            .unwrap()
    );
    assert_eq!(run.read("deep/new/ws/.delta/VERSION"), "1.10\n");

    let run = delta(run.then(), &mock)
        .args([
            "run",
            "--agent",
            "agent",
            "-w",
            "agent/workspaces/W007",
            "-m",
            HELLO_TASK,
        ])
        .run()
        .code(0);
    let files = only_run(&run.path().join("agent/workspaces/W007"));
    assert_eq!(files.metadata()["workspace_id"], "W007");
}

#[test]
fn the_agent_defaults_to_the_current_directory_and_task_is_gone() {
    let mock = mock(HELLO_SCRIPT);
    let run = delta(hello_world(Test::new()), &mock)
        .current_dir("agent")
        .args(["run", "-y", "-m", HELLO_TASK])
        .run()
        .code(0);
    only_run(&run.path().join("agent/workspaces/W001"));
    let run = delta(run.then(), &mock)
        .current_dir("agent")
        .args(["run", "-y", "--task", HELLO_TASK])
        .run()
        .code(2);
    snapshot!(run.stderr(), @"error: --task is gone since v1.8: use -m/--message TEXT (or --message-file FILE)");
}

// A file given as `-w` used to be reported as "cannot read afile/.env: Not a directory":
// the credentials were resolved (reading the workspace's .env) before the workspace was
// checked. The path is now checked first, and every unusable workspace exits 126.

#[test]
fn a_file_given_as_work_dir_is_named_before_any_env_file_is_read() {
    hello_world(Test::new())
        .file("afile", "notes\n")
        .args(["run", "--agent", "agent", "-w", "afile", "-m", HELLO_TASK])
        .run()
        .code(126)
        .stdout_is("")
        .stderr_is(
            "error: workspace afile is not a directory\n  \
             = help: pass a directory with -w (a missing one is created), or move afile away\n",
        );
}

#[test]
fn a_work_dir_below_a_file_names_the_file() {
    let run = hello_world(Test::new())
        .file("afile", "notes\n")
        .args([
            "run", "--agent", "agent", "-w", "afile/ws", "-m", HELLO_TASK,
        ])
        .env("DELTA_API_KEY", "sk-unused")
        .run()
        .code(126)
        .stderr_is(
            "error: cannot create workspace afile/ws: afile is not a directory\n  \
             = help: pass a path with -w whose parents are directories, or move afile away\n",
        );
    assert_eq!(run.read("afile"), "notes\n");
}

#[test]
fn a_workspace_whose_delta_is_a_file_is_refused_with_the_fix() {
    let run = hello_world(Test::new())
        .file("ws/.delta", "not the engine's\n")
        .env("DELTA_API_KEY", "sk-unused")
        .args(["run", "--agent", "agent", "-w", "ws", "-m", HELLO_TASK])
        .run()
        .code(126)
        .stderr_is(
            "error: ws/.delta is not a directory; the engine keeps its runs there\n  \
             = help: move ws/.delta away (the engine creates .delta/ on the next run), or pass \
             another workspace with -w\n",
        );
    assert_eq!(run.read("ws/.delta"), "not the engine's\n");
}

/// sysfs refuses `mkdir` even to root, so this holds on any Linux machine.
#[cfg(target_os = "linux")]
#[test]
fn a_workspace_that_cannot_be_created_for_lack_of_permission_exits_126() {
    let target = std::path::Path::new("/sys/kernel/delta-test-workspace");
    if !target.parent().is_some_and(std::path::Path::is_dir) {
        eprintln!("skipped: no /sys/kernel here");
        return;
    }
    hello_world(Test::new())
        .env("DELTA_API_KEY", "sk-unused")
        .args(["run", "--agent", "agent", "-m", HELLO_TASK, "-w"])
        .arg(target)
        .run()
        .code(126)
        .stdout_is("")
        // The cause after the colon is the OS's wording (EPERM or EACCES, by kernel).
        .stderr_has(&format!(
            "error: failed to create directory `{}`: ",
            target.display()
        ))
        .stderr_has(&format!(
            "  = help: check the permissions of {} and of its parent directory",
            target.display()
        ));
}

/// Needs a user whose permissions are enforced (not root); the sysfs test above covers
/// root.
#[test]
fn a_read_only_workspace_or_delta_dir_exits_126_with_a_help_line() {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = |path: &std::path::Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    let test = hello_world(Test::new())
        .file("ro/notes.txt", "")
        .file("ro-delta/.delta/VERSION", "1.10\n");
    let (ro, ro_delta) = (test.path().join("ro"), test.path().join("ro-delta/.delta"));
    mode(&ro, 0o555);
    mode(&ro_delta, 0o555);
    if std::fs::write(ro.join("probe"), "").is_ok() {
        eprintln!("skipped: permissions are not enforced for this user");
        return;
    }
    // The workspace itself: .delta/ cannot be created.
    let run = test
        .env("DELTA_API_KEY", "sk-unused")
        .args(["run", "--agent", "agent", "-w", "ro", "-m", HELLO_TASK])
        .run()
        .code(126)
        // "Permission denied" is the OS's wording for EACCES, which varies by platform.
        .stderr_has("error: failed to create directory `")
        .stderr_has("ro/.delta`: Permission denied")
        .stderr_has("  = help: check the permissions of ");
    // Its .delta/: the run directory cannot be created.
    let run = run
        .then()
        .env("DELTA_API_KEY", "sk-unused")
        .args([
            "run", "--agent", "agent", "-w", "ro-delta", "-m", HELLO_TASK,
        ])
        .run()
        .code(126)
        // As above: the OS's wording around the path.
        .stderr_has("ro-delta/.delta/")
        .stderr_has("Permission denied")
        .stderr_has("(the workspace's .delta/ must be writable)");
    // Writable again, so that the temp directory can be removed.
    mode(&run.path().join("ro"), 0o755);
    mode(&run.path().join("ro-delta/.delta"), 0o755);
}

/// A pseudo-terminal's output, collected by a thread as it comes (the child must never
/// block on a full terminal buffer).
struct Terminal {
    master: std::fs::File,
    seen: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Terminal {
    /// Waits until the terminal has shown `text` (a hang guard, not a timing assertion).
    fn wait_for(&self, text: &str) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        // The output so far, still growing: a search, not a whole value.
        while !self.seen.lock().unwrap().contains(text) {
            assert!(
                std::time::Instant::now() < deadline,
                "the terminal never showed {text:?}; it showed:\n{}",
                self.seen.lock().unwrap()
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    fn type_line(&mut self, line: &str) {
        use std::io::Write as _;
        self.master
            .write_all(format!("{line}\n").as_bytes())
            .unwrap();
    }
}

/// Starts `test`'s delta with stdin and stderr on a new pseudo-terminal, stdout piped.
fn spawn_on_terminal(test: &Test) -> (std::process::Child, Terminal) {
    let pty = nix::pty::openpty(None, None).unwrap();
    let child = test
        .command()
        .stdin(std::process::Stdio::from(pty.slave.try_clone().unwrap()))
        .stderr(std::process::Stdio::from(pty.slave))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let master = std::fs::File::from(pty.master);
    let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let mut reader = master.try_clone().unwrap();
    let sink = std::sync::Arc::clone(&seen);
    std::thread::spawn(move || {
        use std::io::Read as _;
        let mut buffer = [0u8; 4096];
        // Ends with EIO once the child has closed its side.
        while let Ok(n @ 1..) = reader.read(&mut buffer) {
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buffer[..n]));
        }
    });
    (child, Terminal { master, seen })
}

// The workspace question took anything but n/no as "reuse": a typo like `nw` ran the task
// in the old workspace. Now an unclear answer gets the question again.
#[test]
fn on_a_terminal_an_unclear_answer_is_asked_again_and_n_creates_a_new_workspace() {
    let mock = mock(HELLO_SCRIPT);
    let run = delta(hello_world(Test::new()), &mock)
        .args(["run", "--agent", "agent", "-m", HELLO_TASK])
        .run()
        .code(0);
    assert_eq!(run.read("agent/workspaces/LAST_USED"), "W001\n");

    let test = delta(run.then(), &mock).args(["run", "--agent", "agent", "-m", HELLO_TASK]);
    let (child, mut terminal) = spawn_on_terminal(&test);
    terminal.wait_for("Reuse workspace W001 (last used)? [Y/n");
    terminal.type_line("nw");
    terminal.wait_for("Please answer y (reuse W001) or n (create a new workspace).");
    terminal.type_line("n");
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        terminal.seen.lock().unwrap()
    );
    let shown = terminal.seen.lock().unwrap().clone();
    assert_eq!(shown.matches("Reuse workspace W001").count(), 2, "{shown}");

    let agent = test.path().join("agent/workspaces");
    assert_eq!(
        std::fs::read_to_string(agent.join("LAST_USED")).unwrap(),
        "W002\n"
    );
    only_run(&agent.join("W001"));
    only_run(&agent.join("W002"));
}
