//! Agent configuration: `agent.yaml` (or the deprecated `config.yaml`), its tool imports,
//! `system_prompt.md`, `hooks.yaml` and `context.yaml`, validated into an [`Agent`].
//!
//! Loading is pure: files are read, nothing is written. Every failure is a
//! [`ConfigError`] naming the file, the line and column where known, and a fix; the CLI
//! maps them all to exit code 126.

mod agent;
mod claude_hooks;
mod context;
mod environment;
mod hooks;
mod imports;
mod mcp;
mod vars;

use delta_config::{error, names, suggest, yaml};
pub use delta_config::{keys, raw};

use std::path::{Path, PathBuf};

pub use agent::{AgentFile, LlmConfig, Pricing, SubagentCaps, parse_agent_yaml};
pub use claude_hooks::{
    CLAUDE_DEFAULT_TIMEOUT, ClaudeCommand, ClaudeHandler, ClaudeHooks, ClaudeSource, HOOKS_JSON,
    Matcher, parse_hooks_json,
};
pub use context::{
    ContextCache, ContextManifest, ContextSource, Generator, load_context, parse_context_yaml,
};
pub use error::ConfigError;
pub use hooks::{HookSpec, Hooks, parse_hooks_yaml};
pub use imports::parse_imported_yaml;
pub use mcp::is_env_name;
pub use mcp::{
    DEFAULT_MCP_STARTUP_TIMEOUT, DEFAULT_MCP_TIMEOUT, MCP_TOOL_SEPARATOR, McpServer, McpTransport,
};
pub use names::{CLAUDE_EVENTS_NEVER_FIRED, ClaudeEvent, DEFAULT_TIMEOUT_MS, HookName, OnMissing};

use crate::answer::OutputSchema;
use crate::budget::Budget;
use crate::tool::{AgentTool, EngineVars, ToolSpec};
use imports::{Importer, ToolSource};

/// A loaded, validated agent: everything the engine needs to start a run.
#[derive(Debug, Clone)]
pub struct Agent {
    /// Canonical path of the agent directory (`${AGENT_HOME}`).
    pub home: PathBuf,
    /// The file the agent was read from (agent.yaml or config.yaml).
    pub config_file: PathBuf,
    /// `name:`.
    pub name: String,
    /// `version:`.
    pub version: Option<String>,
    /// `description:`.
    pub description: Option<String>,
    /// The model and its request parameters.
    pub llm: LlmConfig,
    /// Absolute path of the system prompt file (it exists).
    pub system_prompt: PathBuf,
    /// Command tools after imports and overrides, expanded, in first-definition order.
    pub tools: Vec<ToolSpec>,
    /// Agent tools (`agent:`): each call starts a sub-agent run. Offered after `tools`.
    pub agent_tools: Vec<AgentTool>,
    /// `subagents:` of agent.yaml: how deep and wide its sub-agent tree may grow.
    pub subagents: SubagentCaps,
    /// `max_iterations:` of agent.yaml.
    pub max_iterations: Option<u32>,
    /// MCP servers after imports and overrides, in first-definition order.
    pub mcp_servers: Vec<McpServer>,
    /// `budget:` of agent.yaml (the command line's flags win).
    pub budget: Budget,
    /// `output_schema:` of agent.yaml, loaded and compiled.
    pub output_schema: Option<OutputSchema>,
    /// `ask_human:` of agent.yaml: whether the built-in tool is offered.
    pub ask_human: bool,
    /// Configured lifecycle hooks.
    pub hooks: Hooks,
    /// Hooks in Claude Code's protocol: hooks.json's, then hooks.yaml's `claude_hooks:`.
    pub claude_hooks: ClaudeHooks,
    /// The context recipe as of load time (the engine re-reads it every iteration).
    pub context: ContextManifest,
    /// `environment:`: where tools run (the host when absent).
    pub environment: crate::environment::EnvironmentConfig,
    /// Deprecations and ignored keys, for the CLI to print.
    pub warnings: Vec<String>,
}

const AGENT_YAML: &str = "agent.yaml";
const CONFIG_YAML: &str = "config.yaml";
const HOOKS_YAML: &str = "hooks.yaml";
const DEFAULT_SYSTEM_PROMPT: &str = "system_prompt.md";

