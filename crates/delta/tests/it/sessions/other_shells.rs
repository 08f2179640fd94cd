//! Shells other than bash use the same protocol (with a syntax check first, since a syntax
//! error makes a POSIX shell exit).

use crate::sessions::support::{Workspace, text};

#[test]
fn sh_keeps_state_and_survives_syntax_errors() {
    let ws = Workspace::new();
    let id = ws.start("sh");
    assert_eq!(ws.metadata(&id)["kind"], "posix");
    ws.exec(
        &id,
        "mkdir -p there && cd there; V=1; f() { echo \"f $V\"; }",
    );
    let broken = ws.exec(&id, "if then");
    assert_eq!(broken["exit_code"], 2);
    // The shell's own wording of a syntax error varies by shell and version: a search.
    assert!(text(&broken["stderr"]).contains("then"), "{broken}");
    let again = ws.exec(&id, "basename \"$PWD\"; f; echo err >&2; false");
    assert_eq!(again["stdout"], "there\nf 1\n");
    assert_eq!(again["stderr"], "err\n");
    assert_eq!(again["exit_code"], 1);
}
