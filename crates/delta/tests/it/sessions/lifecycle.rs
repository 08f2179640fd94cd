//! Acceptance 5 and the session life cycle: `start` detaches its holder, `end` leaves no
//! process behind, `cleanup` removes sessions whose process is gone, `list` tells which.

use std::process::{Command, Stdio};

use serde_json::json;

use crate::sessions::support::{BIN, Workspace, eventually, running, session_of};

#[test]
fn start_returns_while_the_holder_lives_on_in_its_own_process_session() {
    let ws = Workspace::new();
    // `output()` reads stdout to its end: it returns only because the holder does not keep
    // the caller's pipe open (an engine waits for exactly that).
    let output = Command::new(BIN)
        .current_dir(ws.path())
        .arg("start")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success());
    let started: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let id = started["session_id"].as_str().unwrap();
    assert_eq!(
        started,
        json!({"session_id": id, "command": "bash",
               "work_dir": ws.path().to_str().unwrap(), "status": "active"})
    );
    let (holder, shell) = ws.pids(id);
    // setsid: out of the caller's process group, so killing the tool's group spares it.
    assert_eq!(session_of(holder), holder);
    assert_eq!(session_of(shell), holder);
    assert_eq!(ws.exec(id, "echo still here")["stdout"], "still here\n");
    ws.run(&["end", id]);
}

#[test]
fn end_leaves_no_process_behind() {
    let ws = Workspace::new();
    let id = ws.start("bash");
    ws.exec(
        &id,
        "sleep 60 & echo $! > job.pid; (sleep 60 & echo $! > orphan.pid); nohup sleep 60 \
         >/dev/null 2>&1 & echo $! > nohup.pid",
    );
    let (holder, shell) = ws.pids(&id);
    let pids = [
        holder,
        shell,
        ws.pid_file("job.pid"),
        ws.pid_file("orphan.pid"),
        ws.pid_file("nohup.pid"),
    ];
    assert!(pids.iter().all(|pid| running(*pid)));

    let ended = ws.run(&["end", &id]);
    assert_eq!(ended.code, 0);
    assert_eq!(
        ended.json,
        json!({"status": "terminated", "session_id": id})
    );
    for pid in pids {
        assert!(!running(pid), "process {pid} survived `end`");
    }
    assert_eq!(ws.metadata(&id)["status"], "terminated");
    assert!(!ws.session_dir(&id).join("holder.sock").exists());

    let again = ws.run(&["exec", &id, "echo"]);
    assert_eq!(again.code, 1);
    assert_eq!(
        again.json["error"],
        format!("session {id} has ended: it was ended by `delta-sessions end`")
    );
    assert_eq!(ws.run(&["end", &id]).code, 1);
}

#[test]
fn cleanup_removes_sessions_whose_process_is_gone() {
    let ws = Workspace::new();
    let alive = ws.start("bash");
    let killed = ws.start("bash");
    let ended = ws.start("python3");
    ws.exec(&killed, "sleep 60 & echo $! > left.pid");
    let left = ws.pid_file("left.pid");
    ws.run(&["end", &ended]);

    let (holder, shell) = ws.pids(&killed);
    let status = Command::new("kill")
        .args(["-9", &holder.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    assert!(eventually(|| !running(holder)));

    let listed = ws.run(&["list"]).json;
    let status_of = |id: &str| {
        listed
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["session_id"] == id)
            .unwrap()["status"]
            .clone()
    };
    assert_eq!(status_of(&alive), "active");
    assert_eq!(status_of(&killed), "dead");
    assert_eq!(status_of(&ended), "terminated");
    let dead = ws.run(&["exec", &killed, "echo"]);
    assert_eq!(dead.code, 1);
    assert_eq!(
        dead.json["error"],
        format!("session {killed} is not running: its process is gone")
    );

    let cleaned = ws.run(&["cleanup"]);
    assert_eq!(cleaned.code, 0);
    let mut expected = vec![killed.clone(), ended.clone()];
    expected.sort();
    assert_eq!(cleaned.json, json!({"removed": expected}));
    assert!(!ws.session_dir(&killed).exists());
    assert!(!ws.session_dir(&ended).exists());
    assert!(
        !running(shell) && !running(left),
        "cleanup left the dead session's processes"
    );

    assert_eq!(ws.exec(&alive, "echo untouched")["stdout"], "untouched\n");
    assert_eq!(ws.run(&["cleanup"]).json, json!({"removed": []}));
}

#[test]
fn list_and_cleanup_work_before_any_session_exists() {
    let ws = Workspace::new();
    assert_eq!(ws.run(&["list"]).json, json!([]));
    assert_eq!(ws.run(&["cleanup"]).json, json!({"removed": []}));
}
