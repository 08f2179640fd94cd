//! Acceptance 3: a command that runs past its timeout is stopped with the processes it
//! started, and the session stays usable; background jobs of earlier commands are spared.

use std::process::Stdio;

use crate::sessions::support::{BIN, Workspace, eventually, running, text};
use crate::support::snapshot::snapshot;

#[test]
fn bash_command_and_its_children_are_stopped_and_the_session_lives_on() {
    let ws = Workspace::new();
    let id = ws.start("bash");
    ws.exec(&id, "KEEP=1; sleep 60 & echo $! > earlier.pid");
    let earlier = ws.pid_file("earlier.pid");

    let result = ws.exec_args(&[
        "exec",
        "--timeout",
        "0.5",
        &id,
        "sleep 60 & echo $! > child.pid; (sleep 60; echo never) ; echo after",
    ]);
    assert_eq!(result["timed_out"], true);
    assert_eq!(result["exit_code"], 124);
    assert_eq!(result["stdout"], "");
    snapshot!(result["hint"], @r#""the command ran past the 0.5 s timeout and was stopped, with the processes it started; run long jobs in the background (`cmd > job.log 2>&1 &`) or pass a larger --timeout""#);

    let child = ws.pid_file("child.pid");
    assert!(
        !running(child),
        "child {child} of the timed-out command still runs"
    );
    assert!(
        running(earlier),
        "a background job of an earlier command was killed"
    );

    assert_eq!(ws.exec(&id, "echo alive $KEEP")["stdout"], "alive 1\n");
}

#[test]
fn bash_busy_loops_in_nested_functions_are_unwound_completely() {
    let ws = Workspace::new();
    let id = ws.start("bash");
    let result = ws.exec_args(&[
        "exec",
        "--timeout",
        "0.3",
        &id,
        "inner(){ while :; do :; done; echo after-inner; }\n\
         outer(){ inner; echo after-outer; }\n\
         outer; echo after-all",
    ]);
    assert_eq!(result["timed_out"], true);
    // Nothing after the interrupted loop ran, at any level.
    assert_eq!(result["stdout"], "");
    // The shell left no unwinding machinery behind: options and traps are as before.
    let after = ws.exec(
        &id,
        "echo ok; shopt -q extdebug || echo extdebug-off; trap -p DEBUG",
    );
    assert_eq!(after["stdout"], "ok\nextdebug-off\n");
}

#[test]
fn python_command_and_its_children_are_stopped_and_state_survives() {
    let ws = Workspace::new();
    let id = ws.start("python3");
    ws.exec(&id, "kept = 'yes'");
    let result = ws.exec_args(&[
        "exec",
        "--timeout",
        "0.5",
        &id,
        "import subprocess, time\n\
         child = subprocess.Popen(['sleep', '60'])\n\
         open('child.pid', 'w').write(str(child.pid))\n\
         time.sleep(60)",
    ]);
    assert_eq!(result["timed_out"], true);
    assert_eq!(result["exit_code"], 124);
    assert!(
        text(&result["stderr"]).ends_with("KeyboardInterrupt\n"),
        "{result}"
    );
    let child = ws.pid_file("child.pid");
    assert!(
        !running(child),
        "child {child} of the timed-out command still runs"
    );
    assert_eq!(ws.exec(&id, "print(kept)")["stdout"], "yes\n");
}

/// When the engine kills a hanging `exec` (its own tool timeout), the command is stopped
/// too instead of running on unobserved.
#[test]
fn a_disconnected_client_cancels_its_command() {
    let ws = Workspace::new();
    let id = ws.start("bash");
    let mut client = std::process::Command::new(BIN)
        .current_dir(ws.path())
        .args([
            "exec",
            &id,
            "sleep 60 & echo $! > child.tmp; mv child.tmp child.pid; wait",
        ])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    assert!(eventually(|| ws.path().join("child.pid").exists()));
    let child = ws.pid_file("child.pid");
    client.kill().unwrap();
    client.wait().unwrap();
    assert!(
        eventually(|| !running(child)),
        "child {child} outlived its cancelled command"
    );
    assert_eq!(ws.exec(&id, "echo usable")["stdout"], "usable\n");
}
