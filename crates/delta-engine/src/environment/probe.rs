//! What this machine can enforce, kind by kind (`delta env probe`): the same checks a run
//! makes before it starts, plus the facts behind them (Landlock ABI, bubblewrap and user
//! namespaces, container runtimes).

use serde::Serialize;

use super::{Kind, Runtime, bwrap, container, find_helper, landlock, on_path};

/// Whether one kind works here, and why (not).
#[derive(Debug, Clone, Serialize)]
pub struct KindProbe {
    /// The kind.
    pub kind: Kind,
    /// Whether a run of this kind would start.
    pub works: bool,
    /// What it enforces, or why it cannot.
    pub detail: String,
}

/// A container runtime on this machine.
#[derive(Debug, Clone, Serialize)]
pub struct RuntimeProbe {
    /// `podman` or `docker`.
    pub name: String,
    /// Where it is, when on PATH.
    pub path: Option<String>,
    /// Whether `NAME info` works.
    pub works: bool,
}

/// The user namespace settings bubblewrap depends on when not run as root.
#[derive(Debug, Clone, Serialize)]
pub struct UserNamespaces {
    /// Whether this process runs as root (bubblewrap then needs no user namespace).
    pub root: bool,
    /// `/proc/sys/user/max_user_namespaces`.
    pub max_user_namespaces: Option<u64>,
    /// `/proc/sys/kernel/unprivileged_userns_clone` (Debian's knob).
    pub unprivileged_userns_clone: Option<u64>,
    /// `/proc/sys/kernel/apparmor_restrict_unprivileged_userns` (Ubuntu's knob).
    pub apparmor_restrict_unprivileged_userns: Option<u64>,
}

/// Everything `delta env probe` reports.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeReport {
    /// One entry per kind.
    pub kinds: Vec<KindProbe>,
    /// The kernel's Landlock ABI (0: none).
    pub landlock_abi: u8,
    /// `delta-sandbox`, when found.
    pub helper: Option<String>,
    /// `bwrap`, when on PATH.
    pub bwrap: Option<String>,
    /// Its version.
    pub bwrap_version: Option<String>,
    /// User namespace settings.
    pub user_namespaces: UserNamespaces,
    /// podman and docker.
    pub runtimes: Vec<RuntimeProbe>,
}

impl ProbeReport {
    /// The entry of `kind`.
    #[must_use]
    pub fn kind(&self, kind: Kind) -> Option<&KindProbe> {
        self.kinds.iter().find(|probe| probe.kind == kind)
    }
}

fn read_number(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Probes every kind; `runtime` and `image` are what a container run would use.
#[must_use]
pub fn probe(runtime: Runtime, image: Option<&str>) -> ProbeReport {
    let helper_text = find_helper(Kind::Landlock)
        .ok()
        .map(|path| path.display().to_string());
    let helper_problem = |kind| find_helper(kind).err().map(|error| error.to_string());
    let abi = landlock::kernel_abi();

    let landlock = match (helper_problem(Kind::Landlock), landlock::shortfall(abi)) {
        (Some(problem), _) => (false, problem),
        (None, Some(reason)) => (false, reason),
        (None, None) => {
            let (enforced, not_enforced) = landlock::report(abi, true, true);
            (
                true,
                format!(
                    "Landlock ABI {abi}: enforces {}; not: {}",
                    enforced.join(", "),
                    not_enforced.join(", ")
                ),
            )
        }
    };

    let bwrap_path = on_path("bwrap");
    let bwrap_version = bwrap_path.as_deref().and_then(bwrap::version);
    let bwrap = match (helper_problem(Kind::Bwrap), &bwrap_path) {
        (Some(problem), _) => (false, problem),
        (None, None) => (false, "bwrap is not on PATH".to_owned()),
        (None, Some(path)) => match bwrap::trial(path) {
            Ok(()) => (
                true,
                format!(
                    "bubblewrap {}: a sandbox with its own PID, IPC, UTS and network \
                     namespaces and no capabilities starts",
                    bwrap_version.as_deref().unwrap_or("(version unknown)")
                ),
            ),
            Err(error) => (false, error.to_string()),
        },
    };

    let runtimes: Vec<RuntimeProbe> = [Runtime::Podman, Runtime::Docker]
        .into_iter()
        .map(|candidate| {
            let path = on_path(candidate.program());
            RuntimeProbe {
                name: candidate.program().to_owned(),
                works: path.is_some() && container::find_runtime(candidate).is_ok(),
                path: path.map(|path| path.display().to_string()),
            }
        })
        .collect();
    let container = match container::find_runtime(runtime) {
        Err(error) => (false, error.to_string()),
        Ok(program) => match image {
            Some(image) => match container::existing_image(&program, runtime, image) {
                Ok(_) => (
                    true,
                    format!("{} works; image {image} is there", runtime.program()),
                ),
                Err(error) => (false, error.to_string()),
            },
            None => (true, format!("{} works", runtime.program())),
        },
    };

    let entry = |kind, (works, detail): (bool, String)| KindProbe {
        kind,
        works,
        detail,
    };
    ProbeReport {
        kinds: vec![
            entry(
                Kind::Host,
                (true, "tools run as you, unconfined".to_owned()),
            ),
            entry(Kind::Landlock, landlock),
            entry(Kind::Bwrap, bwrap),
            entry(Kind::Container, container),
        ],
        landlock_abi: abi,
        helper: helper_text,
        bwrap: bwrap_path.map(|path| path.display().to_string()),
        bwrap_version,
        user_namespaces: UserNamespaces {
            root: std::fs::metadata("/proc/self")
                .is_ok_and(|meta| std::os::unix::fs::MetadataExt::uid(&meta) == 0),
            max_user_namespaces: read_number("/proc/sys/user/max_user_namespaces"),
            unprivileged_userns_clone: read_number("/proc/sys/kernel/unprivileged_userns_clone"),
            apparmor_restrict_unprivileged_userns: read_number(
                "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
            ),
        },
        runtimes,
    }
}
