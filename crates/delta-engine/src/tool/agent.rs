//! Agent tools (`agent:` in a tool definition): a call starts a sub-agent run of another
//! agent (docs/subagents.md). Here: their validation into an [`AgentTool`], the function
//! schema the model sees, and the child's task built from the model's arguments.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};
use serde_json::{Map, Value};

use super::error::{ArgumentError, ToolError};
use super::expand::{check_explicit, check_tool_name};
use super::invoke::values;
use super::schema::function_schema;
use super::spec::{ParamSpec, TemplatePiece};
use super::template::{Placeholder, parse_placeholder};
use super::vars::EngineVars;
use delta_config::tool::InjectAs;
use delta_config::tool::{ParamDef, ToolDef};

/// The parameter that is the task when `message:` is not written.
pub const MESSAGE_PARAMETER: &str = "message";

/// A validated agent tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentTool {
    /// Function name offered to the model.
    pub name: String,
    /// What the tool does, as the model reads it.
    pub description: Option<String>,
    /// The sub-agent's directory (absolute; whether it holds an agent is checked when the
    /// configuration loads, the agent itself is loaded when a call starts it).
    pub agent: PathBuf,
    /// The task: text and parameter values.
    pub message: Vec<TemplatePiece>,
    /// Parameters, in order of first appearance in the message.
    pub parameters: Vec<ParamSpec>,
    /// The sub-directory of the calling run's workspace the child runs in.
    pub workspace: Option<PathBuf>,
}

impl AgentTool {
    /// The declaration offered to the model, as for a command tool.
    #[must_use]
    pub fn function_schema(&self) -> Value {
        function_schema(&self.name, self.description.as_deref(), &self.parameters)
    }

    /// The child's task from the model's arguments.
    ///
    /// # Errors
    /// What the model got wrong (unknown or missing parameters), worded for the model.
    pub fn task(&self, args: &Map<String, Value>) -> Result<String, ArgumentError> {
        let values = values(&self.name, &self.parameters, args)?;
        let value_of = |name: &str| {
            self.parameters
                .iter()
                .position(|p| p.name == name)
                .and_then(|index| values.get(index).cloned().flatten())
                .unwrap_or_default()
        };
        Ok(self
            .message
            .iter()
            .map(|piece| match piece {
                TemplatePiece::Text(text) => text.clone(),
                TemplatePiece::Param(name) => value_of(name),
            })
            .collect())
    }

    /// The message as written, placeholders shown as `${name}` (`delta tool expand`).
    #[must_use]
    pub fn message_template(&self) -> String {
        self.message
            .iter()
            .map(|piece| match piece {
                TemplatePiece::Text(text) => text.clone(),
                TemplatePiece::Param(name) => format!("${{{name}}}"),
            })
            .collect()
    }
}

impl Serialize for AgentTool {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let fields =
            4 + usize::from(self.description.is_some()) + usize::from(self.workspace.is_some());
        let mut s = serializer.serialize_struct("AgentTool", fields)?;
        s.serialize_field("name", &self.name)?;
        if let Some(description) = &self.description {
            s.serialize_field("description", description)?;
        }
        s.serialize_field("agent", &self.agent.display().to_string())?;
        s.serialize_field("message", &self.message_template())?;
        if let Some(workspace) = &self.workspace {
            s.serialize_field("workspace", &workspace.display().to_string())?;
        }
        let parameters: Vec<Parameter<'_>> = self
            .parameters
            .iter()
            .map(|p| Parameter {
                name: &p.name,
                description: p.description.as_deref(),
                default: p.default.as_deref(),
                required: p.is_required(),
            })
            .collect();
        s.serialize_field("parameters", &parameters)?;
        s.end()
    }
}

/// A parameter of an agent tool as `delta tool expand` prints it.
#[derive(Serialize)]
struct Parameter<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    default: Option<&'a str>,
    required: bool,
}

