//! How one process of a run is started in the run's environment: plain data (the helper's
//! socket, the container's name, the environment variables a confined tool gets), so that
//! the process runner and the MCP client can wrap a command without owning the running
//! environment, and so that `delta tool expand` can show the wrapped command; and finding
//! a container call's processes on the host by their marker ([`kill_marked`]).

use std::path::{Path, PathBuf};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

/// The variable that marks every process of one container call, so that the call can be
/// found on the host and killed there: killing the `podman exec` client leaves the command
/// running in the container.
pub const CALL_MARKER: &str = "DELTA_ENV_CALL";

/// Where the processes of a run start.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Placement {
    /// On the host, as the engine itself runs.
    #[default]
    Host,
    /// Through the run's keeper (landlock, bwrap): `delta-sandbox call`.
    Keeper(KeeperPlacement),
    /// In the run's container: `podman exec` (or `docker exec`).
    Container(ContainerPlacement),
}

/// A keeper's address and what every call through it gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeeperPlacement {
    /// The `delta-sandbox` executable (on the host).
    pub helper: PathBuf,
    /// The keeper's socket as the host reaches it.
    pub socket: PathBuf,
    /// The whole environment of a call, before the caller's own variables.
    pub env: Vec<(String, String)>,
    /// Where the workspace appears inside.
    pub paths: PathMap,
}

/// A container's name and what every call in it gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerPlacement {
    /// The runtime command (`podman` or `docker`, as found on PATH).
    pub runtime: PathBuf,
    /// The container.
    pub name: String,
    /// Variables passed into the container with their values (never on the command line).
    pub env: Vec<(String, String)>,
    /// Where the workspace appears inside.
    pub paths: PathMap,
}

/// The workspace on the host and where it appears inside: paths under it are rewritten so
/// that `${CWD}` in a tool's command still names the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathMap {
    /// The workspace on the host.
    pub host: PathBuf,
    /// Where it appears inside (the same path unless `workdir` moves it).
    pub inside: PathBuf,
}

impl PathMap {
    /// The identity map of `workspace`.
    #[must_use]
    pub fn same(workspace: &Path) -> Self {
        Self {
            host: workspace.to_path_buf(),
            inside: workspace.to_path_buf(),
        }
    }

    /// `path` as seen inside: under the workspace, moved with it; anything else as it is.
    #[must_use]
    pub fn inside(&self, path: &Path) -> PathBuf {
        match path.strip_prefix(&self.host) {
            Ok(rest) if self.host != self.inside && rest.as_os_str().is_empty() => {
                self.inside.clone()
            }
            Ok(rest) if self.host != self.inside => self.inside.join(rest),
            Ok(_) | Err(_) => path.to_path_buf(),
        }
    }

    /// A command-line word as seen inside: a word that is the workspace or starts with
    /// `workspace/` is moved; any other word is left as written.
    #[must_use]
    pub fn word(&self, word: &str) -> String {
        if self.host == self.inside {
            return word.to_owned();
        }
        let host = self.host.to_string_lossy();
        match word.strip_prefix(host.as_ref()) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => {
                format!("{}{rest}", self.inside.display())
            }
            Some(_) | None => word.to_owned(),
        }
    }
}

/// A command ready to be spawned on the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacedCommand {
    /// Program and arguments.
    pub argv: Vec<String>,
    /// The working directory of the process started on the host.
    pub cwd: PathBuf,
    /// Its environment.
    pub env: PlacedEnv,
    /// `DELTA_ENV_CALL=<id>`, carried by the call's processes in a container.
    pub marker: Option<String>,
}

/// The environment of a placed command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlacedEnv {
    /// The engine's own, plus these.
    Inherit(Vec<(String, String)>),
    /// Exactly these.
    Exactly(Vec<(String, String)>),
}

impl Placement {
    /// `argv` to run in `cwd` (a host path) with `env` on top of what the placement gives.
    #[must_use]
    pub fn place(&self, argv: &[String], cwd: &Path, env: &[(String, String)]) -> PlacedCommand {
        match self {
            Placement::Host => PlacedCommand {
                argv: argv.to_vec(),
                cwd: cwd.to_path_buf(),
                env: PlacedEnv::Inherit(env.to_vec()),
                marker: None,
            },
            Placement::Keeper(keeper) => {
                let paths = &keeper.paths;
                let mut wrapped = vec![
                    keeper.helper.display().to_string(),
                    "call".to_owned(),
                    "--socket".to_owned(),
                    keeper.socket.display().to_string(),
                    "--cwd".to_owned(),
                    paths.inside(cwd).display().to_string(),
                    "--".to_owned(),
                ];
                wrapped.extend(argv.iter().map(|word| paths.word(word)));
                PlacedCommand {
                    argv: wrapped,
                    cwd: cwd.to_path_buf(),
                    env: PlacedEnv::Exactly(merge(&keeper.env, env, paths)),
                    marker: None,
                }
            }
            Placement::Container(container) => {
                let paths = &container.paths;
                let call = format!("{CALL_MARKER}={}", uuid::Uuid::new_v4().simple());
                let passed = merge(&container.env, env, paths);
                let mut wrapped = vec![
                    container.runtime.display().to_string(),
                    "exec".to_owned(),
                    "-i".to_owned(),
                    "--workdir".to_owned(),
                    paths.inside(cwd).display().to_string(),
                    "-e".to_owned(),
                    CALL_MARKER.to_owned(),
                ];
                for (name, _) in &passed {
                    wrapped.extend(["-e".to_owned(), name.clone()]);
                }
                wrapped.push(container.name.clone());
                wrapped.extend(argv.iter().map(|word| paths.word(word)));
                let mut values = passed;
                if let Some((name, value)) = call.split_once('=') {
                    values.push((name.to_owned(), value.to_owned()));
                }
                PlacedCommand {
                    argv: wrapped,
                    // The client runs on the host: the workspace is its natural place.
                    cwd: paths.host.clone(),
                    env: PlacedEnv::Inherit(values),
                    marker: Some(call),
                }
            }
        }
    }
}

