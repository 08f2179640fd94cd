//! The bwrap kind: the run's keeper runs in one bubblewrap sandbox for the whole run. The
//! host's root appears read-only, built entry by entry (so that any `workdir`, such as
//! `/app`, can be created), without the home directories; `/tmp` and `/run` are private;
//! the workspace is bound read-write at `workdir` with its `.delta/` read-only; the run gets
//! its own PID, IPC, UTS and (unless `network: true`) network namespaces; every capability
//! is dropped (as root, bwrap otherwise keeps them, and the sandbox can be remounted
//! writable); `--die-with-parent` ends it with the engine.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::error::EnvironmentError;
use crate::workspace::WORKSPACES_DIR;

/// Top-level entries of the host's root that are not bound as they are: homes hidden,
/// private or virtual trees made fresh.
const NOT_BOUND: &[&str] = &["home", "root", "tmp", "run", "proc", "dev"];

/// Where the keeper's socket directory and the helper appear inside.
pub const RUNTIME_INSIDE: &str = "/run/delta";

/// The empty file in the runtime directory that `.env` files are replaced with.
pub const EMPTY_FILE: &str = "empty";

/// What a run's sandbox is made of.
#[derive(Debug)]
pub struct Sandbox<'a> {
    /// The workspace on the host.
    pub workspace: &'a Path,
    /// Where it appears inside.
    pub workdir: &'a Path,
    /// The agent directory (read-only inside, at its own path).
    pub agent_home: &'a Path,
    /// The directory of the delta executables (read-only inside, at its own path).
    pub tools_dir: Option<&'a Path>,
    /// The run's runtime directory on the host (the keeper's socket), at [`RUNTIME_INSIDE`].
    pub runtime_dir: &'a Path,
    /// `$HOME`, hidden too when it is elsewhere.
    pub home: Option<&'a Path>,
    /// `allow_read`.
    pub allow_read: &'a [PathBuf],
    /// `allow_write`.
    pub allow_write: &'a [PathBuf],
    /// `.env` files to show empty (the API key's possible homes); the runtime directory
    /// holds the empty file ([`EMPTY_FILE`]) they are replaced with.
    pub env_files: &'a [PathBuf],
    /// Keep the host's network.
    pub network: bool,
}

impl Sandbox<'_> {
    /// bwrap's arguments, up to and including `--`, in the order bwrap applies them.
    #[must_use]
    pub fn args(&self) -> Vec<String> {
        let mut args: Vec<String> = [
            "--die-with-parent",
            "--new-session",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--cap-drop",
            "ALL",
        ]
        .map(str::to_owned)
        .to_vec();
        if !self.network {
            args.push("--unshare-net".to_owned());
        }
        let mut push = |words: &[&str]| args.extend(words.iter().map(|w| (*w).to_owned()));
        for (name, link) in root_entries() {
            let path = format!("/{name}");
            match link {
                Some(target) => push(&["--symlink", &target, &path]),
                None => push(&["--ro-bind", &path, &path]),
            }
        }
        for hidden in ["/home", "/root", "/tmp", "/run"] {
            push(&["--tmpfs", hidden]);
        }
        let hidden = |path: &Path| {
            ["/home", "/root", "/tmp", "/run"]
                .iter()
                .any(|top| path.starts_with(top))
        };
        if let Some(home) = self.home.filter(|home| home.is_absolute() && !hidden(home)) {
            push(&["--tmpfs", &text(home)]);
        }
        push(&[
            "--proc",
            "/proc",
            "--ro-bind",
            "/proc/sys",
            "/proc/sys",
            "--ro-bind-try",
            "/proc/sysrq-trigger",
            "/proc/sysrq-trigger",
            "--dev",
            "/dev",
        ]);
        for path in self
            .allow_read
            .iter()
            .map(PathBuf::as_path)
            .chain(self.tools_dir)
        {
            push(&["--ro-bind-try", &text(path), &text(path)]);
        }
        push(&["--ro-bind", &text(self.agent_home), &text(self.agent_home)]);
        // The agent's numbered workspaces are other runs' work.
        let workspaces = self.agent_home.join(WORKSPACES_DIR);
        if workspaces.is_dir() {
            push(&["--tmpfs", &text(&workspaces)]);
        }
        for path in self.allow_write {
            push(&["--bind-try", &text(path), &text(path)]);
        }
        push(&["--bind", &text(self.runtime_dir), RUNTIME_INSIDE]);
        push(&[
            "--bind",
            &text(self.workspace),
            &text(self.workdir),
            "--ro-bind-try",
            &text(&self.workspace.join(".delta")),
            &text(&self.workdir.join(".delta")),
        ]);
        // Shown as an empty file (a device bound there could not be opened).
        let empty = self.runtime_dir.join(EMPTY_FILE);
        for file in self.env_files.iter().filter(|file| file.exists()) {
            let inside = match file.strip_prefix(self.workspace) {
                Ok(rest) => self.workdir.join(rest),
                Err(_) => file.clone(),
            };
            push(&["--ro-bind", &text(&empty), &text(&inside)]);
        }
        push(&["--remount-ro", "/", "--chdir", &text(self.workdir), "--"]);
        args
    }
}

