//! Acceptance 1: a bash session keeps its state between exec calls, and each result comes
//! back exactly (exit code, separate stderr, bytes that are not UTF-8).

use base64::Engine as _;
use serde_json::json;

use crate::sessions::support::{Workspace, text};
use crate::support::snapshot::snapshot;

#[test]
fn state_survives_between_exec_calls() {
    let ws = Workspace::new();
    let id = ws.start("bash");
    let dir = tempfile::TempDir::new().unwrap();
    let dir = dir.path().canonicalize().unwrap();
    let dir = dir.to_str().unwrap();

    let first = ws.exec(
        &id,
        &format!("cd {dir} && export A=1; U=2; f(){{ echo hi; }}; alias ll='ls -l'; set -o noglob"),
    );
    assert_eq!(
        first,
        json!({"stdout": "", "stderr": "", "exit_code": 0,
               "execution_time_ms": first["execution_time_ms"]})
    );

    let second = ws.exec(
        &id,
        "pwd; echo \"$A $U\"; bash -c 'echo \"child sees A=${A-unset} U=${U-unset}\"'; f; \
         type ll; set -o | grep -E '^noglob'; echo *",
    );
    assert_eq!(
        text(&second["stdout"]),
        format!(
            "{dir}\n1 2\nchild sees A=1 U=unset\nhi\nll is aliased to `ls -l'\nnoglob         \ton\n*\n"
        )
    );
    assert_eq!(second["exit_code"], 0);

    // The alias really expands in a later command, not just in `type`.
    std::fs::write(format!("{dir}/file.txt"), "x").unwrap();
    let listed = ws.exec(&id, "ll file.txt");
    assert!(
        text(&listed["stdout"]).starts_with("-rw"),
        "ll did not run ls -l: {listed}"
    );
}

#[test]
fn exit_code_stderr_and_binary_output_come_back_exactly() {
    let ws = Workspace::new();
    let id = ws.start("bash");
    let result = ws.exec(
        &id,
        r"printf 'out\n'; printf 'a\377b\000c'; printf 'err\n' >&2; printf '\376' >&2; (exit 7)",
    );
    assert_eq!(result["exit_code"], 7);
    let stdout = base64::engine::general_purpose::STANDARD
        .decode(text(&result["stdout_base64"]))
        .unwrap();
    assert_eq!(stdout, b"out\na\xffb\x00c");
    assert_eq!(text(&result["stdout"]), "out\na\u{fffd}b\u{0}c");
    let stderr = base64::engine::general_purpose::STANDARD
        .decode(text(&result["stderr_base64"]))
        .unwrap();
    assert_eq!(stderr, b"err\n\xfe");

    // UTF-8 output is a plain string with no base64 twin.
    let plain = ws.exec(&id, "printf 'h\\303\\251\\n'; echo oops >&2; false");
    assert_eq!(
        plain,
        json!({"stdout": "hé\n", "stderr": "oops\n", "exit_code": 1,
               "execution_time_ms": plain["execution_time_ms"]})
    );
    // $? carries over into the next command, as at a prompt.
    assert_eq!(ws.exec(&id, "echo $?")["stdout"], "1\n");
}

#[test]
fn multi_line_commands_arrive_on_stdin() {
    let ws = Workspace::new();
    let id = ws.start("bash");
    let result = ws.exec_stdin(
        &id,
        "for i in 1 2 3; do\n  echo \"Number: $i\"\ndone\ncat <<'EOF'\n$literal 'text'\nEOF\n",
    );
    assert_eq!(
        result["stdout"],
        "Number: 1\nNumber: 2\nNumber: 3\n$literal 'text'\n"
    );
    // The command's stdin is /dev/null, never the session's command stream.
    assert_eq!(ws.exec(&id, "cat; echo done")["stdout"], "done\n");
}

#[test]
fn syntax_errors_fail_the_command_but_keep_the_session() {
    let ws = Workspace::new();
    let id = ws.start("bash");
    ws.exec(&id, "KEEP=yes");
    let broken = ws.exec(&id, "echo 'unterminated");
    assert_eq!(broken["exit_code"], 2);
    // bash's own wording, which varies by version: a search.
    assert!(
        text(&broken["stderr"]).contains("unexpected EOF"),
        "{broken}"
    );
    assert_eq!(ws.exec(&id, "echo $KEEP")["stdout"], "yes\n");
}

#[test]
fn set_e_stops_the_command_and_keeps_the_session() {
    let ws = Workspace::new();
    let id = ws.start("bash");
    let stopped = ws.exec(
        &id,
        "set -e; X=kept; echo one; f(){ false; echo in-f; }; f; echo two",
    );
    assert_eq!(stopped["stdout"], "one\n");
    assert_eq!(stopped["exit_code"], 1);
    assert!(stopped.get("session_ended").is_none(), "{stopped}");
    // errexit is still on, as the user set it, and applies to the next command too.
    let next = ws.exec(
        &id,
        "set -o | grep -E '^errexit'; echo $X; false; echo not-reached",
    );
    assert_eq!(next["stdout"], "errexit        \ton\nkept\n");
    assert_eq!(next["exit_code"], 1);
    // As in bash: exempt contexts stay exempt (errexit is ignored inside them, subshells
    // included), and a subshell elsewhere stops at its first failure.
    let exempt = ws.exec(
        &id,
        "if false; then :; fi; false || echo handled; ( false; echo exempt ) || echo never",
    );
    assert_eq!(exempt["stdout"], "handled\nexempt\n");
    let subshell = ws.exec(&id, "( false; echo in-subshell ); echo after");
    assert_eq!(subshell["stdout"], "");
    assert_eq!(subshell["exit_code"], 1);
    let off = ws.exec(
        &id,
        "set +e; false; echo reached; set -o | grep -E '^errexit'",
    );
    assert_eq!(off["stdout"], "reached\nerrexit        \toff\n");
    assert_eq!(off["exit_code"], 0);
}

