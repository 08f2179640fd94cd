//! The run's MCP servers: started before the first LLM call (a server that cannot start
//! fails the run with a configuration error, exit 126), called from the Act step like a
//! command, stopped when the loop stops for any reason (end, pause, interrupt).

use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value};

use super::act::ExecutionRecord;
use super::act::{tool_env, until};
use super::interrupted;
use super::limits::Cut;
use super::observation::{OBSERVATION_LIMIT_CHARS, cap_observation};
use super::{ActiveRun, EngineError, EngineEvent, Flow, Level, Observer, Shutdown, Stop};
use crate::config::Agent;
use crate::journal::ActionStatus;
use crate::mcp::{McpEnv, McpServers, McpTool, write_call_record};
use crate::run::{ErrorInfo, ErrorType};

/// How an MCP call ended, for the journal.
pub(super) struct McpActed {
    pub(super) status: ActionStatus,
    pub(super) observation: String,
    pub(super) duration: Duration,
    pub(super) stopped_by: Option<Cut>,
}

impl ActiveRun {
    /// Starts the agent's MCP servers (none: nothing happens). A server that does not
    /// start stops the run as FAILED with `error.type` `ConfigError`.
    pub(super) async fn start_mcp(
        &mut self,
        agent: &Agent,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Flow<()> {
        if agent.mcp_servers.is_empty() {
            return Ok(());
        }
        let env = McpEnv {
            workspace: self.paths.workspace().to_path_buf(),
            io_dir: Some(self.paths.io_dir().join("mcp")),
            env: tool_env(self.metadata.run_id.as_str(), agent, self.paths.workspace()),
            redactor: self.output.redactor.clone(),
            placement: self.placement.clone(),
        };
        let command_tools: Vec<&str> = agent.tools.iter().map(|t| t.name.as_str()).collect();
        let started = tokio::select! {
            started = McpServers::start(&agent.mcp_servers, env, &command_tools) => started,
            signal = shutdown.wait() => return Err(interrupted(signal)),
        };
        match started {
            Ok(servers) => {
                for warning in &servers.warnings {
                    observer.on_event(&EngineEvent::Warning {
                        message: warning.clone(),
                    });
                }
                for (server, tools) in servers.servers() {
                    observer.detail(
                        Level::Info,
                        format!(
                            "MCP server '{}' started ({}), protocol {}: {} tool(s)",
                            server.name,
                            server.describe(),
                            servers.protocol(&server.name).unwrap_or_default(),
                            tools.len()
                        ),
                    );
                }
                self.mcp = Some(servers);
                Ok(())
            }
            Err(error) => {
                observer.detail(Level::Error, error.to_string());
                Err(Stop::Failed(
                    ErrorInfo::new(ErrorType::ConfigError, error.to_string())
                        .with_details(error.help),
                ))
            }
        }
    }

    /// Stops the MCP servers (their process groups killed); idempotent.
    pub(super) async fn stop_mcp(&mut self, observer: &mut dyn Observer) {
        if let Some(mut servers) = self.mcp.take() {
            servers.stop().await;
            observer.detail(Level::Info, "MCP servers stopped".to_owned());
        }
    }

    /// The MCP tool offered as `name`.
    pub(super) fn mcp_tool(&self, name: &str) -> Option<McpTool> {
        self.mcp.as_ref()?.find(name).cloned()
    }

    /// Whether the MCP server `server` runs as a process of the run (stdio), so in its
    /// environment.
    pub(super) fn mcp_server_is_local(&self, server: &str) -> bool {
        self.mcp
            .as_ref()
            .is_some_and(|servers| servers.is_stdio(server))
    }

    /// Names of the MCP tools offered, for "no such tool" observations.
    pub(super) fn mcp_tool_names(&self) -> Vec<String> {
        self.mcp
            .iter()
            .flat_map(|servers| servers.tools().map(|tool| tool.offered.clone()))
            .collect()
    }

    /// The declarations of the MCP tools for the LLM request.
    pub(super) fn mcp_schemas(&self) -> Vec<Value> {
        self.mcp
            .iter()
            .flat_map(|servers| servers.tools().map(McpTool::function_schema))
            .collect()
    }

    /// Calls an MCP tool and records it in `record_dir`, as the Act step does for a
    /// command: `request.json`, `result.json` (images and audio as files beside it),
    /// `command.txt`, `exit_code.txt`, `duration_ms.txt`.
    pub(super) async fn call_mcp(
        &mut self,
        tool: &McpTool,
        arguments: Map<String, Value>,
        record_dir: &Path,
        full_output_ref: &str,
        shutdown: &mut Shutdown,
    ) -> Result<McpActed, EngineError> {
        let command = tool.resolved_command();
        let deadline = self.deadline();
        let Some(servers) = self.mcp.as_mut() else {
            return Ok(McpActed {
                status: ActionStatus::Error,
                observation: "Error: the run's MCP servers are not running.".into(),
                duration: Duration::ZERO,
                stopped_by: None,
            });
        };
        let outcome = tokio::select! {
            outcome = servers.call(tool, arguments.clone()) => Ok(outcome),
            signal = shutdown.wait() => Err(Cut::Signal(signal)),
            () = until(deadline) => Err(Cut::Budget),
        };
        match outcome {
            Ok(outcome) => {
                let record = write_call_record(
                    record_dir,
                    full_output_ref,
                    &tool.server,
                    &tool.tool,
                    &arguments,
                    &outcome,
                    &self.output.redactor,
                )?;
                ExecutionRecord {
                    command: command.clone(),
                    logs: None,
                    exit: outcome.exit.clone(),
                    duration: outcome.duration,
                }
                .write(record_dir, &self.output.redactor)?;
                let observation = self.output.redactor.redact(&record.observation);
                Ok(McpActed {
                    status: record.status,
                    observation: cap_observation(
                        &observation,
                        0,
                        OBSERVATION_LIMIT_CHARS,
                        full_output_ref,
                    ),
                    duration: outcome.duration,
                    stopped_by: None,
                })
            }
            Err(cut) => {
                let (exit, why) = self.cut_reason(cut);
                ExecutionRecord {
                    command: command.clone(),
                    logs: None,
                    exit: exit.to_owned(),
                    duration: Duration::ZERO,
                }
                .write(record_dir, &self.output.redactor)?;
                Ok(McpActed {
                    status: ActionStatus::Error,
                    observation: format!(
                        "Error: {why} while this MCP tool ran; its effects are unknown."
                    ),
                    duration: Duration::ZERO,
                    stopped_by: Some(cut),
                })
            }
        }
    }
}
