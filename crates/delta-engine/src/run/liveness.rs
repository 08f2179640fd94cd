//! Who owns a run: the identity of a process (pid, host, name, start time) and whether
//! that exact process is still alive (the Janitor's check, seed 002 §3.5). `/proc` is read
//! by [`delta_procfs`].

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;

/// Identifies one process across pid reuse: the same pid with a different start time is a
/// different process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessIdentity {
    /// Process id.
    pub pid: u32,
    /// Host name the process runs on.
    pub hostname: String,
    /// Process name (`/proc/PID/comm`), e.g. `delta`.
    pub process_name: String,
    /// Start time in clock ticks since boot (`/proc/PID/stat` field 22); `None` where the
    /// system does not expose it.
    pub start_ticks: Option<u64>,
}

/// Whether the process a run recorded still exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    /// The same process (same pid and start time, or same name where no start time is
    /// known) is running.
    Alive,
    /// No process has that pid (or it is a zombie that already exited).
    Dead,
    /// A process has the pid, but it started at another time (or has another name): the
    /// recorded process is gone and the pid was reused.
    PidReused,
}

impl ProcessIdentity {
    /// The identity of the calling process.
    #[must_use]
    pub fn current() -> Self {
        let pid = std::process::id();
        let stat = delta_procfs::read_self();
        let process_name = stat
            .as_ref()
            .map(|stat| stat.comm.clone())
            .or_else(current_exe_name)
            .unwrap_or_default();
        Self {
            pid,
            hostname: this_hostname(),
            process_name,
            start_ticks: stat.map(|stat| stat.start_ticks),
        }
    }

    /// The identity of the live process `pid` on this host, from `/proc/PID/stat`.
    #[must_use]
    pub fn of(pid: u32) -> Option<Self> {
        let stat = delta_procfs::read(i32::try_from(pid).ok()?)?;
        Some(Self {
            pid,
            hostname: this_hostname(),
            process_name: stat.comm,
            start_ticks: Some(stat.start_ticks),
        })
    }

    /// Whether the process ran on the same host as the caller. Only then can
    /// [`process_alive`] say anything about it.
    #[must_use]
    pub fn is_on_this_host(&self) -> bool {
        nix::unistd::gethostname()
            .map(|name| name.to_string_lossy() == self.hostname.as_str())
            .unwrap_or(false)
    }
}

/// Whether the process `identity` describes is still alive **on this host**; check
/// [`ProcessIdentity::is_on_this_host`] first, since another host's pid says nothing here.
///
/// `kill(pid, 0)` answers whether *some* process has the pid; the start time from
/// `/proc/PID/stat` (or, without one, the process name) tells whether it is the same
/// process. A zombie counts as dead: it has exited and only waits to be reaped.
#[must_use]
pub fn process_alive(identity: &ProcessIdentity) -> Liveness {
    // pid 0 and pids beyond i32 would make kill(2) signal a process group or fail oddly.
    let Some(pid) = i32::try_from(identity.pid).ok().filter(|pid| *pid > 0) else {
        return Liveness::Dead;
    };
    if let Err(errno) = kill(Pid::from_raw(pid), None) {
        // EPERM: the process exists but belongs to another user.
        if errno != Errno::EPERM {
            return Liveness::Dead;
        }
    }
    let Some(stat) = delta_procfs::read(pid) else {
        // No /proc (not Linux) or the process vanished since kill(2): without more
        // evidence, trust kill(2)'s answer.
        return Liveness::Alive;
    };
    if stat.has_exited() {
        return Liveness::Dead;
    }
    let same = match identity.start_ticks {
        Some(ticks) => stat.start_ticks == ticks,
        None => stat.comm == identity.process_name,
    };
    if same {
        Liveness::Alive
    } else {
        Liveness::PidReused
    }
}

/// This host's name, empty when the system will not say.
fn this_hostname() -> String {
    nix::unistd::gethostname()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn current_exe_name() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    Some(exe.file_name()?.to_string_lossy().into_owned())
}