/// Under `set -e`, bash exits on an expansion error such as an unset variable with
/// `set -u`; in a session that would end the session. The command stops instead.
#[test]
fn fatal_expansion_errors_stop_the_command_not_the_session() {
    let ws = Workspace::new();
    let id = ws.start("bash");
    let unset = ws.exec(
        &id,
        "set -euo pipefail; KEEP=1; echo \"$NOT_SET\"; echo after",
    );
    assert_eq!(unset["stdout"], "");
    assert_eq!(unset["stderr"], "bash: NOT_SET: unbound variable\n");
    assert_eq!(unset["exit_code"], 1);
    assert!(unset.get("session_ended").is_none(), "{unset}");
    let required = ws.exec(&id, "echo \"${REQUIRED:?is required}\"; echo after");
    assert_eq!(required["stderr"], "bash: REQUIRED: is required\n");
    assert_eq!(required["exit_code"], 1);
    assert_eq!(ws.exec(&id, "echo $KEEP; set +eu")["stdout"], "1\n");
}

// Regression for issue 12 item 6: `exit N` ended the shell and with it the session, whereas
// the specification's wrapper (a shell per command) reports N and keeps the session.
#[test]
fn exit_ends_the_command_and_keeps_the_session() {
    let ws = Workspace::new();
    let id = ws.start("bash");
    let dir = tempfile::TempDir::new().unwrap();
    let dir = dir.path().canonicalize().unwrap();
    let dir = dir.to_str().unwrap();
    let result = ws.exec(
        &id,
        &format!("echo bye; cd {dir}; KEPT=1; exit 3; echo not-reached"),
    );
    assert_eq!(
        result,
        json!({"stdout": "bye\n", "stderr": "", "exit_code": 3,
               "execution_time_ms": result["execution_time_ms"]})
    );
    assert_eq!(ws.metadata(&id)["status"], "active");
    // What the command did before `exit` stays; `$?` is its status, as at a prompt.
    let after = ws.exec(&id, "echo \"$? $KEPT $PWD\"");
    assert_eq!(text(&after["stdout"]), format!("3 1 {dir}\n"));

    // From inside functions too: nothing after `exit` runs, at any depth.
    let nested = ws.exec(
        &id,
        "inner() { echo in; exit 5; echo not-in; }; outer() { inner; echo not-out; }; \
         outer; echo not-top",
    );
    assert_eq!(
        (&nested["stdout"], &nested["exit_code"]),
        (&json!("in\n"), &json!(5))
    );

    // Without an argument, the status of the command before; bad arguments as bash has it.
    let bare = ws.exec(&id, "false; exit");
    assert_eq!(bare["exit_code"], 1);
    let bad = ws.exec(&id, "exit abc; echo not-reached");
    assert_eq!(
        (&bad["stdout"], &bad["stderr"], &bad["exit_code"]),
        (
            &json!(""),
            &json!("bash: exit: abc: numeric argument required\n"),
            &json!(2)
        )
    );
    let wrapped = ws.exec(&id, "exit 300");
    assert_eq!(wrapped["exit_code"], 44);

    // In a subshell, a command substitution or a pipeline, `exit` ends that process only.
    let inside = ws.exec(
        &id,
        "(exit 7); echo \"sub $?\"; v=$(echo x; exit 9); echo \"subst $? $v\"; \
         true | exit 6; echo \"pipe $?\"",
    );
    assert_eq!(inside["stdout"], "sub 7\nsubst 9 x\npipe 6\n");
    assert_eq!(inside["exit_code"], 0);

    // Under errexit as well.
    let errexit = ws.exec(&id, "set -e; exit 4; echo not-reached");
    assert_eq!(
        (&errexit["stdout"], &errexit["exit_code"]),
        (&json!(""), &json!(4))
    );
    assert_eq!(ws.exec(&id, "set +e; echo alive")["stdout"], "alive\n");
    assert!(
        !ws.session_dir(&id)
            .join("run")
            .read_dir()
            .unwrap()
            .any(|_| true)
    );
}

/// `builtin exit` is bash's own: it ends the shell, and the session says so.
#[test]
fn builtin_exit_ends_the_session_and_says_so() {
    let ws = Workspace::new();
    let id = ws.start("bash");
    let result = ws.exec(&id, "echo bye; builtin exit 3");
    assert_eq!(result["stdout"], "bye\n");
    assert_eq!(result["exit_code"], 3);
    assert_eq!(result["session_ended"], true);
    snapshot!(result["hint"], @r#""the interpreter exited with status 3, so the session has ended; start a new one with `delta-sessions start`""#);
    assert_eq!(ws.metadata(&id)["status"], "exited");

    let after = ws.run(&["exec", &id, "echo again"]);
    assert_eq!(after.code, 1);
    assert_eq!(
        text(&after.json["error"]),
        format!("session {id} has ended: the interpreter exited with status 3")
    );
}
