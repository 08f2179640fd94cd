//! `delta tool`: inspect tool definitions. `delta tool expand` prints the internal form
//! that `exec:`/`shell:` sugar compiles to (seed 003 §4, §6.1).

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueHint};

use super::drive::EnvironmentArgs;
use super::error::CliError;
use super::render;
use delta_engine::environment::{Setting, render_wrapped};
use delta_engine::launch::LaunchError;
use delta_engine::llm::env_files;
use delta_engine::mcp::{self, ListError, McpEnv};
use delta_engine::output::Exit;
use delta_engine::secrets::Redactor;
use delta_engine::{config, tool};

/// Arguments of `delta tool`.
#[derive(Debug, Args)]
#[command(after_help = render::examples(&[
    ("Show how an agent's tools will be executed", "delta tool expand ./my-agent"),
]))]
pub struct ToolArgs {
    #[command(subcommand)]
    command: ToolCommand,
}

#[derive(Debug, Subcommand)]
enum ToolCommand {
    /// Print an agent's tools expanded to the internal form the engine executes.
    Expand(ExpandArgs),
}

/// Arguments of `delta tool expand`.
#[derive(Debug, Args)]
#[command(
    long_about = "Print an agent's tools expanded to the internal form the engine executes.\n\n\
        Loads and validates the whole agent (imports, context.yaml, hooks.yaml) as a run \
        would, then prints on stdout, as YAML, every tool (imported ones included, after \
        overrides) as a command array plus parameters with their injection mode and \
        position. A tool whose program is not on PATH is warned about on stderr. With an \
        environment (agent.yaml's `environment:` or --environment), an `environment:` section \
        follows: the command that starts the run's sandbox or container, and each tool's \
        command as a call runs it there (the run's own parts as <RUN_ID> and <RUNTIME_DIR>). \
        Configuration errors are reported on stderr and exit with code 126.",
    after_help = render::examples(&[
        ("An agent directory", "delta tool expand ./my-agent"),
        ("Its agent.yaml (or a legacy config.yaml)", "delta tool expand my-agent/agent.yaml"),
        ("The same tools as a bubblewrap run wraps them", "delta tool expand ./my-agent --environment bwrap"),
        ("Only the shell command of one tool (with yq)", "delta tool expand . | yq '.tools[] | select(.name == \"count_lines\") | .command'"),
    ])
)]
struct ExpandArgs {
    /// Agent directory, or its agent.yaml / config.yaml.
    #[arg(value_name = "PATH", value_hint = ValueHint::AnyPath)]
    path: PathBuf,

    #[command(flatten)]
    environment: EnvironmentArgs,
}

impl ToolArgs {
    pub(super) fn run(self) -> Result<Exit, CliError> {
        match self.command {
            ToolCommand::Expand(args) => args.run(),
        }
    }
}

impl ExpandArgs {
    fn run(self) -> Result<Exit, CliError> {
        let cwd = std::env::current_dir().map_err(CliError::CurrentDir)?;
        let agent = config::load_agent(&self.path, &cwd)?;
        for warning in &agent.warnings {
            render::warning(warning);
        }
        let path = std::env::var_os("PATH");
        for missing in tool::missing_programs(&agent.tools, path.as_deref()) {
            render::warning(&missing.to_string());
        }
        let mut text = tool::render_expanded(&agent.tools);
        text.push_str(&tool::render_agent_tools(&agent.agent_tools));
        if !agent.mcp_servers.is_empty() {
            text.push_str(&list_mcp_tools(&agent, &cwd)?);
        }
        let config = agent
            .environment
            .with_choice(&self.environment.choice())
            .map_err(LaunchError::from)?;
        let setting = Setting {
            config: &config,
            agent_home: &agent.home,
            workspace: &cwd,
            tools: &agent.tools,
            key_file: None,
            env_files: env_files(&cwd, &agent.home),
            redactor: &Redactor::default(),
        };
        text.push_str(&render_wrapped(&setting, &agent.tools));
        render::stdout(&text)?;
        Ok(Exit::Success)
    }
}

/// Starts the agent's MCP servers (each within its `startup_timeout_ms`, stderr
/// discarded), lists their tools as YAML, and stops them.
fn list_mcp_tools(agent: &config::Agent, cwd: &std::path::Path) -> Result<String, CliError> {
    let env = McpEnv {
        workspace: cwd.to_path_buf(),
        io_dir: None,
        env: Vec::new(),
        redactor: Redactor::default(),
        placement: delta_engine::environment::Placement::Host,
    };
    let command_tools: Vec<&str> = agent.tools.iter().map(|t| t.name.as_str()).collect();
    let expanded =
        mcp::list_tools(&agent.mcp_servers, env, &command_tools).map_err(|error| match error {
            ListError::Start(error) => CliError::Config(error.to_config_error()),
            ListError::Runtime(error) => CliError::Runtime(error),
        })?;
    for warning in &expanded.warnings {
        render::warning(warning);
    }
    Ok(expanded.yaml)
}