/// Validates an agent tool definition (`def.agent` is set).
///
/// # Errors
/// The [`ToolError`] naming what is wrong; the config loader adds file and line.
pub fn expand_agent(def: &ToolDef, vars: &EngineVars) -> Result<AgentTool, ToolError> {
    check_tool_name(&def.name)?;
    let found: Vec<&'static str> = [
        def.exec.as_ref().map(|_| "exec"),
        def.shell.as_ref().map(|_| "shell"),
        def.command.as_ref().map(|_| "command"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !found.is_empty() {
        return Err(ToolError::AgentWithCommand { found });
    }
    let why = "is not used by an agent tool: its sub-agent's own budget (budget: in its \
               agent.yaml) bounds its time";
    if def.timeout_ms.is_some() {
        return Err(ToolError::MisplacedKey {
            key: "timeout_ms",
            why,
        });
    }
    if def.stdin.is_some() {
        return Err(ToolError::MisplacedKey {
            key: "stdin",
            why: "is not used by an agent tool: its parameters go into the sub-agent's task",
        });
    }
    let written = def.agent.as_deref().unwrap_or_default().trim();
    if written.is_empty() {
        return Err(ToolError::AgentEmpty { key: "agent" });
    }
    let agent = vars.agent_home.join(vars.substitute(written));
    let workspace = def.workspace.as_deref().map(workspace_dir).transpose()?;
    let explicit = def.parameters.as_deref().unwrap_or_default();
    check_explicit(explicit)?;
    for param in explicit {
        for (key, present) in [
            ("inject_as", param.inject_as.is_some()),
            ("option_name", param.option_name.is_some()),
            ("position", param.position.is_some()),
            ("raw", param.raw.is_some()),
        ] {
            if present {
                return Err(ToolError::AgentParameterKey {
                    name: param.name.clone(),
                    key,
                });
            }
        }
    }
    let (message, names) = match &def.message {
        Some(template) if template.trim().is_empty() => {
            return Err(ToolError::AgentEmpty { key: "message" });
        }
        Some(template) => parse_message(template, vars)?,
        None => (
            vec![TemplatePiece::Param(MESSAGE_PARAMETER.to_owned())],
            vec![MESSAGE_PARAMETER.to_owned()],
        ),
    };
    for param in explicit {
        if !names.contains(&param.name) {
            return Err(ToolError::UndefinedParameter {
                name: param.name.clone(),
            });
        }
    }
    let parameters = names
        .into_iter()
        .map(|name| parameter(name, explicit))
        .collect();
    Ok(AgentTool {
        name: def.name.clone(),
        description: def.description.clone(),
        agent,
        message,
        parameters,
        workspace,
    })
}

/// A parameter of the message, enriched by its `parameters:` entry.
fn parameter(name: String, explicit: &[ParamDef]) -> ParamSpec {
    let over = explicit.iter().find(|p| p.name == name);
    ParamSpec {
        description: over.and_then(|p| p.description.clone()),
        default: over.and_then(|p| p.default.clone()),
        required: over.and_then(|p| p.required),
        name,
        inject_as: InjectAs::Argument,
        position: None,
        option_name: None,
        raw: false,
    }
}

/// `${name}` placeholders in free text (no shell, no words): the pieces and the parameter
/// names in order of first appearance. `\${` is a literal `${`.
fn parse_message(
    template: &str,
    vars: &EngineVars,
) -> Result<(Vec<TemplatePiece>, Vec<String>), ToolError> {
    let chars: Vec<char> = template.chars().collect();
    let mut pieces = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut text = String::new();
    let mut index = 0;
    while let Some(&c) = chars.get(index) {
        let next = chars.get(index + 1).copied();
        if c == '\\' && next == Some('$') && chars.get(index + 2) == Some(&'{') {
            text.push_str("${");
            index += 3;
            continue;
        }
        if c == '$' && next == Some('{') {
            let (placeholder, end) = parse_placeholder(&chars, index, "message", vars)?;
            match placeholder {
                Placeholder::Engine(value) => text.push_str(&value),
                Placeholder::Param { name, raw: true } => {
                    return Err(ToolError::RawOutsideShell { name });
                }
                Placeholder::Param { name, raw: false } => {
                    if !text.is_empty() {
                        pieces.push(TemplatePiece::Text(std::mem::take(&mut text)));
                    }
                    if !names.contains(&name) {
                        names.push(name.clone());
                    }
                    pieces.push(TemplatePiece::Param(name));
                }
            }
            index = end;
            continue;
        }
        text.push(c);
        index += 1;
    }
    if !text.is_empty() {
        pieces.push(TemplatePiece::Text(text));
    }
    Ok((pieces, names))
}

/// `workspace:` as a path relative to the calling run's workspace, staying inside it.
fn workspace_dir(written: &str) -> Result<PathBuf, ToolError> {
    let path = Path::new(written.trim());
    let inside = !path.as_os_str().is_empty()
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if inside {
        Ok(path.components().collect())
    } else {
        Err(ToolError::AgentWorkspace {
            path: written.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> EngineVars {
        EngineVars {
            agent_home: PathBuf::from("/agents/planner"),
            cwd: PathBuf::from("/w"),
        }
    }

    fn def(yaml: &str) -> ToolDef {
        serde_saphyr::from_str(yaml).unwrap()
    }

    #[test]
    fn without_a_message_the_model_writes_the_task() {
        let tool = expand_agent(&def("{name: ask, agent: ./worker}"), &vars()).unwrap();
        assert_eq!(tool.agent, PathBuf::from("/agents/planner/./worker"));
        assert_eq!(tool.parameters.len(), 1);
        assert!(tool.parameters[0].is_required());
        let args: Map<String, Value> = serde_json::from_str(r#"{"message": "do it"}"#).unwrap();
        assert_eq!(tool.task(&args).unwrap(), "do it");
        assert!(tool.task(&Map::new()).is_err());
    }

    #[test]
    fn a_message_template_takes_its_parameters_in_order() {
        let tool = expand_agent(
            &def(r#"{name: review, agent: reviewer, message: 'Review ${file} for ${what}; \${x} ${file}', parameters: [{name: what, default: bugs}]}"#),
            &vars(),
        )
        .unwrap();
        let names: Vec<&str> = tool.parameters.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["file", "what"]);
        let args: Map<String, Value> = serde_json::from_str(r#"{"file": "a.rs"}"#).unwrap();
        assert_eq!(tool.task(&args).unwrap(), "Review a.rs for bugs; ${x} a.rs");
        assert_eq!(
            tool.message_template(),
            "Review ${file} for ${what}; ${x} ${file}"
        );
    }

    #[test]
    fn what_an_agent_tool_cannot_have_is_refused() {
        for (yaml, expected) in [
            ("{name: a, agent: w, exec: ls}", "cannot also have exec"),
            (
                "{name: a, agent: w, timeout_ms: 5}",
                "`timeout_ms` is not used",
            ),
            ("{name: a, agent: w, stdin: x}", "`stdin` is not used"),
            (
                "{name: a, agent: w, workspace: ../up}",
                "must be a relative path",
            ),
            (
                "{name: a, agent: w, workspace: /abs}",
                "must be a relative path",
            ),
            ("{name: a, agent: ' '}", "`agent` of an agent tool is empty"),
            (
                "{name: a, agent: w, parameters: [{name: message, position: 0}]}",
                "cannot have `position`",
            ),
            (
                "{name: a, agent: w, parameters: [{name: other}]}",
                "Parameter 'other' not found",
            ),
            ("{name: a, agent: w, message: 'x ${f:raw}'}", "raw"),
        ] {
            let error = expand_agent(&def(yaml), &vars()).unwrap_err().to_string();
            assert!(error.contains(expected), "{yaml}: {error}");
        }
    }
}
