//! Stdio servers an engine left running when it was killed (kill -9 leaves no chance to
//! stop them): each start records the server's identity in `io/mcp/<name>/process.json`,
//! and the next start of the same run (`delta continue`) kills the process group of every
//! recorded server that is still the same process.

use std::path::Path;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};

use crate::run::{Liveness, ProcessIdentity, process_alive};

const RECORD: &str = "process.json";

/// What `process.json` holds: enough to tell the server from a process that reused its pid.
#[derive(Debug, Serialize, Deserialize)]
struct Recorded {
    pid: u32,
    hostname: String,
    process_name: String,
    start_ticks: Option<u64>,
}

/// Records the server `pid` (its process group's leader) in `dir`. Best effort: a server
/// that cannot be recorded still runs, and is stopped as usual unless the engine is killed.
pub(super) fn record(dir: &Path, pid: u32) {
    let Some(identity) = ProcessIdentity::of(pid) else {
        return;
    };
    let recorded = Recorded {
        pid,
        hostname: identity.hostname,
        process_name: identity.process_name,
        start_ticks: identity.start_ticks,
    };
    if let Ok(text) = serde_json::to_string_pretty(&recorded) {
        let _ = std::fs::write(dir.join(RECORD), text + "\n");
    }
}

/// Kills the process group of every server recorded under `io_dir` (`io/mcp/`) that still
/// runs; returns a line per group killed. The caller holds the run's lock, so no live
/// engine owns them.
pub(super) fn sweep(io_dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(io_dir) else {
        return Vec::new();
    };
    let mut killed = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path().join(RECORD);
        let Some(recorded) = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| serde_json::from_str::<Recorded>(&text).ok())
        else {
            continue;
        };
        let identity = ProcessIdentity {
            pid: recorded.pid,
            hostname: recorded.hostname,
            process_name: recorded.process_name,
            start_ticks: recorded.start_ticks,
        };
        let alive = identity.is_on_this_host() && process_alive(&identity) == Liveness::Alive;
        let pid = i32::try_from(recorded.pid).ok().filter(|pid| *pid > 1);
        if let (true, Some(pid)) = (alive, pid)
            && killpg(Pid::from_raw(pid), Signal::SIGKILL).is_ok()
        {
            killed.push(format!(
                "MCP server '{}' (process group {pid}) was left running by an engine that \
                 did not stop it; killed",
                entry.file_name().to_string_lossy()
            ));
        }
        let _ = std::fs::remove_file(&path);
    }
    killed
}

/// Removes the record in `dir` of a server that was stopped.
pub(super) fn forget(dir: &Path) {
    let _ = std::fs::remove_file(dir.join(RECORD));
}
