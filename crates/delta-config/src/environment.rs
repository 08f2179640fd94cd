//! The choices of `environment:` in agent.yaml: where tools run, and which container runtime.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where tools run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// On the host, as the user (no confinement).
    #[default]
    Host,
    /// On the host, confined with Linux Landlock (no root, no namespaces).
    Landlock,
    /// In one bubblewrap sandbox per run.
    Bwrap,
    /// In one container per run (podman or docker).
    Container,
}

impl Kind {
    /// Every kind, in the order of the docs.
    pub const ALL: [Kind; 4] = [Kind::Host, Kind::Landlock, Kind::Bwrap, Kind::Container];

    /// The name written in agent.yaml and on the command line.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Host => "host",
            Kind::Landlock => "landlock",
            Kind::Bwrap => "bwrap",
            Kind::Container => "container",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Kind {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Kind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == text)
            .ok_or_else(|| {
                format!("unknown environment kind '{text}'; use host, landlock, bwrap or container")
            })
    }
}

/// The command line a container runtime is driven through.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Runtime {
    /// `podman`.
    #[default]
    Podman,
    /// `docker` (the same commands).
    Docker,
}

impl Runtime {
    /// The program's name.
    #[must_use]
    pub fn program(self) -> &'static str {
        match self {
            Runtime::Podman => "podman",
            Runtime::Docker => "docker",
        }
    }
}
