//! What the environment tests share: the real components they need (checked loudly, never
//! skipped), an agent with one `sh` tool, a scripted model that calls it with each script
//! in turn, and the run's journal read back.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use tempfile::TempDir;

use crate::support::harness::Test;
use crate::support::run::{RunFiles, delta, mock};

/// The base image `tests/confinement/setup.sh` builds offline.
pub const IMAGE: &str = "localhost/delta-busybox:latest";

/// The image with bash and python3 that `tests/confinement/setup.sh` builds too.
pub const TOOLS_IMAGE: &str = "localhost/delta-tools:latest";

/// The confined kinds.
pub const CONFINED: [&str; 3] = ["landlock", "bwrap", "container"];

/// An agent whose one tool runs a shell script given by the model.
pub const SH_AGENT: &str = "name: probe\nllm:\n  model: gpt-4o-mini\ntools:\n  - name: sh\n    \
     description: Run a shell script.\n    exec: \"sh -c ${script}\"\n";

/// Fails, naming the fix, unless bubblewrap, podman and the test images are here: these
/// tests exercise the real components (CI installs them with tests/setup.sh).
#[track_caller]
pub fn require_components() {
    let found = |program: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {program}")])
            .output()
            .is_ok_and(|output| output.status.success())
    };
    for program in ["bwrap", "podman", "busybox"] {
        assert!(
            found(program),
            "{program} is not installed: run tests/setup.sh as root (it installs bubblewrap, \
             podman, runc and busybox-static, and builds the test images)"
        );
    }
    for image in [IMAGE, TOOLS_IMAGE] {
        let exists = Command::new("podman")
            .args(["image", "exists", image])
            .status()
            .is_ok_and(|status| status.success());
        assert!(
            exists,
            "the image {image} is missing: run tests/confinement/setup.sh as root"
        );
    }
}

/// The flags that put a run's tools in `kind` (the busybox image for a container).
pub fn kind_args(kind: &str) -> Vec<String> {
    let mut args = vec!["--environment".to_owned(), kind.to_owned()];
    if kind == "container" {
        args.extend(["--environment-image".to_owned(), IMAGE.to_owned()]);
    }
    args
}

/// A model that calls the `sh` tool with each of `scripts` in turn, then answers "done".
pub fn sh_script(scripts: &[String]) -> String {
    let mut yaml = String::from("steps:\n");
    for script in scripts {
        // A JSON string is a YAML double-quoted scalar.
        yaml.push_str(&format!(
            "  - message:\n      tool_calls: [{{name: sh, arguments: {{script: {}}}}}]\n",
            serde_json::to_string(script).expect("JSON text")
        ));
    }
    yaml.push_str("  - message: {content: done}\n");
    yaml
}

