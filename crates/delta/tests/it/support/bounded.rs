//! Running `delta` where a regression could hang it or eat the machine (issue 31's hostile
//! inputs): a hang guard that kills the process and fails the test instead of blocking the
//! suite, and an address-space limit that turns "read it all into memory" into an abort.
//! The guard bounds the test; it is not a timing assertion.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// How a bounded process ended: its exit code (`None`: killed by a signal) and stderr.
pub struct Ended {
    pub code: Option<i32>,
    pub stderr: String,
}

/// `command` run under `ulimit -v` of `mib` MiB (through `sh`, which every test machine
/// has; no unsafe `pre_exec`): an allocation past it fails, and Rust aborts.
pub fn under_memory_limit(command: &Command, mib: u64) -> Command {
    let mut wrapped = Command::new("sh");
    wrapped
        .arg("-c")
        .arg(format!("ulimit -v {} && exec \"$0\" \"$@\"", mib * 1024))
        .arg(command.get_program())
        .args(command.get_args());
    if let Some(dir) = command.get_current_dir() {
        wrapped.current_dir(dir);
    }
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => wrapped.env(key, value),
            None => wrapped.env_remove(key),
        };
    }
    wrapped
}

/// Starts `command` in a process group of its own (so that the guard can kill what it
/// started too: a shell's children), stdin closed, stdout discarded and stderr piped.
pub fn start(mut command: Command) -> Child {
    use std::os::unix::process::CommandExt as _;
    command
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the process")
}

/// Waits for `child` (started by [`start`]) at most `guard`; past it its process group is
/// killed and the test fails, naming `what` it was doing. Its stderr is drained meanwhile, so a talkative child
/// never blocks on a full pipe.
#[track_caller]
pub fn finish_within(mut child: Child, guard: Duration, what: &str) -> Ended {
    let pipe = child.stderr.take();
    let stderr = thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the process") {
            break status;
        }
        if started.elapsed() > guard {
            if let Ok(pid) = i32::try_from(child.id()) {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            let _ = child.wait();
            panic!(
                "still running after {guard:?} ({what}); killed\n--- stderr ---\n{}",
                stderr.join().unwrap_or_default()
            );
        }
        thread::sleep(Duration::from_millis(20));
    };
    Ended {
        code: status.code(),
        stderr: stderr.join().unwrap_or_default(),
    }
}
