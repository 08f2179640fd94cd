//! The processes a scenario left behind: those working in its directory or naming a path in
//! it on their command line (Linux `/proc`). A session's processes leave the step's process
//! group on purpose, so the group kill that ends every step does not reach them.

use std::path::Path;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// A process found in a scenario's directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leftover {
    /// Its process id.
    pub pid: i32,
    /// Its command line, arguments joined by spaces.
    pub command: String,
}

/// The running processes other than this one (zombies have stopped running) whose working
/// directory is `dir` or below it, or one of whose arguments contains `dir`'s path.
pub fn inside(dir: &Path) -> Vec<Leftover> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let me = std::process::id();
    let dir_text = dir.to_string_lossy();
    let mut found: Vec<Leftover> = entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| u32::try_from(*pid).ok() != Some(me))
        .filter_map(|pid| {
            let proc_dir = Path::new("/proc").join(pid.to_string());
            let stat = std::fs::read_to_string(proc_dir.join("stat")).ok()?;
            // The state follows the command name, which may itself hold ") ".
            let state = stat.get(stat.rfind(')')? + 2..)?.chars().next()?;
            if state == 'Z' {
                return None;
            }
            let args: Vec<String> = std::fs::read(proc_dir.join("cmdline"))
                .unwrap_or_default()
                .split(|byte| *byte == 0)
                .filter(|arg| !arg.is_empty())
                .map(|arg| String::from_utf8_lossy(arg).into_owned())
                .collect();
            let works_here =
                std::fs::read_link(proc_dir.join("cwd")).is_ok_and(|cwd| cwd.starts_with(dir));
            let names_here = args.iter().any(|arg| arg.contains(dir_text.as_ref()));
            (works_here || names_here).then(|| Leftover {
                pid,
                command: args.join(" "),
            })
        })
        .collect();
    found.sort_by_key(|leftover| leftover.pid);
    found
}

/// Sends SIGKILL to each process; one that is already gone is no error.
pub fn kill_all(leftovers: &[Leftover]) {
    for leftover in leftovers {
        let _ignored = kill(Pid::from_raw(leftover.pid), Signal::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_working_in_the_directory_is_found_and_killed() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().canonicalize().unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("60")
            .current_dir(&dir)
            .spawn()
            .unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        let found = inside(&dir);
        assert_eq!(
            found,
            [Leftover {
                pid,
                command: "sleep 60".to_string()
            }]
        );
        kill_all(&found);
        assert!(child.wait().unwrap().code().is_none(), "killed by a signal");
        assert_eq!(inside(&dir), []);
    }

    #[test]
    fn a_process_naming_the_directory_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().canonicalize().unwrap();
        let file = dir.join("log");
        std::fs::write(&file, "").unwrap();
        let mut child = std::process::Command::new("tail")
            .arg("-f")
            .arg(&file)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let found = inside(&dir);
        kill_all(&found);
        child.wait().unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].pid, i32::try_from(child.id()).unwrap());
    }
}