fn text(path: &Path) -> String {
    path.display().to_string()
}

/// The host's top-level entries bound as they are: a symlink as its target, anything else
/// by name.
fn root_entries() -> Vec<(String, Option<String>)> {
    let Ok(entries) = std::fs::read_dir("/") else {
        return Vec::new();
    };
    let mut found: Vec<(String, Option<String>)> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_str()?.to_owned();
            if NOT_BOUND.contains(&name.as_str()) {
                return None;
            }
            let link = std::fs::read_link(entry.path())
                .ok()
                .map(|target| target.display().to_string());
            Some((name, link))
        })
        .collect();
    found.sort();
    found
}

/// `bwrap --version`, when bwrap is on PATH.
#[must_use]
pub fn version(bwrap: &Path) -> Option<String> {
    let output = Command::new(bwrap).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.split_whitespace().last().map(str::to_owned)
}

/// Tries a sandbox of the kind's namespaces, as `delta env probe` does.
///
/// # Errors
/// bwrap's own words, classified.
pub fn trial(bwrap: &Path) -> Result<(), EnvironmentError> {
    let output = Command::new(bwrap)
        .args([
            "--ro-bind",
            "/",
            "/",
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-net",
            "--cap-drop",
            "ALL",
            "--die-with-parent",
            "--",
            "true",
        ])
        .output()
        .map_err(|error| EnvironmentError::Bwrap {
            message: format!("cannot run {}: {error}", bwrap.display()),
            namespaces: false,
        })?;
    if output.status.success() {
        return Ok(());
    }
    Err(failure(&String::from_utf8_lossy(&output.stderr)))
}

/// bwrap's message, with whether it could not create namespaces.
#[must_use]
pub fn failure(message: &str) -> EnvironmentError {
    let message = message.trim().to_owned();
    let namespaces = ["namespace", "uid map"]
        .iter()
        .any(|clue| message.contains(clue));
    EnvironmentError::Bwrap {
        message,
        namespaces,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn position(args: &[String], words: &[&str]) -> usize {
        args.windows(words.len())
            .position(|window| window.iter().zip(words).all(|(a, b)| a == b))
            .unwrap_or_else(|| panic!("{words:?} not in {args:?}"))
    }

    #[test]
    fn mounts_come_in_the_order_that_keeps_each_visible() {
        let sandbox = Sandbox {
            workspace: Path::new("/srv/ws"),
            workdir: Path::new("/app"),
            agent_home: Path::new("/srv/agent"),
            tools_dir: Some(Path::new("/root/.cargo/bin")),
            runtime_dir: Path::new("/tmp/delta-env-1"),
            home: Some(Path::new("/srv/home")),
            allow_read: &[PathBuf::from("/srv/data")],
            allow_write: &[],
            env_files: &[],
            network: false,
        };
        let args = sandbox.args();
        assert!(args.contains(&"--unshare-net".to_owned()));
        assert_eq!(args.last().map(String::as_str), Some("--"));
        // The root first, then the private trees over it, then what is bound into them.
        let usr = position(&args, &["--ro-bind", "/usr", "/usr"]);
        let root = position(&args, &["--tmpfs", "/root"]);
        let home = position(&args, &["--tmpfs", "/srv/home"]);
        let tools = position(&args, &["--ro-bind-try", "/root/.cargo/bin"]);
        let ws = position(&args, &["--bind", "/srv/ws", "/app"]);
        let delta = position(&args, &["--ro-bind-try", "/srv/ws/.delta", "/app/.delta"]);
        let ro = position(&args, &["--remount-ro", "/"]);
        assert!(usr < root && root < home && home < tools && tools < ws && ws < delta);
        assert!(delta < ro);
        position(&args, &["--cap-drop", "ALL"]);
        position(&args, &["--ro-bind", "/proc/sys", "/proc/sys"]);
        position(&args, &["--bind", "/tmp/delta-env-1", RUNTIME_INSIDE]);
        for hidden in NOT_BOUND {
            let path = format!("/{hidden}");
            assert!(
                !args
                    .windows(2)
                    .any(|pair| pair[0] == "--ro-bind" && pair[1] == path),
                "{path} is bound from the host"
            );
        }
    }

    #[test]
    fn namespaces_failures_are_told_apart() {
        assert!(matches!(
            failure("bwrap: Creating new namespace failed: Operation not permitted"),
            EnvironmentError::Bwrap {
                namespaces: true,
                ..
            }
        ));
        assert!(matches!(
            failure("bwrap: Can't find source path /x: No such file or directory"),
            EnvironmentError::Bwrap {
                namespaces: false,
                ..
            }
        ));
    }
}
