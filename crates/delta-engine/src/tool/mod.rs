//! The tool system: raw definitions ([`ToolDef`]), their validation and expansion of the
//! `exec:`/`shell:` sugar into the internal form ([`expand`] → [`ToolSpec`]), the OpenAI
//! function schema, argv building from the model's arguments ([`ToolSpec::invocation`]),
//! agent tools, whose calls start sub-agent runs ([`AgentTool`]), and the `delta tool
//! expand` rendering. Tools run through [`crate::process`].

mod agent;
mod error;
mod expand;
mod invoke;
mod program;
mod render;
mod schema;
mod shell;
mod spec;
mod template;
mod vars;

pub use agent::{AgentTool, MESSAGE_PARAMETER, expand_agent};
pub use delta_config::tool::{InjectAs, ParamDef, ToolDef};
pub use error::{ArgumentError, ToolError};
pub use expand::{ASK_HUMAN_TOOL, expand};
pub use invoke::Invocation;
pub use program::{MissingProgram, missing_programs};
pub use render::{render_agent_tools, render_expanded};
pub use spec::{CommandPart, DEFAULT_TOOL_TIMEOUT, ParamSpec, TemplatePiece, ToolSpec};
pub use vars::EngineVars;
