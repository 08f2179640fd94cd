//! Process bookkeeping through Linux `/proc` (read by [`delta_procfs`]): liveness by pid
//! and start time, the process tree under an interpreter, the members of a session, and
//! signalling them.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

pub use delta_procfs::{ProcKey, ProcStat, read};

/// The start time of a live process, for recording alongside its pid.
pub fn start_time(pid: i32) -> Option<u64> {
    read(pid).map(|info| info.start_ticks)
}

/// Whether the process `key` still runs (a zombie has finished running).
pub fn is_running(key: ProcKey) -> bool {
    read(key.0).is_some_and(|info| info.start_ticks == key.1 && !info.has_exited())
}

/// All live descendants of `root`, except the subtrees rooted at a process in `spared`.
///
/// Sparing whole subtrees is what keeps a background job started by an earlier command (and
/// everything it starts later) out of the clean-up of a command that timed out.
pub fn descendants(root: i32, spared: &HashSet<ProcKey>) -> Vec<ProcStat> {
    let mut children: HashMap<i32, Vec<ProcStat>> = HashMap::new();
    for info in delta_procfs::all() {
        children.entry(info.ppid).or_default().push(info);
    }
    let mut found = Vec::new();
    let mut stack = vec![root];
    while let Some(parent) = stack.pop() {
        for child in children.get(&parent).into_iter().flatten() {
            if spared.contains(&child.key()) {
                continue;
            }
            stack.push(child.pid);
            if !child.has_exited() {
                found.push(child.clone());
            }
        }
    }
    found
}

/// Live processes whose session id is `sid`, other than the caller itself.
pub fn session_members(sid: i32) -> Vec<ProcStat> {
    let me = i32::try_from(std::process::id()).unwrap_or(-1);
    delta_procfs::all()
        .into_iter()
        .filter(|info| info.session == sid && !info.has_exited() && info.pid != me)
        .collect()
}

/// Sends `signal` to `key` if that very process still runs; a vanished process is not an error.
pub fn signal(key: ProcKey, signal: Signal) {
    if is_running(key) {
        // ESRCH (it exited in between) and EPERM (not ours) both mean there is nothing to do.
        let _ignored = kill(Pid::from_raw(key.0), signal);
    }
}

/// Polls until none of `keys` runs any more; false if some still run after `limit`.
pub fn wait_gone(keys: &[ProcKey], limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if !keys.iter().any(|key| is_running(*key)) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Stops processes for good: SIGTERM, up to `grace` to exit, then SIGKILL for the rest.
pub fn terminate(keys: &[ProcKey], grace: Duration) {
    for key in keys {
        signal(*key, Signal::SIGTERM);
    }
    if !wait_gone(keys, grace) {
        for key in keys {
            signal(*key, Signal::SIGKILL);
        }
        wait_gone(keys, Duration::from_secs(2));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_running_and_found() {
        let me = i32::try_from(std::process::id()).unwrap();
        let key = (me, start_time(me).unwrap());
        assert!(is_running(key));
        assert!(!is_running((me, key.1 + 1)));
    }
}
