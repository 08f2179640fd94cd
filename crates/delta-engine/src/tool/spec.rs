//! The internal (v1.1 full) form of a tool that the engine runs: a command and parameters
//! with explicit injection rules. Its `Serialize` output is the expanded form of seed 003
//! §4 and seed 000 §2.2.7, which `delta tool expand` prints.

use std::time::Duration;

use serde::ser::{Serialize, SerializeStruct, Serializer};
use serde_saphyr::{DoubleQuoted, FlowSeq};

use delta_config::tool::InjectAs;

/// How long a tool may run when its definition sets no `timeout_ms`.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(120);

/// A validated, expanded tool. Built only by [`expand`](super::expand()).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSpec {
    /// Function name offered to the model.
    pub name: String,
    /// What the tool does, as the model reads it.
    pub description: Option<String>,
    /// The argv prefix (and, for some `exec:` templates, per-call words).
    pub command: Vec<CommandPart>,
    /// Parameters in declaration (or template) order.
    pub parameters: Vec<ParamSpec>,
    /// Per-tool timeout; [`DEFAULT_TOOL_TIMEOUT`] when `None`.
    pub timeout_ms: Option<u64>,
    /// Which syntax the tool was written in: it decides how absent optional values are
    /// handled (see [`ToolSpec::invocation`]).
    pub(crate) origin: Origin,
}

/// The syntax a tool was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    Exec,
    Shell,
    Command,
}

/// One element of [`ToolSpec::command`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandPart {
    /// Passed to the program exactly as written, even if it contains `${…}` (a `command:`
    /// array may hold an `sh -c` script that uses shell syntax).
    Literal(String),
    /// An `exec:` word containing placeholders, e.g. `--out=${file}`, filled per call and
    /// always one argv element.
    Template(Vec<TemplatePiece>),
}

/// A piece of a [`CommandPart::Template`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplatePiece {
    /// Literal text.
    Text(String),
    /// The value of the named parameter.
    Param(String),
}

impl CommandPart {
    /// The element as it appears in the expanded YAML: templates show `${name}`.
    pub fn rendered(&self) -> String {
        match self {
            CommandPart::Literal(text) => text.clone(),
            CommandPart::Template(pieces) => pieces
                .iter()
                .map(|piece| match piece {
                    TemplatePiece::Text(text) => text.clone(),
                    TemplatePiece::Param(name) => format!("${{{name}}}"),
                })
                .collect(),
        }
    }

    /// Names of the parameters a template refers to (none for a literal).
    pub(crate) fn params(&self) -> impl Iterator<Item = &str> {
        let pieces: &[TemplatePiece] = match self {
            CommandPart::Literal(_) => &[],
            CommandPart::Template(pieces) => pieces,
        };
        pieces.iter().filter_map(|piece| match piece {
            TemplatePiece::Param(name) => Some(name.as_str()),
            TemplatePiece::Text(_) => None,
        })
    }
}

/// A parameter of a [`ToolSpec`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamSpec {
    /// Name the model uses.
    pub name: String,
    /// Shown to the model.
    pub description: Option<String>,
    /// How the value reaches the command.
    pub inject_as: InjectAs,
    /// Order among argument/option parameters (0-based); `None` for stdin, and for
    /// `command:` parameters written without one (they follow in declaration order).
    pub position: Option<u32>,
    /// The flag for `inject_as: option`.
    pub option_name: Option<String>,
    /// Used when the model sends no value.
    pub default: Option<String>,
    /// `required:` as written; see [`ParamSpec::is_required`].
    pub required: Option<bool>,
    /// `${name:raw}` in a `shell:` template (already reflected in the script as `$N`).
    pub raw: bool,
}

impl ParamSpec {
    /// The model must send a value: there is no default and `required: false` is not set.
    pub fn is_required(&self) -> bool {
        self.default.is_none() && self.required != Some(false)
    }
}

impl ToolSpec {
    /// How long the tool may run before its process group is killed.
    pub fn timeout(&self) -> Duration {
        self.timeout_ms
            .map_or(DEFAULT_TOOL_TIMEOUT, Duration::from_millis)
    }
}

impl Serialize for ToolSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let fields = 2
            + usize::from(self.description.is_some())
            + usize::from(!self.parameters.is_empty())
            + usize::from(self.timeout_ms.is_some());
        let mut s = serializer.serialize_struct("ToolSpec", fields)?;
        s.serialize_field("name", &self.name)?;
        if let Some(description) = &self.description {
            s.serialize_field("description", description)?;
        }
        // Flow style with double quotes, as the seeds print it: one line per command, and a
        // script's quotes are visible as `\"`.
        let command: Vec<DoubleQuoted<String>> = self
            .command
            .iter()
            .map(|part| DoubleQuoted(part.rendered()))
            .collect();
        s.serialize_field("command", &FlowSeq(command))?;
        if !self.parameters.is_empty() {
            s.serialize_field("parameters", &self.parameters)?;
        }
        if let Some(timeout_ms) = self.timeout_ms {
            s.serialize_field("timeout_ms", &timeout_ms)?;
        }
        s.end()
    }
}

impl Serialize for ParamSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let fields = 3
            + usize::from(self.description.is_some())
            + usize::from(self.option_name.is_some())
            + usize::from(self.position.is_some())
            + usize::from(self.default.is_some())
            + usize::from(self.required.is_some());
        let mut s = serializer.serialize_struct("ParamSpec", fields)?;
        s.serialize_field("name", &self.name)?;
        s.serialize_field("type", "string")?;
        if let Some(description) = &self.description {
            s.serialize_field("description", description)?;
        }
        s.serialize_field("inject_as", &self.inject_as)?;
        if let Some(option_name) = &self.option_name {
            s.serialize_field("option_name", option_name)?;
        }
        if let Some(position) = self.position {
            s.serialize_field("position", &position)?;
        }
        if let Some(default) = &self.default {
            s.serialize_field("default", default)?;
        }
        if let Some(required) = self.required {
            s.serialize_field("required", &required)?;
        }
        s.end()
    }
}
