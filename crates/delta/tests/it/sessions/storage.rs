//! The files under `.sessions/{id}/` (seed 000 §2.3.3): metadata.json, state.json and
//! history.log, and no per-command leftovers.

use crate::sessions::support::{Workspace, text};

#[test]
fn metadata_state_and_history_follow_the_session() {
    let ws = Workspace::new();
    let id = ws.start("bash");
    let meta = ws.metadata(&id);
    assert_eq!(meta["session_id"], id.as_str());
    assert_eq!(meta["command"], "bash");
    assert_eq!(meta["kind"], "bash");
    assert_eq!(meta["status"], "active");
    assert_eq!(meta["work_dir"], ws.path().to_str().unwrap());
    assert_eq!(meta["execution_count"], 0);
    assert!(meta["last_executed_at"].is_null());
    assert!(text(&meta["created_at"]).ends_with('Z'));

    ws.exec(&id, "mkdir -p sub && cd sub");
    ws.exec(&id, "echo hi; false");

    let meta = ws.metadata(&id);
    assert_eq!(meta["execution_count"], 2);
    assert!(text(&meta["last_executed_at"]).ends_with('Z'));

    let dir = ws.session_dir(&id);
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["work_dir"], ws.path().join("sub").to_str().unwrap());
    assert_eq!(state["last_exit_code"], 1);

    let history = std::fs::read_to_string(dir.join("history.log")).unwrap();
    let entries: Vec<serde_json::Value> = history
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["command"], "mkdir -p sub && cd sub");
    assert_eq!(entries[1]["command"], "echo hi; false");
    assert_eq!(entries[1]["exit_code"], 1);
    assert_eq!(entries[1]["stdout_bytes"], 3);

    // Command text and outputs are removed once returned.
    assert_eq!(std::fs::read_dir(dir.join("run")).unwrap().count(), 0);
}

/// A Unix socket address holds at most 108 bytes; sessions under a deeper path still work.
#[test]
fn a_sessions_directory_with_a_long_path_works() {
    let base = tempfile::TempDir::new().unwrap();
    let deep = base.path().join("a".repeat(60)).join("b".repeat(60));
    let ws = Workspace::with_sessions_dir(deep.clone());
    let id = ws.start("bash");
    assert!(ws.session_dir(&id).join("holder.sock").as_os_str().len() > 108);
    assert_eq!(ws.exec(&id, "echo deep")["stdout"], "deep\n");
    assert!(deep.join(&id).join("metadata.json").exists());
}