/// A directory under the build's own temporary directory (not the system's `/tmp`, which
/// bubblewrap replaces: a file there would be hidden by accident, not by the rule tested).
pub fn outside_tmp() -> TempDir {
    tempfile::Builder::new()
        .prefix("delta-env-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("create a directory in the target's temporary directory")
}

/// A finished run of the `sh` agent.
pub struct ShRun {
    /// Owns the test directory.
    pub test: Test,
    pub output: std::process::Output,
    pub workspace: PathBuf,
    /// How many requests the model got.
    pub requests: usize,
}

impl ShRun {
    /// The run's files.
    pub fn files(&self) -> RunFiles {
        crate::support::run::only_run(&self.workspace)
    }

    /// The payloads of the journal's events of `kind`.
    pub fn events(&self, kind: &str) -> Vec<Value> {
        payloads(&self.files(), kind)
    }

    /// Each call's observation, in order.
    pub fn observations(&self) -> Vec<String> {
        self.events("ACTION_RESULT")
            .iter()
            .map(|result| {
                result["observation_content"]
                    .as_str()
                    .expect("observation")
                    .to_owned()
            })
            .collect()
    }

    /// Stderr.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// Stdout and stderr, for assertion messages.
    pub fn said(&self) -> String {
        format!(
            "exit {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.output.status.code(),
            String::from_utf8_lossy(&self.output.stdout),
            self.stderr()
        )
    }

    /// Asserts that nothing ran: exit 126, no request to the model, no run created.
    #[track_caller]
    pub fn assert_refused(&self) {
        assert_eq!(self.output.status.code(), Some(126), "{}", self.said());
        assert_eq!(self.requests, 0, "the model was asked: {}", self.said());
        let runs = std::fs::read_dir(self.workspace.join(".delta"))
            .map(|entries| entries.flatten().filter(|e| e.path().is_dir()).count())
            .unwrap_or(0);
        assert_eq!(runs, 0, "a run was created: {}", self.said());
    }
}

/// A run of the `sh` agent: the model calls `sh` with each script in turn.
#[derive(Default)]
pub struct Sh {
    /// The scripts.
    pub scripts: Vec<String>,
    /// agent.yaml [default: [`SH_AGENT`]].
    pub agent: Option<String>,
    /// After `run --agent agent -w ws -y -m go`.
    pub args: Vec<String>,
    /// Variables for `delta`.
    pub env: Vec<(String, String)>,
    /// A command `delta` runs under (its argv then delta's).
    pub wrap: Vec<String>,
    /// Another `delta` executable.
    pub program: Option<PathBuf>,
}

impl Sh {
    /// Runs it in a fresh test directory (the agent in `agent/`, the workspace `ws/`
    /// created), after `prepare` had its way with that directory.
    pub fn run(self, prepare: impl FnOnce(&Path)) -> ShRun {
        let mock = mock(&sh_script(&self.scripts));
        let test = Test::new().agent("agent", self.agent.as_deref().unwrap_or(SH_AGENT));
        std::fs::create_dir_all(test.path().join("ws")).expect("create the workspace");
        prepare(test.path());
        let mut test = delta(test, &mock)
            .args(["run", "--agent", "agent", "-w", "ws", "-y", "-m", "go"])
            .args(&self.args);
        for (key, value) in &self.env {
            test = test.env(key, value);
        }
        let output = wrapped(&self.wrap, self.program.as_deref(), &test.command())
            .output()
            .expect("run delta");
        let workspace = test.path().join("ws");
        ShRun {
            test,
            output,
            workspace,
            requests: mock.recorded().len(),
        }
    }
}

/// `command` (its program replaced by `program` when given) run under `wrap` (a program
/// and arguments put first), with its environment and working directory, stdin closed.
pub fn wrapped(wrap: &[String], program: Option<&Path>, command: &Command) -> Command {
    let mut argv: Vec<std::ffi::OsString> = wrap.iter().map(Into::into).collect();
    argv.push(program.map_or_else(
        || command.get_program().to_owned(),
        |p| p.as_os_str().to_owned(),
    ));
    argv.extend(command.get_args().map(ToOwned::to_owned));
    let mut outer = Command::new(&argv[0]);
    outer.args(&argv[1..]).stdin(std::process::Stdio::null());
    if let Some(dir) = command.get_current_dir() {
        outer.current_dir(dir);
    }
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => outer.env(key, value),
            None => outer.env_remove(key),
        };
    }
    outer
}

/// The payloads of the events of `kind` in the journal of `files`, in order.
pub fn payloads(files: &RunFiles, kind: &str) -> Vec<Value> {
    files
        .journal()
        .into_iter()
        .filter(|event| event["type"] == kind)
        .map(|event| event["payload"].clone())
        .collect()
}

/// Fails with `delta`'s stderr unless it exited 0.
#[track_caller]
pub fn assert_success(output: &std::process::Output, what: &str) {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{what}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Whether a process with exactly this command line (`argv` joined by NUL) runs on the host.
pub fn process_running(argv: &[&str]) -> bool {
    let wanted = argv.join("\0");
    std::fs::read_dir("/proc")
        .expect("list /proc")
        .flatten()
        .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
        .any(|cmdline| String::from_utf8_lossy(&cmdline).trim_end_matches('\0') == wanted)
}

/// Kills every process with exactly this command line.
pub fn kill_processes(argv: &[&str]) {
    let wanted = argv.join("\0");
    for entry in std::fs::read_dir("/proc").expect("list /proc").flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if String::from_utf8_lossy(&cmdline).trim_end_matches('\0') == wanted
            && let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<i32>().ok())
        {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}