/// Load the agent at `path` (its directory, or its agent.yaml/config.yaml) for a run in
/// the workspace `cwd`, the value of `${CWD}`.
pub fn load_agent(path: &Path, cwd: &Path) -> Result<Agent, ConfigError> {
    let (home, config_file, mut warnings) = locate(path)?;
    let cwd = std::path::absolute(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let vars = vars::engine_vars(&home, &cwd);

    let text = yaml::read(&config_file)?;
    let file = parse_agent_yaml(&text, &config_file)?;

    let importer = Importer::new(&home, &config_file, &file.import_roots, &vars)?;
    let imported = importer.run(&config_file, &file.imports, file.tools, file.mcp_servers)?;
    warnings.extend(imported.warnings);
    let mut tools = Vec::new();
    let mut agent_tools = Vec::new();
    for tool in &imported.tools {
        if tool.def.agent.is_some() {
            agent_tools.push(expand_agent_tool(tool, &vars)?);
        } else {
            tools.push(expand_tool(tool, &vars)?);
        }
    }

    let system_prompt = system_prompt(&home, &config_file, file.system_prompt.as_ref(), &vars)?;
    let (environment, environment_warnings) =
        environment::from_yaml(file.environment, &config_file, &vars, &home)?;
    warnings.extend(environment_warnings);

    let (mut claude_hooks, claude_warnings) = claude_hooks::load_hooks_json(&home)?;
    warnings.extend(claude_warnings);
    let hooks_file = home.join(HOOKS_YAML);
    let hooks = if yaml::exists(&hooks_file) {
        if let Some((key, _)) = &file.legacy_hooks {
            warnings.push(format!(
                "[DEPRECATION WARNING] `{key}` in {} is ignored because hooks.yaml exists; \
                 delete it from {}",
                file_name(&config_file),
                file_name(&config_file)
            ));
        }
        let text = yaml::read(&hooks_file)?;
        let map: raw::HookMap = yaml::parse(&text, &hooks_file)?;
        claude_hooks.extend(yaml_claude_hooks(&map, &hooks_file, &mut warnings)?);
        hooks::from_map(map, &hooks_file, &vars)?
    } else if let Some((key, map)) = file.legacy_hooks {
        warnings.push(format!(
            "[DEPRECATION WARNING] `{key}` in {} is deprecated; move these hooks to hooks.yaml \
             in the agent directory",
            file_name(&config_file)
        ));
        claude_hooks.extend(yaml_claude_hooks(&map, &config_file, &mut warnings)?);
        hooks::from_map(map, &config_file, &vars)?
    } else {
        Hooks::default()
    };

    let context = load_context(&home, &cwd)?;
    let output_schema = match &file.output_schema {
        None => None,
        Some(written) => {
            let path = vars::resolve_path(&vars, &written.value, &home);
            Some(OutputSchema::load(&path).map_err(|error| {
                ConfigError::new(&config_file, error.to_string())
                    .at(written.referenced)
                    .help(
                        "point `output_schema:` at a JSON Schema file (draft 2020-12), \
                         relative to the agent directory",
                    )
            })?)
        }
    };

    Ok(Agent {
        home,
        config_file,
        name: file.name,
        version: file.version,
        description: file.description,
        llm: file.llm,
        system_prompt,
        tools,
        agent_tools,
        subagents: file.subagents,
        max_iterations: file.max_iterations,
        mcp_servers: imported.mcp_servers,
        budget: file.budget,
        output_schema,
        ask_human: file.ask_human,
        hooks,
        claude_hooks,
        context,
        environment,
        warnings,
    })
}

/// The `claude_hooks:` of a hook map read from `file`, validated.
fn yaml_claude_hooks(
    map: &raw::HookMap,
    file: &Path,
    warnings: &mut Vec<String>,
) -> Result<ClaudeHooks, ConfigError> {
    let Some(events) = &map.claude else {
        return Ok(ClaudeHooks::default());
    };
    let (hooks, more) = claude_hooks::validate(
        &events.value,
        file,
        ClaudeSource::HooksYaml,
        raw::CLAUDE_HOOKS_KEY,
    )
    .map_err(|error| error.at(events.referenced))?;
    warnings.extend(more);
    Ok(hooks)
}

/// Find the agent directory (canonical) and its main config file.
fn locate(path: &Path) -> Result<(PathBuf, PathBuf, Vec<String>), ConfigError> {
    let not_found = || {
        ConfigError::new(
            path,
            format!("agent directory not found: {}", path.display()),
        )
        .help("pass the path of a directory that contains agent.yaml")
    };
    let metadata = std::fs::metadata(path).map_err(|_| not_found())?;
    let (home, explicit) = if metadata.is_dir() {
        (path.canonicalize().map_err(|_| not_found())?, None)
    } else {
        let name = path.file_name().and_then(|n| n.to_str());
        let Some(name @ (AGENT_YAML | CONFIG_YAML)) = name else {
            return Err(ConfigError::new(
                path,
                format!("{} is not an agent directory", path.display()),
            )
            .help("pass the agent directory, or the agent.yaml inside it"));
        };
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        let parent = parent.unwrap_or(Path::new("."));
        (parent.canonicalize().map_err(|_| not_found())?, Some(name))
    };
    let agent_yaml = home.join(AGENT_YAML);
    let config_yaml = home.join(CONFIG_YAML);
    let has_agent = yaml::exists(&agent_yaml);
    let has_config = yaml::exists(&config_yaml);
    let deprecated =
        "[DEPRECATION WARNING] config.yaml is deprecated; rename it to agent.yaml".to_owned();
    let both = "[DEPRECATION WARNING] both agent.yaml and config.yaml exist; using agent.yaml \
                and ignoring config.yaml (delete config.yaml)"
        .to_owned();
    match (explicit, has_agent, has_config) {
        (Some(CONFIG_YAML), _, _) => Ok((home, config_yaml, vec![deprecated])),
        (_, true, true) => Ok((home, agent_yaml, vec![both])),
        (_, true, false) => Ok((home, agent_yaml, Vec::new())),
        (_, false, true) => Ok((home, config_yaml, vec![deprecated])),
        (_, false, false) => {
            Err(
                ConfigError::new(&agent_yaml, format!("no agent.yaml in {}", home.display())).help(
                    "an agent directory needs agent.yaml (with `name:` and `llm: {model: ...}`), \
             system_prompt.md and context.yaml",
                ),
            )
        }
    }
}

fn expand_tool(tool: &ToolSource, vars: &EngineVars) -> Result<ToolSpec, ConfigError> {
    crate::tool::expand(&tool.def, vars).map_err(|err| {
        let mut error = ConfigError::new(&tool.file, err.to_string()).at(tool.location);
        error.help = err.help();
        error
    })
}

/// An agent tool, its directory checked to hold an agent (the agent itself is loaded when
/// a call starts it: agents may call each other, and a broken one fails only its calls).
fn expand_agent_tool(tool: &ToolSource, vars: &EngineVars) -> Result<AgentTool, ConfigError> {
    let error = |message: String, help: Option<String>| {
        let mut error = ConfigError::new(&tool.file, message).at(tool.location);
        error.help = help;
        error
    };
    let agent = crate::tool::expand_agent(&tool.def, vars)
        .map_err(|err| error(err.to_string(), err.help()))?;
    if !(agent.agent.join(AGENT_YAML).is_file() || agent.agent.join(CONFIG_YAML).is_file()) {
        return Err(error(
            format!(
                "the agent of tool '{}' is not an agent directory: {} has no agent.yaml",
                agent.name,
                agent.agent.display()
            ),
            Some(
                "point `agent:` at a directory holding agent.yaml, relative to this agent's \
                 directory (`.` is this agent)"
                    .to_owned(),
            ),
        ));
    }
    // Canonical, as every agent's home is: the child's `agent_home` and this path agree.
    let agent = AgentTool {
        agent: agent.agent.canonicalize().unwrap_or(agent.agent),
        ..agent
    };
    Ok(agent)
}

/// The system prompt file, which must exist.
fn system_prompt(
    home: &Path,
    config_file: &Path,
    configured: Option<&serde_saphyr::Spanned<String>>,
    vars: &EngineVars,
) -> Result<PathBuf, ConfigError> {
    let written = configured.map_or(DEFAULT_SYSTEM_PROMPT, |s| s.value.as_str());
    let path = vars::resolve_path(vars, written, home);
    if let Ok(metadata) = std::fs::metadata(&path) {
        // The context builder reads it (through context.yaml): a FIFO would block the run.
        return match yaml::check_regular(&path, &metadata) {
            Ok(()) => Ok(path),
            Err(error) => Err(match configured {
                Some(configured) => ConfigError {
                    file: config_file.to_path_buf(),
                    ..error
                }
                .at(configured.referenced),
                None => error,
            }),
        };
    }
    let mut error = ConfigError::new(
        config_file,
        format!("system prompt file not found: {}", path.display()),
    );
    error = match configured {
        Some(configured) => error.at(configured.referenced).help(format!(
            "create {} with the agent's instructions, or point `system_prompt:` at an \
             existing file (relative to the agent directory)",
            path.display()
        )),
        None => error.help(format!(
            "create {} with the agent's instructions, or set `system_prompt:` in {}",
            path.display(),
            file_name(config_file)
        )),
    };
    Err(error)
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}
