//! Acceptance 2: a python3 session keeps variables, imports and functions, reports
//! exceptions with a traceback and a non-zero exit code, and survives them.

use serde_json::json;

use crate::sessions::support::{Workspace, text};

#[test]
fn variables_survive_and_exceptions_do_not_end_the_session() {
    let ws = Workspace::new();
    let id = ws.start("python3");
    assert_eq!(ws.exec(&id, "x = 41")["stdout"], "");
    let answer = ws.exec(&id, "print(x + 1)");
    assert_eq!(
        answer,
        json!({"stdout": "42\n", "stderr": "", "exit_code": 0,
               "execution_time_ms": answer["execution_time_ms"]})
    );

    let failed = ws.exec(&id, "def half(v):\n    return v / 0\nhalf(x)");
    assert_eq!(failed["exit_code"], 1);
    assert_eq!(failed["stdout"], "");
    let traceback = text(&failed["stderr"]);
    assert!(
        traceback.starts_with(
            "Traceback (most recent call last):\n  File \"<exec-3>\", line 3, in <module>\n"
        ),
        "{traceback}"
    );
    assert!(
        traceback.ends_with("ZeroDivisionError: division by zero\n"),
        "{traceback}"
    );

    // State, including the function defined by the failing command, survived.
    assert_eq!(
        ws.exec(&id, "print(x, half.__name__)")["stdout"],
        "41 half\n"
    );
}

#[test]
fn imports_functions_echo_and_child_output() {
    let ws = Workspace::new();
    let id = ws.start("python3");
    ws.exec_stdin(&id, "import math\ndef square(v):\n    return v * v\n");
    // A final expression echoes its repr, like the interactive interpreter.
    assert_eq!(
        ws.exec(&id, "square(3) + math.floor(math.pi)")["stdout"],
        "12\n"
    );
    assert_eq!(ws.exec(&id, "None")["stdout"], "");
    // Output of child processes is captured too (fds 1 and 2 are redirected).
    let child = ws.exec(&id, "import os\n_ = os.system('echo out; echo err >&2')");
    assert_eq!(child["stdout"], "out\n");
    assert_eq!(child["stderr"], "err\n");
}

#[test]
fn syntax_errors_and_sys_exit_set_the_exit_code() {
    let ws = Workspace::new();
    let id = ws.start("python3");
    let syntax = ws.exec(&id, "if True print(1)");
    assert_eq!(syntax["exit_code"], 1);
    // Python's traceback layout varies by version: a search.
    assert!(text(&syntax["stderr"]).contains("SyntaxError"), "{syntax}");
    // sys.exit ends the command with its code; the session stays (as in a notebook).
    let exited = ws.exec(&id, "import sys\nsys.exit(4)");
    assert_eq!(exited["exit_code"], 4);
    assert!(exited.get("session_ended").is_none());
    assert_eq!(ws.exec(&id, "print(sys.version_info[0])")["stdout"], "3\n");
}
