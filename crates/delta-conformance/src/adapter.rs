//! Adapter files (`--adapter FILE`): how an implementation spells the commands the
//! scenarios use, so that one whose CLI differs (`tool:expand` for `tool expand`, a
//! differently named sessions program) is tested without a wrapper script.

use std::collections::BTreeMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::locate;
use crate::scenario::{self, Args, Command};
use crate::yaml_file::{self, FileError};

/// An adapter file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "delta-conformance adapter")]
pub struct Adapter {
    /// What the implementation is, for reports (e.g. `delta-engine v1.10.1 (TypeScript)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The command that starts the implementation, when `--impl` is not given. Words that
    /// name an existing path relative to the adapter file's directory are made absolute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "impl")]
    pub implementation: Option<Args>,
    /// The implementation's `delta-sessions` program, when `--impl-sessions` is not given;
    /// paths as for `impl`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<Args>,
    /// The words a scenario's action becomes, by action (`run`, `continue`, `list-runs`,
    /// `tool-expand`), e.g. `tool-expand: ["tool:expand"]`. Unlisted actions keep the
    /// spec's spelling (`run`, `continue`, `list-runs`, `tool expand`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub commands: BTreeMap<String, Vec<String>>,
}

/// The words each implementation command starts with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Commands {
    respelt: BTreeMap<String, Vec<String>>,
}

impl Commands {
    /// The words placed before a step's arguments for `command`.
    pub fn prefix(&self, command: Command) -> Vec<String> {
        match self.respelt.get(command.key()) {
            Some(words) => words.clone(),
            None => command.prefix().iter().map(ToString::to_string).collect(),
        }
    }
}

/// The actions an adapter may respell.
const RESPELLABLE: [Command; 4] = [
    Command::Run,
    Command::Continue,
    Command::ListRuns,
    Command::ToolExpand,
];

/// A loaded adapter: its commands, with paths made absolute.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// Its name.
    pub name: Option<String>,
    /// The implementation's command, if it names one.
    pub implementation: Option<Vec<String>>,
    /// The sessions command, if it names one.
    pub sessions: Option<Vec<String>>,
    /// The command spellings.
    pub commands: Commands,
}

/// Reads an adapter file.
pub fn load(path: &Path) -> Result<Loaded, FileError> {
    let invalid = |message: String| FileError::invalid(path, message);
    let adapter: Adapter = yaml_file::read(path)?;
    for (key, words) in &adapter.commands {
        if !RESPELLABLE.iter().any(|c| c.key() == key) {
            return Err(invalid(format!(
                "commands: unknown action {key:?} (known: {})",
                RESPELLABLE.map(Command::key).join(", ")
            )));
        }
        if words.is_empty() {
            return Err(invalid(format!("commands.{key}: give at least one word")));
        }
    }
    let base = path.parent().and_then(|p| p.canonicalize().ok());
    let words = |args: &Option<Args>, what: &str| -> Result<Option<Vec<String>>, FileError> {
        args.as_ref()
            .map(|a| {
                scenario::words(a)
                    .map(|w| locate::absolutize_command_in(&w, base.as_deref()))
                    .map_err(|e| invalid(format!("{what}: {e}")))
            })
            .transpose()
    };
    Ok(Loaded {
        name: adapter.name.clone(),
        implementation: words(&adapter.implementation, "impl")?,
        sessions: words(&adapter.sessions, "sessions")?,
        commands: Commands {
            respelt: adapter.commands,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_respelt_and_paths_made_absolute() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("dist")).unwrap();
        std::fs::write(dir.path().join("dist/index.js"), "").unwrap();
        let file = dir.path().join("adapter.yaml");
        std::fs::write(
            &file,
            "impl: node dist/index.js\ncommands:\n  tool-expand: [\"tool:expand\"]\n",
        )
        .unwrap();
        let loaded = load(&file).unwrap();
        let implementation = loaded.implementation.unwrap();
        assert_eq!(implementation[0], "node");
        assert!(implementation[1].ends_with("/dist/index.js"));
        assert!(Path::new(&implementation[1]).is_absolute());
        assert_eq!(loaded.commands.prefix(Command::ToolExpand), ["tool:expand"]);
        assert_eq!(loaded.commands.prefix(Command::Run), ["run"]);
    }

    #[test]
    fn unknown_actions_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("adapter.yaml");
        std::fs::write(&file, "commands:\n  tool-expnd: [x]\n").unwrap();
        let err = load(&file).unwrap_err().to_string();
        assert!(err.contains("unknown action \"tool-expnd\""), "{err}");
    }
}
