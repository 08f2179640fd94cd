//! Errors are one JSON document on stdout, `{"error", "hint"}`, with a non-zero exit code:
//! 2 for command-line misuse, 1 when the operation failed.

use serde_json::Value;

use crate::sessions::support::{Workspace, text};
use crate::support::snapshot::{name, snapshot};

/// The exit code and error as given, and the whole document (hint included) against a
/// snapshot named after the error (insta would name it after this helper, numbered in
/// whatever order parallel tests reach it).
fn assert_error(run: &crate::sessions::support::Run, code: i32, error: &str) {
    assert_eq!(run.code, code, "{}", run.json);
    assert_eq!(run.json.as_object().unwrap().len(), 2, "{}", run.json);
    assert_eq!(text(&run.json["error"]), error);
    snapshot!(name(&error), format!("{:#}", run.json));
}

#[test]
fn unknown_session() {
    let ws = Workspace::new();
    let run = ws.run(&["exec", "sess_0123456789ab", "echo"]);
    let dir = ws.path().join(".sessions");
    assert_error(
        &run,
        1,
        &format!("no session sess_0123456789ab in {}", dir.display()),
    );
    assert_eq!(ws.run(&["end", "sess_0123456789ab"]).code, 1);
}

#[test]
fn ids_that_could_escape_the_sessions_directory_are_rejected() {
    let ws = Workspace::new();
    for bad in ["../../etc", "sess_0123456789ab/..", "sess_XYZ"] {
        let run = ws.run(&["exec", bad, "echo"]);
        assert_error(&run, 2, &format!("invalid session id '{bad}'"));
    }
}

#[test]
fn bad_arguments() {
    let ws = Workspace::new();
    let missing = ws.run(&["exec"]);
    assert_eq!(missing.code, 2);
    snapshot!(format!("{:#}", missing.json), @r#"
    {
      "error": "the following required arguments were not provided:",
      "hint": "usage: delta-sessions exec <SESSION_ID> [COMMAND]; `delta-sessions --help` lists the commands, and a command with spaces must be quoted as one argument or passed on stdin"
    }
    "#);

    let unknown = ws.run(&["frobnicate"]);
    assert_eq!(unknown.code, 2);
    assert_eq!(
        text(&unknown.json["error"]),
        "unrecognized subcommand 'frobnicate'"
    );

    let timeout = ws.run(&["exec", "--timeout", "0", "sess_0123456789ab", "echo"]);
    assert_eq!(timeout.code, 2);
    snapshot!(format!("{:#}", timeout.json), @r#"
    {
      "error": "invalid value '0' for '--timeout <SECONDS>': '0' is not a number of seconds greater than 0 (e.g. 300 or 0.5)",
      "hint": "usage: delta-sessions <COMMAND>; `delta-sessions --help` lists the commands, and a command with spaces must be quoted as one argument or passed on stdin"
    }
    "#);
}

#[test]
fn exec_without_a_command() {
    let ws = Workspace::new();
    let id = ws.start("bash");
    let run = ws.run_with_stdin(&["exec", &id], b"");
    assert_error(
        &run,
        2,
        "no command to run: none was given as an argument and standard input was empty",
    );
    let nul = ws.run(&["exec", &id]);
    assert_eq!(nul.code, 2);
    let with_nul = ws.run_with_stdin(&["exec", &id], b"echo a\0b");
    assert_error(
        &with_nul,
        2,
        "the command contains a NUL byte, which a shell cannot run",
    );
}

#[test]
fn start_with_something_that_is_not_an_interpreter() {
    let ws = Workspace::new();
    let missing = ws.run(&["start", "/nonexistent/shell"]);
    assert_eq!(missing.code, 1);
    assert!(
        text(&missing.json["error"])
            .starts_with("cannot start a session with '/nonexistent/shell': "),
        "{}",
        missing.json
    );
    // A failed start leaves no half-made session behind.
    assert_eq!(ws.run(&["list"]).json, Value::Array(Vec::new()));
    assert_eq!(
        ws.run(&["cleanup"]).json["removed"],
        Value::Array(Vec::new())
    );
}

#[test]
fn help_is_text_with_status_zero() {
    let ws = Workspace::new();
    let output = ws.cmd().arg("--help").output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let help = String::from_utf8(output.stdout).unwrap();
    // Every command, and not the internal __holder.
    snapshot!(help);
}
