//! Why the environment a run asked for cannot be established, and how to fix it: every
//! variant is a refusal before anything of the run ran (exit 126 in the CLI).

use std::path::PathBuf;

use super::Kind;

/// The requested confinement cannot be established; the run does not start.
#[derive(Debug, thiserror::Error)]
pub enum EnvironmentError {
    /// `delta-sandbox` is neither beside the running executable nor on PATH.
    #[error(
        "the {kind} environment needs the sandbox helper delta-sandbox, which is neither \
         beside this executable ({beside}) nor on PATH"
    )]
    HelperMissing {
        /// The kind asked for.
        kind: Kind,
        /// Where it was looked for first.
        beside: String,
    },
    /// The kernel has no (or not enough) Landlock.
    #[error("the landlock environment cannot be established: {reason}")]
    Landlock {
        /// What the kernel lacks.
        reason: String,
    },
    /// bubblewrap is not installed.
    #[error("the bwrap environment needs bubblewrap, and `bwrap` is not on PATH")]
    BwrapMissing,
    /// A program the kind needs (the container runtime) is not installed.
    #[error("the container environment needs {runtime}, and `{runtime}` is not on PATH")]
    RuntimeMissing {
        /// `podman` or `docker`.
        runtime: String,
    },
    /// The container runtime is installed but does not work.
    #[error("`{runtime} info` failed, so no container can be run: {message}")]
    RuntimeBroken {
        /// `podman` or `docker`.
        runtime: String,
        /// What it said.
        message: String,
    },
    /// The container image is not there (nothing is pulled).
    #[error("the image {image} is not available to {runtime} (images are never pulled)")]
    ImageMissing {
        /// The image asked for.
        image: String,
        /// `podman` or `docker`.
        runtime: String,
    },
    /// `build:` failed.
    #[error("the image of {dir} did not build: {output}")]
    ImageBuild {
        /// The build directory.
        dir: PathBuf,
        /// The runtime's last lines.
        output: String,
        /// `podman` or `docker`.
        runtime: String,
    },
    /// A container environment without an image.
    #[error("the container environment needs an image: neither `image` nor `build` is set")]
    NoImage,
    /// `--environment-image` for a kind that runs no image.
    #[error("--environment-image applies to the container environment, not to {kind}")]
    ImageWithoutContainer {
        /// The kind in effect.
        kind: Kind,
    },
    /// `kind: host` with `network: false`: the host cannot take the network away.
    #[error("`network: false` cannot be enforced by the host environment")]
    HostNetwork,
    /// A tool runs `delta-sessions`, which needs /proc, under landlock without /proc.
    #[error(
        "tool '{tool}' runs delta-sessions, which needs /proc (it tells a session's processes \
         by their /proc entries), and the landlock environment hides /proc"
    )]
    SessionsNeedProc {
        /// The tool.
        tool: String,
    },
    /// The API key sits in a file the tools could read.
    #[error(
        "the API key comes from {file}, which the tools of the landlock environment could \
         read"
    )]
    KeyReadable {
        /// The `.env` file.
        file: PathBuf,
    },
    /// Tools whose programs are not found inside the environment.
    #[error("{}", missing_programs(.missing, *.kind))]
    ProgramsMissing {
        /// The kind.
        kind: Kind,
        /// Tool and program.
        missing: Vec<(String, String)>,
        /// The image, for a container.
        image: Option<String>,
    },
    /// bubblewrap could not create the sandbox.
    #[error("bubblewrap could not create the sandbox: {message}")]
    Bwrap {
        /// What bwrap (or the keeper inside) said.
        message: String,
        /// Whether it failed to create namespaces.
        namespaces: bool,
    },
    /// The run's sandbox or container could not be started.
    #[error("the {kind} environment could not be started: {message}")]
    Start {
        /// The kind.
        kind: Kind,
        /// What failed.
        message: String,
    },
    /// A file or directory the environment needs could not be made.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

fn missing_programs(missing: &[(String, String)], kind: Kind) -> String {
    let mut programs: Vec<(&str, Vec<&str>)> = Vec::new();
    for (tool, program) in missing {
        match programs.iter_mut().find(|(known, _)| known == program) {
            Some((_, tools)) => tools.push(tool),
            None => programs.push((program, vec![tool])),
        }
    }
    let list: Vec<String> = programs
        .iter()
        .map(|(program, tools)| {
            let tools: Vec<String> = tools.iter().map(|tool| format!("'{tool}'")).collect();
            let noun = if tools.len() == 1 { "tool" } else { "tools" };
            format!("'{program}' ({noun} {})", tools.join(", "))
        })
        .collect();
    format!(
        "not found inside the {kind} environment: {}",
        list.join(", ")
    )
}

