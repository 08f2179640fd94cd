//! Turns the model's arguments for a tool call into an argv array and optional standard
//! input. Values are placed whole into argv elements and are never parsed again (seed 003
//! §3.8.3–3.8.5). A `shell:` script reaches them only as `$N`, quoted unless `:raw`.

use serde_json::{Map, Value};

use super::error::ArgumentError;
use super::spec::{CommandPart, Origin, ParamSpec, TemplatePiece, ToolSpec};
use crate::quote::command_line;
use delta_config::tool::InjectAs;

/// A ready-to-run call: argv (program first) and the bytes for standard input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// Program and arguments, passed to `execvp` as they are.
    pub argv: Vec<String>,
    /// Written to the process's standard input; `None` means no input (`/dev/null`).
    pub stdin: Option<String>,
}

impl Invocation {
    /// A one-line, shell-quoted rendering for the journal's `resolved_command` and
    /// `command.txt`: copy-pasteable into a shell for argv, with the stdin size appended.
    pub fn display(&self) -> String {
        // Only a NUL byte makes quoting fail, and `invocation` rejects those in argv.
        let mut line = command_line(&self.argv);
        if let Some(stdin) = &self.stdin {
            line.push_str(&format!(" < (stdin: {} bytes)", stdin.len()));
        }
        line
    }
}

impl ToolSpec {
    /// Builds the call from the model's arguments.
    ///
    /// A string is used as it is; any other JSON value is passed as its JSON text
    /// (`42`, `true`, `["a"]`); `null` counts as absent. An absent value falls back to the
    /// default. Absent optional values without a default are left out: an argument or
    /// option is omitted, a template word using it is omitted, stdin is empty. In a
    /// `shell:` tool the positional slot is kept as an empty string instead, so that `$N`
    /// still means the same parameter.
    pub fn invocation(&self, args: &Map<String, Value>) -> Result<Invocation, ArgumentError> {
        let values = values(&self.name, &self.parameters, args)?;

        let value_of = |name: &str| -> Option<&str> {
            let index = self.parameters.iter().position(|p| p.name == name)?;
            values[index].as_deref()
        };

        let mut argv = Vec::with_capacity(self.command.len() + self.parameters.len());
        for part in &self.command {
            match part {
                CommandPart::Literal(text) => argv.push(text.clone()),
                CommandPart::Template(pieces) => {
                    let filled: Option<String> = pieces
                        .iter()
                        .map(|piece| match piece {
                            TemplatePiece::Text(text) => Some(text.as_str()),
                            TemplatePiece::Param(name) => value_of(name),
                        })
                        .collect();
                    argv.extend(filled);
                }
            }
        }

        let in_templates: Vec<&str> = self.command.iter().flat_map(CommandPart::params).collect();
        let mut appended: Vec<(usize, &_)> = self
            .parameters
            .iter()
            .enumerate()
            .filter(|(_, p)| {
                p.inject_as != InjectAs::Stdin && !in_templates.contains(&p.name.as_str())
            })
            .collect();
        // Stable: parameters without a position keep declaration order, after the others.
        appended.sort_by_key(|(_, p)| (p.position.is_none(), p.position));
        let stdin = self
            .parameters
            .iter()
            .zip(&values)
            .find(|(p, _)| p.inject_as == InjectAs::Stdin)
            .and_then(|(_, value)| value.clone());
        for (index, param) in appended {
            let value = match (&values[index], self.origin) {
                (Some(value), _) => value.clone(),
                (None, Origin::Shell) => String::new(),
                (None, Origin::Exec | Origin::Command) => continue,
            };
            match (param.inject_as, &param.option_name) {
                (InjectAs::Option, Some(flag)) => argv.extend([flag.clone(), value]),
                (InjectAs::Option, None) | (InjectAs::Argument | InjectAs::Stdin, _) => {
                    argv.push(value);
                }
            }
        }

        Ok(Invocation { argv, stdin })
    }
}

/// The value of each of `tool`'s `parameters` from the model's `args`, in order: a string
/// as it is, any other JSON value as its JSON text, `null` or absent as the default (or
/// `None`). Unknown names, missing required values and NUL bytes outside stdin are the
/// model's mistakes.
pub(super) fn values(
    tool: &str,
    parameters: &[ParamSpec],
    args: &Map<String, Value>,
) -> Result<Vec<Option<String>>, ArgumentError> {
    let unknown: Vec<String> = args
        .keys()
        .filter(|key| !parameters.iter().any(|p| p.name == **key))
        .cloned()
        .collect();
    if !unknown.is_empty() {
        return Err(ArgumentError::Unknown {
            tool: tool.to_owned(),
            names: unknown,
            accepted: parameters.iter().map(|p| p.name.clone()).collect(),
        });
    }
    let values: Vec<Option<String>> = parameters
        .iter()
        .map(|p| match args.get(&p.name) {
            None | Some(Value::Null) => p.default.clone(),
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => Some(other.to_string()),
        })
        .collect();
    let missing: Vec<String> = parameters
        .iter()
        .zip(&values)
        .filter(|(p, v)| v.is_none() && p.is_required())
        .map(|(p, _)| p.name.clone())
        .collect();
    if !missing.is_empty() {
        return Err(ArgumentError::Missing {
            tool: tool.to_owned(),
            names: missing,
        });
    }
    for (param, value) in parameters.iter().zip(&values) {
        if param.inject_as != InjectAs::Stdin && value.as_ref().is_some_and(|v| v.contains('\0')) {
            return Err(ArgumentError::Nul {
                tool: tool.to_owned(),
                name: param.name.clone(),
            });
        }
    }
    Ok(values)
}
