//! How the runs of a sub-agent tree name each other in `metadata.json`: a child's caller,
//! a parent's children, and a parent's roll-up of everything its tree spent.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{RunId, Usage};

/// The run whose agent tool started this run (a sub-agent's `called_by`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CalledBy {
    /// The calling run.
    pub run_id: RunId,
    /// Its ACTION_REQUEST that started this run.
    pub action_id: String,
    /// The agent tool called.
    pub tool_name: String,
    /// How deep this run is: 1 for a child of a top-level run, 2 for a grandchild…
    pub depth: u32,
    /// The caller's workspace, when this run lives in another one (a tool's `workspace:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_dir: Option<PathBuf>,
}

/// A run started by one of this run's agent tools (an entry of `children`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ChildRef {
    /// The child run.
    pub run_id: RunId,
    /// The ACTION_REQUEST that started it.
    pub action_id: String,
    /// Its workspace, when it is not this run's (a tool's `workspace:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_dir: Option<PathBuf>,
}

impl ChildRef {
    /// The child's workspace, given this run's.
    #[must_use]
    pub fn workspace(&self, own: &Path) -> PathBuf {
        self.work_dir.clone().unwrap_or_else(|| own.to_path_buf())
    }
}

/// What a run and all its descendants spent, added up: `subtree` in metadata.json,
/// RunResult's `metrics` and `list-runs` (only on runs that started sub-agents).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Subtree {
    /// Runs in the tree, this one included.
    pub runs: u32,
    /// Their usage added up: tokens, cost and calls, per model too.
    pub usage: Usage,
}

impl Subtree {
    /// A run alone: its own usage.
    #[must_use]
    pub fn of(usage: &Usage) -> Self {
        Self {
            runs: 1,
            usage: usage.clone(),
        }
    }

    /// Adds a child's tree.
    pub fn add(&mut self, child: &Subtree) {
        self.runs += child.runs;
        self.usage.add(&child.usage);
    }
}
