//! Acceptance 4: concurrent exec calls on one session run one at a time, and concurrent
//! sessions are independent.

use std::collections::HashSet;

use crate::sessions::support::{Workspace, text};

#[test]
fn twenty_concurrent_execs_on_one_session_never_interleave() {
    let ws = Workspace::new();
    let id = ws.start("bash");
    ws.exec(&id, "COUNT=0");
    let outputs: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..20)
            .map(|n| {
                let (ws, id) = (&ws, &id);
                scope.spawn(move || {
                    // Each command brackets its work in a shared log and bumps shared state.
                    let command = format!(
                        "echo start {n} >> order.log; for i in 1 2 3; do echo {n}-$i; \
                         sleep 0.01; done; COUNT=$((COUNT+1)); echo end {n} >> order.log"
                    );
                    text(&ws.exec(id, &command)["stdout"]).to_owned()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (n, stdout) in outputs.iter().enumerate() {
        assert_eq!(stdout, &format!("{n}-1\n{n}-2\n{n}-3\n"));
    }
    let log = std::fs::read_to_string(ws.path().join("order.log")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 40);
    for pair in lines.chunks(2) {
        let started = pair[0].strip_prefix("start ").unwrap();
        assert_eq!(
            pair[1],
            format!("end {started}"),
            "commands interleaved:\n{log}"
        );
    }
    assert_eq!(ws.exec(&id, "echo $COUNT")["stdout"], "20\n");
    assert_eq!(ws.metadata(&id)["execution_count"], 22);
}

#[test]
fn twenty_sessions_used_concurrently_stay_independent() {
    let ws = Workspace::new();
    let ids: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..20)
            .map(|n| {
                let ws = &ws;
                scope.spawn(move || {
                    let id = ws.start(if n % 4 == 0 { "python3" } else { "bash" });
                    if n % 4 == 0 {
                        ws.exec(&id, &format!("value = {n}"));
                        assert_eq!(ws.exec(&id, "print(value)")["stdout"], format!("{n}\n"));
                    } else {
                        ws.exec(&id, &format!("VALUE={n}; mkdir -p d{n}; cd d{n}"));
                        assert_eq!(
                            ws.exec(&id, "echo $VALUE; basename \"$PWD\"")["stdout"],
                            format!("{n}\nd{n}\n")
                        );
                    }
                    id
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 20);
    let listed = ws.run(&["list"]).json;
    assert_eq!(listed.as_array().unwrap().len(), 20);
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["status"] == "active")
    );
}