/// `base` with `extra` on top (a later name replaces an earlier one), values under the
/// workspace moved as paths are.
fn merge(
    base: &[(String, String)],
    extra: &[(String, String)],
    paths: &PathMap,
) -> Vec<(String, String)> {
    let mut merged: Vec<(String, String)> = base.to_vec();
    for (name, value) in extra {
        let value = paths.word(value);
        match merged.iter_mut().find(|(known, _)| known == name) {
            Some(slot) => slot.1 = value,
            None => merged.push((name.clone(), value)),
        }
    }
    merged
}

/// Kills the processes whose environment holds `marker` (`NAME=VALUE`), their process
/// groups first: the command of a container call, seen from the host.
pub fn kill_marked(marker: &str) {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return;
    };
    let wanted = marker.as_bytes();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ.split(|byte| *byte == 0).any(|pair| pair == wanted) {
            let pid = Pid::from_raw(pid);
            let _ = killpg(pid, Signal::SIGKILL);
            let _ = kill(pid, Signal::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moved() -> PathMap {
        PathMap {
            host: PathBuf::from("/srv/ws"),
            inside: PathBuf::from("/app"),
        }
    }

    #[test]
    fn words_under_the_workspace_move_with_it_and_others_stay() {
        let map = moved();
        assert_eq!(map.word("/srv/ws"), "/app");
        assert_eq!(map.word("/srv/ws/src/a.py"), "/app/src/a.py");
        assert_eq!(map.word("/srv/wsx"), "/srv/wsx");
        assert_eq!(map.word("--file=/srv/ws/a"), "--file=/srv/ws/a");
        assert_eq!(
            map.inside(Path::new("/srv/ws/sub")),
            PathBuf::from("/app/sub")
        );
        assert_eq!(map.inside(Path::new("/etc")), PathBuf::from("/etc"));
        let same = PathMap::same(Path::new("/srv/ws"));
        assert_eq!(same.word("/srv/ws/a"), "/srv/ws/a");
    }

    #[test]
    fn a_keeper_call_passes_exactly_the_placement_environment_and_the_callers() {
        let placement = Placement::Keeper(KeeperPlacement {
            helper: PathBuf::from("/bin/delta-sandbox"),
            socket: PathBuf::from("/tmp/k/keeper.sock"),
            env: vec![("PATH".into(), "/usr/bin".into())],
            paths: moved(),
        });
        let placed = placement.place(
            &["cat".into(), "/srv/ws/a".into()],
            Path::new("/srv/ws"),
            &[("DELTA_CWD".into(), "/srv/ws".into())],
        );
        assert_eq!(
            placed.argv,
            [
                "/bin/delta-sandbox",
                "call",
                "--socket",
                "/tmp/k/keeper.sock",
                "--cwd",
                "/app",
                "--",
                "cat",
                "/app/a"
            ]
        );
        assert_eq!(
            placed.env,
            PlacedEnv::Exactly(vec![
                ("PATH".into(), "/usr/bin".into()),
                ("DELTA_CWD".into(), "/app".into())
            ])
        );
    }

    #[test]
    fn a_container_call_names_its_variables_and_carries_a_marker() {
        let placement = Placement::Container(ContainerPlacement {
            runtime: PathBuf::from("/usr/bin/podman"),
            name: "delta-r1".into(),
            env: vec![("DELTA_RUN_ID".into(), "r1".into())],
            paths: PathMap::same(Path::new("/srv/ws")),
        });
        let placed = placement.place(&["true".into()], Path::new("/srv/ws/sub"), &[]);
        assert_eq!(
            placed.argv[..9],
            [
                "/usr/bin/podman",
                "exec",
                "-i",
                "--workdir",
                "/srv/ws/sub",
                "-e",
                CALL_MARKER,
                "-e",
                "DELTA_RUN_ID"
            ]
        );
        assert_eq!(placed.argv[9..], ["delta-r1", "true"]);
        let marker = placed.marker.clone().unwrap();
        let PlacedEnv::Inherit(values) = placed.env else {
            panic!("a container client inherits the engine's environment");
        };
        assert!(values.contains(&("DELTA_RUN_ID".into(), "r1".into())));
        assert_eq!(
            marker,
            format!(
                "{CALL_MARKER}={}",
                values.iter().find(|(n, _)| n == CALL_MARKER).unwrap().1
            )
        );
    }
}
