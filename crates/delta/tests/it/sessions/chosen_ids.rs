//! `start --id`: a session id chosen by the caller (a script that must know the id in
//! advance) instead of a generated one. It is validated like every other id and names one
//! session only.

use serde_json::json;

use crate::sessions::support::{Workspace, text};
use crate::support::snapshot::snapshot;

const ID: &str = "sess_000000000001";

#[test]
fn a_chosen_id_names_the_new_session() {
    let ws = Workspace::new();
    let started = ws.start_with(&[&format!("--id={ID}"), "python3"]);
    assert_eq!(started.code, 0, "{}", started.json);
    assert_eq!(
        started.json,
        json!({"session_id": ID, "command": "python3",
               "work_dir": ws.path().to_str().unwrap(), "status": "active"})
    );
    ws.exec(ID, "x = 6 * 7");
    assert_eq!(ws.exec(ID, "x")["stdout"], "42\n");
    assert_eq!(ws.run(&["list"]).json[0]["session_id"], ID);
    assert_eq!(ws.metadata(ID)["session_id"], ID);

    // The spelling with a separate value works too.
    let other = "sess_00000000beef";
    let bash = ws.start_with(&["--id", other]);
    assert_eq!(bash.json["session_id"], other);
    assert_eq!(bash.json["command"], "bash");
}

#[test]
fn an_id_in_use_is_refused_until_cleanup_removes_its_session() {
    let ws = Workspace::new();
    assert_eq!(ws.start_with(&["--id", ID]).code, 0);
    ws.exec(ID, "export KEPT=yes");
    let sessions = ws.path().join(".sessions");

    let clash = ws.start_with(&["--id", ID, "python3"]);
    assert_eq!(clash.code, 1, "{}", clash.json);
    assert_eq!(
        text(&clash.json["error"]),
        format!("session {ID} already exists in {}", sessions.display())
    );
    snapshot!(clash.json["hint"], @r#""choose another id, or leave out --id to get a generated one; an ended session keeps its id until `delta-sessions cleanup` removes it""#);
    // The refused start left the running session alone.
    assert_eq!(ws.exec(ID, "echo $KEPT")["stdout"], "yes\n");
    assert_eq!(ws.metadata(ID)["command"], "bash");

    // An ended session keeps its id: later output can never be taken for its own.
    assert_eq!(ws.run(&["end", ID]).code, 0);
    assert_eq!(ws.start_with(&["--id", ID]).code, 1);
    assert_eq!(ws.run(&["cleanup"]).json, json!({"removed": [ID]}));
    let again = ws.start_with(&["--id", ID]);
    assert_eq!(again.code, 0, "{}", again.json);
    assert_eq!(ws.exec(ID, "echo ${KEPT:-fresh}")["stdout"], "fresh\n");
}

#[test]
fn malformed_ids_are_rejected_before_anything_is_created() {
    let ws = Workspace::new();
    for bad in ["../../tmp/x", "sess_XYZ", "sess_0123456789abc", ""] {
        let run = ws.start_with(&["--id", bad]);
        assert_eq!(run.code, 2, "{bad:?}: {}", run.json);
        assert_eq!(
            text(&run.json["error"]),
            format!("invalid session id '{bad}'")
        );
    }
    assert!(!ws.path().join(".sessions").exists());
}
