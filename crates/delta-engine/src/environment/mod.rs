//! Where a run's tools execute: on the host, confined by Landlock, in a bubblewrap sandbox,
//! or in a container (docs/environments.md). One seam for every kind: [`prepare`] checks
//! everything that can refuse before anything of the run exists, [`Prepared::start`] starts
//! the run's sandbox (a keeper, see `keeper.rs`) or container, and the running
//! [`Environment`] hands out a [`Placement`] that the process runner and the MCP client use
//! to start every tool process in it. The engine, its journal and the LLM calls stay on the
//! host; hooks and context generators do too (they are the user's own guards and the
//! engine's context). When the confinement asked for cannot be established, nothing runs:
//! an [`EnvironmentError`] names the cause and the fix.

mod bwrap;
pub mod container;
mod error;
mod keeper;
mod landlock;
pub mod placement;
mod prepare;
mod probe;
mod running;
mod show;

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use delta_config::environment::{Kind, Runtime};
pub use error::EnvironmentError;
pub use keeper::{CallEnd, HELPER, KeepOptions, call, keep};
pub use landlock::{LandlockOutcome, LandlockRules, REQUIRED_ABI, kernel_abi};
pub use placement::{
    CALL_MARKER, ContainerPlacement, KeeperPlacement, PathMap, PlacedCommand, PlacedEnv, Placement,
    kill_marked,
};
pub use prepare::{Plan, Prepared, Setting, find_helper, on_path, prepare};
pub use probe::{KindProbe, ProbeReport, probe};
pub use running::{Ending, Environment};
pub use show::render_wrapped;

use prepare::agent_entries;

/// The `environment:` section of agent.yaml, validated, paths absolute.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EnvironmentConfig {
    /// Where tools run.
    pub kind: Kind,
    /// `network:` as written; `None`: the kind's default (on for host only).
    pub network: Option<bool>,
    /// Extra readable paths (landlock, bwrap).
    pub allow_read: Vec<PathBuf>,
    /// Extra writable paths (landlock, bwrap).
    pub allow_write: Vec<PathBuf>,
    /// Landlock: accept what the kernel supports.
    pub best_effort: bool,
    /// Container: the image.
    pub image: Option<String>,
    /// Container: a directory with a Dockerfile.
    pub build: Option<PathBuf>,
    /// Container: the runtime.
    pub runtime: Runtime,
    /// bwrap, container: where the workspace appears.
    pub workdir: Option<PathBuf>,
    /// Container: CPUs.
    pub cpus: Option<f64>,
    /// Container: memory in MiB.
    pub memory_mb: Option<u64>,
    /// Container: keep it when the run ends.
    pub keep: bool,
    /// Variables of the engine's environment passed in although they hold a secret.
    pub pass_env: Vec<String>,
}

/// What the command line asks on top of agent.yaml.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EnvironmentChoice {
    /// `--environment KIND`.
    pub kind: Option<Kind>,
    /// `--environment-image IMAGE`.
    pub image: Option<String>,
    /// A whole environment in place of agent.yaml's `environment:` (`delta eval`: the
    /// task's container); `kind` and `image` still apply on top of it.
    pub replace: Option<Box<EnvironmentConfig>>,
}

impl EnvironmentConfig {
    /// This configuration with the command line's choice applied: a whole replacement
    /// first, then `--environment` replaces the kind (keys of other kinds are then
    /// ignored), `--environment-image` the image (and any `build:`).
    ///
    /// # Errors
    /// [`EnvironmentError::ImageWithoutContainer`] for an image given to another kind.
    pub fn with_choice(&self, choice: &EnvironmentChoice) -> Result<Self, EnvironmentError> {
        let mut config = choice
            .replace
            .as_deref()
            .map_or_else(|| self.clone(), Clone::clone);
        if let Some(kind) = choice.kind {
            config.kind = kind;
        }
        if let Some(image) = &choice.image {
            if config.kind != Kind::Container {
                return Err(EnvironmentError::ImageWithoutContainer { kind: config.kind });
            }
            config.image = Some(image.clone());
            config.build = None;
        }
        Ok(config)
    }

    /// Whether tools keep the network: `network:`, else on for host only.
    #[must_use]
    pub fn network(&self) -> bool {
        self.network.unwrap_or(self.kind == Kind::Host)
    }
}

