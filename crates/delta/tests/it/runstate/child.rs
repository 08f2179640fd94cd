//! Roles this test binary plays as a child process (see `support::spawn_child`); a no-op
//! when run as an ordinary test.

use std::io::{Read, Write};
use std::path::Path;

use delta_engine::journal::{EventPayload, FsyncPolicy, Journal, UserMessage};
use delta_engine::run::RunLock;
use delta_engine::secrets::Redactor;

#[test]
fn child_entry() {
    let Ok(role) = std::env::var("RUNSTATE_CHILD") else {
        return;
    };
    let args_text = std::env::var("RUNSTATE_CHILD_ARGS").unwrap();
    let args: Vec<&str> = args_text.split('\u{1f}').collect();
    match role.as_str() {
        // Append N events, announce it, then wait to be killed.
        "append" => {
            let journal =
                Journal::open_with(Path::new(args[0]), FsyncPolicy::OnSync, Redactor::default())
                    .unwrap();
            let n: usize = args[1].parse().unwrap();
            for i in 0..n {
                journal
                    .append(EventPayload::UserMessage(UserMessage {
                        content: format!("message {i}"),
                    }))
                    .unwrap();
            }
            println!("appended");
            std::io::stdout().flush().unwrap();
            let mut sink = Vec::new();
            let _ = std::io::stdin().read_to_end(&mut sink);
        }
        // Hold the lock until stdin closes.
        "hold-lock" => {
            let _lock = RunLock::try_acquire(Path::new(args[0])).unwrap();
            println!("locked");
            std::io::stdout().flush().unwrap();
            let mut sink = Vec::new();
            let _ = std::io::stdin().read_to_end(&mut sink);
        }
        other => panic!("unknown child role {other}"),
    }
}
