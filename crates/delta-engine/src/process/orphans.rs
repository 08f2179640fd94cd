//! Process groups an engine left running when it was killed (kill -9 leaves it no chance
//! to stop them): a tool in flight, an MCP stdio server. Each start records the group
//! leader's identity in a `process.json` beside its other records, a normal stop removes
//! it, and whoever takes the run over next (the Janitor, the next start of the MCP
//! servers) ends every group still recorded.

use std::path::Path;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};

use crate::run::{Liveness, ProcessIdentity, process_alive};

/// The record's file name, in the directory of the tool's or server's other records.
pub const RECORD: &str = "process.json";

/// Where the record is written before it is renamed to [`RECORD`].
const PARTIAL: &str = ".process.json.partial";

/// What `process.json` holds: enough to tell the group's leader from a process that
/// reused its pid, and a container call's marker.
#[derive(Debug, Serialize, Deserialize)]
struct Recorded {
    pid: u32,
    hostname: String,
    process_name: String,
    start_ticks: Option<u64>,
    /// The marker variable (`NAME=VALUE`) of a command run in a container: the group on
    /// the host is only its `exec` client, and killing that leaves the command running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    marker: Option<String>,
}

/// Records the group whose leader is `pid` in `dir`, with the `marker` of a container
/// call. Best effort: a group that cannot be recorded still runs, and is stopped as usual
/// unless the engine is killed.
///
/// The record appears whole or not at all (written beside, then renamed): an engine
/// killed between creating the file and writing it left an empty record, which the
/// Janitor cannot read, so the group it names ran on. No fsync: a record only matters
/// while its processes can, and none outlive the machine.
pub fn record(dir: &Path, pid: u32, marker: Option<&str>) {
    let Some(identity) = ProcessIdentity::of(pid) else {
        return;
    };
    let recorded = Recorded {
        pid,
        hostname: identity.hostname,
        process_name: identity.process_name,
        start_ticks: identity.start_ticks,
        marker: marker.map(str::to_owned),
    };
    let Ok(text) = serde_json::to_string_pretty(&recorded) else {
        return;
    };
    let partial = dir.join(PARTIAL);
    if std::fs::write(&partial, text + "\n").is_err()
        || std::fs::rename(&partial, dir.join(RECORD)).is_err()
    {
        let _ = std::fs::remove_file(&partial);
    }
}

/// Removes the record in `dir` of a group that was stopped.
pub fn forget(dir: &Path) {
    let _ = std::fs::remove_file(dir.join(RECORD));
}

/// Ends the group recorded in `dir`, if it still runs, and removes the record; returns
/// the group id when it killed one. The caller holds the run's lock, so no live engine
/// owns the group.
///
/// The group still runs when its leader is the recorded process, or when the leader is
/// gone but members are left (a command's background children): Linux never reuses a pid
/// while a group has it as its id, so those members are the tool's. A pid that now
/// belongs to another process means the whole group is long gone.
pub fn end(dir: &Path) -> Option<i32> {
    let path = dir.join(RECORD);
    let recorded = std::fs::read_to_string(&path)
        .ok()
        .and_then(|text| serde_json::from_str::<Recorded>(&text).ok());
    let _ = std::fs::remove_file(&path);
    let recorded = recorded?;
    let identity = ProcessIdentity {
        pid: recorded.pid,
        hostname: recorded.hostname,
        process_name: recorded.process_name,
        start_ticks: recorded.start_ticks,
    };
    let pgid = Pid::from_raw(i32::try_from(recorded.pid).ok().filter(|pid| *pid > 1)?);
    if !identity.is_on_this_host() {
        return None;
    }
    let running = match process_alive(&identity) {
        Liveness::Alive => true,
        Liveness::Dead => killpg(pgid, None).is_ok(),
        Liveness::PidReused => false,
    };
    let killed = running && killpg(pgid, Signal::SIGKILL).is_ok();
    // The command inside the container outlives its client; only its marker finds it.
    if let Some(marker) = &recorded.marker {
        crate::environment::placement::kill_marked(marker);
    }
    killed.then_some(pgid.as_raw())
}

/// Ends every group recorded in a subdirectory of `dir` (`io/mcp/`); returns a line per
/// group killed, naming the subdirectory.
pub fn sweep(dir: &Path, what: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pgid = end(&entry.path())?;
            Some(format!(
                "{what} '{}' (process group {pgid}) was left running by an engine that did \
                 not stop it; killed",
                entry.file_name().to_string_lossy()
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use std::process::Command;

    use super::*;

    #[test]
    fn a_recorded_group_is_ended_by_whoever_takes_over_and_its_record_goes() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        record(dir.path(), child.id(), None);
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, [RECORD], "only the whole record is left");

        let pgid = end(dir.path());
        assert_eq!(pgid, i32::try_from(child.id()).ok());
        assert_eq!(child.wait().unwrap().signal(), Some(Signal::SIGKILL as i32));
        assert!(!dir.path().join(RECORD).exists());
        assert_eq!(end(dir.path()), None, "a group is ended once");
    }
}