/// What a run's environment enforces: RUN_START's and metadata.json's `environment`.
/// The guarantee names are stable; docs/environments.md explains each.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EnvironmentReport {
    /// Where tools run.
    pub kind: Kind,
    /// Guarantees in force, e.g. `fs_write_confined`, `tcp_denied`, `pid_namespace`.
    pub enforced: Vec<String>,
    /// Guarantees of the kind that are not in force here, e.g. `udp_denied` below Landlock
    /// ABI 10, or `delta_read_only` (never under Landlock).
    pub not_enforced: Vec<String>,
    /// Whether tools have the network.
    pub network: bool,
    /// Where the workspace appears to tools.
    pub workdir: String,
    /// The Landlock ABI in effect (landlock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landlock_abi: Option<u8>,
    /// `best_effort: true` was asked (landlock).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub best_effort: bool,
    /// bubblewrap's version (bwrap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bwrap_version: Option<String>,
    /// `podman` or `docker` (container).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    /// The container's name (container).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// The container's id (container).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_id: Option<String>,
    /// The image (container).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// The image's id (container).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_id: Option<String>,
    /// Whether this process built the image from `build:` (container).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_built: Option<bool>,
    /// Whether this process created the container (false: an existing one was reused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_created: Option<bool>,
}

/// The environment that runs one tool call: ACTION_REQUEST's `environment`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CallEnvironment {
    /// Where the call runs.
    pub kind: Kind,
    /// The container's id (container).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_id: Option<String>,
    /// Its image's id (container).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_id: Option<String>,
}

impl EnvironmentReport {
    /// The report in a line, for people: the kind and its particulars, then what is not
    /// enforced.
    #[must_use]
    pub fn summary(&self) -> String {
        let mut particulars = Vec::new();
        if let Some(abi) = self.landlock_abi {
            particulars.push(format!("Landlock ABI {abi}"));
        }
        if self.best_effort {
            particulars.push("best effort".to_owned());
        }
        if let Some(version) = &self.bwrap_version {
            particulars.push(format!("bubblewrap {version}"));
        }
        if let (Some(container), Some(image)) = (&self.container, &self.image) {
            let made = match self.container_created {
                Some(false) => "reused",
                Some(true) | None => "created",
            };
            particulars.push(format!("{container} of {image}, {made}"));
        }
        particulars.push(
            if self.network {
                "network"
            } else {
                "no network"
            }
            .to_owned(),
        );
        let mut line = format!("{} ({})", self.kind, particulars.join(", "));
        if !self.not_enforced.is_empty() {
            line.push_str(&format!("; not enforced: {}", self.not_enforced.join(", ")));
        }
        line
    }

    /// A report of `kind` with nothing enforced yet.
    fn of(kind: Kind, network: bool, workdir: &Path) -> Self {
        Self {
            kind,
            enforced: Vec::new(),
            not_enforced: Vec::new(),
            network,
            workdir: workdir.display().to_string(),
            landlock_abi: None,
            best_effort: false,
            bwrap_version: None,
            runtime: None,
            container: None,
            container_id: None,
            image: None,
            image_id: None,
            image_built: None,
            container_created: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_by_their_names() {
        for kind in Kind::ALL {
            assert_eq!(kind.as_str().parse::<Kind>(), Ok(kind));
        }
        assert!(
            "docker"
                .parse::<Kind>()
                .unwrap_err()
                .contains("use host, landlock")
        );
    }

    #[test]
    fn the_command_line_replaces_kind_and_image() {
        let config = EnvironmentConfig {
            kind: Kind::Container,
            build: Some(PathBuf::from("/a/env")),
            ..EnvironmentConfig::default()
        };
        let chosen = config
            .with_choice(&EnvironmentChoice {
                kind: None,
                image: Some("localhost/x".into()),
                replace: None,
            })
            .unwrap();
        assert_eq!(chosen.image.as_deref(), Some("localhost/x"));
        assert_eq!(chosen.build, None);
        let error = config
            .with_choice(&EnvironmentChoice {
                kind: Some(Kind::Bwrap),
                image: Some("localhost/x".into()),
                replace: None,
            })
            .unwrap_err();
        assert!(matches!(
            error,
            EnvironmentError::ImageWithoutContainer { kind: Kind::Bwrap }
        ));
        assert!(
            !EnvironmentConfig::default()
                .with_choice(&EnvironmentChoice {
                    kind: Some(Kind::Landlock),
                    image: None,
                    replace: None,
                })
                .unwrap()
                .network()
        );
        assert!(EnvironmentConfig::default().network());
        // A whole replacement (delta eval's task container) wins over agent.yaml's.
        let task = EnvironmentConfig {
            kind: Kind::Container,
            image: Some("localhost/task".into()),
            workdir: Some(PathBuf::from("/app")),
            keep: true,
            ..EnvironmentConfig::default()
        };
        let chosen = config
            .with_choice(&EnvironmentChoice {
                replace: Some(Box::new(task.clone())),
                ..EnvironmentChoice::default()
            })
            .unwrap();
        assert_eq!(chosen, task);
    }
}
