//! The landlock kind: the run's keeper restricts itself with Linux Landlock (the `landlock`
//! crate) before it starts any tool, so every call and everything it starts can write only
//! to the workspace, a private temporary directory and the listed paths, read only the
//! system directories and the listed paths, open no TCP connection or listening port, and
//! signal or reach (abstract sockets) nothing outside the run. No root and no namespaces.
//!
//! What Landlock cannot express is said, not papered over: rules only add rights, so the
//! workspace's `.delta/` stays writable; `/proc` is one tree for every process, so it is
//! not readable at all (a readable `/proc` would expose other processes' environment);
//! UDP and pathname unix sockets are restricted from ABI 10 on only.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
};
use serde::{Deserialize, Serialize};

/// The ABI whose rights the kind requires: the file system with renames across
/// directories (2), truncation (3) and device ioctls (5), TCP (4), and the scopes of signals
/// and abstract unix sockets (6).
pub const REQUIRED_ABI: u8 = 6;

/// System directories every tool may read and execute from (those that exist).
const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/sys",
    "/nix/store",
];

/// Files of `/proc` that describe the machine, not a process.
const PROC_READ: &[&str] = &[
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/stat",
    "/proc/loadavg",
    "/proc/uptime",
    "/proc/version",
    "/proc/filesystems",
    "/proc/sys",
];

/// Devices every tool may read.
const DEV_READ: &[&str] = &["/dev/random", "/dev/urandom"];

/// Devices every tool may read and write.
const DEV_WRITE: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];

/// What the keeper restricts itself with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LandlockRules {
    /// Readable and executable.
    pub read: Vec<PathBuf>,
    /// Readable, writable, executable.
    pub write: Vec<PathBuf>,
    /// Deny TCP (and UDP where the kernel can).
    pub deny_network: bool,
    /// Accept what the kernel supports instead of failing.
    pub best_effort: bool,
}

/// What a restriction achieved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LandlockOutcome {
    /// The Landlock ABI in effect (0: none).
    pub abi: u8,
    /// `fully_enforced`, `partially_enforced` or `not_enforced`, as the kernel answered for
    /// everything asked (the newer rights included).
    pub status: String,
}

/// Restricts the calling thread, and everything it starts from now on.
///
/// # Errors
/// When a right of [`REQUIRED_ABI`] is missing and `best_effort` is off, or a path cannot
/// be opened: the message says which.
pub fn restrict(rules: &LandlockRules) -> Result<LandlockOutcome, String> {
    let required = ABI::V6;
    let newest = ABI::V10;
    let text = |error: landlock::RulesetError| error.to_string();
    let level = if rules.best_effort {
        CompatLevel::BestEffort
    } else {
        CompatLevel::HardRequirement
    };
    let mut ruleset = Ruleset::default()
        .set_compatibility(level)
        .handle_access(AccessFs::from_all(required))
        .map_err(text)?;
    if rules.deny_network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(required))
            .map_err(text)?;
    }
    ruleset = ruleset.scope(Scope::from_all(required)).map_err(text)?;
    // Beyond what is required: whatever a newer kernel adds (pathname unix sockets, UDP).
    ruleset = ruleset
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(newest))
        .map_err(text)?;
    if rules.deny_network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(newest))
            .map_err(text)?;
    }
    // This process's own /proc entry, for the list of its children (see keeper.rs).
    let own = PathBuf::from(format!("/proc/{}", std::process::id()));
    let read: Vec<&Path> = rules
        .read
        .iter()
        .map(PathBuf::as_path)
        .chain([own.as_path()])
        .collect();
    let status = ruleset
        .create()
        .map_err(text)?
        .add_rules(path_beneath_rules(read, AccessFs::from_read(newest)))
        .map_err(text)?
        .add_rules(path_beneath_rules(&rules.write, AccessFs::from_all(newest)))
        .map_err(text)?
        .restrict_self()
        .map_err(text)?;
    Ok(LandlockOutcome {
        abi: abi_of(status.landlock),
        status: match status.ruleset {
            RulesetStatus::FullyEnforced => "fully_enforced",
            RulesetStatus::PartiallyEnforced => "partially_enforced",
            RulesetStatus::NotEnforced => "not_enforced",
        }
        .to_owned(),
    })
}

fn abi_of(status: LandlockStatus) -> u8 {
    match status {
        LandlockStatus::Available { effective_abi, .. } => effective_abi as u8,
        LandlockStatus::NotEnabled | LandlockStatus::NotImplemented => 0,
    }
}