impl EnvironmentError {
    /// How to fix it.
    #[must_use]
    pub fn help(&self) -> Option<String> {
        Some(match self {
            EnvironmentError::HelperMissing { .. } => "install it with the engine: `cargo install \
                --locked --path crates/delta` installs delta, delta-sessions and delta-sandbox \
                together; or put delta-sandbox on PATH"
                .to_owned(),
            EnvironmentError::Landlock { .. } => "run on Linux 6.12 or later with Landlock \
                enabled (`landlock` in /sys/kernel/security/lsm, or `lsm=landlock,...` on the \
                kernel command line); or set `best_effort: true` under `environment:` to accept \
                what this kernel enforces (RUN_START records it); or use `--environment bwrap` \
                or `container`; `delta env probe` shows what this machine can enforce"
                .to_owned(),
            EnvironmentError::BwrapMissing => "install bubblewrap (Debian and Ubuntu: `apt-get \
                install bubblewrap`; Fedora: `dnf install bubblewrap`), or use `--environment \
                landlock`, which needs no extra program"
                .to_owned(),
            EnvironmentError::RuntimeMissing { runtime } => format!(
                "install {runtime}, or choose the other runtime with `runtime:` under \
                 `environment:` (podman or docker)"
            ),
            EnvironmentError::RuntimeBroken { runtime, .. } => format!(
                "make `{runtime} info` work for this user (for podman: a containers.conf that \
                 fits this machine, see docs/environments.md)"
            ),
            EnvironmentError::ImageMissing { image, runtime } => format!(
                "build or load it first (`{runtime} build -t {image} DIR`, `{runtime} load`, \
                 `{runtime} pull {image}`), or give a directory with a Dockerfile as `build:`"
            ),
            EnvironmentError::ImageBuild { dir, runtime, .. } => format!(
                "fix the Dockerfile in {}; `{runtime} build {}` shows the whole output",
                dir.display(),
                dir.display()
            ),
            EnvironmentError::NoImage => "give `image: NAME` (or `--environment-image NAME`), or \
                `build: DIR` with a Dockerfile, under `environment:`"
                .to_owned(),
            EnvironmentError::ImageWithoutContainer { .. } => {
                "add `--environment container`, or drop --environment-image".to_owned()
            }
            EnvironmentError::HostNetwork => "use `kind: landlock`, `bwrap` or `container`, which \
                can deny the network, or drop `network: false`"
                .to_owned(),
            EnvironmentError::SessionsNeedProc { .. } => "add /proc to `allow_read` under \
                `environment:` (tools can then read other processes' environment and command \
                lines), or use `--environment bwrap` or `container`, which give the run its own \
                /proc"
                .to_owned(),
            EnvironmentError::KeyReadable { .. } => "move the key to the agent's .env or to the \
                process environment (neither is visible to the tools), or use `--environment \
                bwrap` or `container`, which hide .env files"
                .to_owned(),
            EnvironmentError::ProgramsMissing { kind, image, .. } => match (kind, image) {
                (Kind::Container, Some(image)) => format!(
                    "install them in the image ({image}), e.g. in the Dockerfile given as \
                     `build:`"
                ),
                (Kind::Landlock, _) => "list the directories that hold them in `allow_read` \
                    under `environment:`"
                    .to_owned(),
                (Kind::Bwrap, _) => "list the directories that hold them in `allow_read` under \
                    `environment:` (home directories are hidden unless listed)"
                    .to_owned(),
                (Kind::Host | Kind::Container, _) => {
                    "install them, or fix the tools' commands".to_owned()
                }
            },
            EnvironmentError::Bwrap {
                namespaces: true, ..
            } => "allow unprivileged user namespaces (`sysctl -w \
                kernel.unprivileged_userns_clone=1` on Debian, `sysctl -w \
                kernel.apparmor_restrict_unprivileged_userns=0` on Ubuntu, \
                user.max_user_namespaces > 0), or use `--environment landlock`, which needs no \
                namespaces"
                .to_owned(),
            EnvironmentError::Bwrap { .. } => {
                "run `delta env probe bwrap` to see what bubblewrap reports".to_owned()
            }
            EnvironmentError::Start { kind, .. } => {
                format!("run `delta env probe {kind}` to see what this machine can enforce")
            }
            EnvironmentError::Io(_) => return None,
        })
    }
}