/// The Landlock ABI of the running kernel (0: none, or disabled).
///
/// Learned by restricting a throwaway thread (the crate reports the ABI only then):
/// Landlock applies to the thread that asks and to what it starts, and this thread starts
/// nothing and ends at once, so the engine's other threads stay as they are.
#[must_use]
pub fn kernel_abi() -> u8 {
    std::thread::spawn(|| {
        Ruleset::default()
            .handle_access(AccessFs::Execute)
            .and_then(|ruleset| ruleset.create())
            .and_then(|created| created.restrict_self())
            .map_or(0, |status| abi_of(status.landlock))
    })
    .join()
    .unwrap_or(0)
}

/// Why the kernel's ABI is not enough, when it is not.
#[must_use]
pub fn shortfall(abi: u8) -> Option<String> {
    match abi {
        0 => Some("this kernel has no Landlock (not built in, or not enabled at boot)".to_owned()),
        abi if abi < REQUIRED_ABI => Some(format!(
            "this kernel's Landlock is ABI {abi}, and the landlock environment needs ABI \
             {REQUIRED_ABI} (Linux 6.12) for {}",
            missing_below(abi).join(", ")
        )),
        _ => None,
    }
}

/// One guarantee of the kind, the ABI it needs, and whether the run asked for it.
struct Guarantee {
    name: &'static str,
    abi: u8,
}

/// Every guarantee of the kind that applies to a run, in the report's order.
fn guarantees(deny_network: bool, proc_hidden: bool) -> Vec<Guarantee> {
    let mut all = vec![
        Guarantee {
            name: "fs_read_confined",
            abi: 1,
        },
        Guarantee {
            name: "fs_write_confined",
            abi: 1,
        },
        Guarantee {
            name: "fs_refer",
            abi: 2,
        },
        Guarantee {
            name: "fs_truncate",
            abi: 3,
        },
        Guarantee {
            name: "fs_ioctl_dev",
            abi: 5,
        },
    ];
    if proc_hidden {
        all.push(Guarantee {
            name: "proc_hidden",
            abi: 1,
        });
    }
    if deny_network {
        all.push(Guarantee {
            name: "tcp_denied",
            abi: 4,
        });
    }
    all.extend([
        Guarantee {
            name: "signals_scoped",
            abi: 6,
        },
        Guarantee {
            name: "abstract_unix_sockets_scoped",
            abi: 6,
        },
        Guarantee {
            name: "unix_sockets_denied",
            abi: 10,
        },
    ]);
    if deny_network {
        all.push(Guarantee {
            name: "udp_denied",
            abi: 10,
        });
    }
    all
}

fn missing_below(abi: u8) -> Vec<&'static str> {
    guarantees(true, false)
        .into_iter()
        .filter(|g| g.abi > abi && g.abi <= REQUIRED_ABI)
        .map(|g| g.name)
        .collect()
}

/// What the kind enforced at `abi`, and what it did not (always: a read-only `.delta/`).
#[must_use]
pub fn report(abi: u8, deny_network: bool, proc_hidden: bool) -> (Vec<String>, Vec<String>) {
    let mut enforced = Vec::new();
    let mut not_enforced = Vec::new();
    for guarantee in guarantees(deny_network, proc_hidden) {
        if abi >= guarantee.abi {
            enforced.push(guarantee.name.to_owned());
        } else {
            not_enforced.push(guarantee.name.to_owned());
        }
    }
    if !proc_hidden {
        not_enforced.push("proc_hidden".to_owned());
    }
    if !deny_network {
        not_enforced.push("network_denied".to_owned());
    }
    enforced.push("processes_contained".to_owned());
    not_enforced.push("delta_read_only".to_owned());
    (enforced, not_enforced)
}

/// The paths of a run's rules.
#[derive(Debug)]
pub struct RulePaths<'a> {
    /// The workspace.
    pub workspace: &'a Path,
    /// The run's private temporary directory.
    pub tmp: &'a Path,
    /// The agent directory (its entries but `.env` and `workspaces/` are readable).
    pub agent_home: &'a Path,
    /// The directory of the delta executables (delta-sessions beside delta-sandbox).
    pub tools_dir: Option<&'a Path>,
    /// `allow_read`.
    pub allow_read: &'a [PathBuf],
    /// `allow_write`.
    pub allow_write: &'a [PathBuf],
}

/// The rules of a run: only paths that exist (a rule needs an open file).
#[must_use]
pub fn rules(paths: &RulePaths<'_>, deny_network: bool, best_effort: bool) -> LandlockRules {
    let existing = |path: &Path| path.exists().then(|| path.to_path_buf());
    let mut read: Vec<PathBuf> = SYSTEM_READ
        .iter()
        .chain(PROC_READ)
        .chain(DEV_READ)
        .filter_map(|path| existing(Path::new(path)))
        .collect();
    read.extend(paths.tools_dir.and_then(existing));
    read.extend(super::agent_entries(paths.agent_home));
    read.extend(paths.allow_read.iter().filter_map(|path| existing(path)));
    let mut write: Vec<PathBuf> = DEV_WRITE
        .iter()
        .filter_map(|path| existing(Path::new(path)))
        .collect();
    write.push(paths.workspace.to_path_buf());
    write.push(paths.tmp.to_path_buf());
    write.extend(paths.allow_write.iter().filter_map(|path| existing(path)));
    LandlockRules {
        read,
        write,
        deny_network,
        best_effort,
    }
}

/// Whether `/proc` is readable under `rules` (only when listed in `allow_read`).
#[must_use]
pub fn proc_readable(allow_read: &[PathBuf]) -> bool {
    allow_read
        .iter()
        .any(|path| Path::new("/proc").starts_with(path))
}

/// Whether `file` is readable under `rules`.
#[must_use]
pub fn readable(rules: &LandlockRules, file: &Path) -> bool {
    rules
        .read
        .iter()
        .chain(&rules.write)
        .any(|granted| file.starts_with(granted))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_names_what_the_abi_covers() {
        let (enforced, not_enforced) = report(7, true, true);
        assert_eq!(
            enforced,
            [
                "fs_read_confined",
                "fs_write_confined",
                "fs_refer",
                "fs_truncate",
                "fs_ioctl_dev",
                "proc_hidden",
                "tcp_denied",
                "signals_scoped",
                "abstract_unix_sockets_scoped",
                "processes_contained"
            ]
        );
        assert_eq!(
            not_enforced,
            ["unix_sockets_denied", "udp_denied", "delta_read_only"]
        );
        let (enforced, not_enforced) = report(0, false, false);
        assert_eq!(enforced, ["processes_contained"]);
        assert!(not_enforced.contains(&"fs_read_confined".to_owned()));
        assert!(not_enforced.contains(&"proc_hidden".to_owned()));
        assert!(not_enforced.contains(&"network_denied".to_owned()));
    }

    #[test]
    fn a_short_abi_is_explained() {
        assert_eq!(shortfall(7), None);
        assert_eq!(
            shortfall(3).unwrap(),
            "this kernel's Landlock is ABI 3, and the landlock environment needs ABI 6 (Linux \
             6.12) for fs_ioctl_dev, tcp_denied, signals_scoped, abstract_unix_sockets_scoped"
        );
        assert!(shortfall(0).unwrap().contains("no Landlock"));
    }

    #[test]
    fn the_agent_env_file_is_left_out_and_proc_only_when_listed() {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("agent");
        std::fs::create_dir_all(agent.join("tools")).unwrap();
        std::fs::write(agent.join(".env"), "DELTA_API_KEY=x").unwrap();
        std::fs::write(agent.join("agent.yaml"), "name: a").unwrap();
        let ws = dir.path().join("ws");
        let tmp = dir.path().join("tmp");
        let rules = rules(
            &RulePaths {
                workspace: &ws,
                tmp: &tmp,
                agent_home: &agent,
                tools_dir: None,
                allow_read: &[dir.path().join("missing")],
                allow_write: &[],
            },
            true,
            false,
        );
        assert!(rules.read.contains(&agent.join("tools")));
        assert!(rules.read.contains(&agent.join("agent.yaml")));
        assert!(!readable(&rules, &agent.join(".env")));
        assert!(readable(&rules, &ws.join(".env")));
        assert!(!rules.read.contains(&dir.path().join("missing")));
        assert!(!rules.read.iter().any(|p| p == Path::new("/proc")));
        assert!(!proc_readable(&[PathBuf::from("/usr")]));
        assert!(proc_readable(&[PathBuf::from("/proc")]));
        assert!(proc_readable(&[PathBuf::from("/")]));
    }
}
